//! The trust root in the repository (issue 27): a signed policy at `refs/hpp/trust` that every
//! reader uses with no flags and no configuration. A reviewer who clones and fetches gets
//! signatures required, roles enforced and the policy verified; an unsigned approval, a key
//! outside the policy, a person signing as a checker, a maker's key as a checker and a policy
//! edit not signed by the root each fail with the reason (exit 2), and the server gate refuses
//! the same with no server configuration.

use std::path::{Path, PathBuf};

use crate::harness::{Run, Sandbox, attest_args};

pub(crate) fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// Makes an ed25519 key with the real `ssh-keygen` beside the repository; returns its path.
pub(crate) fn keygen(sandbox: &Sandbox, name: &str) -> PathBuf {
    crate::harness::keygen(sandbox, name).0
}

pub(crate) fn public(key: &Path) -> String {
    format!("{}.pub", key.display())
}

/// Runs `trust init` of root `root` with `key` in `sandbox`, with `--apply` when `apply`.
fn trust_init(sandbox: &Sandbox, key: &Path, apply: bool) -> String {
    let public = public(key);
    let mut args = vec![
        "trust",
        "init",
        "--root",
        "root",
        "--key",
        &public,
        "--sign-key",
        text(key),
    ];
    if apply {
        args.push("--apply");
    }
    sandbox.hpp_in(&sandbox.root, &args).ok()
}

/// A repository with SPEC.md committed and a policy: `root` (its root), `checker-b` (checker),
/// `alice` (person), `maker-m` (maker). Returns the sandbox and the keys by name.
pub(crate) struct Policy {
    pub(crate) sandbox: Sandbox,
    pub(crate) root: PathBuf,
    pub(crate) checker: PathBuf,
    pub(crate) alice: PathBuf,
    pub(crate) maker: PathBuf,
}

pub(crate) fn with_policy() -> Policy {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nIt works.\n").expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    let root = keygen(&sandbox, "root");
    let checker = keygen(&sandbox, "checker");
    let alice = keygen(&sandbox, "alice");
    let maker = keygen(&sandbox, "maker");
    let plan = trust_init(&sandbox, &root, false);
    assert!(plan.contains("plan only"), "{plan}");
    assert!(sandbox.hpp_refs().is_empty(), "a plan writes nothing");
    let init = trust_init(&sandbox, &root, true);
    assert!(init.contains("pinned SHA256:"), "{init}");
    for (name, key, role) in [
        ("checker-b", &checker, "checker"),
        ("alice", &alice, "person"),
        ("maker-m", &maker, "maker"),
    ] {
        sandbox
            .hpp_in(
                &sandbox.root,
                &[
                    "trust",
                    "add",
                    name,
                    "--key",
                    &public(key),
                    "--role",
                    role,
                    "--sign-key",
                    text(&root),
                    "--apply",
                ],
            )
            .ok();
    }
    Policy {
        sandbox,
        root,
        checker,
        alice,
        maker,
    }
}

impl Policy {
    /// `attest create` of HEAD's tree, maker-a, checked by `checker`, signed as `checker` with
    /// `key` (unsigned with none).
    pub(crate) fn attest(&self, checker: &str, key: Option<&Path>) -> Run {
        let mut args: Vec<String> = attest_args("review:1", "approved")
            .into_iter()
            .map(str::to_owned)
            .collect();
        let at = args
            .iter()
            .position(|a| a == "checker-b")
            .expect("the checker");
        args[at] = checker.to_owned();
        match key {
            Some(key) => args.extend(["--sign-key".to_owned(), text(key).to_owned()]),
            None => args.push("--no-sign".to_owned()),
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.sandbox.hpp_in(&self.sandbox.root, &args)
    }

    pub(crate) fn verify(&self) -> Run {
        self.sandbox.hpp(["verify"])
    }
}

#[test]
fn a_signed_approval_by_a_checker_verifies_with_no_flags_and_says_the_policy_is_in_force() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let out = p.verify().ok();
    assert!(out.contains("signature verified (checker-b)"), "{out}");
    assert!(
        out.contains("signatures required by the trust policy"),
        "{out}"
    );
}

