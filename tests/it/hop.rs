//! Integration tests for `hop`: the agent protocol on refs/hpp/hop/, through the built binary,
//! on real repositories with the real `git`.
//!
//! Concurrent landings: two `hop land` processes racing on disjoint proposals both succeed,
//! because a land that loses the compare-and-swap on refs/hpp/hop/accepted recomposes on the
//! new head and tries again (CAS retry); `--expect-head` turns that retry into exit 21.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use crate::harness::{HOP, Run, Sandbox};

mod commands;

/// The launch of one attempt, as `hop start --json` reports it.
struct Launch {
    state: String,
    task: String,
    attempt: String,
    workspace: PathBuf,
}

fn hop(s: &Sandbox, args: &[&str]) -> Run {
    s.hop_in(&s.root, args)
}

fn hop_json(s: &Sandbox, args: &[&str]) -> Value {
    let mut argv = args.to_vec();
    argv.push("--json");
    let doc = hop(s, &argv).json(0);
    assert_eq!(doc["ok"], true, "{doc}");
    doc["data"].clone()
}

fn init(s: &Sandbox) -> String {
    hop_json(s, &["init"])["accepted"]["id"]
        .as_str()
        .expect("an accepted id")
        .to_owned()
}

fn launch_of(data: &Value) -> Launch {
    let env = &data["env"];
    Launch {
        state: env["HOP_STATE_ID"].as_str().expect("a state").to_owned(),
        task: env["HOP_TASK_ID"].as_str().expect("a task").to_owned(),
        attempt: env["HOP_ATTEMPT_ID"]
            .as_str()
            .expect("an attempt")
            .to_owned(),
        workspace: PathBuf::from(env["HOP_WORKSPACE"].as_str().expect("a workspace")),
    }
}

fn start(s: &Sandbox, prompt: &str) -> Launch {
    launch_of(&hop_json(s, &["start", "--agent", "codex", prompt]))
}

/// Runs `hop` as the agent of `launch`: in its workspace, with every HOP_* variable.
fn agent(s: &Sandbox, l: &Launch, args: &[&str]) -> Run {
    s.command(HOP, &l.workspace)
        .args(args)
        .env("HOP_ROOT", &s.root)
        .env("HOP_STATE_ID", &l.state)
        .env("HOP_TASK_ID", &l.task)
        .env("HOP_ATTEMPT_ID", &l.attempt)
        .env("HOP_WORKSPACE", &l.workspace)
        .output()
        .map(|o| Run::from_output(&o))
        .expect("hop runs")
}

fn write(dir: &Path, path: &str, text: &str) {
    let file = dir.join(path);
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("mkdir");
    std::fs::write(file, text).expect("write");
}

/// Edits the workspace with `edits` (`None` deletes) and proposes it; returns the R_ id.
fn propose(s: &Sandbox, l: &Launch, edits: Edits<'_>) -> String {
    for (path, text) in edits {
        match text {
            Some(text) => write(&l.workspace, path, text),
            None => std::fs::remove_file(l.workspace.join(path)).expect("remove"),
        }
    }
    let doc = agent(s, l, &["propose", "--summary", "work", &l.state, "--json"]).json(0);
    doc["data"]["state"]["id"]
        .as_str()
        .expect("a proposal id")
        .to_owned()
}

/// Workspace edits: a path and its new text, `None` to delete it.
type Edits<'a> = &'a [(&'a str, Option<&'a str>)];

fn accepted(s: &Sandbox) -> String {
    s.git(["rev-parse", "refs/hpp/hop/accepted"])
}

fn accepted_files(s: &Sandbox) -> String {
    s.git(["ls-tree", "-r", "--name-only", "refs/hpp/hop/accepted"])
}

fn show(s: &Sandbox, rev: &str) -> String {
    s.git_in(&s.root, &["show", rev])
}

fn paths(doc: &Value) -> Vec<String> {
    doc["paths"]
        .as_array()
        .expect("paths")
        .iter()
        .map(|p| p.as_str().expect("a path").to_owned())
        .collect()
}

#[test]
fn init_preserves_head_branch_index_and_working_tree() {
    let s = Sandbox::repo();
    write(&s.root, "staged.txt", "staged\n");
    s.git(["add", "staged.txt"]);
    write(&s.root, "README", "edited, not staged\n");
    write(&s.root, "untracked.txt", "loose\n");
    let look = |s: &Sandbox| {
        (
            s.git(["rev-parse", "HEAD"]),
            s.git(["symbolic-ref", "HEAD"]),
            s.git(["ls-files", "-s"]),
            s.git(["status", "--porcelain"]),
            s.git(["hash-object", "README", "staged.txt", "untracked.txt"]),
        )
    };
    let before = look(&s);
    let id = init(&s);
    assert!(id.starts_with("A_"));
    assert_eq!(look(&s), before);
    // The initial accepted state is HEAD's tree, with HEAD as its parent.
    assert_eq!(
        s.git(["rev-parse", "refs/hpp/hop/accepted^{tree}"]),
        s.git(["rev-parse", "HEAD^{tree}"])
    );
    assert_eq!(
        s.git(["rev-parse", "refs/hpp/hop/accepted^"]),
        s.git(["rev-parse", "HEAD"])
    );
    // A second init reports the same head.
    assert_eq!(init(&s), id);
    assert_eq!(look(&s), before);
}

