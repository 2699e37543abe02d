//! Attestations of the workspace snapshot: what `attest create` records and where, what it
//! refuses, and how `attest verify` follows the snapshot (tracked, untracked and ignored files),
//! a commit, a tree or one attestation ref, across an amend that keeps the tree.

use sha2::{Digest, Sha256};

use crate::harness::Sandbox;

/// The origin URL of every repository here; it must never be written into a record.
const ORIGIN: &str = "https://example.com/secret-org/secret-repo.git";

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A repository with an origin, `out/` ignored and a committed SPEC.md; the worktree is clean,
/// so the snapshot is HEAD's tree.
fn attestable() -> Sandbox {
    let sandbox = Sandbox::repo();
    sandbox.git(["remote", "add", "origin", ORIGIN]);
    std::fs::write(sandbox.root.join(".gitignore"), "out/\n").expect("the sandbox is writable");
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nThe tool greets.\n")
        .expect("the sandbox is writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    sandbox
}

/// Runs `attest create --json` with `verdict`, asserting `code`; returns its output.
#[track_caller]
fn create(sandbox: &Sandbox, verdict: &str, code: i32) -> serde_json::Value {
    let mut args = crate::harness::attest_args("review:001", verdict);
    args.push("--json");
    sandbox.hpp_in(&sandbox.root, &args).json(code)
}

fn attestation_ref(created: &serde_json::Value) -> String {
    created["ref"]
        .as_str()
        .expect("attest create reports its ref")
        .to_owned()
}

/// Runs `attest verify --json` with `args`, asserting `code`.
#[track_caller]
fn verify(sandbox: &Sandbox, args: &[&str], code: i32) -> serde_json::Value {
    let mut all = vec!["attest", "verify"];
    all.extend_from_slice(args);
    all.push("--json");
    sandbox.hpp_in(&sandbox.root, &all).json(code)
}

#[track_caller]
fn assert_blocked_by(report: &serde_json::Value, mismatch: &str) {
    assert_eq!(report["status"], "blocked", "{report}");
    assert!(
        report["mismatches"]
            .as_array()
            .expect("mismatches is a list")
            .iter()
            .any(|m| m == mismatch),
        "expected the mismatch {mismatch}: {report}"
    );
}

#[test]
fn an_approved_attestation_records_the_snapshot_spec_and_the_root_commit_as_identity() {
    let sandbox = attestable();
    let created = create(&sandbox, "approved", 0);
    assert_eq!(created["status"], "recorded");
    let record = &created["record"];
    assert_eq!(record["schema"], "hpp.evidence-attestation/v3");
    assert_eq!(record["verdict"], "approved");
    assert_eq!(record["actors"]["maker"], "maker-a");
    assert_eq!(record["actors"]["checker"], "checker-b");
    assert_eq!(record["session"], "review:001");
    assert_eq!(
        record["base_commit"],
        sandbox.git(["rev-parse", "HEAD"]).as_str()
    );

    let snapshot = sandbox.hpp(["snapshot"]).ok();
    assert_eq!(record["snapshot"]["tree"], snapshot.trim());
    assert_eq!(
        record["snapshot"]["tree"],
        sandbox.git(["rev-parse", "HEAD^{tree}"]).as_str()
    );

    let spec = std::fs::read(sandbox.root.join("SPEC.md")).expect("SPEC.md is readable");
    assert_eq!(record["spec"]["path"], "SPEC.md");
    assert_eq!(record["spec"]["sha256"], sha256(&spec).as_str());
    assert_eq!(
        record["spec"]["blob"],
        sandbox.git(["hash-object", "SPEC.md"]).as_str()
    );

    let root = sandbox.git(["rev-list", "--max-parents=0", "HEAD"]);
    assert_eq!(record["repo"], serde_json::json!({"roots": [root]}));
    let name = ORIGIN.trim_end_matches(".git");
    let stored = sandbox.git_in(
        &sandbox.root,
        &[
            "show",
            &format!("{}:attestation.json", attestation_ref(&created)),
        ],
    );
    for text in [stored.as_str(), &created.to_string()] {
        assert!(!text.contains(name), "the origin URL leaked: {text}");
        assert!(
            !text.contains("secret-org"),
            "the origin URL leaked: {text}"
        );
    }

    let stored: serde_json::Value =
        serde_json::from_str(&stored).expect("attestation.json is JSON");
    assert_eq!(&stored, record, "the stored record is the reported one");
}

#[test]
fn the_attestation_ref_is_keyed_by_the_snapshot_and_its_tree_holds_what_it_names() {
    let sandbox = attestable();
    let created = create(&sandbox, "approved", 0);
    let reference = attestation_ref(&created);
    let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
    assert!(
        reference.starts_with(&format!("refs/hpp/attestations/{tree}/")),
        "{reference}"
    );
    assert_eq!(
        sandbox.hpp_refs().lines().count(),
        1,
        "{}",
        sandbox.hpp_refs()
    );

    let listing = sandbox.git_in(&sandbox.root, &["ls-tree", &reference]);
    let entries: Vec<(String, String, String)> = listing
        .lines()
        .map(|line| {
            let (meta, name) = line.split_once('\t').expect("ls-tree separates the name");
            let mut meta = meta.split(' ');
            meta.next();
            let kind = meta.next().expect("a type").to_owned();
            let id = meta.next().expect("an id").to_owned();
            (name.to_owned(), kind, id)
        })
        .collect();
    let find = |name: &str| {
        entries
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("no {name} in:\n{listing}"))
            .clone()
    };
    assert_eq!(find("attestation.json").1, "blob");
    assert_eq!(
        find("spec"),
        (
            "spec".to_owned(),
            "blob".to_owned(),
            sandbox.git(["hash-object", "SPEC.md"])
        )
    );
    assert_eq!(
        find("snapshot"),
        ("snapshot".to_owned(), "tree".to_owned(), tree)
    );
    assert!(
        !listing.contains("attestation.sig"),
        "an unsigned record has no signature:\n{listing}"
    );
}