#[test]
fn control_an_unsigned_approval_fails_and_its_creation_says_so() {
    let p = with_policy();
    let created = p.attest("checker-b", None).ok_with_stderr();
    assert!(
        created.contains("unsigned") && created.contains("no reader will count it"),
        "{created}"
    );
    let run = p.verify().exit(2);
    assert!(run.stdout.contains("not signed"), "{run}");
}

#[test]
fn control_a_key_outside_the_policy_fails() {
    let p = with_policy();
    let stranger = keygen(&p.sandbox, "stranger");
    p.attest("checker-b", Some(&stranger)).ok();
    let run = p.verify().exit(2);
    assert!(run.stdout.contains("FAIL"), "{run}");
    assert!(run.stdout.contains("signature"), "{run}");
}

#[test]
fn control_a_person_signing_as_a_checker_fails() {
    let p = with_policy();
    p.attest("alice", Some(&p.alice)).ok();
    let run = p.verify().exit(2);
    assert!(run.stdout.contains("does not allow namespace"), "{run}");
}

#[test]
fn control_a_maker_signing_as_a_checker_fails_for_want_of_the_role() {
    let p = with_policy();
    p.attest("maker-m", Some(&p.maker)).ok();
    let run = p.verify().exit(2);
    assert!(
        run.stdout
            .contains("the trust policy gives maker-m no checker role"),
        "{run}"
    );
}

/// Writes a child of the policy's tip whose policy adds `mallory` as a checker, with the
/// signers file rendered to match and the old root signature kept (over the old bytes), and
/// moves refs/hpp/trust to it with plain git: what an adversary with push access could do.
pub(crate) fn forge_policy_edit(sandbox: &Sandbox, repo: &Path, mallory_key: &str) -> String {
    let git = |args: &[&str]| sandbox.git_in(repo, args).trim().to_owned();
    let policy = git(&["show", "refs/hpp/trust:policy.json"]);
    let mut value: serde_json::Value = serde_json::from_str(&policy).expect("the policy is JSON");
    let key = mallory_key
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    value["principals"]["mallory"] = serde_json::json!({"key": key, "roles": ["checker"]});
    let bytes = serde_json::to_string(&value).expect("serialises");
    // The signers file as the edited policy renders it: one line per principal, by name.
    let mut lines: Vec<String> = sandbox
        .git_in(repo, &["show", "refs/hpp/trust:allowed_signers"])
        .lines()
        .map(str::to_owned)
        .chain([format!("mallory namespaces=\"hpp\" {key}")])
        .collect();
    lines.sort();
    let signers = format!("{}\n", lines.join("\n"));
    let blob = |content: &str| sandbox.git_fed_in(repo, &["hash-object", "-w", "--stdin"], content);
    let policy_blob = blob(&bytes);
    let signers_blob = blob(&signers);
    let signatures = git(&["rev-parse", "refs/hpp/trust:signatures"]);
    let tree = sandbox.git_fed_in(
        repo,
        &["mktree"],
        &format!(
            "100644 blob {signers_blob}\tallowed_signers\n100644 blob {policy_blob}\tpolicy.json\n040000 tree {signatures}\tsignatures\n"
        ),
    );
    let commit = git(&[
        "commit-tree",
        tree.trim(),
        "-p",
        "refs/hpp/trust",
        "-m",
        "hpp trust: add mallory",
    ]);
    git(&["update-ref", "refs/hpp/trust", &commit]);
    commit
}

#[test]
fn control_a_policy_edit_not_signed_by_the_root_is_refused_by_every_reader() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    p.verify().ok();
    let mallory = keygen(&p.sandbox, "mallory");
    let mallory_pub = std::fs::read_to_string(public(&mallory)).expect("the key");
    let forged = forge_policy_edit(&p.sandbox, &p.sandbox.root, &mallory_pub);
    for args in [
        vec!["verify"],
        vec!["trust", "show"],
        vec!["attest", "verify"],
        vec!["doctor"],
    ] {
        let run = p.sandbox.hpp_in(&p.sandbox.root, &args);
        let message = run.refused();
        assert!(
            message.contains(&format!("the trust policy at {forged} is refused")),
            "{args:?}: {message}"
        );
    }
}