#[test]
fn prompt_bytes_are_kept_exactly() {
    let s = Sandbox::repo();
    init(&s);
    let prompt = "  \n\tAdd password reset emails.\n  Keep 'quotes' and \"these\".\n\n  ";
    let l = start(&s, prompt);
    let view = hop_json(&s, &["state", &l.state]);
    assert_eq!(view["prompt"], prompt);
    assert_eq!(view["kind"], "prompt");
    assert_eq!(view["digest_ok"], true);
    let blob = s
        .command("git", &s.root)
        .args([
            "cat-file",
            "blob",
            &format!("refs/hpp/hop/prompts/{}:prompt", l.state),
        ])
        .output()
        .expect("git runs");
    assert_eq!(blob.stdout, prompt.as_bytes());

    let follow = "\n follow-up with trailing space \n";
    let next = hop_json(&s, &["prompt", "--from", &l.state, follow]);
    let id = next["state"]["id"].as_str().expect("an id");
    assert_eq!(hop_json(&s, &["state", id])["prompt"], follow);
    assert!(
        next["checkpoint"]
            .as_str()
            .expect("a checkpoint")
            .starts_with("C_")
    );
}

#[test]
fn a_proposal_is_frozen_after_later_edits() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "write the note");
    let r = propose(&s, &l, &[("note.txt", Some("first\n"))]);
    write(&l.workspace, "note.txt", "changed later\n");
    write(&l.workspace, "extra.txt", "later\n");
    let pin = format!("refs/hpp/hop/states/{r}");
    assert_eq!(show(&s, &format!("{pin}:note.txt")), "first");
    assert!(
        !s.git(["ls-tree", "--name-only", &pin])
            .contains("extra.txt")
    );
    hop(&s, &["land", &r]).ok();
    assert_eq!(show(&s, "refs/hpp/hop/accepted:note.txt"), "first");
}

#[test]
fn check_runs_on_the_checkpoint_tree_despite_a_concurrent_edit() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "edit a");
    write(&l.workspace, "a.txt", "old\n");
    let live = l.workspace.display().to_string();
    // The command itself edits the live workspace before reading: it still sees the checkpoint.
    let doc = agent(
        &s,
        &l,
        &[
            "check",
            &l.state,
            "--json",
            "--",
            "sh",
            "-c",
            "printf 'new\\n' > \"$1/a.txt\"; cat a.txt; printf '%s' \"$HOP_WORKSPACE\"",
            "sh",
            &live,
        ],
    )
    .json(0);
    let run = &doc["data"];
    let stdout = run["stdout"].as_str().expect("stdout");
    assert!(stdout.starts_with("old\n"), "{run}");
    assert!(
        !stdout.ends_with(&live),
        "the check ran in its own worktree: {run}"
    );
    assert_eq!(
        std::fs::read_to_string(l.workspace.join("a.txt")).expect("read"),
        "new\n"
    );
    let checkpoint = run["checkpoint"].as_str().expect("a checkpoint");
    assert!(checkpoint.starts_with("C_"));
    assert_eq!(
        show(&s, &format!("refs/hpp/hop/states/{checkpoint}:a.txt")),
        "old"
    );
    // The disposable worktree is gone.
    assert!(!s.git(["worktree", "list"]).contains("/hop/checks/"));
}

#[test]
fn a_failed_check_is_recorded_and_exits_22() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "break it");
    let doc = agent(
        &s,
        &l,
        &[
            "check",
            &l.state,
            "--json",
            "--",
            "sh",
            "-c",
            "echo bad >&2; exit 3",
        ],
    )
    .json(22);
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["exit_code"], 22);
    assert_eq!(doc["data"]["exit_code"], 3);
    let id = doc["data"]["id"].as_str().expect("a check id");
    let record: Value =
        serde_json::from_str(&show(&s, &format!("refs/hpp/hop/checks/{id}:check.json")))
            .expect("a check record");
    assert_eq!(record["passed"], false);
    assert_eq!(record["exit_code"], 3);
    assert_eq!(show(&s, &format!("refs/hpp/hop/checks/{id}:stderr")), "bad");
}