#[test]
fn a_fresh_attestation_verifies_for_the_current_snapshot() {
    let sandbox = attestable();
    let created = create(&sandbox, "approved", 0);
    let report = verify(&sandbox, &[], 0);
    assert_eq!(report["status"], "valid");
    assert_eq!(report["schema"], "hpp.attestation-verification/v1");
    assert_eq!(report["attestation"], attestation_ref(&created).as_str());
    assert_eq!(report["mismatches"], serde_json::json!([]));
    let human = sandbox.hpp(["attest", "verify"]).ok();
    assert!(
        human.starts_with("attestation valid for snapshot"),
        "{human}"
    );
}

#[test]
fn control_a_changed_tracked_file_blocks_the_snapshot_until_it_is_restored() {
    let sandbox = attestable();
    create(&sandbox, "approved", 0);
    let readme = sandbox.root.join("README");
    std::fs::write(&readme, "hello, changed\n").expect("writable");
    let report = verify(&sandbox, &[], 2);
    assert_eq!(report["status"], "blocked");
    assert_eq!(report["mismatches"], serde_json::json!(["snapshot_digest"]));
    assert_eq!(report["candidates"], serde_json::json!([]));
    assert_ne!(
        report["tree"],
        sandbox.git(["rev-parse", "HEAD^{tree}"]).as_str(),
        "the report names the changed snapshot"
    );
    let human = sandbox.hpp(["attest", "verify"]).exit(2);
    assert!(human.stdout.starts_with("blocked:"), "{}", human.stdout);

    std::fs::write(&readme, "hello\n").expect("writable");
    assert_eq!(verify(&sandbox, &[], 0)["status"], "valid");
}

#[test]
fn an_untracked_file_blocks_the_snapshot_and_an_ignored_one_does_not() {
    let sandbox = attestable();
    create(&sandbox, "approved", 0);
    let extra = sandbox.root.join("notes.txt");
    std::fs::write(&extra, "a new file\n").expect("writable");
    let report = verify(&sandbox, &[], 2);
    assert_eq!(report["mismatches"], serde_json::json!(["snapshot_digest"]));

    std::fs::remove_file(&extra).expect("removable");
    std::fs::create_dir_all(sandbox.root.join("out")).expect("writable");
    std::fs::write(sandbox.root.join("out/build.log"), "ignored output\n").expect("writable");
    assert_eq!(verify(&sandbox, &[], 0)["status"], "valid");
    assert!(
        sandbox.git(["status", "--porcelain"]).is_empty(),
        "the ignored file really is ignored"
    );
}