#[test]
fn a_clone_trusts_the_first_root_once_pins_it_and_leaves_a_forged_policy_staged() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let remote = p.sandbox.path("remote.git");
    p.sandbox
        .git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    p.sandbox
        .git(["push", "-q", text(&remote), "main", "refs/hpp/*:refs/hpp/*"]);
    let b = p.sandbox.path("b");
    p.sandbox.git(["clone", "-q", text(&remote), text(&b)]);
    let fetched = p.sandbox.hpp_in(&b, &["fetch"]).ok();
    let pin = p
        .sandbox
        .git_in(&p.sandbox.root, &["config", "hpp.trustRoot"]);
    assert!(
        fetched.contains(&format!("trusting the trust policy's root {}", pin.trim())),
        "{fetched}"
    );
    assert_eq!(p.sandbox.git_in(&b, &["config", "hpp.trustRoot"]), pin);
    let verified = p.sandbox.hpp_in(&b, &["verify"]).ok();
    assert!(
        verified.contains("signature verified (checker-b)"),
        "{verified}"
    );
    // The remote's policy is edited by someone who holds no root key.
    let mallory = keygen(&p.sandbox, "mallory");
    let mallory_pub = std::fs::read_to_string(public(&mallory)).expect("the key");
    let before = p.sandbox.git_in(&b, &["rev-parse", "refs/hpp/trust"]);
    forge_policy_edit(&p.sandbox, &remote, &mallory_pub);
    let run = p.sandbox.hpp_in(&b, &["fetch"]).exit(1);
    assert!(run.stdout.contains("diverged: refs/hpp/trust"), "{run}");
    assert!(run.stdout.contains("is refused"), "{run}");
    assert_eq!(
        p.sandbox.git_in(&b, &["rev-parse", "refs/hpp/trust"]),
        before
    );
    p.sandbox.hpp_in(&b, &["verify"]).ok();
}

#[test]
fn control_a_clone_pinned_to_another_root_refuses_the_policy() {
    let p = with_policy();
    let other = keygen(&p.sandbox, "other");
    let fingerprint = p
        .sandbox
        .command("ssh-keygen", &p.sandbox.root)
        .args(["-lf", &public(&other)])
        .output()
        .expect("ssh-keygen runs");
    let fingerprint = String::from_utf8_lossy(&fingerprint.stdout)
        .split_whitespace()
        .nth(1)
        .expect("a fingerprint")
        .to_owned();
    p.sandbox
        .hpp(["trust", "pin", &fingerprint, "--apply"])
        .ok();
    let message = p.sandbox.hpp(["trust", "show"]).refused();
    assert!(
        message.contains("no policy in its log is rooted at the pinned root"),
        "{message}"
    );
}

#[test]
fn event_verify_with_signatures_required_says_a_gate_on_an_unsigned_approval_does_not_hold() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    sandbox.walk_steps("main", 1..3);
    sandbox.hpp(["event", "verify", "--loop", "main"]).ok();
    // Now the repository gets a policy: the approval the gate rests on was never signed.
    let root = keygen(&sandbox, "root");
    trust_init(&sandbox, &root, true);
    let run = sandbox.hpp(["event", "verify", "--loop", "main"]).exit(2);
    assert!(run.stdout.contains("no longer holds"), "{run}");
    assert!(
        run.stdout
            .contains("signatures required by the trust policy"),
        "{run}"
    );
}

/// Writes the policy's `allowed_signers` beside the repository and returns its path.
fn policy_signers(p: &Policy) -> PathBuf {
    let signers = p.sandbox.path("policy_signers");
    std::fs::write(
        &signers,
        p.sandbox.git(["show", "refs/hpp/trust:allowed_signers"]) + "\n",
    )
    .expect("writable");
    signers
}

/// Signs `hello` with `key` in namespace `hpp` using the real `ssh-keygen`, then asks it to
/// verify the signature as `principal`'s against the policy's signers file.
fn ssh_keygen_verifies(p: &Policy, key: &Path, principal: &str) -> Run {
    let signers = policy_signers(p);
    let message = p.sandbox.path("message");
    std::fs::write(&message, "hello\n").expect("writable");
    let sign = p
        .sandbox
        .command("ssh-keygen", &p.sandbox.root)
        .args(["-Y", "sign", "-f", text(key), "-n", "hpp", text(&message)])
        .output()
        .expect("ssh-keygen runs");
    assert!(sign.status.success(), "{}", Run::from_output(&sign));
    let mut cmd = p.sandbox.command("ssh-keygen", &p.sandbox.root);
    cmd.args([
        "-Y",
        "verify",
        "-f",
        text(&signers),
        "-I",
        principal,
        "-n",
        "hpp",
        "-s",
    ])
    .arg(format!("{}.sig", message.display()));
    Run::fed(cmd, "hello\n")
}

