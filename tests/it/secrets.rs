//! Nothing private leaves the machine: secret-named files stay out of snapshots, secret-shaped
//! files, specs, artifacts and names are refused before a record keeps them.

use crate::harness::Sandbox;

/// A token of GitHub's shape, assembled so this file does not hold one literally.
fn token() -> String {
    format!("ghp_{}", "0123456789abcdefghijABCDEFGHIJklmnop")
}

fn attest(sandbox: &Sandbox, spec: &str) -> crate::harness::Run {
    sandbox.hpp([
        "attest",
        "create",
        "--spec",
        spec,
        "--maker",
        "maker-a",
        "--checker",
        "checker-b",
        "--session",
        "review:1",
        "--verdict",
        "approved",
    ])
}

#[test]
fn an_untracked_env_file_is_left_out_of_the_snapshot_and_never_pushed() {
    let sandbox = Sandbox::repo();
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", remote.to_str().expect("utf-8")]);
    sandbox.git(["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    std::fs::write(sandbox.root.join(".env"), format!("TOKEN={}\n", token())).expect("writable");
    let explained = sandbox.hpp(["snapshot", "--explain", "--json"]).json(0);
    assert_eq!(explained["left_out"], serde_json::json!([".env"]));
    let tree = explained["tree"].as_str().expect("a tree").to_owned();
    // Without the .env, the snapshot is HEAD's own tree.
    assert_eq!(tree, sandbox.git(["rev-parse", "HEAD^{tree}"]));
    attest(&sandbox, "README").ok();
    sandbox.hpp(["push"]).ok();
    let objects = sandbox.git_in(
        &remote,
        &["cat-file", "--batch-all-objects", "--batch-check"],
    );
    let env_blob = sandbox.git(["hash-object", ".env"]);
    assert!(
        !objects.contains(&env_blob),
        "the .env blob reached the remote"
    );
    let human = sandbox.hpp(["snapshot", "--explain"]).ok();
    assert!(human.contains("left out: .env"), "{human}");
}

#[test]
fn control_a_tracked_env_file_stays_in_the_snapshot() {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join(".env"), "MODE=dev\n").expect("writable");
    sandbox.git(["add", ".env"]);
    sandbox.git(["commit", "-q", "-m", "env"]);
    let explained = sandbox.hpp(["snapshot", "--explain", "--json"]).json(0);
    assert_eq!(explained["left_out"], serde_json::json!([]));
    assert_eq!(
        explained["tree"].as_str(),
        Some(sandbox.git(["rev-parse", "HEAD^{tree}"]).as_str())
    );
}

#[test]
fn control_a_new_file_with_a_token_is_refused_naming_the_file_and_the_shape() {
    let sandbox = Sandbox::repo();
    std::fs::create_dir_all(sandbox.root.join("notes")).expect("writable");
    std::fs::write(
        sandbox.root.join("notes/ci.txt"),
        format!("use {}\n", token()),
    )
    .expect("writable");
    let reason = attest(&sandbox, "README").refused();
    assert!(
        reason.contains("notes/ci.txt looks like it holds a GitHub token"),
        "{reason}"
    );
    assert!(!reason.contains(&token()), "the value is never printed");
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
    // Committed on purpose, it is the repository's own history: not re-read.
    sandbox.git(["add", "notes/ci.txt"]);
    sandbox.git(["commit", "-q", "-m", "on purpose"]);
    attest(&sandbox, "README").ok();
}

#[test]
fn control_a_spec_or_a_kept_artifact_with_a_secret_is_refused() {
    let sandbox = Sandbox::repo();
    let pem = format!("-----BEGIN {} PRIVATE KEY-----\nAAAA\n", "OPENSSH");
    std::fs::write(sandbox.root.join("SPEC.md"), &pem).expect("writable");
    let reason = attest(&sandbox, "SPEC.md").refused();
    assert!(
        reason.contains("SPEC.md looks like it holds a private key block"),
        "{reason}"
    );
    std::fs::remove_file(sandbox.root.join("SPEC.md")).expect("removable");
    sandbox.ignore_outputs();
    // The run copies the token from outside: the command line itself carries none.
    let source = sandbox.path("token.txt");
    std::fs::write(&source, token()).expect("writable");
    let script = format!(
        "mkdir -p hpp-out && cp '{}' hpp-out/a.txt",
        source.display()
    );
    let reason = sandbox
        .hpp([
            "evidence",
            "run",
            "--id",
            "leak",
            "--artifact",
            "hpp-out/a.txt",
            "--keep-artifacts",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .refused();
    assert!(
        reason.contains("artifact hpp-out/a.txt looks like it holds"),
        "{reason}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "nothing was recorded");
}

#[test]
fn control_secret_shaped_names_are_refused_before_anything_is_written() {
    let sandbox = Sandbox::repo();
    let secret = token();
    let checker = sandbox
        .hpp([
            "attest",
            "create",
            "--spec",
            "README",
            "--maker",
            "maker-a",
            "--checker",
            &secret,
            "--session",
            "review:1",
            "--verdict",
            "approved",
        ])
        .refused();
    assert!(
        checker.contains("--checker looks like it carries a secret"),
        "{checker}"
    );
    let looped = sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--work",
            "W",
            "--maker",
            "agent-a",
            "--loop",
            &secret,
        ])
        .refused();
    assert!(looped.contains("the loop name looks like"), "{looped}");
    let id = sandbox
        .hpp(["evidence", "run", "--id", &secret, "--", "true"])
        .refused();
    assert!(id.contains("the evidence id looks like"), "{id}");
    let model = sandbox
        .hpp([
            "lane",
            "start",
            "x",
            "--territory",
            "src",
            "--role",
            "maker",
            "--model",
            &secret,
        ])
        .refused();
    assert!(model.contains("--model looks like"), "{model}");
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
    // The same commands with ordinary names go through.
    attest(&sandbox, "README").ok();
}

#[test]
fn control_push_holds_back_a_record_that_keeps_a_secret_shaped_file() {
    let sandbox = Sandbox::repo();
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", remote.to_str().expect("utf-8")]);
    sandbox.git(["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    // A record written by another tool (or before these checks): its snapshot keeps a token.
    let leaked = sandbox.path("leaked.txt");
    std::fs::write(&leaked, format!("{}\n", token())).expect("writable");
    let blob = sandbox.git(["hash-object", "-w", leaked.to_str().expect("utf-8")]);
    let snapshot = mktree(&sandbox, &format!("100644 blob {blob}\tci-token.txt\n"));
    let record = mktree(&sandbox, &format!("040000 tree {snapshot}\tsnapshot\n"));
    let commit = sandbox.git(["commit-tree", &record, "-m", "foreign record"]);
    let name = format!("refs/hpp/attestations/{snapshot}/foreign");
    sandbox.git(["update-ref", &name, &commit]);
    let run = sandbox.hpp(["push"]);
    assert_eq!(run.code, 1, "the record was held back:\n{run}");
    assert!(
        run.stdout.contains(&format!(
            "held back: {name} keeps ci-token.txt, which looks like it holds a GitHub token"
        )),
        "{run}"
    );
    assert!(!run.stdout.contains(&token()), "never the value: {run}");
    let there = sandbox.git_in(&remote, &["for-each-ref"]);
    assert!(!there.contains(&name), "the record was not pushed: {there}");
    // Without that record, the real ones go.
    sandbox.git(["update-ref", "-d", &name]);
    attest(&sandbox, "README").ok();
    sandbox.hpp(["push"]).ok();
}

/// Writes a tree from `git mktree` input and returns its id.
fn mktree(sandbox: &Sandbox, entries: &str) -> String {
    let out = sandbox
        .command("git", &sandbox.root)
        .arg("mktree")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(entries.as_bytes())?;
            child.wait_with_output()
        })
        .expect("git mktree runs");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

/// The secret shapes issue 33 found accepted in event data, each built from pieces (an AWS
/// secret key that is not the documentation's example, a placeholder JWT, filler).
fn issue_33_secrets() -> Vec<String> {
    vec![
        format!(
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}",
            "Q2vT9kLm4Z"
        ),
        format!(
            "{}.{}.{}",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
            "c2lnbmF0dXJlLW5vdC1yZWFs"
        ),
        format!("https://admin:{}@db.internal:5432/app", "pass"),
        format!("AI{}{}", "za", "SyA-fake-0123456789abcdefghijklmnop"),
        format!("sk_{}_{}", "live", "0123456789abcdefghijABCD"),
    ]
}

#[test]
fn control_event_data_with_a_credential_of_a_vendor_shape_is_refused_and_nothing_is_written() {
    let sandbox = Sandbox::repo();
    for secret in issue_33_secrets() {
        let data = serde_json::json!({ "work": "W", "maker": "agent-a", "note": secret });
        let reason = sandbox
            .hpp([
                "event",
                "append",
                "--type",
                "work_started",
                "--data",
                &data.to_string(),
            ])
            .refused();
        assert!(
            reason.contains("looks like it carries a secret"),
            "{reason}"
        );
        assert!(!reason.contains(&secret), "the value is never printed");
        assert_eq!(sandbox.hpp_refs(), "", "nothing was written for {secret}");
    }
}

#[test]
fn event_data_with_ids_hashes_base64_and_fixtures_is_accepted() {
    let sandbox = Sandbox::repo();
    let data = serde_json::json!({
        "work": "W",
        "maker": "agent-a",
        "run": "0f8fad5b-d9cb-469f-a165-70867728950e",
        "commit": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "digest": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "blob": "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==",
        "fixture": "tests/fixtures/make_repo.sh test_fixture_ok",
        "remote": "git@github.com:org/repo.git",
        "dsn": "postgres://app:${DB_PASSWORD}@db/app",
        "max_tokens": 4096,
    });
    sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--data",
            &data.to_string(),
        ])
        .ok();
    assert_ne!(sandbox.hpp_refs(), "", "the event was written");
}