#[test]
fn revise_and_blocked_verdicts_are_recorded_but_exit_2_and_never_verify() {
    for verdict in ["revise", "blocked"] {
        let sandbox = attestable();
        let created = create(&sandbox, verdict, 2);
        assert_eq!(created["status"], "recorded");
        assert_eq!(created["record"]["verdict"], verdict);
        let reference = attestation_ref(&created);
        assert!(
            sandbox.hpp_refs().starts_with(&reference),
            "{verdict} is stored: {}",
            sandbox.hpp_refs()
        );
        let report = verify(&sandbox, &[], 2);
        assert_blocked_by(&report, "verdict");
        assert_eq!(
            report["mismatches"],
            serde_json::json!(["verdict"]),
            "{verdict}"
        );
        assert_eq!(report["attestation"], reference.as_str());
        assert_eq!(report["candidates"][0]["verdict"], verdict);
    }
}

#[test]
fn a_verdict_is_normalised_before_it_is_recorded() {
    let sandbox = attestable();
    let created = create(&sandbox, " Approved ", 0);
    assert_eq!(created["record"]["verdict"], "approved");
    assert_eq!(verify(&sandbox, &[], 0)["status"], "valid");
}

/// Asserts that `attest create` with these flags is refused with `message` and writes nothing.
#[track_caller]
fn assert_refused(sandbox: &Sandbox, flags: [&str; 10], message: &str) {
    let before = sandbox.hpp_refs();
    let notes_before = sandbox.git(["for-each-ref", "refs/notes/"]);
    let mut args = vec!["attest", "create"];
    args.extend(flags);
    let reason = sandbox.hpp_in(&sandbox.root, &args).refused();
    assert_eq!(reason, message);
    assert_eq!(sandbox.hpp_refs(), before, "nothing is written");
    assert!(
        sandbox
            .git(["for-each-ref", "refs/hpp/attestations/"])
            .is_empty()
    );
    assert_eq!(sandbox.git(["for-each-ref", "refs/notes/"]), notes_before);
}

#[test]
fn control_bad_input_is_refused_with_the_reference_messages_and_nothing_is_written() {
    let sandbox = attestable();
    let outside = sandbox.path("outside.md");
    std::fs::write(&outside, "# Not in the repository\n").expect("writable");
    let outside = outside.to_str().expect("utf-8").to_owned();
    let cases: [([&str; 10], &str); 7] = [
        (
            [
                "--spec",
                "SPEC.md",
                "--maker",
                "a",
                "--checker",
                "A",
                "--session",
                "s1",
                "--verdict",
                "approved",
            ],
            "maker and checker must be different non-empty actors",
        ),
        (
            [
                "--spec",
                "SPEC.md",
                "--maker",
                " ",
                "--checker",
                "b",
                "--session",
                "s1",
                "--verdict",
                "approved",
            ],
            "maker and checker must be different non-empty actors",
        ),
        (
            [
                "--spec",
                "SPEC.md",
                "--maker",
                "a",
                "--checker",
                "b",
                "--session",
                "has space",
                "--verdict",
                "approved",
            ],
            "session must be 1-128 portable identifier characters",
        ),
        (
            [
                "--spec",
                "SPEC.md",
                "--maker",
                "a",
                "--checker",
                "b",
                "--session",
                "s1",
                "--verdict",
                "maybe",
            ],
            "verdict must be approved, revise, or blocked",
        ),
        (
            [
                "--spec",
                "MISSING.md",
                "--maker",
                "a",
                "--checker",
                "b",
                "--session",
                "s1",
                "--verdict",
                "approved",
            ],
            "spec not found: MISSING.md",
        ),
        (
            [
                "--spec",
                &outside,
                "--maker",
                "a",
                "--checker",
                "b",
                "--session",
                "s1",
                "--verdict",
                "approved",
            ],
            "spec must be inside the repository",
        ),
        (
            [
                "--spec",
                ".git/config",
                "--maker",
                "a",
                "--checker",
                "b",
                "--session",
                "s1",
                "--verdict",
                "approved",
            ],
            "spec must be inside the repository",
        ),
    ];
    for (flags, message) in cases {
        assert_refused(&sandbox, flags, message);
    }
    // The control: the same flags with good values are accepted.
    create(&sandbox, "approved", 0);
    assert!(
        !sandbox
            .git(["for-each-ref", "refs/hpp/attestations/"])
            .is_empty()
    );
}