#[test]
fn the_policys_signers_file_is_read_by_ssh_keygen() {
    let p = with_policy();
    let good = ssh_keygen_verifies(&p, &p.checker, "checker-b");
    assert_eq!(good.code, 0, "{good}");
    // The root signed the policy itself in its own namespace, which ssh-keygen checks too.
    let signers = policy_signers(&p);
    let policy = p.sandbox.git(["show", "refs/hpp/trust:policy.json"]);
    let sig = p.sandbox.path("policy.sig");
    std::fs::write(
        &sig,
        p.sandbox
            .git(["show", "refs/hpp/trust:signatures/root.sig"])
            + "\n",
    )
    .expect("writable");
    let mut cmd = p.sandbox.command("ssh-keygen", &p.sandbox.root);
    cmd.args([
        "-Y",
        "verify",
        "-f",
        text(&signers),
        "-I",
        "root",
        "-n",
        "hpp-trust",
        "-s",
        text(&sig),
    ]);
    let root_signed = Run::fed(cmd, &policy);
    assert_eq!(root_signed.code, 0, "{root_signed}");
}

#[test]
fn control_ssh_keygen_refuses_a_person_key_for_a_checkers_namespace() {
    let p = with_policy();
    let run = ssh_keygen_verifies(&p, &p.alice, "alice");
    assert_ne!(run.code, 0, "{run}");
}

#[test]
fn control_bad_changes_are_refused_and_write_nothing() {
    let p = with_policy();
    let before = p.sandbox.hpp_refs();
    let root = text(&p.root).to_owned();
    let not_a_key = p.sandbox.path("not-a-key.pub");
    std::fs::write(&not_a_key, "hello\n").expect("writable");
    for args in [
        vec!["trust", "remove", "root", "--sign-key", &root, "--apply"],
        vec![
            "trust",
            "add",
            "x",
            "--key",
            text(&not_a_key),
            "--role",
            "checker",
            "--sign-key",
            &root,
            "--apply",
        ],
        vec![
            "trust",
            "init",
            "--root",
            "root",
            "--key",
            &format!("{root}.pub"),
            "--sign-key",
            &root,
            "--apply",
        ],
        vec!["trust", "pin", "not-a-fingerprint", "--apply"],
    ] {
        let message = p.sandbox.hpp_in(&p.sandbox.root, &args).refused();
        assert!(!message.is_empty(), "{args:?}");
    }
    // A key that is no root's cannot sign a change.
    let checker = text(&p.checker).to_owned();
    let message = p
        .sandbox
        .hpp_in(
            &p.sandbox.root,
            &[
                "trust",
                "remove",
                "alice",
                "--sign-key",
                &checker,
                "--apply",
            ],
        )
        .refused();
    assert!(message.contains("is not the key of any root"), "{message}");
    // An unknown role is a usage error.
    let usage = p
        .sandbox
        .hpp_in(
            &p.sandbox.root,
            &[
                "trust",
                "add",
                "x",
                "--key",
                &format!("{root}.pub"),
                "--role",
                "admin",
            ],
        )
        .exit(3);
    assert!(usage.stderr.contains("admin"), "{usage}");
    assert_eq!(p.sandbox.hpp_refs(), before, "nothing was written");
}

/// A bare `server.git` beside the repository, holding `main` and its records (with the policy)
/// when `seeded`, its pre-receive gate installed; returns its path and what the install said.
pub(crate) fn guarded_server(p: &Policy, seeded: bool) -> (PathBuf, String) {
    let bare = p.sandbox.path("server.git");
    p.sandbox
        .git(["init", "-q", "--bare", "-b", "main", text(&bare)]);
    if seeded {
        p.sandbox
            .git(["push", "-q", text(&bare), "main", "refs/hpp/*:refs/hpp/*"]);
    }
    let install = p
        .sandbox
        .hpp_in(&bare, &["hooks", "install", "--server", "--apply"])
        .ok_with_stderr();
    (bare, install)
}