#[test]
fn disjoint_proposals_land_in_either_order() {
    for first_a in [true, false] {
        let s = Sandbox::repo();
        init(&s);
        let a = start(&s, "task a");
        let b = start(&s, "task b");
        let ra = propose(&s, &a, &[("a.txt", Some("a\n"))]);
        let rb = propose(&s, &b, &[("src/b.txt", Some("b\n")), ("README", None)]);
        let order = if first_a { [&ra, &rb] } else { [&rb, &ra] };
        for r in order {
            hop(&s, &["land", r]).ok();
        }
        assert_eq!(accepted_files(&s), "a.txt\nsrc/b.txt");
        let status = hop_json(&s, &["status"]);
        assert_eq!(status["history"].as_array().expect("history").len(), 3);
        let attempts = status["attempts"].as_array().expect("attempts");
        assert!(attempts.iter().all(|a| a["status"] == "landed"), "{status}");
    }
}

#[test]
fn an_overlapping_proposal_is_refused_with_the_exact_paths() {
    let s = Sandbox::repo();
    init(&s);
    let a = start(&s, "a");
    let b = start(&s, "b");
    let ra = propose(
        &s,
        &a,
        &[("shared.txt", Some("a\n")), ("only-a.txt", Some("a\n"))],
    );
    let rb = propose(
        &s,
        &b,
        &[("shared.txt", Some("b\n")), ("only-b.txt", Some("b\n"))],
    );
    hop(&s, &["land", &ra]).ok();
    let head = accepted(&s);
    let doc = hop(&s, &["land", &rb, "--json"]).json(20);
    assert_eq!(doc["exit_code"], 20);
    assert_eq!(paths(&doc), ["shared.txt"]);
    assert_eq!(
        accepted(&s),
        head,
        "a blocked landing does not move the head"
    );
    let run = hop(&s, &["land", &rb]).exit(20);
    assert!(
        run.stderr.contains("Overlapping paths:\n  shared.txt\n"),
        "{run}"
    );
}

#[test]
fn rename_directory_file_and_case_only_collisions_block_landing() {
    let cases: [(Edits, Edits, &[&str]); 3] = [
        // A rename counts both paths: accepted work renamed README, the proposal edits it.
        (
            &[("README", None), ("README.md", Some("hello\n"))],
            &[("README", Some("edited\n"))],
            &["README"],
        ),
        // A directory against a file.
        (
            &[("docs/guide.md", Some("guide\n"))],
            &[("docs", Some("a file\n"))],
            &["docs", "docs/guide.md"],
        ),
        // Case-only.
        (
            &[("NOTES.md", Some("upper\n"))],
            &[("Notes.md", Some("mixed\n"))],
            &["NOTES.md", "Notes.md"],
        ),
    ];
    for (accepted_edits, proposal_edits, want) in cases {
        let s = Sandbox::repo();
        init(&s);
        let a = start(&s, "accepted first");
        let b = start(&s, "proposal");
        let ra = propose(&s, &a, accepted_edits);
        let rb = propose(&s, &b, proposal_edits);
        hop(&s, &["land", &ra]).ok();
        let doc = hop(&s, &["land", &rb, "--json"]).json(20);
        assert_eq!(paths(&doc), want);
    }
}

#[test]
fn failed_validation_records_f_and_the_head_does_not_move() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "add x");
    let r = propose(&s, &l, &[("x.txt", Some("x\n"))]);
    let head = accepted(&s);
    let doc = hop(
        &s,
        &[
            "land",
            &r,
            "--json",
            "--",
            "sh",
            "-c",
            "test -f x.txt && exit 1",
        ],
    )
    .json(22);
    assert_eq!(doc["exit_code"], 22);
    let failed = &doc["data"]["failed"];
    assert_eq!(failed["kind"], "failed");
    assert_eq!(accepted(&s), head);
    let f = failed["id"].as_str().expect("an F_ id");
    assert_eq!(show(&s, &format!("refs/hpp/hop/states/{f}:x.txt")), "x");
    let roles: Vec<&str> = failed["parents"]
        .as_array()
        .expect("parents")
        .iter()
        .map(|p| p["role"].as_str().expect("a role"))
        .collect();
    assert_eq!(roles, ["run_parent", "integration_parent"]);
    // The same proposal lands once validation passes.
    hop(&s, &["land", &r, "--", "sh", "-c", "test -f x.txt"]).ok();
    assert_eq!(accepted_files(&s), "README\nx.txt");
}

