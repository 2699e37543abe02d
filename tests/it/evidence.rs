//! Evidence bundles: `git hpp evidence run|verify|list|show` against real commands, real refs and
//! the real `ssh-keygen`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::harness::Sandbox;
use crate::harness::keygen;

const PREFIX: &str = "refs/hpp/evidence/";
/// A command that writes the artifact `out/r.txt` ("report", 6 bytes) and exits 0.
const WRITE_REPORT: &str = "mkdir -p out && printf report > out/r.txt";

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `git hpp evidence run --json --id <id> <extra...> -- <command...>`.
fn evidence_run(
    sandbox: &Sandbox,
    id: &str,
    extra: &[&str],
    command: &[&str],
) -> crate::harness::Run {
    let mut args = vec!["evidence", "run", "--json", "--id", id];
    args.extend(extra);
    args.push("--");
    args.extend(command);
    sandbox.hpp_in(&sandbox.root, &args)
}

/// Runs a passing bundle that writes `out/r.txt` and returns its printed record.
fn passing_run(sandbox: &Sandbox, id: &str, extra: &[&str]) -> Value {
    let mut flags = vec!["--artifact", "out/*.txt"];
    flags.extend(extra);
    evidence_run(sandbox, id, &flags, &["sh", "-c", WRITE_REPORT]).json(0)
}

/// The record's ref, as printed.
fn record_ref(record: &Value) -> String {
    record["record_ref"]
        .as_str()
        .expect("a record names its ref")
        .to_owned()
}