#[test]
fn an_attestation_is_mirrored_as_a_note_on_head_and_every_branch_tip_with_its_tree() {
    let sandbox = attestable();
    // `twin` is another commit with the same tree; `elsewhere` has another tree.
    sandbox.git(["checkout", "-q", "-b", "twin"]);
    sandbox.git(["commit", "-q", "--allow-empty", "-m", "same tree"]);
    sandbox.git(["checkout", "-q", "-b", "elsewhere"]);
    std::fs::write(sandbox.root.join("README"), "elsewhere\n").expect("writable");
    sandbox.git(["commit", "-q", "-a", "-m", "another tree"]);
    sandbox.git(["checkout", "-q", "main"]);

    let created = create(&sandbox, "approved", 0);
    let head = sandbox.git(["rev-parse", "HEAD"]);
    let twin = sandbox.git(["rev-parse", "twin"]);
    let mut noted: Vec<&str> = created["noted"]
        .as_array()
        .expect("noted is a list")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    noted.sort_unstable();
    let mut expected = vec![head.as_str(), twin.as_str()];
    expected.sort_unstable();
    assert_eq!(noted, expected);

    let line = "hpp attestation: approved by checker-b (maker maker-a, session review:001)";
    for rev in ["HEAD", "twin"] {
        let log = sandbox.git(["log", "--notes=hpp", "-1", "--format=%N", rev]);
        assert!(log.contains(line), "{rev}: {log}");
        assert!(log.contains(&attestation_ref(&created)), "{rev}: {log}");
    }
    let elsewhere = sandbox.git(["log", "--notes=hpp", "-1", "--format=%N", "elsewhere"]);
    assert!(
        elsewhere.is_empty(),
        "a tip with another tree has no note: {elsewhere}"
    );
}

#[test]
fn an_attestation_of_a_dirty_worktree_leaves_no_note_on_head() {
    let sandbox = attestable();
    std::fs::write(sandbox.root.join("README"), "uncommitted\n").expect("writable");
    let created = create(&sandbox, "approved", 0);
    assert_eq!(created["noted"], serde_json::json!([]));
    assert_ne!(
        created["record"]["snapshot"]["tree"],
        sandbox.git(["rev-parse", "HEAD^{tree}"]).as_str()
    );
    assert!(sandbox.git(["for-each-ref", "refs/notes/"]).is_empty());
    // The snapshot still verifies; HEAD's own tree does not.
    assert_eq!(verify(&sandbox, &[], 0)["status"], "valid");
    verify(&sandbox, &["--commit", "HEAD"], 2);
}

#[test]
fn verify_follows_a_commit_a_tree_or_one_attestation_ref_whatever_the_worktree_holds() {
    let sandbox = attestable();
    let created = create(&sandbox, "approved", 0);
    let reference = attestation_ref(&created);
    let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
    std::fs::write(sandbox.root.join("README"), "work in progress\n").expect("writable");
    verify(&sandbox, &[], 2);

    let by_commit = verify(&sandbox, &["--commit", "HEAD"], 0);
    assert_eq!(by_commit["tree"], tree.as_str());
    assert_eq!(by_commit["attestation"], reference.as_str());
    let by_tree = verify(&sandbox, &["--tree", &tree], 0);
    assert_eq!(by_tree["attestation"], reference.as_str());
    let by_ref = verify(&sandbox, &[&reference], 0);
    assert_eq!(by_ref["tree"], tree.as_str());
    let short = reference.trim_start_matches("refs/hpp/attestations/");
    assert_eq!(
        verify(&sandbox, &[short], 0)["attestation"],
        reference.as_str()
    );

    // The parent commit's tree was never attested.
    let parent = verify(&sandbox, &["--commit", "HEAD~1"], 2);
    assert_eq!(parent["mismatches"], serde_json::json!(["snapshot_digest"]));
    let unknown = sandbox
        .hpp(["attest", "verify", &format!("{tree}/no-such-id")])
        .refused();
    assert!(unknown.starts_with("attestation not found"), "{unknown}");
}

#[test]
fn an_amend_that_keeps_the_tree_keeps_the_attestation() {
    let sandbox = attestable();
    let created = create(&sandbox, "approved", 0);
    let before = sandbox.git(["rev-parse", "HEAD"]);
    sandbox.git(["commit", "-q", "--amend", "-m", "other"]);
    let after = sandbox.git(["rev-parse", "HEAD"]);
    assert_ne!(before, after, "the amend made a new commit");
    let report = verify(&sandbox, &["--commit", "HEAD"], 0);
    assert_eq!(report["attestation"], attestation_ref(&created).as_str());
    let commits = sandbox.hpp(["verify", "HEAD", "--json"]).json(0);
    assert_eq!(commits["commits"][0]["commit"], after.as_str());
    assert_eq!(commits["commits"][0]["ok"], true);

    // An amend that changes the content does not keep it.
    std::fs::write(sandbox.root.join("README"), "changed\n").expect("writable");
    sandbox.git(["commit", "-q", "-a", "--amend", "-m", "changed"]);
    verify(&sandbox, &["--commit", "HEAD"], 2);
    let failed = sandbox.hpp(["verify", "HEAD"]).exit(2);
    assert!(failed.stdout.starts_with("FAIL "), "{}", failed.stdout);
}