#[test]
fn two_concurrent_lands_of_disjoint_proposals_both_succeed() {
    let s = Sandbox::repo();
    init(&s);
    let a = start(&s, "a");
    let b = start(&s, "b");
    let ra = propose(&s, &a, &[("a.txt", Some("a\n"))]);
    let rb = propose(&s, &b, &[("b.txt", Some("b\n"))]);
    let spawn = |r: &str| {
        s.command(HOP, &s.root)
            .args(["land", r, "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hop starts")
    };
    let (one, two) = (spawn(&ra), spawn(&rb));
    for child in [one, two] {
        let out = child.wait_with_output().expect("hop finishes");
        Run::from_output(&out).json(0);
    }
    assert_eq!(accepted_files(&s), "README\na.txt\nb.txt");
    let status = hop_json(&s, &["status"]);
    assert_eq!(status["history"].as_array().expect("history").len(), 3);
}

#[test]
fn a_stale_expected_head_exits_21() {
    let s = Sandbox::repo();
    let initial = init(&s);
    let a = start(&s, "a");
    let b = start(&s, "b");
    let ra = propose(&s, &a, &[("a.txt", Some("a\n"))]);
    let rb = propose(&s, &b, &[("b.txt", Some("b\n"))]);
    hop(&s, &["land", &ra, "--expect-head", &initial]).ok();
    let head = accepted(&s);
    let doc = hop(&s, &["land", &rb, "--expect-head", &initial, "--json"]).json(21);
    assert_eq!(doc["exit_code"], 21);
    assert_eq!(accepted(&s), head);
}

#[test]
fn undo_twice_steps_back_twice() {
    let s = Sandbox::repo();
    init(&s);
    let a = start(&s, "a");
    let b = start(&s, "b");
    let ra = propose(&s, &a, &[("a.txt", Some("a\n"))]);
    let rb = propose(&s, &b, &[("b.txt", Some("b\n"))]);
    hop(&s, &["land", &ra]).ok();
    hop(&s, &["land", &rb]).ok();
    assert_eq!(accepted_files(&s), "README\na.txt\nb.txt");
    let first = hop_json(&s, &["undo"]);
    assert_eq!(accepted_files(&s), "README\na.txt");
    let second = hop_json(&s, &["undo"]);
    assert_eq!(accepted_files(&s), "README");
    assert_ne!(first["accepted"]["id"], second["accepted"]["id"]);
    let run = hop(&s, &["undo"]).exit(1);
    assert!(
        run.stderr
            .contains("initial accepted state cannot be undone"),
        "{run}"
    );
    // Forward-only: every landing and undo is in the chain. The chain's commits start at the
    // user's commit: the initial state's own commit is not among them.
    let status = hop_json(&s, &["status"]);
    assert_eq!(status["history"].as_array().expect("history").len(), 5);
    assert_eq!(
        s.git(["rev-list", "--count", "refs/hpp/hop/accepted", "^HEAD"]),
        "4"
    );
}

#[test]
fn land_branch_fast_forwards_and_refuses_otherwise() {
    let s = Sandbox::repo();
    init(&s);
    s.git(["branch", "release"]);
    s.git(["branch", "diverged"]);
    s.git(["checkout", "-q", "diverged"]);
    write(&s.root, "other.txt", "other\n");
    s.git(["add", "other.txt"]);
    s.git(["commit", "-q", "-m", "diverge"]);
    s.git(["checkout", "-q", "main"]);
    let l = start(&s, "a");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    let head = accepted(&s);
    let tip = s.git(["rev-parse", "diverged"]);
    let run = hop(&s, &["land", &r, "--branch", "diverged"]).exit(20);
    assert!(run.stderr.contains("not a fast-forward"), "{run}");
    assert_eq!(s.git(["rev-parse", "diverged"]), tip);
    assert_eq!(accepted(&s), head, "a refused branch lands nothing");
    hop(&s, &["land", &r, "--branch", "release"]).ok();
    assert_eq!(s.git(["rev-parse", "release"]), accepted(&s));
}

#[test]
fn land_into_the_checked_out_branch_adds_only_the_landed_commit_and_updates_the_files() {
    let s = Sandbox::repo();
    let user_commit = s.git(["rev-parse", "HEAD"]);
    init(&s);
    let l = start(&s, "add a");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    let doc = hop_json(&s, &["land", &r, "--branch", "main"]);
    let landed = doc["accepted"]["id"].as_str().expect("an accepted id");
    // main moved to the landed commit, whose parent is the user's commit: hop's own initial
    // state is not on the branch.
    assert_eq!(s.git(["rev-parse", "main"]), accepted(&s));
    assert_eq!(s.git(["rev-parse", "main~1"]), user_commit);
    let message = s.git(["log", "-1", "--format=%B", "main"]);
    assert!(
        message.contains(&format!("Hop-State: {landed}")),
        "{message}"
    );
    assert!(
        message.contains(&format!("proposal_parent {r}")),
        "{message}"
    );
    // The worktree and index followed, as git merge --ff-only leaves them.
    assert_eq!(
        std::fs::read_to_string(s.root.join("a.txt")).expect("the landed file is checked out"),
        "a\n"
    );
    assert_eq!(s.git(["status", "--porcelain"]), "");
    // The next landing builds on it and main follows again.
    let l2 = start(&s, "add b");
    let r2 = propose(&s, &l2, &[("b.txt", Some("b\n"))]);
    hop(&s, &["land", &r2, "--branch", "main"]).ok();
    assert_eq!(
        s.git(["rev-list", "--count", &format!("{user_commit}..main")]),
        "2"
    );
    assert!(s.root.join("b.txt").is_file());
    hop(&s, &["doctor"]).ok();
}

#[test]
fn a_landed_state_is_attested_and_its_validation_passes_the_fresh_evidence_gate() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "add a");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    let landed = hop(
        &s,
        &[
            "land", &r, "--branch", "main", "--json", "--", "test", "-f", "a.txt",
        ],
    )
    .json(0);
    let bundle = landed["data"]["validation"]["evidence"]
        .as_str()
        .expect("the validation's bundle")
        .to_owned();
    // The landed tree is now main's workspace: the loop's gates take hop's evidence of it.
    s.walk_steps("main", 0..1);
    s.hpp([
        "event",
        "append",
        "--type",
        "evidence_recorded",
        "--evidence",
        &bundle,
    ])
    .ok();
    s.approve_tree("checker-b");
    let verified = s.hpp(["verify", "HEAD", "--json"]).json(0);
    assert_eq!(verified["status"], "valid", "{verified}");
}

