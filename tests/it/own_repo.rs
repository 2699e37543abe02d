//! The README's "In your own repository" block, run as written (issue 31, item 6 of the
//! frictions: the README never showed the key, the signers, the remote, the hooks or the
//! reviewer's clone). The block is read from README.md, so the README and this test cannot
//! drift apart.

use assert_fs::prelude::*;

use crate::harness::Sandbox;

/// The first `sh` block of the README's "In your own repository" section.
pub(crate) fn block() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("the README is there");
    let section = readme
        .split("\n## In your own repository\n")
        .nth(1)
        .expect("the README has the section");
    let start = section.find("```sh\n").expect("the section has a sh block") + "```sh\n".len();
    let end = section[start..].find("```").expect("the block ends") + start;
    section[start..end].to_owned()
}

/// The block without its `.gitignore` line: the tests' report stays in the snapshot.
fn block_without_the_ignore() -> String {
    block()
        .lines()
        .filter(|l| !l.contains(".gitignore"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A repository as a user brings it: a spec, a test command that writes a report, a remote.
pub(crate) fn own_repository() -> Sandbox {
    let sandbox = Sandbox::repo();
    let remote = sandbox.path("remote.git");
    sandbox.git_in(
        &sandbox.root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            remote.to_str().expect("UTF-8"),
        ],
    );
    sandbox
        .child("SPEC.md")
        .write_str("# Discounts\n\nA code takes 10% off.\n")
        .expect("writable");
    let test = sandbox.root.join("test.sh");
    std::fs::write(
        &test,
        "#!/bin/sh\nmkdir -p out && echo '3 passed' > out/report.txt\n",
    )
    .expect("writable");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&test, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    sandbox.git(["add", "SPEC.md", "test.sh"]);
    sandbox.git(["commit", "-q", "-m", "The spec and the tests"]);
    sandbox.git(["remote", "add", "origin", remote.to_str().expect("UTF-8")]);
    sandbox
}

/// Runs `script` with bash, stopping at the first failing line, each line traced on stderr.
pub(crate) fn run(sandbox: &Sandbox, script: &str) -> crate::harness::Run {
    let out = sandbox
        .command("bash", &sandbox.root)
        .args(["--noprofile", "--norc", "-eux", "-c", script])
        .env("GIT_AUTHOR_NAME", "Me")
        .env("GIT_AUTHOR_EMAIL", "me@example.com")
        .env("GIT_COMMITTER_NAME", "Me")
        .env("GIT_COMMITTER_EMAIL", "me@example.com")
        .output()
        .expect("bash runs");
    crate::harness::Run::from_output(&out)
}

#[test]
fn the_readme_first_day_runs_line_by_line_and_the_reviewer_verifies_head() {
    let sandbox = own_repository();
    let script = block();
    let commands = script
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .count();
    assert!(
        commands >= 20,
        "the block is the whole first day:\n{script}"
    );
    let done = run(&sandbox, &script);
    assert_eq!(done.code, 0, "{done}");
    // Every line ran (bash -x traces each command it runs).
    for needle in [
        "+ ssh-keygen",
        "+ git hpp trust init",
        "+ git hpp remote setup origin --apply",
        "+ git hpp hooks install --apply",
        "+ git hpp event append --type verified",
        "+ git push -q origin HEAD",
        "+ git hpp fetch origin",
        "+ git hpp status",
    ] {
        assert!(
            done.stderr.contains(needle),
            "{needle} did not run:\n{done}"
        );
    }
    assert!(done.stdout.contains("verified"), "{done}");
    // The reviewer's clone holds the policy, the loop and the verified main.
    let review = sandbox.path("review");
    let verdict = sandbox
        .hpp_in(&review, &["verify", "HEAD", "--json"])
        .json(0);
    assert_eq!(verdict["commits"][0]["ok"], true, "{verdict}");
    let refs = sandbox.git_in(
        &review,
        &["for-each-ref", "--format=%(refname)", "refs/hpp/"],
    );
    assert!(refs.contains("refs/hpp/trust"), "{refs}");
    assert!(refs.contains("refs/hpp/loops/main"), "{refs}");
}

#[test]
fn control_without_ignoring_the_test_output_verify_refuses_head() {
    // Issue 31, friction 1: the report the tests write, untracked, is in the attested snapshot
    // but not in HEAD's tree, so the loop says verified and `git hpp verify` refuses HEAD.
    let sandbox = own_repository();
    let stopped = run(&sandbox, &block_without_the_ignore());
    assert_eq!(stopped.code, 2, "{stopped}");
    let last = stopped
        .stderr
        .lines()
        .rfind(|l| l.starts_with("+ "))
        .unwrap_or_default();
    assert_eq!(last, "+ git hpp verify", "{stopped}");
    assert!(
        stopped.stderr.contains("out/report.txt"),
        "the warnings name it:\n{stopped}"
    );
}

#[test]
fn verify_s_fix_for_uncommitted_files_is_enough_as_it_says() {
    // Issue 58: the fix asked to record the evidence and the attestation again, which is not
    // needed once the named files are committed as they are.
    let sandbox = own_repository();
    let stopped = run(&sandbox, &block_without_the_ignore());
    assert_eq!(stopped.code, 2, "{stopped}");
    assert!(
        stopped.stdout.contains(
            "fix: commit them as they are (`git add -A -- out/report.txt && git commit`)"
        ) || stopped.stderr.contains(
            "fix: commit them as they are (`git add -A -- out/report.txt && git commit`)"
        ),
        "{stopped}"
    );
    assert!(
        stopped.stderr.contains("out/report.txt differs"),
        "one path differs: {stopped}"
    );
    let followed = run(
        &sandbox,
        "git add -A -- out/report.txt && git commit -q -m 'The report'\ngit hpp verify\n",
    );
    assert_eq!(followed.code, 0, "{followed}");
}