/// Every ref under refs/hpp/evidence/.
fn evidence_refs(sandbox: &Sandbox) -> Vec<String> {
    sandbox
        .git(["for-each-ref", "--format=%(refname)", PREFIX])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs `git` in the sandbox with `input` on stdin; returns the raw output.
fn git_with_stdin(sandbox: &Sandbox, args: &[&str], input: &[u8]) -> Output {
    let mut child = sandbox
        .command("git", &sandbox.root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input)
        .expect("git reads its input");
    child.wait_with_output().expect("git finishes")
}

/// The raw bytes of `<rev>:<path>`, or `None` when git has no such object.
fn blob(sandbox: &Sandbox, rev: &str, path: &str) -> Option<Vec<u8>> {
    let out = sandbox
        .command("git", &sandbox.root)
        .args(["cat-file", "blob", &format!("{rev}:{path}")])
        .output()
        .expect("git runs");
    out.status.success().then_some(out.stdout)
}

/// The stored record at `reference`, parsed.
fn stored_record(sandbox: &Sandbox, reference: &str) -> Value {
    let bytes = blob(sandbox, reference, "record.json").expect("the bundle holds record.json");
    serde_json::from_slice(&bytes).expect("record.json is JSON")
}

/// Replaces `record.json` at `reference` with `record` in a new commit, with plumbing only.
fn recommit_record(sandbox: &Sandbox, reference: &str, record: &[u8]) {
    let file = sandbox.path("tampered-record.json");
    std::fs::write(&file, record).expect("the sandbox is writable");
    let new_blob = sandbox.git([
        "hash-object",
        "-w",
        file.to_str().expect("sandbox paths are UTF-8"),
    ]);
    let listing: String = sandbox
        .git(["ls-tree", reference])
        .lines()
        .map(|line| {
            if line.ends_with("\trecord.json") {
                format!("100644 blob {new_blob}\trecord.json\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let out = git_with_stdin(sandbox, &["mktree"], listing.as_bytes());
    assert!(out.status.success(), "git mktree failed");
    let tree = String::from_utf8(out.stdout).expect("a tree id is UTF-8");
    let commit = sandbox.git(["commit-tree", tree.trim(), "-p", reference, "-m", "edited"]);
    sandbox.git(["update-ref", reference, &commit]);
}

/// Tells whether `name` is `<id>-YYYYMMDDTHHMMSSZ` with an optional `-N` (N >= 2), and returns
/// the stamp and N (1 when absent).
fn split_bundle_name<'a>(name: &'a str, id: &str) -> Option<(&'a str, u32)> {
    let rest = name.strip_prefix(id)?.strip_prefix('-')?;
    let (stamp, n) = match rest.split_once('-') {
        Some((stamp, n)) => (stamp, n.parse::<u32>().ok().filter(|n| *n >= 2)?),
        None => (rest, 1),
    };
    let b = stamp.as_bytes();
    let shaped = b.len() == 16
        && b[8] == b'T'
        && b[15] == b'Z'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit);
    shaped.then_some((stamp, n))
}

#[test]
fn a_passing_run_records_its_artifact_and_a_self_hashed_record() {
    let sandbox = Sandbox::repo();
    let printed = passing_run(&sandbox, "smoke", &[]);
    assert_eq!(printed["schema"], "hpp.evidence/v1");
    assert_eq!(printed["verdict"], "passed");
    assert_eq!(printed["exit_code"], 0);
    assert_eq!(printed["id"], "smoke");
    assert_eq!(printed["missing"], serde_json::json!([]));
    assert_eq!(printed["event"], Value::Null);
    assert_eq!(
        printed["command"],
        serde_json::json!(["sh", "-c", WRITE_REPORT])
    );
    assert_eq!(printed["base_commit"], sandbox.git(["rev-parse", "HEAD"]));

    let bytes = std::fs::read(sandbox.root.join("out/r.txt")).expect("the run wrote out/r.txt");
    let file = &printed["artifacts"][0]["files"][0];
    assert_eq!(printed["artifacts"][0]["pattern"], "out/*.txt");
    assert_eq!(file["path"], "out/r.txt");
    assert_eq!(file["size"], bytes.len());
    assert_eq!(file["sha256"], sha256(&bytes));
    assert_eq!(file["blob"], sandbox.git(["hash-object", "out/r.txt"]));

    let reference = record_ref(&printed);
    let name = reference
        .strip_prefix(PREFIX)
        .expect("the bundle lives under refs/hpp/evidence/");
    let (stamp, n) = split_bundle_name(name, "smoke").expect("named <id>-<UTC stamp>");
    assert_eq!(n, 1, "the first bundle has no counter");
    let started = printed["started_at"].as_str().expect("started_at is text");
    assert_eq!(
        started.replace(['-', ':'], ""),
        stamp,
        "the ref's stamp is the start time"
    );
    assert_eq!(evidence_refs(&sandbox), std::slice::from_ref(&reference));

    let raw = blob(&sandbox, &reference, "record.json").expect("record.json is in the tree");
    let mut stored: Value = serde_json::from_slice(&raw).expect("record.json is JSON");
    assert_eq!(
        serde_json::to_vec(&stored).expect("a Value serialises"),
        raw,
        "the record is stored as canonical JSON"
    );
    let mut without_event = printed.clone();
    without_event
        .as_object_mut()
        .expect("the printed record is an object")
        .remove("event");
    assert_eq!(
        stored, without_event,
        "the printed record is the stored one"
    );

    let claimed = stored["record_sha256"]
        .as_str()
        .expect("the record has a self-hash")
        .to_owned();
    let map = stored.as_object_mut().expect("the record is an object");
    for key in ["record_sha256", "event", "event_error", "signature"] {
        map.remove(key);
    }
    let canonical = serde_json::to_string(&stored).expect("a Value serialises");
    assert_eq!(claimed, sha256(canonical.as_bytes()));
}

#[test]
fn a_failing_command_is_recorded_as_failed() {
    let sandbox = Sandbox::repo();
    let printed = evidence_run(&sandbox, "fails", &[], &["sh", "-c", "exit 3"]).json(1);
    assert_eq!(printed["verdict"], "failed");
    assert_eq!(printed["exit_code"], 3);
    let reference = record_ref(&printed);
    assert_eq!(evidence_refs(&sandbox), std::slice::from_ref(&reference));
    assert_eq!(stored_record(&sandbox, &reference)["verdict"], "failed");
}

#[test]
fn an_artifact_the_run_did_not_touch_does_not_count() {
    let sandbox = Sandbox::repo();
    std::fs::create_dir_all(sandbox.root.join("out")).expect("the sandbox is writable");
    std::fs::write(sandbox.root.join("out/old.txt"), "from before").expect("writable");
    let printed = evidence_run(&sandbox, "stale", &["--artifact", "out/*.txt"], &["true"]).json(1);
    assert_eq!(printed["verdict"], "missing-artifacts");
    assert_eq!(printed["exit_code"], 0);
    assert_eq!(
        printed["artifacts"][0]["unchanged"],
        serde_json::json!(["out/old.txt"])
    );
    assert_eq!(printed["artifacts"][0]["files"], serde_json::json!([]));
    assert_eq!(printed["missing"], serde_json::json!(["out/*.txt"]));
}

#[test]
fn a_command_that_ignores_sigterm_is_killed_at_the_timeout() {
    let sandbox = Sandbox::repo();
    let started = Instant::now();
    let printed = evidence_run(
        &sandbox,
        "slow",
        &["--timeout", "0.5"],
        &["sh", "-c", "trap '' TERM; sleep 30"],
    )
    .json(1);
    let took = started.elapsed();
    assert_eq!(printed["verdict"], "timeout");
    assert_eq!(printed["exit_code"], Value::Null);
    assert_eq!(printed["timeout_s"], 0.5);
    assert!(
        took < Duration::from_secs(20),
        "the process group was killed, not waited for ({took:?})"
    );
}

#[test]
fn a_program_that_does_not_exist_could_not_start() {
    let sandbox = Sandbox::repo();
    let printed = evidence_run(&sandbox, "ghost", &[], &["no-such-program-hpp-test"]).json(1);
    assert_eq!(printed["verdict"], "could-not-start");
    assert_eq!(printed["exit_code"], Value::Null);
    assert_eq!(evidence_refs(&sandbox).len(), 1, "the attempt is recorded");
}

#[test]
fn control_refused_runs_start_nothing_and_write_nothing() {
    let sandbox = Sandbox::repo();
    let touch = ["sh", "-c", "touch marker"];
    let cases: Vec<(Vec<&str>, Vec<&str>, &str)> = vec![
        (
            vec!["--id", "s"],
            vec!["sh", "-c", "touch marker", "--token", "abc"],
            "looks like it carries a secret",
        ),
        (
            vec!["--id", "s"],
            vec!["env", "GITHUB_TOKEN=abc123", "sh", "-c", "touch marker"],
            "looks like it carries a secret",
        ),
        (
            vec!["--id", "s", "--artifact", "../outside"],
            touch.to_vec(),
            "inside the workspace",
        ),
        (
            vec!["--id", "s", "--artifact", "/abs"],
            touch.to_vec(),
            "inside the workspace",
        ),
        (
            vec!["--id", "bad id"],
            touch.to_vec(),
            "evidence id must be",
        ),
        (vec!["--id=-x"], touch.to_vec(), "evidence id must be"),
        (
            vec!["--id", "s", "--timeout", "0"],
            touch.to_vec(),
            "timeout must be a positive",
        ),
        (
            vec!["--id", "s", "--timeout", "90000"],
            touch.to_vec(),
            "timeout must be a positive",
        ),
        (
            vec!["--id", "s", "--signer", "ci@example.com"],
            touch.to_vec(),
            "--signer needs a key",
        ),
    ];
    for (flags, command, needle) in cases {
        let mut args = vec!["evidence", "run"];
        args.extend(&flags);
        args.push("--");
        args.extend(&command);
        let reason = sandbox.hpp_in(&sandbox.root, &args).refused();
        assert!(reason.contains(needle), "{args:?}: {reason}");
        assert_eq!(sandbox.hpp_refs(), "", "{args:?} wrote a ref");
        assert!(
            !sandbox.root.join("marker").exists(),
            "{args:?} ran the command"
        );
    }
    // The same command without the refused part runs (so the marker check can fail).
    evidence_run(&sandbox, "s", &[], &touch).json(0);
    assert!(sandbox.root.join("marker").exists());
}

#[test]
fn record_event_appends_evidence_recorded_only_for_a_passing_run() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let tip = sandbox.git(["rev-parse", "refs/hpp/loops/main"]);

    let failed = evidence_run(
        &sandbox,
        "gate",
        &["--artifact", "out/*.txt", "--record-event"],
        &["sh", "-c", "mkdir -p out && printf x > out/r.txt && exit 1"],
    )
    .json(1);
    assert_eq!(failed["verdict"], "failed");
    assert_eq!(failed["event"], Value::Null);
    assert_eq!(
        sandbox.git(["rev-parse", "refs/hpp/loops/main"]),
        tip,
        "a failing run appends nothing"
    );

    let printed = passing_run(&sandbox, "gate", &["--record-event"]);
    assert_eq!(printed["event"]["type"], "evidence_recorded");
    let status = sandbox.hpp(["status", "--json"]).json(0);
    assert_eq!(status["state"], "evidenced");
    assert_eq!(status["event_count"], 2);
    let log = sandbox.hpp(["event", "log", "--json"]).json(0);
    let last = log["events"]
        .as_array()
        .and_then(|events| events.last())
        .expect("the log has events");
    assert_eq!(last["type"], "evidence_recorded");
    assert_eq!(last["data"]["evidence"][0], printed["record_ref"]);
    assert_eq!(last["data"]["evidence_sha256"][0], printed["record_sha256"]);
    assert_eq!(last["data"]["gate"]["name"], "fresh-evidence");
    assert_eq!(
        printed["event"]["commit"],
        sandbox.git(["rev-parse", "refs/hpp/loops/main"])
    );
}

#[test]
fn an_event_that_cannot_be_appended_exits_2_and_keeps_the_bundle() {
    let sandbox = Sandbox::repo();
    // The loop is still planned: evidence_recorded is not a valid next event.
    let printed = evidence_run(
        &sandbox,
        "early",
        &["--artifact", "out/*.txt", "--record-event"],
        &["sh", "-c", WRITE_REPORT],
    )
    .json(2);
    assert_eq!(printed["verdict"], "passed");
    assert_eq!(printed["event"], Value::Null);
    let error = printed["event_error"]
        .as_str()
        .expect("event_error is text");
    assert!(error.contains("invalid transition"), "{error}");
    assert_eq!(evidence_refs(&sandbox), [record_ref(&printed)]);
    let stored = stored_record(&sandbox, &record_ref(&printed));
    assert!(
        stored.get("event_error").is_none(),
        "event_error is not stored"
    );
    assert!(
        sandbox
            .command("git", &sandbox.root)
            .args(["rev-parse", "--verify", "-q", "refs/hpp/loops/main"])
            .output()
            .expect("git runs")
            .stdout
            .is_empty(),
        "no loop log was started"
    );
}

#[test]
fn keep_artifacts_stores_the_bytes_in_the_bundle() {
    let sandbox = Sandbox::repo();
    let kept = passing_run(&sandbox, "kept", &["--keep-artifacts"]);
    assert_eq!(kept["kept_artifacts"], true);
    assert_eq!(
        blob(&sandbox, &record_ref(&kept), "artifacts/out/r.txt").as_deref(),
        Some(b"report".as_slice())
    );
    let plain = passing_run(&sandbox, "plain", &[]);
    assert_eq!(plain["kept_artifacts"], false);
    assert_eq!(
        blob(&sandbox, &record_ref(&plain), "artifacts/out/r.txt"),
        None
    );
}

#[test]
fn runs_with_one_id_never_share_a_ref() {
    let sandbox = Sandbox::repo();
    let refs: Vec<String> = (0..6)
        .map(|_| record_ref(&evidence_run(&sandbox, "dup", &[], &["true"]).json(0)))
        .collect();
    let distinct: BTreeSet<&String> = refs.iter().collect();
    assert_eq!(distinct.len(), refs.len(), "{refs:?}");
    assert_eq!(evidence_refs(&sandbox).len(), refs.len());
    // Within one second the names count up from the bare stamp: -2, -3, ...
    let mut by_stamp: std::collections::BTreeMap<&str, Vec<u32>> = Default::default();
    for reference in &refs {
        let name = reference.strip_prefix(PREFIX).expect("under the prefix");
        let (stamp, n) = split_bundle_name(name, "dup").expect("named <id>-<stamp>[-N]");
        by_stamp.entry(stamp).or_default().push(n);
    }
    for (stamp, ns) in by_stamp {
        let expected: Vec<u32> = (1..=u32::try_from(ns.len()).expect("few runs")).collect();
        assert_eq!(ns, expected, "counters in {stamp}");
    }
    let list = sandbox.hpp(["evidence", "list", "--json"]).json(0);
    let listed: BTreeSet<String> = list["evidence"]
        .as_array()
        .expect("a list of bundles")
        .iter()
        .map(|b| {
            assert_eq!(b["id"], "dup");
            assert_eq!(b["verdict"], "passed");
            b["ref"].as_str().expect("a ref").to_owned()
        })
        .collect();
    assert_eq!(listed, refs.iter().cloned().collect::<BTreeSet<_>>());
}

#[test]
fn a_taken_name_pushes_the_next_run_to_a_counter() {
    let sandbox = Sandbox::repo();
    // Occupy the bare name for every second the run could start in (generous, not timed).
    let head = sandbox.git(["rev-parse", "HEAD"]);
    let now = time::OffsetDateTime::now_utc();
    for offset in -2..60 {
        let t = now + time::Duration::seconds(offset);
        let stamp = format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        );
        sandbox.git(["update-ref", &format!("{PREFIX}taken-{stamp}"), &head]);
    }
    let before = evidence_refs(&sandbox);
    let printed = evidence_run(&sandbox, "taken", &[], &["true"]).json(0);
    let reference = record_ref(&printed);
    assert!(reference.ends_with("-2"), "{reference}");
    assert!(!before.contains(&reference));
    let bare = reference.strip_suffix("-2").expect("a counter suffix");
    assert_eq!(
        sandbox.git(["rev-parse", bare]),
        head,
        "the taken ref was not overwritten"
    );
}

#[test]
fn verify_checks_the_artifacts_against_the_workspace() {
    let sandbox = Sandbox::repo();
    let printed = passing_run(&sandbox, "art", &[]);
    let report = sandbox.hpp(["evidence", "verify", "art", "--json"]).json(0);
    assert_eq!(report["status"], "valid");
    assert_eq!(report["problems"], serde_json::json!([]));
    assert_eq!(report["ref"], printed["record_ref"]);
    assert_eq!(report["record_sha256"], printed["record_sha256"]);
    assert_eq!(report["verdict"], "passed");
    assert_eq!(report["signature"]["status"], "not-signed");

    std::fs::write(sandbox.root.join("out/r.txt"), "edited").expect("writable");
    let changed = sandbox.hpp(["evidence", "verify", "art", "--json"]).json(2);
    assert_eq!(changed["status"], "blocked");
    assert_eq!(changed["changed"], serde_json::json!(["out/r.txt"]));
    assert_eq!(
        changed["problems"],
        serde_json::json!(["1 artifact(s) changed since the run"])
    );

    std::fs::remove_file(sandbox.root.join("out/r.txt")).expect("the file exists");
    let missing = sandbox.hpp(["evidence", "verify", "art", "--json"]).json(2);
    assert_eq!(missing["missing"], serde_json::json!(["out/r.txt"]));
    assert_eq!(missing["changed"], serde_json::json!([]));
    assert_eq!(
        missing["problems"],
        serde_json::json!(["1 artifact(s) missing since the run"])
    );
}

#[test]
fn kept_artifacts_verify_without_the_workspace_file() {
    let sandbox = Sandbox::repo();
    passing_run(&sandbox, "kept", &["--keep-artifacts"]);
    std::fs::remove_file(sandbox.root.join("out/r.txt")).expect("the file exists");
    let report = sandbox
        .hpp(["evidence", "verify", "kept", "--json"])
        .json(0);
    assert_eq!(report["status"], "valid");
    assert_eq!(report["missing"], serde_json::json!([]));
}

#[test]
fn control_an_edited_record_is_caught() {
    let sandbox = Sandbox::repo();
    let printed = passing_run(&sandbox, "edit", &[]);
    let reference = record_ref(&printed);
    let mut record = stored_record(&sandbox, &reference);
    record["verdict"] = "failed".into();
    record["exit_code"] = 1.into();
    recommit_record(
        &sandbox,
        &reference,
        &serde_json::to_vec(&record).expect("a Value serialises"),
    );
    assert_eq!(stored_record(&sandbox, &reference)["verdict"], "failed");
    let report = sandbox
        .hpp(["evidence", "verify", &reference, "--json"])
        .json(2);
    assert_eq!(report["status"], "blocked");
    let problems = report["problems"].as_array().expect("a list of problems");
    assert!(
        problems
            .iter()
            .any(|p| p == "the record was edited after it was written"),
        "{problems:?}"
    );
}

#[test]
fn a_bundle_moved_to_another_ref_or_with_edited_kept_bytes_is_blocked() {
    let sandbox = Sandbox::repo();
    let printed = passing_run(&sandbox, "moved", &["--keep-artifacts"]);
    let reference = record_ref(&printed);
    let elsewhere = format!("{PREFIX}moved-20200101T000000Z");
    sandbox.git(["update-ref", &elsewhere, &reference]);
    let report = sandbox
        .hpp(["evidence", "verify", &elsewhere, "--json"])
        .json(2);
    assert_eq!(
        report["problems"],
        serde_json::json!([format!(
            "the record names {reference} but is stored at {elsewhere}"
        )])
    );

    // Replace the kept bytes in the bundle's tree; the workspace file is untouched.
    let file = sandbox.path("forged-artifact");
    std::fs::write(&file, "forged").expect("writable");
    let forged = sandbox.git([
        "hash-object",
        "-w",
        file.to_str().expect("sandbox paths are UTF-8"),
    ]);
    let index = sandbox.path("forge-index");
    let with_index = |args: &[&str]| {
        let out = sandbox
            .command("git", &sandbox.root)
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).expect("git prints UTF-8 here")
    };
    with_index(&["read-tree", &reference]);
    let cacheinfo = format!("100644,{forged},artifacts/out/r.txt");
    with_index(&["update-index", "--cacheinfo", &cacheinfo]);
    let tree = with_index(&["write-tree"]);
    let commit = sandbox.git(["commit-tree", tree.trim(), "-p", &reference, "-m", "forged"]);
    sandbox.git(["update-ref", &reference, &commit]);
    let report = sandbox
        .hpp(["evidence", "verify", &reference, "--json"])
        .json(2);
    assert_eq!(report["changed"], serde_json::json!(["out/r.txt"]));
    assert_eq!(
        report["problems"],
        serde_json::json!(["1 artifact(s) changed since the run"])
    );
}