#[test]
fn control_evidence_of_another_tree_does_not_pass_the_fresh_evidence_gate() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "add a");
    write(&l.workspace, "a.txt", "a\n");
    let doc = agent(&s, &l, &["check", &l.state, "--json", "--", "true"]).json(0);
    let bundle = doc["data"]["evidence"]
        .as_str()
        .expect("a bundle")
        .to_owned();
    // The check ran on the attempt's tree, which is not main's workspace.
    s.walk_steps("main", 0..1);
    let reason = s
        .hpp([
            "event",
            "append",
            "--type",
            "evidence_recorded",
            "--evidence",
            &bundle,
        ])
        .refused();
    assert!(reason.contains("fresh-evidence"), "{reason}");
}

#[test]
fn control_land_into_a_checked_out_branch_with_local_changes_exits_23_and_names_them() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "add a");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    let readme = std::fs::read_dir(&s.root)
        .expect("listable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .find(|n| !n.starts_with('.') && s.root.join(n).is_file())
        .expect("the repository has a committed file");
    write(&s.root, &readme, "local edit\n");
    let (main, head) = (s.git(["rev-parse", "main"]), accepted(&s));
    let doc = hop(&s, &["land", &r, "--branch", "main", "--json"]).json(23);
    assert_eq!(doc["exit_code"], 23);
    assert_eq!(paths(&doc), vec![readme.clone()]);
    let run = hop(&s, &["land", &r, "--branch", "main"]).exit(23);
    assert!(run.stderr.contains("local changes to"), "{run}");
    assert!(run.stdout.is_empty(), "{run}");
    assert_eq!(s.git(["rev-parse", "main"]), main, "main did not move");
    assert_eq!(accepted(&s), head, "nothing was landed");
    assert_eq!(
        std::fs::read_to_string(s.root.join(&readme)).expect("readable"),
        "local edit\n"
    );
}

