//! Repositories git makes in another object format (issue 29, item 3): SHA-256. Until the store
//! reads them, every command refuses them up front with one line naming the format (exit 2),
//! nothing on stdout and nothing written, instead of an internal error or a wrong answer. The
//! reftable ref backend is read: see `reftable.rs`.

use crate::harness::Sandbox;

/// A sandbox whose repository `git init` made with `option`, with one commit; `None` (and a
/// loud line) when this git cannot make one.
fn repo_with(option: &str) -> Option<Sandbox> {
    let sandbox = Sandbox::empty();
    let made = sandbox
        .command("git", &sandbox.root)
        .args(["init", "-q", "-b", "main", option])
        .output()
        .expect("git runs");
    if !made.status.success() {
        eprintln!(
            "SKIPPED: this git cannot `git init {option}`: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        );
        return None;
    }
    std::fs::write(sandbox.root.join("README"), "hello\n").expect("writable");
    sandbox.git(["add", "README"]);
    sandbox.git(["commit", "-q", "-m", "initial"]);
    Some(sandbox)
}

fn refused_up_front(option: &str, names: &str) {
    let Some(sandbox) = repo_with(option) else {
        return;
    };
    let before = sandbox.git(["for-each-ref"]);
    for args in [
        &["status"][..],
        &["verify"],
        &[
            "event",
            "append",
            "--type",
            "work_started",
            "--work",
            "W",
            "--maker",
            "m",
        ],
        &["doctor"],
    ] {
        let run = sandbox.hpp_in(&sandbox.root, args);
        assert_eq!(run.code, 2, "{args:?}: {run}");
        assert!(run.stdout.is_empty(), "{args:?}: {run}");
        let first = run.stderr.lines().next().unwrap_or_default();
        assert!(first.contains(names), "{args:?}: {run}");
        assert!(!run.stderr.contains("internal error"), "{args:?}: {run}");
    }
    assert_eq!(sandbox.git(["for-each-ref"]), before, "nothing written");
}

#[test]
fn a_sha256_repository_is_refused_up_front_naming_its_object_format() {
    refused_up_front("--object-format=sha256", "sha256 object format");
}

#[test]
fn control_a_repository_in_the_default_formats_is_read() {
    let sandbox = Sandbox::repo();
    let run = sandbox.hpp_in(&sandbox.root, &["status"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("HPP status: planned"), "{run}");
}