#[test]
fn a_ref_without_an_evidence_record_is_not_evidence() {
    let sandbox = Sandbox::repo();
    let reference = format!("{PREFIX}foreign-20260101T000000Z");
    let file = sandbox.path("foreign.json");
    std::fs::write(&file, r#"{"schema":"something.else/v1"}"#).expect("writable");
    let blob_id = sandbox.git([
        "hash-object",
        "-w",
        file.to_str().expect("sandbox paths are UTF-8"),
    ]);
    let out = git_with_stdin(
        &sandbox,
        &["mktree"],
        format!("100644 blob {blob_id}\trecord.json\n").as_bytes(),
    );
    assert!(out.status.success(), "git mktree failed");
    let tree = String::from_utf8(out.stdout).expect("a tree id is UTF-8");
    let commit = sandbox.git(["commit-tree", tree.trim(), "-m", "not evidence"]);
    sandbox.git(["update-ref", &reference, &commit]);
    let report = sandbox
        .hpp(["evidence", "verify", &reference, "--json"])
        .json(1);
    assert_eq!(report["status"], "not-evidence");
    let by_id = sandbox
        .hpp(["evidence", "verify", "foreign", "--json"])
        .json(1);
    assert_eq!(by_id["ref"], reference.as_str());
}

/// Runs `ssh-keygen -Y verify` on `data` with the signature file `sig`.
fn ssh_verify(sandbox: &Sandbox, allowed: &Path, sig: &Path, data: &[u8]) -> Output {
    let mut child = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-Y", "verify", "-I", "ci@example.com", "-n", "hpp", "-f"])
        .arg(allowed)
        .arg("-s")
        .arg(sig)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh-keygen runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(data)
        .expect("ssh-keygen reads the record");
    child.wait_with_output().expect("ssh-keygen finishes")
}

#[test]
fn a_signed_bundle_verifies_with_us_and_with_ssh_keygen() {
    let sandbox = Sandbox::repo();
    let (key, public) = keygen(&sandbox, "key");
    let (_, other_public) = keygen(&sandbox, "other");
    let allowed = sandbox.path("allowed");
    std::fs::write(&allowed, format!("ci@example.com {public}\n")).expect("writable");
    let stranger = sandbox.path("stranger");
    std::fs::write(&stranger, format!("ci@example.com {other_public}\n")).expect("writable");
    let key_arg = key.to_str().expect("sandbox paths are UTF-8");
    let allowed_arg = allowed.to_str().expect("sandbox paths are UTF-8");
    let stranger_arg = stranger.to_str().expect("sandbox paths are UTF-8");

    let printed = passing_run(
        &sandbox,
        "signed",
        &["--sign-key", key_arg, "--signer", "ci@example.com"],
    );
    assert_eq!(printed["signer"], "ci@example.com");
    let reference = record_ref(&printed);

    let good = sandbox
        .hpp([
            "evidence",
            "verify",
            "signed",
            "--allowed-signers",
            allowed_arg,
            "--json",
        ])
        .json(0);
    assert_eq!(good["status"], "valid");
    assert_eq!(good["signature"]["status"], "verified");

    let unchecked = sandbox
        .hpp(["evidence", "verify", "signed", "--json"])
        .json(0);
    assert_eq!(unchecked["signature"]["status"], "not-verified");

    let bad = sandbox
        .hpp([
            "evidence",
            "verify",
            "signed",
            "--allowed-signers",
            stranger_arg,
            "--json",
        ])
        .json(2);
    assert_eq!(bad["status"], "blocked");
    assert_eq!(bad["signature"]["status"], "refused");
    let problems = bad["problems"].as_array().expect("a list of problems");
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().is_some_and(|p| p.starts_with("signature: "))),
        "{problems:?}"
    );

    // ssh-keygen agrees, byte for byte, and rejects other bytes.
    let record = blob(&sandbox, &reference, "record.json").expect("the bundle holds record.json");
    let sig = sandbox.path("record.sig");
    std::fs::write(
        &sig,
        blob(&sandbox, &reference, "record.sig").expect("a signed bundle holds record.sig"),
    )
    .expect("writable");
    let out = ssh_verify(&sandbox, &allowed, &sig, &record);
    assert!(
        out.status.success(),
        "ssh-keygen -Y verify: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut forged = record.clone();
    forged.push(b' ');
    assert!(
        !ssh_verify(&sandbox, &allowed, &sig, &forged)
            .status
            .success()
    );
    assert!(
        !ssh_verify(&sandbox, &stranger, &sig, &record)
            .status
            .success()
    );
}