#[test]
fn checks_and_final_validations_are_evidence_bundles_the_harness_verifies() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "add a");
    write(&l.workspace, "a.txt", "a\n");
    let doc = agent(
        &s,
        &l,
        &["check", &l.state, "--json", "--", "test", "-f", "a.txt"],
    )
    .json(0);
    let bundle = doc["data"]["evidence"]
        .as_str()
        .expect("an evidence ref")
        .to_owned();
    assert!(
        bundle.starts_with("refs/hpp/evidence/hop-check-"),
        "{bundle}"
    );
    let verified = s.hpp(["evidence", "verify", &bundle, "--json"]).json(0);
    assert_eq!(verified["status"], "valid", "{verified}");
    assert_eq!(verified["verdict"], "passed");
    // The bundle records the checkpoint's exact tree.
    let checkpoint = doc["data"]["checkpoint"].as_str().expect("a checkpoint");
    let tree = s.git([
        "rev-parse",
        &format!("refs/hpp/hop/states/{checkpoint}^{{tree}}"),
    ]);
    assert_eq!(verified["snapshot"]["tree"], tree.as_str(), "{verified}");
    // A failed check is recorded as failed evidence, not as a pass.
    let failed = agent(
        &s,
        &l,
        &["check", &l.state, "--json", "--", "test", "-f", "missing"],
    )
    .json(22);
    let failed_bundle = failed["data"]["evidence"]
        .as_str()
        .expect("an evidence ref");
    let report = s
        .hpp(["evidence", "verify", failed_bundle, "--json"])
        .json(1);
    assert_eq!(report["verdict"], "failed", "{report}");
    assert_eq!(report["status"], "not-evidence", "{report}");
    // The final validation of a landing is a bundle of the landed tree, and `hop state`
    // of the proposal lists the checks of its tree with their bundles.
    let r = propose(&s, &l, &[]);
    let state = hop_json(&s, &["state", &r]);
    assert!(state.to_string().contains(&bundle), "{state}");
    let landed = hop(&s, &["land", &r, "--json", "--", "test", "-f", "a.txt"]).json(0);
    let validation = landed["data"]["validation"]["evidence"]
        .as_str()
        .expect("an evidence ref");
    assert!(
        validation.starts_with("refs/hpp/evidence/hop-land-"),
        "{validation}"
    );
    let report = s.hpp(["evidence", "verify", validation, "--json"]).json(0);
    let landed_tree = s.git(["rev-parse", "refs/hpp/hop/accepted^{tree}"]);
    assert_eq!(report["snapshot"]["tree"], landed_tree.as_str(), "{report}");
}

#[test]
fn states_pushed_to_a_bare_remote_can_be_inspected_from_a_clone() {
    let s = Sandbox::repo();
    init(&s);
    let prompt = " exact prompt \n";
    let l = start(&s, prompt);
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    hop(&s, &["land", &r]).ok();
    let remote = s.path("remote.git");
    let clone = s.path("clone");
    s.git(["init", "-q", "--bare", remote.to_str().expect("utf-8")]);
    s.git(["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    s.hpp(["push", "origin"]).ok();
    s.git([
        "clone",
        "-q",
        remote.to_str().expect("utf-8"),
        clone.to_str().expect("utf-8"),
    ]);
    s.hpp_in(&clone, &["fetch", "origin"]).ok();
    let view = s.hop_in(&clone, &["state", &l.state, "--json"]).json(0);
    assert_eq!(view["data"]["prompt"], prompt);
    let status = s.hop_in(&clone, &["status", "--json"]).json(0);
    assert_eq!(
        status["data"]["accepted"]["commit"].as_str(),
        Some(accepted(&s).as_str())
    );
    assert_eq!(status["data"]["attempts"][0]["workspace_exists"], false);
    let doctor = s.hop_in(&clone, &["doctor", "--json"]).json(0);
    assert_eq!(doctor["data"]["ok"], true);
}

#[test]
fn doctor_finds_tampering_and_repairs_only_what_can_be_rederived() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "a");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    hop(&s, &["land", &r]).ok();
    hop_json(&s, &["doctor"]);
    // A lost state ref is re-derived from the chain.
    s.git(["update-ref", "-d", &format!("refs/hpp/hop/states/{r}")]);
    let doc = hop(&s, &["doctor", "--json"]).json(1);
    assert_eq!(doc["data"]["problems"][0]["repairable"], true);
    let fixed = hop_json(&s, &["doctor", "--repair"]);
    assert_eq!(fixed["ok"], true);
    assert_eq!(fixed["repaired"][0], format!("refs/hpp/hop/states/{r}"));
    // A forged state (edited trailers) fails its digest and is not repaired.
    let pin = format!("refs/hpp/hop/states/{}", l.state);
    let message = s
        .git(["log", "-1", "--format=%B", &pin])
        .replace("codex", "forger");
    let tree = s.git(["rev-parse", &format!("{pin}^{{tree}}")]);
    let parent = s.git(["rev-parse", &format!("{pin}^")]);
    let forged = s.git(["commit-tree", &tree, "-p", &parent, "-m", &message]);
    s.git(["update-ref", &pin, &forged]);
    let doc = hop(&s, &["doctor", "--repair", "--json"]).json(1);
    let problems = doc["data"]["problems"].to_string();
    assert!(problems.contains("digest does not recompute"), "{doc}");
}