/// A sealed release-gate session judged `value` by a llama judge, grounded on a passing
/// evidence bundle; returns its ref.
fn release_gate(sandbox: &Sandbox, value: &str) -> String {
    sandbox
        .hpp(["evidence", "run", "--id", "gate-tests", "--", "true"])
        .ok();
    crate::deliberate::converged_session(
        sandbox,
        "release-gate",
        &["approved", "revise", "blocked"],
        value,
        "llama",
        Some("gate-tests"),
    )
}

#[test]
fn a_release_gate_panel_can_only_make_the_attested_verdict_stricter() {
    let sandbox = attestable();
    let session = release_gate(&sandbox, "blocked");
    let mut args = crate::harness::attest_args("review:gate", "approved");
    args.extend([
        "--deliberation",
        &session,
        "--maker-family",
        "gpt",
        "--json",
    ]);
    let created = sandbox.hpp_in(&sandbox.root, &args).json(2);
    assert_eq!(created["record"]["verdict"], "blocked");
    let panel = &created["record"]["deliberation"];
    assert_eq!(panel["status"], "recommendation");
    assert_eq!(panel["value"], "blocked");
    assert_eq!(panel["judge_family"], "llama");
    assert_eq!(panel["ref"], session.as_str());
    let files = sandbox.git(["ls-tree", "--name-only", &attestation_ref(&created)]);
    assert!(files.lines().any(|f| f == "deliberation.json"), "{files}");

    let lenient = release_gate(&sandbox, "approved");
    let mut args = crate::harness::attest_args("review:gate2", "revise");
    args.extend([
        "--deliberation",
        &lenient,
        "--maker-family",
        "gpt",
        "--json",
    ]);
    let kept = sandbox.hpp_in(&sandbox.root, &args).json(2);
    assert_eq!(
        kept["record"]["verdict"], "revise",
        "a panel never lowers a verdict"
    );
    let mut args = crate::harness::attest_args("review:gate3", "approved");
    args.extend([
        "--deliberation",
        &lenient,
        "--maker-family",
        "gpt",
        "--json",
    ]);
    let approved = sandbox.hpp_in(&sandbox.root, &args).json(0);
    assert_eq!(approved["record"]["verdict"], "approved");
    let report = verify(&sandbox, &[&attestation_ref(&approved)], 0);
    assert_eq!(report["status"], "valid");
}

#[test]
fn control_a_release_gate_judged_by_the_makers_family_or_without_bundles_is_refused() {
    let sandbox = attestable();
    let session = release_gate(&sandbox, "approved");
    let mut args = crate::harness::attest_args("review:gate", "approved");
    args.extend([
        "--deliberation",
        &session,
        "--maker-family",
        "meta/llama-3.1-405b",
    ]);
    assert_eq!(
        sandbox.hpp_in(&sandbox.root, &args).refused(),
        "the judge is of the same family as the maker (llama); a panel cannot be judged by the family it is checking"
    );
    let mut args = crate::harness::attest_args("review:gate", "approved");
    args.extend(["--deliberation", &session]);
    assert_eq!(
        sandbox.hpp_in(&sandbox.root, &args).refused(),
        "--deliberation needs --maker-family: a judge of the maker's family is refused"
    );
    let unsourced = crate::deliberate::converged_session(
        &sandbox,
        "release-gate",
        &["approved", "revise", "blocked"],
        "approved",
        "qwen",
        None,
    );
    let mut args = crate::harness::attest_args("review:gate", "approved");
    args.extend(["--deliberation", &unsourced, "--maker-family", "gpt"]);
    assert_eq!(
        sandbox.hpp_in(&sandbox.root, &args).refused(),
        "a release gate counts only evidence bundles: the panel must declare its evidence from hpp.evidence/v1 records (deliberate plan --evidence)"
    );
    assert!(
        sandbox
            .hpp_refs()
            .lines()
            .all(|l| !l.contains("attestations")),
        "nothing attested"
    );
}
