//! Verify at the border: what crosses between machines is read before it is taken in. A remote
//! argument is never an option to git; events without gate records after gated ones break a
//! loop instead of reading as legacy; the notes mirror is rebuilt from the records held, never
//! merged from a remote.

use std::path::{Path, PathBuf};

use crate::harness::Sandbox;

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// A bare remote holding the sandbox's `main`, and one clone of it set up for records.
fn remote_and_clone(sandbox: &Sandbox) -> (PathBuf, PathBuf) {
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    sandbox.git(["push", "-q", text(&remote), "main"]);
    let clone = sandbox.path("clone");
    sandbox.git(["clone", "-q", text(&remote), text(&clone)]);
    sandbox.hpp_in(&clone, &["remote", "setup", "--apply"]).ok();
    (remote, clone)
}

#[test]
fn a_remote_that_looks_like_an_option_is_refused_and_runs_nothing() {
    let sandbox = Sandbox::repo();
    let (_, clone) = remote_and_clone(&sandbox);
    for (verb, option) in [
        ("fetch", "--upload-pack=touch X"),
        ("push", "--receive-pack=touch X"),
        ("push", "--upload-pack=touch X"),
    ] {
        let before = sandbox.git_in(&clone, &["for-each-ref"]);
        let reason = sandbox.hpp_in(&clone, &[verb, "--", option]).refused();
        assert!(
            reason.contains("cannot start with '-'"),
            "{verb}: the reason names the rule: {reason}"
        );
        for dir in [&clone, &sandbox.root] {
            assert!(
                !dir.join("X").exists(),
                "{verb} {option} ran the command in {}",
                dir.display()
            );
        }
        assert_eq!(
            before,
            sandbox.git_in(&clone, &["for-each-ref"]),
            "{verb}: nothing written"
        );
    }
}

#[test]
fn control_an_ordinary_remote_still_syncs() {
    let sandbox = Sandbox::repo();
    let (remote, clone) = remote_and_clone(&sandbox);
    sandbox.hpp_in(&clone, &crate::harness::START).ok();
    sandbox.hpp_in(&clone, &["push"]).ok();
    let there = sandbox.git_in(&remote, &["for-each-ref", "refs/hpp/"]);
    assert!(there.contains("refs/hpp/loops/"), "pushed: {there}");
    sandbox.hpp_in(&clone, &["fetch", "origin"]).ok();
    let url = text(&remote).to_owned();
    sandbox.hpp_in(&clone, &["fetch", &url]).ok();
}