#[test]
fn show_and_list_present_the_bundle() {
    let sandbox = Sandbox::repo();
    let empty = sandbox.hpp(["evidence", "list"]).ok();
    assert!(empty.starts_with("no evidence yet"), "{empty}");
    let printed = passing_run(&sandbox, "shown", &[]);
    let reference = record_ref(&printed);

    let shown: Value = serde_json::from_str(&sandbox.hpp(["evidence", "show", "shown"]).ok())
        .expect("show prints JSON");
    assert_eq!(shown, stored_record(&sandbox, &reference));

    let listing = sandbox.hpp(["evidence", "list"]).ok();
    let line = listing.lines().next().expect("one line per bundle");
    assert!(line.starts_with("passed "), "{line}");
    assert!(line.ends_with(&reference), "{line}");
    assert!(
        line.contains(printed["started_at"].as_str().expect("started_at")),
        "{line}"
    );
}

#[test]
fn verify_by_id_takes_the_newest_bundle_and_refuses_an_unknown_id() {
    let sandbox = Sandbox::repo();
    let first = passing_run(&sandbox, "twice", &[]);
    let second = evidence_run(&sandbox, "twice", &[], &["sh", "-c", "exit 4"]).json(1);
    assert!(
        record_ref(&second) > record_ref(&first),
        "the second bundle sorts after the first"
    );
    let report = sandbox
        .hpp(["evidence", "verify", "twice", "--json"])
        .json(1);
    assert_eq!(report["ref"], second["record_ref"]);
    assert_eq!(report["verdict"], "failed");
    assert_eq!(report["status"], "not-evidence", "intact, but no evidence");
    assert_eq!(
        report["problems"],
        serde_json::json!(["the run did not pass (verdict: failed)"])
    );
    let exact = sandbox
        .hpp(["evidence", "verify", record_ref(&first).as_str(), "--json"])
        .json(0);
    assert_eq!(exact["status"], "valid");

    let reason = sandbox.hpp(["evidence", "verify", "nope"]).refused();
    assert_eq!(reason, "no evidence bundle named nope");
    let reason = sandbox.hpp(["evidence", "show", "nope"]).refused();
    assert_eq!(reason, "no evidence bundle named nope");
    // A prefix of an id is not an id.
    sandbox.hpp(["evidence", "verify", "twic"]).refused();
}