#[test]
fn control_an_agent_command_without_the_hop_environment_is_an_invalid_launch() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "a");
    write(&l.workspace, "a.txt", "a\n");
    let refs = s.hpp_refs();
    let run = s.hop_in(&l.workspace, &["propose", &l.state]).exit(2);
    assert!(
        run.stderr
            .contains("invalid agent launch: HOP_ROOT is not set"),
        "{run}"
    );
    let partial = s
        .command(HOP, &l.workspace)
        .args(["check", &l.state, "--", "true"])
        .env("HOP_ROOT", &s.root)
        .env("HOP_STATE_ID", &l.state)
        .env("HOP_TASK_ID", &l.task)
        .env("HOP_ATTEMPT_ID", &l.attempt)
        .output()
        .expect("hop runs");
    let run = Run::from_output(&partial).exit(2);
    assert!(run.stderr.contains("HOP_WORKSPACE is not set"), "{run}");
    // A launch for another attempt is refused too.
    let other = start(&s, "b");
    let refs_before_mismatch = s.hpp_refs();
    let mixed = Launch {
        state: l.state.clone(),
        task: other.task.clone(),
        attempt: other.attempt.clone(),
        workspace: other.workspace.clone(),
    };
    let run = agent(&s, &mixed, &["propose", &l.state]).exit(2);
    assert!(
        run.stderr.contains("invalid agent launch: HOP_ATTEMPT_ID"),
        "{run}"
    );
    assert_eq!(s.hpp_refs(), refs_before_mismatch, "nothing written");
    assert_ne!(refs, refs_before_mismatch, "start did write");
}

#[test]
fn control_a_prompt_shaped_like_a_secret_is_refused_and_nothing_is_written() {
    let s = Sandbox::repo();
    init(&s);
    let refs = s.hpp_refs();
    let run = hop(
        &s,
        &[
            "start",
            "--agent",
            "codex",
            "log in with password = hunter2",
        ],
    )
    .exit(2);
    assert!(
        run.stderr
            .starts_with("hop: the prompt looks like it carries a secret"),
        "{run}"
    );
    assert!(run.stdout.is_empty());
    let run = hop(&s, &["start", "--agent", "codex", ""]).exit(2);
    assert!(run.stderr.contains("the prompt is empty"), "{run}");
    assert_eq!(s.hpp_refs(), refs, "nothing written");
}

#[test]
fn control_a_proposal_that_adds_a_secret_shaped_file_is_refused_and_keeps_nothing() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "a");
    let token = format!("ghp_{}", "0123456789abcdefghijABCDEFGHIJklmnop");
    write(&l.workspace, "ci/token.txt", &format!("{token}\n"));
    let refs = s.hpp_refs();
    let run = agent(&s, &l, &["propose", &l.state]).exit(2);
    assert!(
        run.stderr
            .contains("ci/token.txt looks like it holds a GitHub token"),
        "{run}"
    );
    assert!(!run.stderr.contains(&token), "the value is never printed");
    assert_eq!(s.hpp_refs(), refs, "no state was written");
    std::fs::remove_file(l.workspace.join("ci/token.txt")).expect("removable");
    write(&l.workspace, "ci/ok.txt", "fine\n");
    agent(&s, &l, &["propose", &l.state]).ok();
}

#[test]
fn a_summary_or_agent_name_shaped_like_a_secret_is_refused_and_nothing_is_written() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "a");
    write(&l.workspace, "a.txt", "a\n");
    let key = format!("AKIA{}", "Z7QW3XK9RT2PLM4N");
    let refs = s.hpp_refs();
    let summary = format!("deploy with aws_access_key_id={key}");
    let run = agent(&s, &l, &["propose", "--summary", &summary, &l.state]).exit(2);
    assert!(
        run.stderr
            .starts_with("hop: the summary looks like it carries a secret"),
        "{run}"
    );
    assert!(!run.stderr.contains(&key), "the value is never printed");
    assert!(run.stdout.is_empty(), "{run}");
    assert_eq!(s.hpp_refs(), refs, "no state was written");
    let run = hop(&s, &["start", "--agent", &key, "do the thing"]).exit(2);
    assert!(run.stderr.contains("the agent name looks like"), "{run}");
    assert_eq!(s.hpp_refs(), refs, "no attempt was started");
    // Control: the same proposal with a plain summary is taken.
    agent(&s, &l, &["propose", "--summary", "add a.txt", &l.state]).ok();
    assert_ne!(s.hpp_refs(), refs);
}

#[test]
fn doctor_repair_moves_a_state_ref_pinned_to_the_wrong_commit_back() {
    let s = Sandbox::repo();
    let first = init(&s);
    let l = start(&s, "a");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    let landed = hop_json(&s, &["land", &r])["accepted"]["id"]
        .as_str()
        .expect("an accepted id")
        .to_owned();
    // Pin the landed state's ref at another state's commit.
    let pin = format!("refs/hpp/hop/states/{landed}");
    let right = s.git(["rev-parse", &pin]);
    let wrong = s.git(["rev-parse", &format!("refs/hpp/hop/states/{first}")]);
    s.git(["update-ref", &pin, &wrong]);
    // status still answers, and says what is wrong and how to fix it.
    let run = hop(&s, &["status"]).exit(0);
    assert!(run.stdout.contains(&landed), "{run}");
    let doc = hop(&s, &["doctor", "--json"]).json(1);
    let problems = doc["data"]["problems"].to_string();
    assert!(problems.contains(&format!("{pin} pins {wrong}")), "{doc}");
    let fixed = hop_json(&s, &["doctor", "--repair"]);
    assert_eq!(fixed["ok"], true, "{fixed}");
    assert_eq!(fixed["repaired"][0], pin.as_str());
    assert_eq!(s.git(["rev-parse", &pin]), right);
}

