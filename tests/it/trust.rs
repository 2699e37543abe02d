//! Trust from a clone, end to end on real repositories: machine A records work, evidence and a
//! signed attestation and pushes them to a bare remote; machine B clones, fetches the records
//! and verifies with nothing but the repository and an allowed-signers file. Each tamper on B
//! is caught; sync never forces; `remote setup` makes plain `git fetch` stage the records.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::harness::{Run, Sandbox, keygen};

/// Machine A (the sandbox's repository), the bare remote and machine B (a clone).
struct Trust {
    sandbox: Sandbox,
    remote: PathBuf,
    b: PathBuf,
    /// The public key line of the checker's signing key.
    public_key: String,
    /// B's allowed-signers file: `checker-b <public key>`.
    allowed: PathBuf,
    attestation: String,
    evidence: String,
}

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// Clones the remote into the sandbox as `name`, without fetching any record.
fn clone(trust: &Trust, name: &str) -> PathBuf {
    let dir = trust.sandbox.path(name);
    trust
        .sandbox
        .git(["clone", "-q", text(&trust.remote), text(&dir)]);
    dir
}

/// A on `main` with `out/` ignored: one event, one evidence bundle (recorded in the loop), an
/// approved attestation of HEAD's tree (signed by checker-b with a fresh key when `signed`),
/// pushed with `git hpp push` and `git push`; B cloned and `git hpp fetch`ed.
fn setup(signed: bool) -> Trust {
    let sandbox = Sandbox::repo();
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    sandbox.git(["remote", "add", "origin", text(&remote)]);
    std::fs::write(sandbox.root.join(".gitignore"), "out/\n").expect("the sandbox is writable");
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nThe run prints ok.\n")
        .expect("the sandbox is writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);

    sandbox.start_work().ok();
    sandbox
        .hpp([
            "evidence",
            "run",
            "--id",
            "tests",
            "--artifact",
            "out/*.txt",
            "--record-event",
            "--",
            "sh",
            "-c",
            "mkdir -p out; echo ok > out/r.txt",
        ])
        .ok();
    assert!(
        sandbox.git(["status", "--porcelain"]).is_empty(),
        "the run's output is ignored, so the snapshot is HEAD's tree"
    );
    let (key, public_key) = keygen(&sandbox, "key");
    let mut args = crate::harness::attest_args("review:001", "approved");
    args.push("--json");
    if signed {
        args.extend(["--sign-key", text(&key)]);
    }
    let created = sandbox.hpp_in(&sandbox.root, &args).json(0);
    let attestation = created["ref"].as_str().expect("a ref").to_owned();
    let evidence = created["record"]["evidence"][0]["ref"]
        .as_str()
        .expect("the loop's evidence is bound")
        .to_owned();
    if signed {
        assert_eq!(
            created["record"]["signer"], "checker-b",
            "the signer defaults to the checker"
        );
    }
    sandbox.hpp(["push"]).ok();
    sandbox.git(["push", "-q", "origin", "main"]);

    let b = sandbox.path("b");
    sandbox.git(["clone", "-q", text(&remote), text(&b)]);
    sandbox.hpp_in(&b, &["fetch"]).ok();
    let allowed = sandbox.path("allowed");
    std::fs::write(&allowed, format!("checker-b {public_key}\n")).expect("writable");
    Trust {
        sandbox,
        remote,
        b,
        public_key,
        allowed,
        attestation,
        evidence,
    }
}

impl Trust {
    /// Runs `git hpp verify --allowed-signers <file> --require-signed --json` on B with `extra`.
    #[track_caller]
    fn verify_on_b(&self, allowed: &Path, extra: &[&str], code: i32) -> serde_json::Value {
        let mut args = vec![
            "verify",
            "--allowed-signers",
            text(allowed),
            "--require-signed",
            "--json",
        ];
        args.extend_from_slice(extra);
        self.sandbox.hpp_in(&self.b, &args).json(code)
    }

    /// B's git, asserting success.
    fn git_b(&self, args: &[&str]) -> String {
        self.sandbox.git_in(&self.b, args)
    }

    /// Writes an allowed-signers file listing checker-b with `options` and B's usual key.
    fn allowed_with(&self, name: &str, options: &str) -> PathBuf {
        let file = self.sandbox.path(name);
        std::fs::write(&file, format!("checker-b {options} {}\n", self.public_key))
            .expect("writable");
        file
    }
}

/// The first commit's verification from a `verify --json` report.
fn first(report: &serde_json::Value) -> &serde_json::Value {
    &report["commits"][0]
}

#[track_caller]
fn assert_signature_refused(report: &serde_json::Value, detail: &str) {
    let commit = first(report);
    assert_eq!(commit["ok"], false, "{report}");
    assert_eq!(
        commit["verification"]["mismatches"],
        serde_json::json!(["signature"]),
        "{report}"
    );
    let signature = &commit["verification"]["candidates"][0]["signature"];
    assert_eq!(signature["status"], "refused", "{report}");
    let got = signature["detail"].as_str().unwrap_or_default();
    assert!(got.contains(detail), "expected {detail:?} in {got:?}");
    assert!(
        commit["missing"]
            .as_str()
            .unwrap_or_default()
            .contains(detail),
        "{report}"
    );
}

#[test]
fn control_the_untampered_clone_verifies_and_an_unsigned_one_only_without_signing() {
    let trust = setup(true);
    let report = trust.verify_on_b(&trust.allowed, &[], 0);
    assert_eq!(report["status"], "valid");
    assert_eq!(report["require_signed"], true);
    let commit = first(&report);
    assert_eq!(
        commit["commit"],
        trust.git_b(&["rev-parse", "HEAD"]).as_str()
    );
    assert_eq!(
        commit["verification"]["attestation"],
        trust.attestation.as_str()
    );
    assert_eq!(
        commit["verification"]["candidates"][0]["signature"]["status"],
        "verified"
    );
    let human = trust
        .sandbox
        .hpp_in(
            &trust.b,
            &[
                "verify",
                "--allowed-signers",
                text(&trust.allowed),
                "--require-signed",
            ],
        )
        .ok();
    assert!(human.starts_with("ok   "), "{human}");
    assert!(human.contains("approved by checker-b"), "{human}");

    // An unsigned attestation verifies when nobody asks for signatures...
    let unsigned = setup(false);
    let report = unsigned
        .sandbox
        .hpp_in(&unsigned.b, &["verify", "--json"])
        .json(0);
    assert_eq!(
        first(&report)["verification"]["candidates"][0]["signature"]["status"],
        "not-signed"
    );
    // ...and fails as soon as they do.
    let report = unsigned.verify_on_b(&unsigned.allowed, &[], 2);
    assert_signature_refused(&report, "the record is not signed");
    let report = unsigned
        .sandbox
        .hpp_in(&unsigned.b, &["verify", "--require-signed", "--json"])
        .json(2);
    assert_eq!(
        first(&report)["verification"]["mismatches"],
        serde_json::json!(["signature"])
    );
}

#[test]
fn the_signature_verifies_by_hand_with_ssh_keygen_from_the_clone() {
    let trust = setup(true);
    let sig = trust.sandbox.path("attestation.sig");
    let armored = trust.git_b(&["show", &format!("{}:attestation.sig", trust.attestation)]);
    std::fs::write(&sig, format!("{armored}\n")).expect("writable");
    let record = trust.sandbox.path("attestation.json");
    let out = trust
        .sandbox
        .command("git", &trust.b)
        .args(["show", &format!("{}:attestation.json", trust.attestation)])
        .output()
        .expect("git runs");
    assert!(out.status.success());
    std::fs::write(&record, &out.stdout).expect("writable");

    let keygen_verify = |signer: &str| {
        trust
            .sandbox
            .command("ssh-keygen", &trust.b)
            .args(["-Y", "verify", "-f", text(&trust.allowed), "-I", signer])
            .args(["-n", "hpp", "-s", text(&sig)])
            .stdin(std::fs::File::open(&record).expect("readable"))
            .output()
            .expect("ssh-keygen runs")
    };
    let good = keygen_verify("checker-b");
    assert!(good.status.success(), "{}", Run::from_output(&good));
    assert!(
        String::from_utf8_lossy(&good.stdout).contains("Good \"hpp\" signature for checker-b"),
        "{}",
        Run::from_output(&good)
    );
    let wrong = keygen_verify("maker-a");
    assert!(!wrong.status.success(), "only checker-b may have signed");
}

#[test]
fn an_edited_record_recommitted_at_the_same_ref_fails_its_signature() {
    let trust = setup(true);
    let listing = trust.git_b(&["ls-tree", &trust.attestation]);
    let original = trust.git_b(&["show", &format!("{}:attestation.json", trust.attestation)]);
    let edited = original.replace("maker-a", "maker-z");
    assert_ne!(edited, original);
    let file = trust.sandbox.path("edited.json");
    std::fs::write(&file, &edited).expect("writable");
    let blob = trust.git_b(&["hash-object", "-w", text(&file)]);
    let entries: String = listing
        .lines()
        .map(|line| {
            if line.ends_with("\tattestation.json") {
                format!("100644 blob {blob}\tattestation.json\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let mut mktree = trust
        .sandbox
        .command("git", &trust.b)
        .arg("mktree")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git mktree runs");
    mktree
        .stdin
        .take()
        .expect("piped")
        .write_all(entries.as_bytes())
        .expect("git mktree reads its input");
    let out = mktree.wait_with_output().expect("git mktree finishes");
    assert!(out.status.success());
    let tree = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    let commit = trust.git_b(&["commit-tree", &tree, "-m", "forged"]);
    trust.git_b(&["update-ref", &trust.attestation, &commit]);
    assert_eq!(
        trust.git_b(&["show", &format!("{}:attestation.json", trust.attestation)]),
        edited
    );

    let report = trust.verify_on_b(&trust.allowed, &[], 2);
    assert_signature_refused(&report, "the record's bytes changed after it was signed");
}

#[test]
fn a_signature_by_a_key_the_allowed_signers_do_not_list_is_refused() {
    let trust = setup(true);
    let (_, other_key) = keygen(&trust.sandbox, "other-key");
    let allowed = trust.sandbox.path("allowed-other");
    std::fs::write(&allowed, format!("checker-b {other_key}\n")).expect("writable");
    let report = trust.verify_on_b(&allowed, &[], 2);
    assert_signature_refused(&report, "the signature names no valid signer");
    // The right key listed for another principal does not help either.
    let allowed = trust.sandbox.path("allowed-maker");
    std::fs::write(&allowed, format!("maker-a {}\n", trust.public_key)).expect("writable");
    let report = trust.verify_on_b(&allowed, &[], 2);
    assert_signature_refused(&report, "the signature names no valid signer");
}

#[test]
fn an_expired_key_is_refused() {
    let trust = setup(true);
    let allowed = trust.allowed_with("allowed-expired", "valid-before=\"20200101\"");
    let report = trust.verify_on_b(&allowed, &[], 2);
    assert_signature_refused(&report, "the allowed-signers entry on line 1");
    let detail = first(&report)["verification"]["candidates"][0]["signature"]["detail"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(detail.contains("2020"), "{detail}");
}

#[test]
fn a_key_allowed_only_for_another_namespace_is_refused() {
    let trust = setup(true);
    let allowed = trust.allowed_with("allowed-git", "namespaces=\"git\"");
    let report = trust.verify_on_b(&allowed, &[], 2);
    assert_signature_refused(&report, "does not allow namespace \"hpp\"");
    // The control: the same line allowing hpp too passes.
    let allowed = trust.allowed_with("allowed-both", "namespaces=\"git,hpp\"");
    trust.verify_on_b(&allowed, &[], 0);
}

#[test]
fn an_attestation_copied_to_another_trees_ref_does_not_verify_that_tree() {
    let trust = setup(true);
    std::fs::write(trust.b.join("README"), "changed on B\n").expect("writable");
    trust.git_b(&["commit", "-q", "-a", "-m", "unattested change"]);
    let other_tree = trust.git_b(&["rev-parse", "HEAD^{tree}"]);
    let id = trust
        .attestation
        .rsplit('/')
        .next()
        .expect("the ref ends in an id");
    let copied = format!("refs/hpp/attestations/{other_tree}/{id}");
    let commit = trust.git_b(&["rev-parse", &trust.attestation]);
    trust.git_b(&["update-ref", &copied, &commit]);

    let report = trust.verify_on_b(&trust.allowed, &[], 2);
    let verification = &first(&report)["verification"];
    assert_eq!(verification["tree"], other_tree.as_str());
    assert_eq!(verification["attestation"], copied.as_str());
    assert_eq!(
        verification["mismatches"],
        serde_json::json!(["snapshot_digest"])
    );
    // The original commit still verifies: the range shows one good and one bad commit.
    let range = trust.verify_on_b(&trust.allowed, &["HEAD~1..HEAD"], 2);
    assert_eq!(range["commits"].as_array().map(Vec::len), Some(1));
    trust.verify_on_b(&trust.allowed, &["HEAD~1"], 0);
}

#[test]
fn a_deleted_evidence_bundle_the_attestation_names_fails_verification() {
    let trust = setup(true);
    trust.git_b(&["update-ref", "-d", &trust.evidence]);
    let report = trust.verify_on_b(&trust.allowed, &[], 2);
    let commit = first(&report);
    assert_eq!(
        commit["verification"]["mismatches"],
        serde_json::json!(["evidence"]),
        "{report}"
    );
    let missing = commit["missing"].as_str().unwrap_or_default();
    assert!(missing.contains("evidence"), "{missing}");
    assert!(missing.contains(&trust.evidence), "{missing}");
    let human = trust
        .sandbox
        .hpp_in(
            &trust.b,
            &[
                "verify",
                "--allowed-signers",
                text(&trust.allowed),
                "--require-signed",
            ],
        )
        .exit(2);
    assert!(human.stdout.starts_with("FAIL "), "{human}");
    assert!(human.stdout.contains("evidence"), "{human}");
}

#[test]
fn pushing_again_reports_everything_up_to_date() {
    let trust = setup(true);
    let again = trust.sandbox.hpp(["push", "--json"]).json(0);
    assert_eq!(again["updated"], serde_json::json!([]));
    assert_eq!(again["rejected"], serde_json::json!([]));
    assert_eq!(
        again["up_to_date"], 4,
        "a loop, an evidence bundle, an attestation, the notes"
    );
    let human = trust.sandbox.hpp(["push"]).ok();
    assert!(human.contains("0 updated, 4 up to date"), "{human}");
    let fetched = trust.sandbox.hpp_in(&trust.b, &["fetch", "--json"]).json(0);
    assert_eq!(fetched["updated"], serde_json::json!([]));
}

#[test]
fn a_diverged_loop_is_never_overwritten_by_push_or_fetch() {
    let trust = setup(true);
    let sandbox = &trust.sandbox;
    let append = |dir: &Path, who: &str| {
        sandbox
            .hpp_in(
                dir,
                &[
                    "event",
                    "append",
                    "--type",
                    "work_started",
                    "--loop",
                    "feature",
                    "--data",
                    &format!(r#"{{"who":"{who}","work":"W","maker":"agent-a"}}"#),
                ],
            )
            .ok();
    };
    append(&trust.b, "b");
    append(&sandbox.root, "a");
    let loop_ref = "refs/hpp/loops/feature";
    sandbox.hpp_in(&trust.b, &["push"]).ok();
    let remote_tip = sandbox.git(["ls-remote", text(&trust.remote), loop_ref]);
    assert!(
        remote_tip.starts_with(&trust.git_b(&["rev-parse", loop_ref])),
        "B's push won: {remote_tip}"
    );
    let a_tip = sandbox.git(["rev-parse", loop_ref]);

    let pushed = sandbox.hpp(["push", "--json"]).json(2);
    assert_eq!(pushed["rejected"][0]["ref"], loop_ref, "{pushed}");
    assert_eq!(pushed["rejected"].as_array().map(Vec::len), Some(1));
    let human = sandbox.hpp(["push"]).exit(2);
    assert!(
        human.stdout.contains(&format!("diverged: {loop_ref}")),
        "{human}"
    );
    assert!(human.stdout.contains("nothing was overwritten"), "{human}");
    assert_eq!(
        sandbox.git(["ls-remote", text(&trust.remote), loop_ref]),
        remote_tip,
        "the remote keeps B's loop"
    );

    let fetched = sandbox.hpp(["fetch", "--json"]).json(1);
    assert_eq!(fetched["diverged"][0]["ref"], loop_ref, "{fetched}");
    assert_eq!(
        sandbox.git(["rev-parse", loop_ref]),
        a_tip,
        "A keeps its own loop"
    );
    let events = sandbox
        .hpp(["event", "verify", "--loop", "feature", "--json"])
        .json(0);
    assert_eq!(events["head"], a_tip.as_str());
}

#[test]
fn remote_setup_plans_then_applies_once_so_a_plain_fetch_stages_the_records() {
    let trust = setup(true);
    let c = clone(&trust, "c");
    let config = |dir: &Path| trust.sandbox.git_in(dir, &["config", "--local", "--list"]);
    let before = config(&c);
    let plan = trust.sandbox.hpp_in(&c, &["remote", "setup"]).ok();
    assert!(
        plan.contains("+refs/hpp/*:refs/hpp-remote/origin/*"),
        "{plan}"
    );
    assert!(plan.contains("--apply"), "{plan}");
    assert_eq!(config(&c), before, "a plan writes nothing");

    let applied = trust
        .sandbox
        .hpp_in(&c, &["remote", "setup", "--apply", "--json"])
        .json(0);
    assert_eq!(applied["applied"], true);
    let fetch = trust
        .sandbox
        .git_in(&c, &["config", "--get-all", "remote.origin.fetch"]);
    assert!(
        fetch
            .lines()
            .any(|l| l == "+refs/hpp/*:refs/hpp-remote/origin/*"),
        "records are fetched into their staging mirror: {fetch}"
    );
    assert!(
        !fetch.lines().any(|l| l.ends_with(":refs/hpp/*")),
        "nothing is fetched straight into the records: {fetch}"
    );
    let push = trust
        .sandbox
        .git_in(&c, &["config", "--get-all", "remote.origin.push"]);
    assert!(push.lines().any(|l| l == "refs/hpp/*:refs/hpp/*"), "{push}");
    assert!(!push.contains("+refs/hpp"), "a push never forces: {push}");
    let after = config(&c);

    let again = trust
        .sandbox
        .hpp_in(&c, &["remote", "setup", "--apply", "--json"])
        .json(0);
    assert_eq!(again["steps"], serde_json::json!([]));
    assert_eq!(config(&c), after, "a second --apply adds nothing");

    trust.sandbox.git_in(&c, &["fetch", "-q"]);
    let staged = trust.sandbox.git_in(
        &c,
        &[
            "for-each-ref",
            "--format=%(objectname)\t%(refname)",
            "refs/hpp-remote/origin/",
        ],
    );
    let remote = trust
        .sandbox
        .git_in(&c, &["ls-remote", "origin", "refs/hpp/*"])
        .replace("\trefs/hpp/", "\trefs/hpp-remote/origin/");
    assert_eq!(staged, remote, "a plain git fetch staged every record");
    assert!(
        trust
            .sandbox
            .git_in(&c, &["for-each-ref", "refs/hpp/"])
            .is_empty(),
        "and took none in behind the user's back"
    );
    let taken = trust.sandbox.hpp_in(&c, &["fetch", "--json"]).json(0);
    assert_eq!(
        taken["updated"].as_array().map(Vec::len),
        Some(3),
        "{taken}"
    );
    trust
        .sandbox
        .hpp_in(
            &c,
            &[
                "verify",
                "--allowed-signers",
                text(&trust.allowed),
                "--require-signed",
            ],
        )
        .ok();
}

#[test]
fn control_remote_setup_refuses_an_unknown_remote() {
    let trust = setup(false);
    let reason = trust
        .sandbox
        .hpp_in(&trust.b, &["remote", "setup", "nowhere", "--apply"])
        .refused();
    assert_eq!(reason, "no remote named nowhere");
}

#[test]
fn fetching_again_counts_every_record_as_up_to_date() {
    let trust = setup(true);
    let fetched = trust.sandbox.hpp_in(&trust.b, &["fetch", "--json"]).json(0);
    assert_eq!(fetched["updated"], serde_json::json!([]));
    assert_eq!(
        fetched["up_to_date"], 3,
        "a loop, an evidence bundle, an attestation"
    );
}

#[test]
fn a_stray_ref_beside_a_valid_attestation_does_not_block_its_tree() {
    let trust = setup(true);
    let tree = trust.git_b(&["rev-parse", "HEAD^{tree}"]);
    let head = trust.git_b(&["rev-parse", "HEAD"]);
    trust.git_b(&[
        "update-ref",
        &format!("refs/hpp/attestations/{tree}/zzz-junk"),
        &head,
    ]);
    let report = trust.verify_on_b(&trust.allowed, &[], 0);
    let candidates = first(&report)["verification"]["candidates"]
        .as_array()
        .expect("a list")
        .clone();
    assert_eq!(candidates.len(), 2);
    let junk = candidates
        .iter()
        .find(|c| c["ref"].as_str().is_some_and(|r| r.ends_with("zzz-junk")))
        .expect("judged");
    assert!(
        junk["mismatches"]
            .as_array()
            .expect("a list")
            .iter()
            .any(|m| m == "schema"),
        "{junk}"
    );
}

#[test]
fn notes_written_on_two_machines_are_derived_on_fetch_and_push_again() {
    let trust = setup(false);
    // B attests a new commit of its own and publishes it first.
    std::fs::write(trust.b.join("B.txt"), "from b\n").expect("writable");
    trust.git_b(&["add", "B.txt"]);
    trust.git_b(&["commit", "-q", "-m", "b"]);
    let b_args = [
        "attest",
        "create",
        "--spec",
        "SPEC.md",
        "--maker",
        "maker-b",
        "--checker",
        "checker-c",
        "--session",
        "review:b",
        "--verdict",
        "approved",
    ];
    trust.sandbox.hpp_in(&trust.b, &b_args).ok();
    trust.sandbox.hpp_in(&trust.b, &["push"]).ok();
    trust.git_b(&["push", "-q", "origin", "HEAD:refs/heads/b"]);
    // A attests another commit; its notes now differ from the remote's.
    let a = &trust.sandbox;
    std::fs::write(a.root.join("A.txt"), "from a\n").expect("writable");
    a.git(["add", "A.txt"]);
    a.git(["commit", "-q", "-m", "a"]);
    a.hpp_in(
        &a.root,
        &crate::harness::attest_args("review:a", "approved"),
    )
    .ok();
    let pushed = a.hpp(["push", "--json"]).json(2);
    assert_eq!(pushed["rejected"][0]["ref"], "refs/notes/hpp", "{pushed}");
    // A takes B's branch, then its records: the fetch joins both sides' notes histories and
    // derives the lines of both commits from the records held here; the push is then a
    // fast-forward.
    a.git([
        "fetch",
        "-q",
        text(&trust.remote),
        "refs/heads/b:refs/remotes/b/main",
    ]);
    let fetched = a.hpp(["fetch", "--json"]).json(0);
    assert_eq!(fetched["notes_joined"], true, "{fetched}");

    a.hpp(["push"]).ok();
    a.git(["push", "-q", "origin", "HEAD:refs/heads/a"]);
    let a_head = a.git(["rev-parse", "HEAD"]);
    let b_head = trust.git_b(&["rev-parse", "HEAD"]);
    assert!(
        a.git(["notes", "--ref=hpp", "show", &a_head])
            .contains("session review:a")
    );
    assert!(
        a.git(["notes", "--ref=hpp", "show", &b_head])
            .contains("session review:b")
    );
    trust.git_b(&["fetch", "-q", "origin", "refs/heads/a:refs/remotes/a/main"]);
    trust.sandbox.hpp_in(&trust.b, &["fetch"]).ok();
    assert!(
        trust
            .git_b(&["notes", "--ref=hpp", "show", &a_head])
            .contains("session review:a")
    );
}

#[test]
fn a_fresh_clone_before_fetch_is_told_to_fetch_the_records() {
    let trust = setup(false);
    let fresh = clone(&trust, "fresh");
    let reason = trust.sandbox.hpp_in(&fresh, &["verify", "HEAD"]);
    assert_eq!(reason.code, 2, "{reason}");
    assert!(
        reason.stdout.contains("git hpp fetch") || reason.stderr.contains("git hpp fetch"),
        "{reason}"
    );
    trust.sandbox.hpp_in(&fresh, &["fetch"]).ok();
    trust.sandbox.hpp_in(&fresh, &["verify", "HEAD"]).ok();
}

#[test]
fn control_a_clone_with_records_but_no_attestation_is_told_to_attest_not_to_fetch() {
    let trust = setup(false);
    // B has fetched the records; a new commit there has none of its own.
    std::fs::write(trust.b.join("more.txt"), "more\n").expect("writable");
    trust.sandbox.git_in(&trust.b, &["add", "more.txt"]);
    trust
        .sandbox
        .git_in(&trust.b, &["commit", "-q", "-m", "more"]);
    let run = trust.sandbox.hpp_in(&trust.b, &["verify", "HEAD"]);
    assert_eq!(run.code, 2, "{run}");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("git hpp attest create"), "{said}");
    assert!(!said.contains("git hpp fetch"), "{said}");
}

#[test]
fn a_failed_push_says_gits_whole_error_on_one_line() {
    let trust = setup(false);
    let missing = trust.sandbox.path("no-such-remote.git");
    let run = trust.sandbox.hpp(["push", text(&missing)]).exit(2);
    let line = run.stderr.lines().next().unwrap_or_default().to_owned();
    assert!(
        line.contains("does not appear to be a git repository")
            && line.contains("the repository exists"),
        "{run}"
    );
    assert!(run.stdout.is_empty(), "{run}");
}

#[test]
fn verify_on_an_unborn_branch_says_there_is_no_commit_yet_and_what_to_do() {
    let sandbox = crate::harness::Sandbox::empty();
    sandbox.git(["init", "-q", "-b", "main"]);
    let run = sandbox.hpp(["verify"]).exit(2);
    assert!(run.stdout.is_empty());
    assert_eq!(
        run.stderr.lines().next(),
        Some("hpp: HEAD has no commit yet: the branch is unborn"),
        "{run}"
    );
    assert!(run.stderr.contains("hint: commit first"), "{run}");
}

#[test]
fn control_a_revision_that_names_nothing_keeps_the_plain_refusal() {
    let trust = setup(false);
    let reason = trust
        .sandbox
        .hpp_in(&trust.b, &["verify", "no-such-branch"])
        .refused();
    assert_eq!(reason, "no-such-branch: names no commit");
}