#[test]
fn a_ref_that_holds_no_record_is_not_evidence() {
    let sandbox = Sandbox::repo();
    sandbox.git([
        "update-ref",
        "refs/hpp/evidence/stray-20261202T000000Z",
        "HEAD",
    ]);
    let report = sandbox
        .hpp([
            "evidence",
            "verify",
            "refs/hpp/evidence/stray-20261202T000000Z",
            "--json",
        ])
        .json(1);
    assert_eq!(report["status"], "not-evidence");
}

#[test]
fn control_an_artifact_through_a_symlink_out_of_the_workspace_is_refused_before_the_run() {
    let sandbox = Sandbox::repo();
    // A private directory outside the repository, linked in as `k`.
    let secrets = sandbox.path("dot-ssh");
    std::fs::create_dir_all(&secrets).expect("writable");
    std::fs::write(secrets.join("id_ed25519"), "PRIVATE KEY BYTES\n").expect("writable");
    std::os::unix::fs::symlink(&secrets, sandbox.root.join("k")).expect("a symlink");
    let reason = sandbox
        .hpp([
            "evidence",
            "run",
            "--id",
            "x",
            "--artifact",
            "k/id_ed25519",
            "--keep-artifacts",
            "--",
            "touch",
            "k/id_ed25519",
        ])
        .refused();
    assert!(
        reason.contains("resolves outside the workspace or into .git"),
        "{reason}"
    );
    assert!(!reason.contains("PRIVATE"), "{reason}");
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
    // A `.git` reached through a link is refused alike.
    std::os::unix::fs::symlink(sandbox.root.join(".git"), sandbox.root.join("g"))
        .expect("a symlink");
    sandbox
        .hpp([
            "evidence",
            "run",
            "--id",
            "x",
            "--artifact",
            "g/config",
            "--",
            "true",
        ])
        .refused();
}