/// `git push --no-verify` of `refspecs` to `bare` (the client's own hooks skipped).
pub(crate) fn push_to(p: &Policy, bare: &Path, refspecs: &[&str]) -> Run {
    let out = p
        .sandbox
        .command("git", &p.sandbox.root)
        .args(["push", "--no-verify", text(bare)])
        .args(refspecs)
        .output()
        .expect("git push runs");
    Run::from_output(&out)
}

#[test]
fn the_server_gate_reads_the_policy_from_the_repository_it_guards() {
    let p = with_policy();
    let (bare, install) = guarded_server(&p, true);
    assert!(!install.contains("neither a trust policy"), "{install}");
    // An unsigned approval of new work, pushed with its records in one atomic push.
    std::fs::write(p.sandbox.root.join("work.txt"), "change\n").expect("writable");
    p.sandbox.git(["add", "-A"]);
    p.sandbox.git(["commit", "-q", "-m", "change"]);
    p.attest("checker-b", None).ok();
    let refused = push_to(&p, &bare, &["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_ne!(refused.code, 0, "{refused}");
    assert!(refused.stderr.contains("not signed"), "{refused}");
    // Signed by the checker, the same push lands.
    p.attest("checker-b", Some(&p.checker)).ok();
    let landed = push_to(&p, &bare, &["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_eq!(landed.code, 0, "{landed}");
}

#[test]
fn control_the_server_refuses_a_pushed_policy_not_signed_by_its_roots() {
    let p = with_policy();
    let (bare, _) = guarded_server(&p, true);
    let before = p.sandbox.git_in(&bare, &["rev-parse", "refs/hpp/trust"]);
    let mallory = keygen(&p.sandbox, "mallory");
    let mallory_pub = std::fs::read_to_string(public(&mallory)).expect("the key");
    forge_policy_edit(&p.sandbox, &p.sandbox.root, &mallory_pub);
    let run = push_to(&p, &bare, &["refs/hpp/trust:refs/hpp/trust"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("is refused"), "{run}");
    assert_eq!(
        p.sandbox.git_in(&bare, &["rev-parse", "refs/hpp/trust"]),
        before
    );
}

#[test]
fn control_a_server_with_no_signers_warns_at_install_and_status() {
    let sandbox = Sandbox::repo();
    let bare = sandbox.path("server.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&bare)]);
    for args in [
        vec!["hooks", "install", "--server"],
        vec!["hooks", "install", "--server", "--apply"],
        vec!["hooks", "status", "--server"],
    ] {
        let run = sandbox.hpp_in(&bare, &args);
        assert!(
            run.stderr.contains("neither a trust policy"),
            "{args:?}: {run}"
        );
    }
}

#[test]
fn a_root_rotates_by_a_change_the_old_root_signs_and_the_old_key_then_signs_nothing() {
    let p = with_policy();
    let new_root = keygen(&p.sandbox, "new-root");
    let old = text(&p.root).to_owned();
    let new = text(&new_root).to_owned();
    p.sandbox
        .hpp([
            "trust",
            "add",
            "root2",
            "--key",
            &public(&new_root),
            "--role",
            "root",
            "--sign-key",
            &old,
            "--apply",
        ])
        .ok();
    p.sandbox
        .hpp(["trust", "remove", "root", "--sign-key", &new, "--apply"])
        .ok();
    let shown = p.sandbox.hpp(["trust", "show", "--json"]).json(0);
    assert_eq!(shown["roots"], serde_json::json!(["root2"]));
    // Still verified from the pinned first root, through the change it signed.
    assert_eq!(shown["pinning"], "pinned");
    let message = p
        .sandbox
        .hpp(["trust", "remove", "alice", "--sign-key", &old, "--apply"])
        .refused();
    assert!(message.contains("is not the key of any root"), "{message}");
}

#[test]
fn the_policys_settings_say_what_the_server_protects_with_no_configuration_of_its_own() {
    let p = with_policy();
    let root = text(&p.root).to_owned();
    p.sandbox
        .hpp([
            "trust",
            "set",
            "--protect",
            "refs/heads/release",
            "--sign-key",
            &root,
            "--apply",
        ])
        .ok();
    let (bare, _) = guarded_server(&p, false);
    std::fs::write(p.sandbox.root.join("work.txt"), "unreviewed\n").expect("writable");
    p.sandbox.git(["add", "-A"]);
    p.sandbox.git(["commit", "-q", "-m", "unreviewed"]);
    // main is not in the policy's list, so it lands; release is, so it does not.
    let main = push_to(&p, &bare, &["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_eq!(main.code, 0, "{main}");
    let release = push_to(&p, &bare, &["main:refs/heads/release"]);
    assert_ne!(release.code, 0, "{release}");
    assert!(release.stderr.contains("refs/heads/release"), "{release}");
}

#[test]
fn control_a_settings_change_with_nothing_to_set_is_refused() {
    let p = with_policy();
    let root = text(&p.root).to_owned();
    let before = p.sandbox.hpp_refs();
    p.sandbox
        .hpp(["trust", "set", "--sign-key", &root, "--apply"])
        .refused();
    assert_eq!(p.sandbox.hpp_refs(), before);
}

#[test]
fn control_the_server_refuses_a_stranger_key_and_a_person_signing_as_checker() {
    let p = with_policy();
    let (bare, _) = guarded_server(&p, true);
    let stranger = keygen(&p.sandbox, "stranger");
    for (n, (checker, key)) in [("checker-b", &stranger), ("alice", &p.alice)]
        .into_iter()
        .enumerate()
    {
        std::fs::write(p.sandbox.root.join("work.txt"), format!("change {n}\n")).expect("writable");
        p.sandbox.git(["add", "-A"]);
        p.sandbox.git(["commit", "-q", "-m", "change"]);
        p.attest(checker, Some(key)).ok();
        let run = push_to(&p, &bare, &["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
        assert_ne!(run.code, 0, "{checker}: {run}");
        assert!(run.stderr.contains("never verified"), "{checker}: {run}");
    }
}

#[test]
fn a_threshold_of_two_roots_needs_both_signatures_for_a_change() {
    let p = with_policy();
    let second = keygen(&p.sandbox, "second-root");
    let (one, two) = (text(&p.root).to_owned(), text(&second).to_owned());
    p.sandbox
        .hpp([
            "trust",
            "add",
            "root2",
            "--key",
            &public(&second),
            "--role",
            "root",
            "--sign-key",
            &one,
            "--apply",
        ])
        .ok();
    p.sandbox
        .hpp([
            "trust",
            "set",
            "--threshold",
            "2",
            "--sign-key",
            &one,
            "--sign-key",
            &two,
            "--apply",
        ])
        .ok();
    let before = p.sandbox.hpp_refs();
    let message = p
        .sandbox
        .hpp(["trust", "remove", "alice", "--sign-key", &one, "--apply"])
        .refused();
    assert!(message.contains("needs 2 root signature(s)"), "{message}");
    assert_eq!(p.sandbox.hpp_refs(), before, "nothing was written");
    p.sandbox
        .hpp([
            "trust",
            "remove",
            "alice",
            "--sign-key",
            &one,
            "--sign-key",
            &two,
            "--apply",
        ])
        .ok();
    let shown = p.sandbox.hpp(["trust", "show", "--json"]).json(0);
    assert_eq!(shown["threshold"], 2);
    assert!(
        shown["policy"]["principals"].get("alice").is_none(),
        "{shown}"
    );
}

#[test]
fn control_a_threshold_above_the_roots_is_refused() {
    let p = with_policy();
    let root = text(&p.root).to_owned();
    let message = p
        .sandbox
        .hpp([
            "trust",
            "set",
            "--threshold",
            "2",
            "--sign-key",
            &root,
            "--apply",
        ])
        .refused();
    assert!(
        message.contains("threshold must be between 1 and the number of roots"),
        "{message}"
    );
}

/// Appends `work_started` to loop `feature` in `dir`, by `who`.
fn start_feature(sandbox: &Sandbox, dir: &Path, who: &str) {
    let data = format!(r#"{{"who":"{who}","work":"W","maker":"agent-{who}"}}"#);
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
                &data,
            ],
        )
        .ok();
}

#[test]
fn a_join_is_taken_only_when_a_person_signed_the_choice() {
    let p = with_policy();
    let a = p.sandbox.root.clone();
    let remote = p.sandbox.path("remote.git");
    p.sandbox
        .git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    p.sandbox
        .git(["push", "-q", text(&remote), "main", "refs/hpp/*:refs/hpp/*"]);
    p.sandbox.git(["remote", "add", "origin", text(&remote)]);
    let b = p.sandbox.path("b");
    p.sandbox.git(["clone", "-q", text(&remote), text(&b)]);
    p.sandbox.hpp_in(&b, &["fetch"]).ok();
    start_feature(&p.sandbox, &a, "a");
    start_feature(&p.sandbox, &b, "b");
    p.sandbox.hpp_in(&a, &["push"]).ok();
    let _ = p.sandbox.hpp_in(&b, &["fetch"]).exit(1);
    let reconcile = ["event", "reconcile", "--loop", "feature", "--keep", "ours"];
    let unsigned = p.sandbox.hpp_in(&b, &reconcile).refused();
    assert!(unsigned.contains("it must be signed"), "{unsigned}");

    // A join written without a signature (plain git) is left out on A.
    let loop_ref = "refs/hpp/loops/feature";
    let ours = p.sandbox.git_in(&b, &["rev-parse", loop_ref]);
    let theirs = p.sandbox.git_in(&a, &["rev-parse", loop_ref]);
    let record = format!(
        r#"{{"at":"2026-12-03T00:00:00Z","keep":"ours","kept":"{ours}","loop":"feature","preserved":"{theirs}","preserved_ref":"refs/hpp/preserved/loops/feature/{theirs}","remote":"origin","schema":"hpp.loop-reconcile/v1"}}"#
    );
    let blob = p
        .sandbox
        .git_fed_in(&b, &["hash-object", "-w", "--stdin"], &record);
    let mut listing = p.sandbox.git_in(&b, &["ls-tree", &ours]);
    listing.push_str(&format!("\n100644 blob {blob}\treconcile.json\n"));
    let tree = p.sandbox.git_fed_in(&b, &["mktree"], &listing);
    let join = p.sandbox.git_in(
        &b,
        &[
            "commit-tree",
            &tree,
            "-p",
            &ours,
            "-p",
            &theirs,
            "-m",
            "join",
        ],
    );
    p.sandbox.git_in(
        &b,
        &["push", "-q", text(&remote), &format!("{join}:{loop_ref}")],
    );
    let refused = p.sandbox.hpp_in(&a, &["fetch"]).exit(1);
    assert!(
        refused.stdout.contains("not signed as required"),
        "{refused}"
    );
    assert_eq!(p.sandbox.git_in(&a, &["rev-parse", loop_ref]), theirs);

    // The person's signed choice is taken, A's side preserved.
    p.sandbox
        .git_in(&remote, &["update-ref", loop_ref, &theirs, &join]);
    let mut signed = reconcile.to_vec();
    signed.extend(["--by", "alice", "--sign-key", text(&p.alice)]);
    p.sandbox.hpp_in(&b, &signed).ok();
    p.sandbox.hpp_in(&b, &["push"]).ok();
    let taken = p.sandbox.hpp_in(&a, &["fetch"]).ok();
    assert!(
        taken.contains(&format!(
            "preserved at refs/hpp/preserved/loops/feature/{theirs}"
        )),
        "{taken}"
    );
    p.sandbox
        .hpp_in(&a, &["event", "verify", "--loop", "feature"])
        .ok();
}

/// `p`'s repository pushed (main and its records) to a new bare remote, and a plain clone of
/// it at `name`: the remote's path and the clone's.
pub(crate) fn published(p: &Policy, name: &str) -> (PathBuf, PathBuf) {
    let remote = p.sandbox.path(&format!("{name}-remote.git"));
    p.sandbox
        .git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    p.sandbox
        .git(["push", "-q", text(&remote), "main", "refs/hpp/*:refs/hpp/*"]);
    let clone = p.sandbox.path(name);
    p.sandbox.git(["clone", "-q", text(&remote), text(&clone)]);
    (remote, clone)
}

/// The root `p`'s repository pinned when its policy was made.
pub(crate) fn pinned_root(p: &Policy) -> String {
    p.sandbox.git(["config", "hpp.trustRoot"]).trim().to_owned()
}

#[test]
fn a_pinned_ci_clone_refuses_to_verify_when_the_remotes_policy_was_deleted() {
    // Issue 52: `trust pin FPR --apply` before the first fetch, as examples/ci advises; the
    // remote's refs/hpp/trust was deleted. Verifying must not fall back to "not checked".
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let (remote, ci) = published(&p, "ci");
    p.sandbox
        .git_in(&remote, &["update-ref", "-d", "refs/hpp/trust"]);
    let root = pinned_root(&p);
    p.sandbox
        .hpp_in(&ci, &["trust", "pin", &root, "--apply"])
        .ok();
    // The fetch finds no policy to check the records against, and says so.
    let fetched = p.sandbox.hpp_in(&ci, &["fetch"]).refused();
    assert!(fetched.contains("holds no policy"), "{fetched}");
    let reason = p.sandbox.hpp_in(&ci, &["verify", "HEAD"]).refused();
    assert!(
        reason.contains(&format!("pinned (hpp.trustRoot = {root})"))
            && reason.contains("holds no policy"),
        "{reason}"
    );
    let reason = p.sandbox.hpp_in(&ci, &["attest", "verify"]).refused();
    assert!(reason.contains("holds no policy"), "{reason}");
}

#[test]
fn control_a_pinned_ci_clone_whose_remote_keeps_its_policy_verifies_the_signature() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let (_remote, ci) = published(&p, "ci");
    pin_fetch_and_verify(&p, &ci, &pinned_root(&p));
}

/// In the clone `dir`: pins `root`, fetches, and verifies HEAD, whose approval checker-b signed.
pub(crate) fn pin_fetch_and_verify(p: &Policy, dir: &Path, root: &str) {
    p.sandbox
        .hpp_in(dir, &["trust", "pin", root, "--apply"])
        .ok();
    p.sandbox.hpp_in(dir, &["fetch"]).ok();
    let verified = p.sandbox.hpp_in(dir, &["verify", "HEAD"]).ok();
    assert!(
        verified.contains("signature verified (checker-b)"),
        "{verified}"
    );
}

#[test]
fn a_clone_that_trusts_its_own_signers_file_adopts_no_policy_on_first_use() {
    // Issue 52: a reviewer configured hpp.allowedSignersFile before any policy existed; the
    // remote then gains a policy. Fetch leaves it staged, every reader refuses, until the
    // reviewer pins its root.
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let (_remote, reviewer) = published(&p, "reviewer");
    let signers = p.sandbox.path("reviewer-signers");
    std::fs::write(
        &signers,
        format!(
            "checker-b {}",
            std::fs::read_to_string(public(&p.checker)).expect("the key")
        ),
    )
    .expect("writable");
    p.sandbox.git_in(
        &reviewer,
        &["config", "hpp.allowedSignersFile", text(&signers)],
    );
    let fetched = p.sandbox.hpp_in(&reviewer, &["fetch"]).exit(1);
    assert!(
        fetched.stdout.contains("diverged: refs/hpp/trust"),
        "{fetched}"
    );
    assert!(
        fetched.stdout.contains("not adopted on first use"),
        "{fetched}"
    );
    let pins = p
        .sandbox
        .command("git", &reviewer)
        .args(["config", "hpp.trustRoot"])
        .output()
        .expect("git runs");
    assert!(!pins.status.success(), "nothing was pinned");
    // Taken once the reviewer pins the root they checked.
    let root = pinned_root(&p);
    p.sandbox
        .hpp_in(&reviewer, &["trust", "pin", &root, "--apply"])
        .ok();
    p.sandbox.hpp_in(&reviewer, &["fetch"]).ok();
    let verified = p.sandbox.hpp_in(&reviewer, &["verify", "HEAD"]).ok();
    assert!(
        verified.contains("signature verified (checker-b)"),
        "{verified}"
    );
}

#[test]
fn control_a_clone_that_trusts_nothing_yet_still_pins_on_first_use_and_says_so() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let (_remote, fresh) = published(&p, "fresh");
    let fetched = p.sandbox.hpp_in(&fresh, &["fetch"]).ok();
    assert!(
        fetched.contains("trusting the trust policy's root"),
        "{fetched}"
    );
    assert_eq!(
        p.sandbox
            .git_in(&fresh, &["config", "hpp.trustRoot"])
            .trim(),
        pinned_root(&p)
    );
}
