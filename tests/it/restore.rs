//! Checkpoints before shell calls and `git hpp restore`: the policy gate keeps the workspace
//! before each call it cannot prove harmless, and `restore` brings back, byte for byte with
//! modes, what a later command deleted or changed (tracked files and untracked ones that are
//! not ignored), listing first and writing only with `--apply`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::harness::{Run, Sandbox};

/// A repository holding, beside README: `src/lib.rs` committed and then edited, `src/run.sh`
/// committed executable, `src/link` a committed symlink, `notes.txt` untracked, and `build/`
/// ignored.
fn workspace() -> Sandbox {
    let sandbox = Sandbox::repo();
    let root = &sandbox.root;
    std::fs::create_dir_all(root.join("src")).expect("writable");
    std::fs::write(root.join("src/lib.rs"), "pub fn f() {}\n").expect("writable");
    std::fs::write(root.join("src/run.sh"), "#!/bin/sh\necho run\n").expect("writable");
    std::fs::set_permissions(
        root.join("src/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::os::unix::fs::symlink("lib.rs", root.join("src/link")).expect("a link");
    std::fs::write(root.join(".gitignore"), "build/\n").expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "src"]);
    std::fs::write(root.join("src/lib.rs"), "pub fn f() { /* unsaved */ }\n").expect("writable");
    std::fs::write(root.join("notes.txt"), "mine\n").expect("writable");
    std::fs::create_dir_all(root.join("build")).expect("writable");
    std::fs::write(root.join("build/out.o"), "obj\n").expect("writable");
    sandbox
}

/// Every file under `root` but `.git`: its path, mode, and bytes (a symlink's target).
fn files(root: &Path) -> Vec<(String, u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable") {
            let path = entry.expect("an entry").path();
            let rel = path
                .strip_prefix(root)
                .expect("inside")
                .display()
                .to_string();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("stat");
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("a link");
                out.push((rel, 0o120000, target.display().to_string().into_bytes()));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                let mode = meta.permissions().mode() & 0o111;
                out.push((rel, mode, std::fs::read(&path).expect("readable")));
            }
        }
    }
    out.sort();
    out
}

/// The policy gate's PreToolUse call for `command`, as Claude Code sends it.
fn gate(sandbox: &Sandbox, command: &str, extra: &[&str]) -> Run {
    let input = json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command}, "cwd": sandbox.root});
    let mut args = vec![
        "policy",
        "hook",
        "--host",
        "claude-code",
        "--rules",
        "reference",
    ];
    args.extend_from_slice(extra);
    Run::fed(
        sandbox.hpp_command(&sandbox.root, &args),
        &input.to_string(),
    )
}

/// Asserts the gate let the call through silently: no answer, no warning.
#[track_caller]
fn allowed(run: Run) {
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", ""),
        "{run}"
    );
}

fn bash(sandbox: &Sandbox, command: &str) {
    let status = sandbox
        .command("bash", &sandbox.root)
        .args(["-c", command])
        .status()
        .expect("bash runs");
    assert!(status.code().is_some(), "{command}");
}

fn checkpoints(sandbox: &Sandbox) -> Vec<Value> {
    let out = sandbox.hpp(["restore", "--list", "--json"]).json(0);
    out["checkpoints"].as_array().cloned().unwrap_or_default()
}

/// The commands the reference's verdicts let through, each run after the gate saw it.
const DESTROY: [&str; 6] = [
    "rm -r src",
    "find . -name notes.txt -exec rm {} +",
    "python3 -c \"import shutil; shutil.rmtree('src', ignore_errors=True)\"",
    "git clean -fd",
    "git reset --hard",
    "git checkout -- .",
];

#[test]
fn every_file_a_delete_takes_comes_back_byte_for_byte_with_its_mode() {
    let sandbox = workspace();
    let before = files(&sandbox.root);
    for command in DESTROY {
        allowed(gate(&sandbox, command, &[]));
        bash(&sandbox, command);
    }
    let lost = files(&sandbox.root);
    assert_ne!(
        lost, before,
        "the commands destroyed nothing, so restoring proves nothing"
    );
    let first = checkpoints(&sandbox)[0]["ref"]
        .as_str()
        .expect("a checkpoint")
        .to_owned();
    assert!(
        first.starts_with("refs/hpp/checkpoints/s1/command/"),
        "{first}"
    );
    // Listing writes nothing.
    let plan = sandbox
        .hpp_in(&sandbox.root, &["restore", &first, "--json"])
        .json(0);
    assert_eq!(plan["applied"], false);
    assert_eq!(files(&sandbox.root), lost, "a listing wrote nothing");
    let mut back: Vec<&str> = plan["deleted"]
        .as_array()
        .into_iter()
        .chain(plan["changed"].as_array())
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    back.sort_unstable();
    assert_eq!(back, ["notes.txt", "src/lib.rs"], "{plan}");
    let human = sandbox.hpp_in(&sandbox.root, &["restore", &first]).ok();
    assert!(human.contains("restore  notes.txt  (deleted)"), "{human}");
    sandbox
        .hpp_in(&sandbox.root, &["restore", &first, "--apply"])
        .ok();
    let mut after = files(&sandbox.root);
    let mut want = before;
    // The ignored build/ is not the workspace's to keep: git clean -fd left it, too.
    after.retain(|(p, _, _)| !p.starts_with("build"));
    want.retain(|(p, _, _)| !p.starts_with("build"));
    assert_eq!(after, want);
    assert_eq!(
        sandbox.git(["status", "--porcelain"]),
        " M src/lib.rs\n?? notes.txt",
        "the index and HEAD are as they were"
    );
}