/// Tells whether process `pid` is gone or a zombie (dead, waiting to be reaped).
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits up to ten seconds for `pids` to die; returns those still alive.
fn still_alive(pids: &[String]) -> Vec<String> {
    for _ in 0..100 {
        if pids.iter().all(|p| dead(p)) {
            return Vec::new();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    pids.iter().filter(|p| !dead(p)).cloned().collect()
}

/// Waits up to ten seconds for `file` to hold `lines` lines; returns them.
fn wait_for_lines(file: &std::path::Path, lines: usize) -> Vec<String> {
    for _ in 0..100 {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let found: Vec<String> = text.lines().map(str::to_owned).collect();
        if found.len() >= lines {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{} never held {lines} lines", file.display());
}

/// Starts `evidence run` of a criterion that writes its pid to `pids`, then starts a child
/// and writes that one's pid too, and waits; SIGKILLs git-hpp once `pids` holds `lines` lines
/// (1: the criterion has just started; 2: its child too) and returns every pid listed then.
fn kill_run_after(sandbox: &Sandbox, id: &str, lines: usize) -> Vec<String> {
    let pids = sandbox.path(&format!("pids-{id}"));
    let script = format!(
        "echo $$ > '{0}'; sleep 300 & echo $! >> '{0}'; wait",
        pids.display()
    );
    let mut run = sandbox
        .hpp_command(
            &sandbox.root,
            &["evidence", "run", "--id", id, "--", "sh", "-c", &script],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("git-hpp starts");
    wait_for_lines(&pids, lines);
    run.kill().expect("SIGKILL reaches git-hpp");
    run.wait().expect("reaped");
    // What the criterion managed to start before it was stopped is listed by now or never.
    let listed: Vec<String> = std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    listed
}

#[test]
fn a_killed_evidence_run_takes_its_criterion_and_the_criterions_children_with_it() {
    let sandbox = Sandbox::repo();
    // Issue 33: one SIGKILL in three used to leave the criterion running. Killed as soon as the
    // criterion starts and once its child runs, several times each: it never outlives the run.
    for attempt in 0..4 {
        for lines in [1, 2] {
            let criterion = kill_run_after(&sandbox, &format!("long-{attempt}-{lines}"), lines);
            assert_eq!(
                still_alive(&criterion),
                Vec::<String>::new(),
                "attempt {attempt}: the criterion outlived the run (killed at {lines} lines)"
            );
        }
    }
}

/// Fields of `/proc/<pid>/stat` after the command name, counted from 3 (`state`) as proc(5)
/// numbers them: `field(stat, 5)` is the process group, `field(stat, 22)` the start time.
fn stat_field(pid: &str, field: usize) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("process {pid} is alive: {e}"));
    let rest = stat.rsplit(')').next().expect("a stat line");
    rest.split_whitespace()
        .nth(field - 3)
        .and_then(|f| f.parse().ok())
        .unwrap_or_else(|| panic!("field {field} of {stat}"))
}

#[test]
fn a_criterion_is_born_into_a_group_its_watchdog_already_leads() {
    let sandbox = Sandbox::repo();
    let pids = sandbox.path("pids");
    // The criterion notes itself, then waits for the test to let it go.
    let gate = sandbox.path("gate");
    let script = format!(
        "echo $$ > '{0}'; while [ ! -e '{1}' ]; do sleep 0.05; done",
        pids.display(),
        gate.display()
    );
    let mut run = sandbox
        .hpp_command(
            &sandbox.root,
            &["evidence", "run", "--id", "born", "--", "sh", "-c", &script],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("git-hpp starts");
    let criterion = wait_for_lines(&pids, 1).remove(0);
    let group = stat_field(&criterion, 5).to_string();
    assert_ne!(group, criterion, "the criterion leads no group of its own");
    // The leader is the watchdog, a child of git-hpp started before the criterion: there is no
    // moment at which the criterion ran unwatched.
    assert_eq!(
        stat_field(&group, 4),
        u64::from(run.id()),
        "git-hpp's own child"
    );
    assert!(
        stat_field(&group, 22) <= stat_field(&criterion, 22),
        "the watchdog started first"
    );
    std::fs::write(&gate, "").expect("writable");
    assert!(run.wait().expect("git-hpp ends").success());
}

#[test]
fn control_a_parent_killed_without_git_hpp_leaves_its_child_running() {
    let sandbox = Sandbox::repo();
    let pids = sandbox.path("pids");
    let script = format!(
        "echo $$ > '{0}'; sleep 300 & echo $! >> '{0}'; wait",
        pids.display()
    );
    let mut parent = sandbox
        .command("sh", &sandbox.root)
        .args(["-c", &script])
        .spawn()
        .expect("sh starts");
    let listed = wait_for_lines(&pids, 2);
    parent.kill().expect("SIGKILL reaches sh");
    parent.wait().expect("reaped");
    // Killing a parent does not take its children: what does, in a run, is git-hpp's watchdog.
    assert!(!dead(&listed[1]), "the orphan died without a watchdog");
    let _ = std::process::Command::new("kill")
        .args(["-9", &listed[1]])
        .status();
}

#[test]
fn control_a_criterion_that_finishes_keeps_what_it_left_in_the_background() {
    let sandbox = Sandbox::repo();
    let pids = sandbox.path("pids");
    let script = format!("sleep 300 & echo $! > '{}'", pids.display());
    sandbox
        .hpp([
            "evidence", "run", "--id", "short", "--", "sh", "-c", &script,
        ])
        .ok();
    let left = wait_for_lines(&pids, 1);
    // Only a run that dies takes its criterion with it; this one ended normally.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !dead(&left[0]),
        "a finished run's background process was killed"
    );
    let _ = std::process::Command::new("kill")
        .args(["-9", &left[0]])
        .status();
}

#[test]
fn a_failing_criterion_shows_its_output_streamed_and_keeps_a_redacted_tail() {
    let sandbox = Sandbox::repo();
    // Outside the repository: a token-shaped file in the workspace would be refused.
    let script = sandbox.path("criterion.sh");
    std::fs::write(
        &script,
        "echo compiling\necho 'error: expected 3, got 4' >&2\n\
         echo 'auth ghp_0123456789abcdefghijABCDEFGHIJklmnopqr' >&2\nexit 1\n",
    )
    .expect("writable");
    let script = script.to_str().expect("UTF-8").to_owned();
    let run = sandbox
        .hpp(["evidence", "run", "--id", "unit", "--", "sh", &script])
        .exit(1);
    assert!(
        run.stderr.contains("error: expected 3, got 4"),
        "the output is streamed as it runs:\n{run}"
    );
    assert!(run.stdout.contains("its output ended with:"), "{run}");
    assert!(run.stdout.contains("| error: expected 3, got 4"), "{run}");
    assert!(
        !run.stdout.contains("ghp_0123"),
        "the tail shown is the redacted one:\n{run}"
    );
    let shown = sandbox.hpp(["evidence", "show", "unit"]).json(0);
    let tail = &shown["output_tail"];
    assert_eq!(tail["stdout"], "compiling\n");
    let stderr = tail["stderr"].as_str().expect("a string");
    assert!(stderr.contains("error: expected 3, got 4"), "{stderr}");
    assert!(stderr.contains("[REDACTED:"), "{stderr}");
    assert!(!stderr.contains("ghp_0123"), "{stderr}");
    assert_eq!(tail["max_chars"], 4000);
    // The tail is part of the sealed record: its self-hash holds (the bundle is refused for
    // its verdict, not for its bytes).
    let verified = sandbox
        .hpp(["evidence", "verify", "unit", "--json"])
        .json(1);
    let text = verified.to_string();
    assert!(text.contains("did not pass"), "{text}");
    assert!(!text.contains("edited after it was written"), "{text}");
}

#[test]
fn control_quiet_streams_nothing_and_a_passing_run_shows_no_tail() {
    let sandbox = Sandbox::repo();
    let run = sandbox
        .hpp([
            "-q",
            "evidence",
            "run",
            "--id",
            "quiet",
            "--",
            "sh",
            "-c",
            "echo loud",
        ])
        .ok();
    assert_eq!(run, "", "nothing on stdout with -q on success");
    let loud = sandbox
        .hpp([
            "evidence",
            "run",
            "--id",
            "loud",
            "--",
            "sh",
            "-c",
            "echo loud",
        ])
        .exit(0);
    assert!(loud.stderr.contains("loud"), "{loud}");
    assert!(!loud.stdout.contains("its output ended with"), "{loud}");
}

#[test]
fn record_event_needs_no_artifact_the_bundle_is_the_evidence() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let run = sandbox
        .hpp([
            "evidence",
            "run",
            "--id",
            "unit-tests",
            "--record-event",
            "--json",
            "--",
            "sh",
            "-c",
            "echo ok",
        ])
        .json(0);
    assert_eq!(run["verdict"], "passed");
    assert_eq!(run["event"]["type"], "evidence_recorded", "{run}");
    let verified = sandbox.hpp(["event", "verify", "--json"]).json(0);
    assert_eq!(verified["events"], 2, "{verified}");
}

#[test]
fn a_failed_criterions_intact_record_is_not_evidence_and_an_edited_one_is_blocked() {
    // CONCEPTS.md, evidence bundle: a run that failed records the truth; its record verifies
    // as not-evidence (exit 1). Change an artifact after a passed run: blocked (exit 2).
    let sandbox = Sandbox::repo();
    sandbox.ignore_outputs();
    let failed = evidence_run(
        &sandbox,
        "smoke-page",
        &["--artifact", "out/report.html"],
        &[
            "sh",
            "-c",
            "mkdir -p out && echo page > out/report.html && exit 1",
        ],
    )
    .json(1);
    assert_eq!(failed["verdict"], "failed");
    let report = sandbox
        .hpp(["evidence", "verify", record_ref(&failed).as_str(), "--json"])
        .json(1);
    assert_eq!(report["status"], "not-evidence");
    let passed = passing_run(&sandbox, "smoke-ok", &[]);
    std::fs::write(sandbox.root.join("out/r.txt"), "changed\n").expect("writable");
    let changed = sandbox
        .hpp(["evidence", "verify", record_ref(&passed).as_str(), "--json"])
        .json(2);
    assert_eq!(changed["status"], "blocked");
}
