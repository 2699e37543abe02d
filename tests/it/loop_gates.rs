//! The loop's gates measure: each is refused with its precise reason and accepted with real
//! records, and `event verify` re-checks what each event's gate checked.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{Run, SCOPE, Sandbox};

/// Appends `kind` to loop `main` with `extra` flags.
fn append(sandbox: &Sandbox, kind: &str, extra: &[&str]) -> Run {
    let mut args = vec!["event", "append", "--type", kind];
    args.extend(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

/// Runs a real criterion as bundle `id` without appending an event; its artifact is ignored.
fn bundle(sandbox: &Sandbox, id: &str) {
    sandbox.ignore_outputs();
    let artifact = format!("hpp-out/{id}.txt");
    let script = format!("mkdir -p hpp-out && date +%s%N >> {artifact}");
    sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "evidence",
                "run",
                "--id",
                id,
                "--artifact",
                &artifact,
                "--",
                "sh",
                "-c",
                &script,
            ],
        )
        .ok();
}

/// Records a verdict on the workspace with README as the spec; `extra` flags go last.
fn attest(
    sandbox: &Sandbox,
    maker: &str,
    checker: &str,
    session: &str,
    verdict: &str,
    extra: &[&str],
) -> Run {
    let mut args = vec![
        "attest",
        "create",
        "--spec",
        "README",
        "--maker",
        maker,
        "--checker",
        checker,
        "--session",
        session,
        "--verdict",
        verdict,
    ];
    args.extend(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

fn loop_tip(sandbox: &Sandbox) -> String {
    sandbox.git([
        "for-each-ref",
        "--format=%(objectname)",
        "refs/hpp/loops/main",
    ])
}

/// Asserts a gate refusal of `kind`: exit 2, the gate named, `needle` in the reason, and the
/// loop's ref where it was.
#[track_caller]
fn refused_at(sandbox: &Sandbox, kind: &str, extra: &[&str], gate: &str, needle: &str) -> String {
    let before = loop_tip(sandbox);
    let reason = append(sandbox, kind, extra).refused();
    assert!(
        reason.starts_with(&format!("gate {gate} refused: ")),
        "{reason}"
    );
    assert!(reason.contains(needle), "{needle:?} not in: {reason}");
    assert_eq!(loop_tip(sandbox), before, "nothing was written");
    reason
}

#[test]
fn control_five_bare_appends_are_refused_at_the_second() {
    let sandbox = Sandbox::repo();
    // Fully bare, the first is refused too: the scope names nothing.
    refused_at(
        &sandbox,
        "work_started",
        &[],
        "scope",
        "names no work item and no maker",
    );
    append(&sandbox, "work_started", &SCOPE).ok();
    refused_at(
        &sandbox,
        "evidence_recorded",
        &[],
        "fresh-evidence",
        "names 0 evidence bundle(s), at least 1 required",
    );
    for kind in ["check_passed", "human_approved", "verified"] {
        let reason = append(&sandbox, kind, &[]).refused();
        assert!(reason.contains("invalid transition at event 2"), "{reason}");
    }
    let status = sandbox.hpp(["status", "--json"]).json(0);
    assert_eq!(status["state"], "active");
}

#[test]
fn every_gate_passes_on_real_records_and_event_verify_says_ok() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let verify = sandbox.hpp(["event", "verify", "--json"]).json(0);
    let gates: Vec<(&str, &str)> = verify["gates"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|g| {
            (
                g["gate"].as_str().unwrap_or_default(),
                g["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        gates,
        [
            ("scope", "ok"),
            ("fresh-evidence", "ok"),
            ("read-only-checker", "ok"),
            ("human", "ok"),
            ("closure", "ok")
        ]
    );
    // What each gate checked is in the event, for a reviewer to re-check from a clone.
    let log = sandbox.hpp(["event", "log", "--json"]).json(0);
    let check = &log["events"][2]["data"];
    assert_eq!(check["checker"], "checker-b");
    assert!(
        check["attestation"]
            .as_str()
            .is_some_and(|a| a.starts_with("refs/hpp/attestations/"))
    );
    assert_eq!(
        check["gate"]["tree"],
        Value::String(sandbox.git(["rev-parse", "HEAD^{tree}"]))
    );
    let status = sandbox.hpp(["status"]).ok();
    assert!(status.contains("gate closure: holds (event:5)"), "{status}");
    assert!(
        status.contains("next: nothing: the loop is closed"),
        "{status}"
    );
}

#[test]
fn control_scope_needs_both_the_work_and_the_maker_and_the_maker_is_fixed() {
    let sandbox = Sandbox::repo();
    refused_at(
        &sandbox,
        "work_started",
        &["--work", "ITEM-1"],
        "scope",
        "names no maker",
    );
    append(&sandbox, "work_started", &SCOPE).ok();
    bundle(&sandbox, "unit");
    refused_at(
        &sandbox,
        "evidence_recorded",
        &["--evidence", "unit", "--maker", "agent-z"],
        "fresh-evidence",
        "the loop's maker is agent-a (named at event:1); this event names agent-z",
    );
    append(&sandbox, "evidence_recorded", &["--evidence", "unit"]).ok();
}

#[test]
fn control_fresh_evidence_refuses_a_missing_failed_or_stale_bundle() {
    let sandbox = Sandbox::repo();
    append(&sandbox, "work_started", &SCOPE).ok();
    refused_at(
        &sandbox,
        "evidence_recorded",
        &["--evidence", "nosuch"],
        "fresh-evidence",
        "no evidence bundle named nosuch",
    );
    let _ = sandbox
        .hpp(["evidence", "run", "--id", "red", "--", "false"])
        .exit(1);
    refused_at(
        &sandbox,
        "evidence_recorded",
        &["--evidence", "red"],
        "fresh-evidence",
        "the run did not pass (verdict: failed)",
    );
    // A bundle of an older tree: the work changed after it ran.
    bundle(&sandbox, "unit");
    let then = sandbox.git(["rev-parse", "HEAD^{tree}"]);
    std::fs::write(sandbox.root.join("README"), "changed\n").expect("writable");
    let reason = refused_at(
        &sandbox,
        "evidence_recorded",
        &["--evidence", "unit"],
        "fresh-evidence",
        &format!("ran on tree {}; the loop is at ", &then[..12]),
    );
    assert!(reason.contains("run it again on this tree"), "{reason}");
    bundle(&sandbox, "unit");
    append(&sandbox, "evidence_recorded", &["--evidence", "unit"]).ok();
}

#[test]
fn a_team_can_harden_a_gate_in_the_manifest() {
    let sandbox = Sandbox::repo();
    let builtin: Value = serde_json::from_str(include_str!("../../hpp.manifest.json"))
        .expect("the manifest is JSON");
    let mut manifest = builtin.clone();
    manifest["loop"]["gates"]["fresh-evidence"]["at_least"] = Value::from(2);
    let path = sandbox.root.join("hpp.manifest.json");
    std::fs::write(&path, serde_json::to_string(&manifest).expect("JSON")).expect("writable");
    sandbox.git(["add", "hpp.manifest.json"]);
    sandbox.git(["commit", "-q", "-m", "two bundles per loop"]);
    append(&sandbox, "work_started", &SCOPE).ok();
    bundle(&sandbox, "unit");
    bundle(&sandbox, "lint");
    refused_at(
        &sandbox,
        "evidence_recorded",
        &["--evidence", "unit"],
        "fresh-evidence",
        "names 1 evidence bundle(s), at least 2 required",
    );
    append(
        &sandbox,
        "evidence_recorded",
        &["--evidence", "unit", "--evidence", "lint"],
    )
    .ok();
}

#[test]
fn control_read_only_checker_refuses_the_maker_checking_their_own_work() {
    let sandbox = Sandbox::repo();
    sandbox.walk_steps("main", 0..2);
    refused_at(
        &sandbox,
        "check_passed",
        &[],
        "read-only-checker",
        "no attestation of tree",
    );
    // The loop's maker records an approval naming someone else as maker.
    attest(
        &sandbox,
        "someone-else",
        "agent-a",
        "review:self",
        "approved",
        &[],
    )
    .ok();
    refused_at(
        &sandbox,
        "check_passed",
        &[],
        "read-only-checker",
        "is by agent-a, the loop's maker: a maker cannot check their own work",
    );
    let own = sandbox.git([
        "for-each-ref",
        "--format=%(refname)",
        "refs/hpp/attestations/",
    ]);
    refused_at(
        &sandbox,
        "check_passed",
        &["--attestation", own.trim()],
        "read-only-checker",
        "its checker agent-a is the loop's maker",
    );
    sandbox.approve_tree("checker-b");
    append(&sandbox, "check_passed", &[]).ok();
}

#[test]
fn control_read_only_checker_refuses_an_approval_of_another_tree_or_a_revoked_one() {
    let sandbox = Sandbox::repo();
    sandbox.walk_steps("main", 0..2);
    sandbox.approve_tree("checker-b");
    let _ = attest(&sandbox, "agent-a", "checker-b", "review:2", "revise", &[]).exit(2);
    refused_at(
        &sandbox,
        "check_passed",
        &[],
        "read-only-checker",
        "no approval of tree",
    );
    sandbox.approve_tree("checker-b");
    // The workspace moves after the evidence: the checker no longer checks what ran.
    std::fs::write(sandbox.root.join("NEW"), "new\n").expect("writable");
    sandbox.approve_tree("checker-b");
    refused_at(
        &sandbox,
        "check_passed",
        &[],
        "read-only-checker",
        "the evidence of event:2 ran on tree",
    );
    std::fs::remove_file(sandbox.root.join("NEW")).expect("removable");
    append(&sandbox, "check_passed", &[]).ok();
}

#[test]
fn control_closure_refuses_when_the_tree_moved_or_a_record_was_revoked() {
    let sandbox = Sandbox::repo();
    sandbox.walk_steps("main", 0..4);
    std::fs::write(sandbox.root.join("README"), "changed\n").expect("writable");
    refused_at(
        &sandbox,
        "verified",
        &[],
        "closure",
        "the loop can only close on the tree its gates measured",
    );
    std::fs::write(sandbox.root.join("README"), "hello\n").expect("writable");
    let _ = attest(&sandbox, "agent-a", "checker-b", "review:2", "blocked", &[]).exit(2);
    refused_at(
        &sandbox,
        "verified",
        &[],
        "closure",
        "read-only-checker (event:3) no longer holds: checker-b revoked the approval",
    );
    sandbox.approve_tree("checker-b");
    append(&sandbox, "verified", &[]).ok();
}

#[test]
fn a_revoked_approval_no_longer_holds_in_event_verify() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let _ = attest(&sandbox, "agent-a", "checker-b", "review:2", "revise", &[]).exit(2);
    let run = sandbox.hpp(["event", "verify", "--json"]);
    let verify = run.json(2);
    assert_eq!(
        verify["status"], "intact",
        "the chain itself is a separate verdict"
    );
    assert_eq!(verify["gates"][2]["status"], "no-longer-holds");
    assert_eq!(verify["gates"][4]["status"], "no-longer-holds");
    let status = sandbox.hpp(["status"]).ok();
    assert!(
        status.contains("gate read-only-checker: no longer holds: checker-b revoked"),
        "{status}"
    );
    assert!(
        status.starts_with("HPP status: verified (not standing: gate "),
        "the state is not read as standing: {status}"
    );
    let json = sandbox.hpp(["status", "--json"]).json(0);
    assert_eq!(json["standing"], false, "{json}");
}

#[test]
fn records_not_fetched_are_a_missing_reference_not_a_broken_gate() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let clone = sandbox.path("clone");
    sandbox.git(["clone", "-q", text(&sandbox.root), text(&clone)]);
    // Only the loop travels; the evidence and attestations it names stay behind.
    sandbox.git_in(
        &clone,
        &["fetch", "-q", "origin", "refs/hpp/loops/*:refs/hpp/loops/*"],
    );
    let run = sandbox.hpp_in(&clone, &["event", "verify", "--loop", "main", "--json"]);
    let verify = run.json(1);
    assert_eq!(verify["gates"][1]["status"], "reference-missing");
    assert!(
        verify["gates"][1]["record"]
            .as_str()
            .is_some_and(|r| r.starts_with("refs/hpp/evidence/unit-"))
    );
    let human = sandbox.hpp_in(&clone, &["event", "verify", "--loop", "main"]);
    assert!(human.stdout.contains("reference missing"), "{human}");
    // Fetching the records makes every gate hold again.
    sandbox.hpp_in(&clone, &["fetch"]).ok();
    sandbox
        .hpp_in(&clone, &["event", "verify", "--loop", "main"])
        .ok();
}

#[test]
fn control_attest_create_refuses_evidence_of_another_tree() {
    let sandbox = Sandbox::repo();
    bundle(&sandbox, "unit");
    std::fs::write(sandbox.root.join("README"), "changed\n").expect("writable");
    let reason = attest(
        &sandbox,
        "agent-a",
        "checker-b",
        "review:1",
        "approved",
        &["--evidence", "unit"],
    )
    .refused();
    assert!(reason.contains("the tree being attested"), "{reason}");
    assert!(
        !sandbox.hpp_refs().contains("refs/hpp/attestations/"),
        "nothing was written"
    );
    bundle(&sandbox, "unit");
    attest(
        &sandbox,
        "agent-a",
        "checker-b",
        "review:1",
        "approved",
        &["--evidence", "unit"],
    )
    .ok();
}

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// A person's key and an allowed-signers file; `person` marks the principal as a person.
fn person_key(sandbox: &Sandbox, person: bool) -> (PathBuf, PathBuf) {
    let key = sandbox.path("alice.key");
    let out = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen runs");
    assert!(out.status.success(), "{}", Run::from_output(&out));
    let public = std::fs::read_to_string(format!("{}.pub", key.display())).expect("a public key");
    let namespaces = if person { "hpp,hpp-human" } else { "hpp" };
    let allowed = sandbox.path("allowed_signers");
    std::fs::write(
        &allowed,
        format!("alice namespaces=\"{namespaces}\" {}\n", public.trim()),
    )
    .expect("writable");
    (key, allowed)
}

#[test]
fn a_person_signs_their_approval_and_ssh_keygen_verifies_it() {
    let sandbox = Sandbox::repo();
    sandbox.walk_steps("main", 0..3);
    let (key, allowed) = person_key(&sandbox, true);
    append(
        &sandbox,
        "human_approved",
        &[
            "--by",
            "alice",
            "--sign-key",
            text(&key),
            "--allowed-signers",
            text(&allowed),
        ],
    )
    .ok();
    // The signature is OpenSSH's, over the event's exact bytes, in namespace hpp-human.
    let event = sandbox.path("event.json");
    std::fs::write(
        &event,
        sandbox.git(["cat-file", "blob", "refs/hpp/loops/main:event.json"]),
    )
    .expect("writable");
    let sig = sandbox.path("event.sig");
    std::fs::write(
        &sig,
        sandbox.git(["cat-file", "blob", "refs/hpp/loops/main:event.sig"]) + "\n",
    )
    .expect("writable");
    let out = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-Y", "verify", "-n", "hpp-human", "-I", "alice", "-f"])
        .arg(&allowed)
        .arg("-s")
        .arg(&sig)
        .stdin(std::fs::File::open(&event).expect("readable"))
        .output()
        .expect("ssh-keygen runs");
    assert!(out.status.success(), "{}", Run::from_output(&out));
    // The checker's approval the walk recorded is unsigned: with the signers file given,
    // signatures are required and it would not hold (one rule for every reader), so the person's
    // signature is checked against the file with unsigned records let through.
    append(
        &sandbox,
        "verified",
        &["--allowed-signers", text(&allowed), "--allow-unsigned"],
    )
    .ok();
    let run = sandbox
        .hpp(["event", "verify", "--allowed-signers", text(&allowed)])
        .exit(2);
    assert!(
        run.stdout.contains("gate human: ok"),
        "the person's signed approval holds: {run}"
    );
    assert!(
        run.stdout
            .contains("gate read-only-checker: no longer holds")
            && run.stdout.contains("unsigned"),
        "the unsigned approval does not, where signatures are required: {run}"
    );
}

#[test]
fn control_human_refuses_no_person_an_unsigned_approval_and_a_signer_not_marked_a_person() {
    let sandbox = Sandbox::repo();
    sandbox.walk_steps("main", 0..3);
    refused_at(
        &sandbox,
        "human_approved",
        &[],
        "human",
        "human_approved names no person: pass --by NAME",
    );
    let (key, allowed) = person_key(&sandbox, false);
    refused_at(
        &sandbox,
        "human_approved",
        &["--by", "alice", "--allowed-signers", text(&allowed)],
        "human",
        "signatures are required: alice signs the approval with --sign-key KEY",
    );
    refused_at(
        &sandbox,
        "human_approved",
        &[
            "--by",
            "alice",
            "--sign-key",
            text(&key),
            "--allowed-signers",
            text(&allowed),
        ],
        "human",
        "does not mark its principal as a person (list namespaces=\"hpp-human\" on it)",
    );
    refused_at(
        &sandbox,
        "human_approved",
        &[
            "--by",
            "bob",
            "--sign-key",
            text(&key),
            "--allowed-signers",
            text(&allowed),
        ],
        "human",
        "does not admit them as a person",
    );
    // Without signatures required, naming the person is enough.
    append(&sandbox, "human_approved", &["--by", "alice"]).ok();
}

#[test]
fn a_headline_whose_gates_rest_on_another_tree_says_so() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let here = sandbox.hpp(["status", "--json"]).json(0);
    assert_eq!(here["standing"], true, "{here}");
    std::fs::write(sandbox.root.join("later.txt"), "a later change\n").expect("writable");
    sandbox.git(["add", "later.txt"]);
    sandbox.git(["commit", "-q", "-m", "later"]);
    let status = sandbox.hpp(["status"]).ok();
    let headline = status.lines().next().unwrap_or_default();
    assert!(
        headline.starts_with("HPP status: verified (on tree ")
            && headline.contains("not this one)"),
        "{status}"
    );
    let resume = sandbox.hpp(["resume"]).json(0);
    assert_eq!(resume["standing"], false, "{resume}");
}

#[test]
fn a_snapshot_that_is_not_heads_tree_is_named_at_attest_and_evidence_and_status() {
    let sandbox = with_spec();
    sandbox.start_work().ok();
    std::fs::write(sandbox.root.join("notes.txt"), "not committed\n").expect("writable");
    let evidence = sandbox.hpp([
        "evidence",
        "run",
        "--id",
        "unit",
        "--record-event",
        "--",
        "true",
    ]);
    assert_eq!(evidence.code, 0, "{evidence}");
    assert!(
        evidence
            .stderr
            .contains("the workspace is not HEAD's tree: notes.txt differ"),
        "{evidence}"
    );
    let attest = sandbox.hpp_in(
        &sandbox.root,
        &crate::harness::attest_args("review:1", "approved"),
    );
    assert_eq!(attest.code, 0, "{attest}");
    assert!(attest.stderr.contains("notes.txt differ"), "{attest}");
    assert!(
        attest
            .stderr
            .contains("`git hpp verify` of HEAD will not find it"),
        "{attest}"
    );
    let status = sandbox.hpp(["status"]);
    assert!(status.stderr.contains("notes.txt differ"), "{status}");
}

#[test]
fn control_a_committed_workspace_is_not_named() {
    let sandbox = with_spec();
    sandbox.start_work().ok();
    let evidence = sandbox.hpp([
        "evidence",
        "run",
        "--id",
        "unit",
        "--record-event",
        "--",
        "true",
    ]);
    assert_eq!(evidence.code, 0, "{evidence}");
    assert!(!evidence.stderr.contains("not HEAD's tree"), "{evidence}");
    let attest = sandbox.hpp_in(
        &sandbox.root,
        &crate::harness::attest_args("review:1", "approved"),
    );
    assert_eq!(attest.code, 0, "{attest}");
    assert!(!attest.stderr.contains("not HEAD's tree"), "{attest}");
}

/// A repository with SPEC.md committed, as `attest_args` names it.
fn with_spec() -> Sandbox {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nIt works.\n").expect("writable");
    sandbox.git(["add", "SPEC.md"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    sandbox
}

#[test]
fn loops_and_the_atlas_say_when_a_verified_loop_rests_on_another_tree() {
    // Issue 31, friction 2: after new commits, `loops` and the atlas still said `verified`
    // while every gate said "held on tree X, not this one".
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let here = sandbox.hpp(["loops", "--json"]).json(0);
    assert_eq!(here["loops"][0]["standing"], true, "{here}");
    let line = sandbox.hpp(["loops"]).ok();
    assert!(!line.contains("not this one"), "{line}");
    std::fs::write(sandbox.root.join("later.txt"), "a later change\n").expect("writable");
    sandbox.git(["add", "later.txt"]);
    sandbox.git(["commit", "-q", "-m", "later"]);
    let listed = sandbox.hpp(["loops"]).ok();
    assert!(
        listed.contains("verified (on tree ") && listed.contains("not this one)"),
        "{listed}"
    );
    let json = sandbox.hpp(["loops", "--json"]).json(0);
    assert_eq!(json["loops"][0]["standing"], false, "{json}");
    assert_eq!(json["loops"][0]["state"], "verified", "{json}");
    let out = sandbox.path("atlas.html");
    sandbox
        .hpp([
            "atlas",
            "--html",
            out.to_str().expect("UTF-8"),
            "--now",
            "1764700000",
            "--json",
        ])
        .json(0);
    let page = std::fs::read_to_string(&out).expect("written");
    assert!(
        page.contains("verified (on tree "),
        "the atlas's loop row says so"
    );
}