#[test]
fn a_call_proved_harmless_or_a_workspace_kept_already_takes_no_checkpoint() {
    let sandbox = workspace();
    for command in ["git status", "ls -la src | grep lib", "cat notes.txt"] {
        allowed(gate(&sandbox, command, &[]));
    }
    assert_eq!(checkpoints(&sandbox), Vec::<Value>::new());
    allowed(gate(&sandbox, "cargo build", &[]));
    allowed(gate(&sandbox, "make", &[]));
    assert_eq!(
        checkpoints(&sandbox).len(),
        1,
        "the second saw the same tree"
    );
    std::fs::write(sandbox.root.join("new.txt"), "n\n").expect("writable");
    allowed(gate(&sandbox, "make", &[]));
    let all = checkpoints(&sandbox);
    assert_eq!(all.len(), 2);
    assert_eq!(all[1]["command"], "make");
    // A command with a secret's shape is not kept in the record.
    std::fs::write(sandbox.root.join("new.txt"), "m\n").expect("writable");
    allowed(gate(
        &sandbox,
        "curl -H 'Authorization: token ghp_0123456789abcdefghijABCDEFGHIJklmnopqr' x",
        &[],
    ));
    let last = checkpoints(&sandbox).pop().expect("a third");
    assert!(
        last["command"]
            .as_str()
            .is_some_and(|c| c.starts_with("[withheld")),
        "{last}"
    );
}

#[test]
fn control_without_a_checkpoint_nothing_comes_back() {
    let sandbox = workspace();
    allowed(gate(&sandbox, "rm -r src", &["--no-checkpoint"]));
    sandbox.git(["config", "hpp.checkpoint.beforeCommands", "false"]);
    allowed(gate(&sandbox, "rm -r src", &[]));
    bash(&sandbox, "rm -r src");
    let reason = sandbox.hpp(["restore"]).refused();
    assert_eq!(reason, "no checkpoint to restore from");
    assert!(!sandbox.root.join("src").exists());
    let reason = sandbox.hpp(["restore", "s1/command/9"]).refused();
    assert_eq!(reason, "s1/command/9: no such checkpoint");
}

#[test]
fn checkpoints_past_their_age_are_pruned_and_each_session_keeps_its_newest() {
    let sandbox = workspace();
    // Two old checkpoints of session "old" and one of "s1", written as records dated 2020.
    let tree = sandbox.hpp(["snapshot"]).ok().trim().to_owned();
    for (name, n) in [("old", 1), ("old", 2), ("gone", 1)] {
        let record = json!({"schema": "hpp.command-checkpoint/v1", "session": name, "n": n,
            "command": "make", "tree": tree, "head": null,
            "created_at": format!("2020-01-0{n}T00:00:00Z")});
        let blob = sandbox.git_fed(&["hash-object", "-w", "--stdin"], &record.to_string());
        let listing = format!(
            "100644 blob {}\tcheckpoint.json\n040000 tree {tree}\tsnapshot\n",
            blob.trim()
        );
        let record_tree = sandbox.git_fed(&["mktree"], &listing);
        let commit = sandbox.git(["commit-tree", record_tree.trim(), "-m", "old"]);
        sandbox.git([
            "update-ref",
            &format!("refs/hpp/checkpoints/{name}/command/{n}"),
            commit.trim(),
        ]);
    }
    // A new checkpoint of s1 runs the pruning (the first in this repository).
    allowed(gate(&sandbox, "make", &[]));
    let left: Vec<String> = checkpoints(&sandbox)
        .iter()
        .filter_map(|c| c["ref"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        left,
        [
            "refs/hpp/checkpoints/gone/command/1",
            "refs/hpp/checkpoints/old/command/2",
            "refs/hpp/checkpoints/s1/command/1",
        ],
        "old/command/1 is past the age; each session keeps its newest"
    );
}