#[test]
fn control_doctor_repair_names_the_manual_step_for_a_pin_no_commit_backs() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "a");
    // A ref for a state that no commit carries, pointing at the prompt's commit.
    let bogus = "refs/hpp/hop/states/C_00000000000000000000000";
    let prompt = s.git(["rev-parse", &format!("refs/hpp/hop/states/{}", l.state)]);
    s.git(["update-ref", bogus, &prompt]);
    let doc = hop(&s, &["doctor", "--repair", "--json"]).json(1);
    let problems = doc["data"]["problems"].to_string();
    assert!(
        problems.contains(&format!("git update-ref -d {bogus}")),
        "{doc}"
    );
    assert_eq!(
        s.git(["rev-parse", bogus]),
        prompt,
        "nothing is deleted for you"
    );
}

#[test]
fn a_sparse_start_checks_out_only_the_named_directory_and_proposals_keep_the_whole_tree() {
    let s = Sandbox::repo();
    write(&s.root, "app/main.txt", "app\n");
    write(&s.root, "docs/guide.txt", "guide\n");
    s.git(["add", "."]);
    s.git(["commit", "-q", "-m", "two directories"]);
    init(&s);
    let l = launch_of(&hop_json(
        &s,
        &[
            "start",
            "--agent",
            "codex",
            "--sparse",
            "app",
            "edit the app",
        ],
    ));
    assert!(l.workspace.join("app/main.txt").is_file());
    assert!(
        !l.workspace.join("docs").exists(),
        "docs/ is outside the cone"
    );
    let r = propose(&s, &l, &[("app/main.txt", Some("app v2\n"))]);
    let tree = s.git([
        "ls-tree",
        "-r",
        "--name-only",
        &format!("refs/hpp/hop/states/{r}"),
    ]);
    assert!(tree.contains("docs/guide.txt"), "{tree}");
    assert_eq!(
        show(&s, &format!("refs/hpp/hop/states/{r}:app/main.txt")),
        "app v2"
    );
    hop(&s, &["land", &r]).ok();
    assert_eq!(show(&s, "refs/hpp/hop/accepted:docs/guide.txt"), "guide");
}

#[test]
fn control_a_sparse_path_that_is_not_a_directory_is_refused_before_anything_is_written() {
    let s = Sandbox::repo();
    init(&s);
    let before = s.hpp_refs();
    for bad in ["missing", "../up", "/abs", "README"] {
        let run = hop(&s, &["start", "--agent", "codex", "--sparse", bad, "p"]).exit(2);
        assert!(run.stderr.contains("--sparse"), "{bad}: {run}");
    }
    assert_eq!(s.hpp_refs(), before, "no state was recorded");
}

#[test]
fn a_signed_landing_validation_verifies_against_the_allowed_signers() {
    let s = Sandbox::repo();
    let key = s.path("checker-key");
    let made = s
        .command("ssh-keygen", &s.root)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "checker", "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen runs (the tests need the real one)");
    assert!(made.status.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).expect("a public key");
    let allowed = s.path("allowed_signers");
    std::fs::write(&allowed, format!("checker-b namespaces=\"hpp\" {public}")).expect("writable");
    init(&s);
    let l = start(&s, "add a");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    let key = key.to_str().expect("utf-8");
    let landed = hop(
        &s,
        &[
            "land",
            &r,
            "--sign-key",
            key,
            "--signer",
            "checker-b",
            "--json",
            "--",
            "true",
        ],
    )
    .json(0);
    let bundle = landed["data"]["validation"]["evidence"]
        .as_str()
        .expect("a bundle");
    let allowed = allowed.to_str().expect("utf-8");
    let report = s
        .hpp([
            "evidence",
            "verify",
            bundle,
            "--allowed-signers",
            allowed,
            "--json",
        ])
        .json(0);
    assert_eq!(report["signature"]["status"], "verified", "{report}");
    // A --sign-key without --signer is a usage error: nothing runs, nothing lands.
    let r2 = propose(&s, &l, &[("b.txt", Some("b\n"))]);
    let head = accepted(&s);
    let run = hop(&s, &["land", &r2, "--sign-key", key, "--", "true"]).exit(2);
    assert!(run.stderr.contains("--signer"), "{run}");
    assert_eq!(accepted(&s), head);
}
