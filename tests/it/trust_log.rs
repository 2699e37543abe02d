//! The trust policy as a log that holds where the forge does not (issue 52): every policy
//! carries its place and its predecessor inside the bytes its roots sign, so an older policy
//! replayed as a newer change is refused by a clone that fetches it, a fresh clone and the
//! server gate; a clone remembers the newest policy it verified and refuses a log rolled back
//! under it; a change of the roots is signed by the new roots too, and a pin may name the root
//! in force after a rotation; a removal says every role it takes away, and `--role` takes one.

use std::path::Path;

use crate::harness::{BIN, Run, Sandbox, attest_args};
use crate::trust_policy::{
    Policy, guarded_server, keygen, pin_fetch_and_verify, pinned_root, public, published, push_to,
    text, with_policy,
};

/// In `repo`, commits the tree of `refs/hpp/trust~back` as a child of `refs/hpp/trust` and
/// moves the ref there: anyone with push access can, and its signatures are the roots' own.
fn replay(sandbox: &Sandbox, repo: &Path, back: usize) -> String {
    let git = |args: &[&str]| sandbox.git_in(repo, args).trim().to_owned();
    let tree = git(&["rev-parse", &format!("refs/hpp/trust~{back}^{{tree}}")]);
    let commit = git(&[
        "commit-tree",
        &tree,
        "-p",
        "refs/hpp/trust",
        "-m",
        "hpp trust: add checker-b",
    ]);
    git(&["update-ref", "refs/hpp/trust", &commit]);
    commit
}

/// Makes a key `root2` and adds it to `p`'s policy as a second root, signed by the first (a
/// root of the new policy too); returns the key.
fn second_root(p: &Policy) -> std::path::PathBuf {
    let root2 = keygen(&p.sandbox, "root2");
    p.sandbox
        .hpp([
            "trust",
            "add",
            "root2",
            "--key",
            &public(&root2),
            "--role",
            "root",
            "--sign-key",
            text(&p.root),
            "--apply",
        ])
        .ok();
    root2
}

/// The root takes checker-b out of `p`'s policy: a revocation.
fn revoke_checker(p: &Policy) {
    p.sandbox
        .hpp([
            "trust",
            "remove",
            "checker-b",
            "--sign-key",
            text(&p.root),
            "--apply",
        ])
        .ok();
}

/// `with_policy`, an approval signed by checker-b, then checker-b's key revoked by the root.
fn revoked() -> Policy {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    revoke_checker(&p);
    p
}

/// The SHA-256 fingerprint of a key file, as `ssh-keygen -lf` prints it.
fn fingerprint(sandbox: &Sandbox, key: &Path) -> String {
    let out = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-lf", &public(key)])
        .output()
        .expect("ssh-keygen runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .expect("a fingerprint")
        .to_owned()
}

#[test]
fn a_replayed_older_policy_is_refused_by_a_clone_that_fetches_it_and_by_a_fresh_clone() {
    let p = revoked();
    let (remote, victim) = published(&p, "victim");
    p.sandbox.hpp_in(&victim, &["fetch"]).ok();
    let before = p.sandbox.git_in(&victim, &["rev-parse", "refs/hpp/trust"]);
    let replayed = replay(&p.sandbox, &remote, 1);
    let run = p.sandbox.hpp_in(&victim, &["fetch"]).exit(1);
    assert!(run.stdout.contains("diverged: refs/hpp/trust"), "{run}");
    assert!(run.stdout.contains("replayed"), "{run}");
    assert_eq!(
        p.sandbox.git_in(&victim, &["rev-parse", "refs/hpp/trust"]),
        before,
        "the replay stays staged"
    );
    let verified = p.sandbox.hpp_in(&victim, &["verify", "HEAD"]);
    assert_ne!(verified.code, 0, "{verified}");
    assert!(
        !verified.stdout.contains("signature verified (checker-b)"),
        "{verified}"
    );
    // A clone that never saw the newer policy refuses the replay too: its version is not its
    // place in the log.
    let fresh = p.sandbox.path("fresh");
    p.sandbox.git(["clone", "-q", text(&remote), text(&fresh)]);
    let run = p.sandbox.hpp_in(&fresh, &["fetch"]).exit(1);
    assert!(
        run.stdout
            .contains(&format!("the trust policy at {replayed} is refused")),
        "{run}"
    );
    assert!(run.stdout.contains("signed version is 4"), "{run}");
}

#[test]
fn the_server_gate_refuses_a_replayed_policy_even_in_one_atomic_push_with_a_branch() {
    let p = revoked();
    let (bare, _) = guarded_server(&p, true);
    let before = p.sandbox.git_in(&bare, &["rev-parse", "refs/hpp/trust"]);
    replay(&p.sandbox, &p.sandbox.root, 1);
    std::fs::write(p.sandbox.root.join("work.txt"), "more\n").expect("writable");
    p.sandbox.git(["add", "-A"]);
    p.sandbox.git(["commit", "-q", "-m", "more"]);
    let run = push_to(
        &p,
        &bare,
        &["--atomic", "main", "refs/hpp/trust:refs/hpp/trust"],
    );
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("replayed"), "{run}");
    assert_eq!(
        p.sandbox.git_in(&bare, &["rev-parse", "refs/hpp/trust"]),
        before
    );
}

#[test]
fn control_an_honest_revocation_is_followed_by_the_server_a_pinned_clone_and_a_fresh_clone() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let (bare, _) = guarded_server(&p, true);
    let (_remote, pinned) = published(&p, "pinned");
    p.sandbox
        .hpp_in(&pinned, &["trust", "pin", &pinned_root(&p), "--apply"])
        .ok();
    p.sandbox.hpp_in(&pinned, &["fetch"]).ok();
    p.sandbox.hpp_in(&pinned, &["verify", "HEAD"]).ok();
    revoke_checker(&p);
    let landed = push_to(&p, &bare, &["refs/hpp/trust:refs/hpp/trust"]);
    assert_eq!(landed.code, 0, "{landed}");
    let remote = p.sandbox.path("pinned-remote.git");
    p.sandbox
        .git(["push", "-q", text(&remote), "refs/hpp/trust:refs/hpp/trust"]);
    p.sandbox.hpp_in(&pinned, &["fetch"]).ok();
    // The revocation holds in the clone that followed it: checker-b's approval no longer counts.
    let run = p.sandbox.hpp_in(&pinned, &["verify", "HEAD"]);
    assert_ne!(run.code, 0, "{run}");
    let fresh = p.sandbox.path("fresh");
    p.sandbox.git(["clone", "-q", text(&remote), text(&fresh)]);
    p.sandbox.hpp_in(&fresh, &["fetch"]).ok();
    let shown = p
        .sandbox
        .hpp_in(&fresh, &["trust", "show", "--json"])
        .json(0);
    assert_eq!(shown["version"], 5, "{shown}");
}

#[test]
fn a_clone_refuses_a_policy_rolled_back_under_it_naming_what_it_verified() {
    let p = revoked();
    let newest = p.sandbox.git(["rev-parse", "refs/hpp/trust"]);
    // A plain `git fetch` with a forcing refspec took an older policy in.
    p.sandbox
        .git(["update-ref", "refs/hpp/trust", "refs/hpp/trust~1"]);
    for args in [
        vec!["verify", "HEAD"],
        vec!["attest", "verify"],
        vec!["trust", "show"],
    ] {
        let message = p.sandbox.hpp_in(&p.sandbox.root, &args).refused();
        assert!(
            message.contains("does not descend from the newest policy this clone verified")
                && message.contains(&format!("version 5, {}", newest.trim())),
            "{args:?}: {message}"
        );
    }
}

#[test]
fn control_a_clone_reads_the_policy_it_remembers_and_what_follows_it() {
    let p = revoked();
    let remembered = p.sandbox.git(["config", "hpp.trustVerified"]);
    let tip = p.sandbox.git(["rev-parse", "refs/hpp/trust"]);
    assert_eq!(
        remembered.trim(),
        format!("5 {} {}", tip.trim(), pinned_root(&p))
    );
    p.sandbox.hpp(["trust", "show"]).ok();
    // A malformed value is refused, never read as "nothing verified yet".
    p.sandbox.git(["config", "hpp.trustVerified", "five"]);
    let message = p.sandbox.hpp(["verify", "HEAD"]).refused();
    assert!(
        message.contains("hpp.trustVerified is \"five\""),
        "{message}"
    );
}

#[test]
fn a_pinned_clone_follows_a_root_rotation_and_a_fresh_clone_is_told_the_current_root() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let (remote, old) = published(&p, "old");
    p.sandbox.hpp_in(&old, &["fetch"]).ok();
    let root2 = second_root(&p);
    let plan = p
        .sandbox
        .hpp(["trust", "remove", "root", "--sign-key", text(&root2)])
        .ok();
    assert!(
        plan.contains("remove root, taking away the role root"),
        "{plan}"
    );
    p.sandbox
        .hpp([
            "trust",
            "remove",
            "root",
            "--sign-key",
            text(&root2),
            "--apply",
        ])
        .ok();
    p.sandbox
        .git(["push", "-q", text(&remote), "refs/hpp/trust:refs/hpp/trust"]);
    // The clone that trusted the old root follows the change and says so.
    let fetched = p.sandbox.hpp_in(&old, &["fetch"]).ok();
    assert!(
        fetched.contains("roots: root removed, root2 added"),
        "{fetched}"
    );
    // A fresh clone is told to trust the root in force, not the retired one.
    let current = fingerprint(&p.sandbox, &root2);
    let fresh = p.sandbox.path("fresh");
    p.sandbox.git(["clone", "-q", text(&remote), text(&fresh)]);
    let fetched = p.sandbox.hpp_in(&fresh, &["fetch"]).ok();
    assert!(
        fetched.contains(&format!("trusting the trust policy's root {current}")),
        "{fetched}"
    );
    let shown = p.sandbox.hpp_in(&fresh, &["trust", "show"]).ok();
    assert!(
        shown.lines().next().is_some_and(|l| l.contains(&current)),
        "{shown}"
    );
    // A CI clone pins the current root before its first fetch.
    let ci = p.sandbox.path("ci");
    p.sandbox.git(["clone", "-q", text(&remote), text(&ci)]);
    pin_fetch_and_verify(&p, &ci, &current);
}

#[test]
fn control_a_change_of_threshold_not_signed_by_the_new_roots_is_refused() {
    let p = with_policy();
    second_root(&p);
    let before = p.sandbox.hpp_refs();
    let message = p
        .sandbox
        .hpp([
            "trust",
            "set",
            "--threshold",
            "2",
            "--sign-key",
            text(&p.root),
            "--apply",
        ])
        .refused();
    assert!(message.contains("the new roots sign it too"), "{message}");
    assert_eq!(p.sandbox.hpp_refs(), before, "nothing was written");
}

#[test]
fn one_role_is_removed_with_role_and_a_removal_lists_every_role_it_takes() {
    let p = with_policy();
    p.sandbox
        .hpp([
            "trust",
            "add",
            "alice",
            "--key",
            &public(&p.alice),
            "--role",
            "root",
            "--sign-key",
            text(&p.root),
            "--apply",
        ])
        .ok();
    let plan = p
        .sandbox
        .hpp(["trust", "remove", "alice", "--sign-key", text(&p.root)])
        .ok();
    assert!(
        plan.contains("remove alice, taking away the roles person, root"),
        "{plan}"
    );
    let plan = p
        .sandbox
        .hpp([
            "trust",
            "remove",
            "alice",
            "--role",
            "root",
            "--sign-key",
            text(&p.root),
            "--apply",
        ])
        .ok();
    assert!(plan.contains("take from alice the role root"), "{plan}");
    let shown = p.sandbox.hpp(["trust", "show", "--json"]).json(0);
    assert_eq!(shown["roots"], serde_json::json!(["root"]));
    assert_eq!(
        shown["policy"]["principals"]["alice"]["roles"],
        serde_json::json!(["person"])
    );
    // Her approvals still count.
    let message = p
        .sandbox
        .hpp([
            "trust",
            "remove",
            "alice",
            "--role",
            "root",
            "--sign-key",
            text(&p.root),
        ])
        .refused();
    assert!(
        message.contains("alice does not hold the root role"),
        "{message}"
    );
}

/// Rewrites the log of `p`'s repository as an earlier git-hpp wrote it: each policy without its
/// version and predecessor, signed again by the root with the real `ssh-keygen`.
fn unsealed(p: &Policy) {
    let git = |args: &[&str]| p.sandbox.git_in(&p.sandbox.root, args).trim().to_owned();
    let commits = git(&["rev-list", "--reverse", "refs/hpp/trust"]);
    let mut parent: Option<String> = None;
    for commit in commits.lines() {
        let policy = git(&["show", &format!("{commit}:policy.json")]);
        let mut value: serde_json::Value = serde_json::from_str(&policy).expect("JSON");
        let map = value.as_object_mut().expect("an object");
        map.remove("version");
        map.remove("previous");
        let bytes = serde_json::to_string(&value).expect("serialises");
        let file = p.sandbox.path("legacy-policy.json");
        std::fs::write(&file, &bytes).expect("writable");
        let out = p
            .sandbox
            .command("ssh-keygen", &p.sandbox.root)
            .args(["-q", "-Y", "sign", "-n", "hpp-trust", "-f", text(&p.root)])
            .arg(&file)
            .output()
            .expect("ssh-keygen runs");
        assert!(out.status.success(), "ssh-keygen -Y sign failed");
        let sig = std::fs::read_to_string(format!("{}.sig", file.display())).expect("signed");
        std::fs::remove_file(format!("{}.sig", file.display())).expect("removable");
        let blob = |content: &str| {
            p.sandbox
                .git_fed_in(&p.sandbox.root, &["hash-object", "-w", "--stdin"], content)
                .trim()
                .to_owned()
        };
        let (policy_blob, sig_blob) = (blob(&bytes), blob(&sig));
        let signatures = p.sandbox.git_fed_in(
            &p.sandbox.root,
            &["mktree"],
            &format!("100644 blob {sig_blob}\troot.sig\n"),
        );
        let signers = git(&["rev-parse", &format!("{commit}:allowed_signers")]);
        let tree = p.sandbox.git_fed_in(
            &p.sandbox.root,
            &["mktree"],
            &format!(
                "100644 blob {signers}\tallowed_signers\n100644 blob {policy_blob}\tpolicy.json\n040000 tree {}\tsignatures\n",
                signatures.trim()
            ),
        );
        let mut args = vec!["commit-tree", tree.trim(), "-m", "hpp trust: a change"];
        if let Some(parent) = &parent {
            args.extend(["-p", parent]);
        }
        parent = Some(git(&args));
    }
    git(&[
        "update-ref",
        "refs/hpp/trust",
        parent.as_deref().expect("a log"),
    ]);
    git(&["config", "--unset", "hpp.trustVerified"]);
}

#[test]
fn a_log_written_before_policies_were_sealed_keeps_verifying_and_one_command_seals_it() {
    let p = with_policy();
    unsealed(&p);
    let shown = p.sandbox.hpp(["trust", "show", "--json"]).json(0);
    assert_eq!(shown["version"], 4, "{shown}");
    assert!(shown["policy"].get("version").is_none(), "{shown}");
    let sealed = p
        .sandbox
        .hpp(["trust", "seal", "--sign-key", text(&p.root), "--apply"])
        .ok();
    assert!(sealed.contains("seal the log: version 5"), "{sealed}");
    // After the seal, an unsealed policy replayed on top is refused.
    let replayed = replay(&p.sandbox, &p.sandbox.root, 2);
    let message = p.sandbox.hpp(["trust", "show"]).refused();
    assert!(
        message.contains(&format!("the trust policy at {replayed} is refused"))
            && message.contains("no version after a sealed policy"),
        "{message}"
    );
}

#[test]
fn control_a_sealed_log_is_not_sealed_again() {
    let p = with_policy();
    let message = p
        .sandbox
        .hpp(["trust", "seal", "--sign-key", text(&p.root), "--apply"])
        .refused();
    assert!(message.contains("sealed already"), "{message}");
}

#[test]
fn an_honest_policy_change_refused_with_its_push_leaves_the_server_as_it_was() {
    // The policy the server reads while a push is received is not remembered: had it been,
    // a push refused for another reason would leave the server refusing its own policy.
    let p = with_policy();
    let (bare, _) = guarded_server(&p, true);
    p.sandbox
        .hpp([
            "trust",
            "remove",
            "maker-m",
            "--sign-key",
            text(&p.root),
            "--apply",
        ])
        .ok();
    std::fs::write(p.sandbox.root.join("work.txt"), "unreviewed\n").expect("writable");
    p.sandbox.git(["add", "-A"]);
    p.sandbox.git(["commit", "-q", "-m", "unreviewed"]);
    let refused = push_to(
        &p,
        &bare,
        &["--atomic", "main", "refs/hpp/trust:refs/hpp/trust"],
    );
    assert_ne!(refused.code, 0, "{refused}");
    let landed = push_to(&p, &bare, &["refs/hpp/trust:refs/hpp/trust"]);
    assert_eq!(landed.code, 0, "{landed}");
    p.sandbox.hpp_in(&bare, &["trust", "show"]).ok();
}

/// Runs `git -c SETTING hpp ARGS` in `dir` through git's own dispatcher, so the setting reaches
/// git-hpp as git hands it over (GIT_CONFIG_PARAMETERS).
fn git_c(sandbox: &Sandbox, dir: &Path, setting: &str, args: &[&str]) -> Run {
    let bin = Path::new(BIN).parent().expect("the binary's directory");
    let mut dirs = vec![bin.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let out = sandbox
        .command("git", dir)
        .env("PATH", std::env::join_paths(dirs).expect("a PATH"))
        .args(["-c", setting, "hpp"])
        .args(args)
        .output()
        .expect("git runs");
    Run::from_output(&out)
}

/// A repository with no policy, SPEC.md committed and an approval of it signed by checker-b.
fn signed_without_policy() -> (Sandbox, std::path::PathBuf) {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nIt works.\n").expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    let checker = keygen(&sandbox, "checker");
    let mut args = attest_args("review:1", "approved");
    args.extend(["--sign-key", text(&checker)]);
    sandbox.hpp_in(&sandbox.root, &args).ok();
    (sandbox, checker)
}

#[test]
fn git_c_require_signed_refuses_an_unsigned_approval() {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nIt works.\n").expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    let mut args = attest_args("review:1", "approved");
    args.push("--no-sign");
    sandbox.hpp_in(&sandbox.root, &args).ok();
    let run = git_c(
        &sandbox,
        &sandbox.root,
        "hpp.requireSigned=true",
        &["verify"],
    );
    assert_ne!(run.code, 0, "{run}");
    // Control: the same verify without the setting passes, saying the approval is unsigned.
    let run = git_c(&sandbox, &sandbox.root, "hpp.unrelated=1", &["verify"]);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn git_c_allowed_signers_file_checks_the_signature() {
    let (sandbox, checker) = signed_without_policy();
    let signers = sandbox.path("signers");
    std::fs::write(
        &signers,
        format!(
            "checker-b {}",
            std::fs::read_to_string(public(&checker)).expect("the key")
        ),
    )
    .expect("writable");
    let run = git_c(
        &sandbox,
        &sandbox.root,
        &format!("hpp.allowedSignersFile={}", text(&signers)),
        &["verify"],
    );
    assert!(
        run.stdout.contains("signature verified (checker-b)"),
        "{run}"
    );
    // Control: a signers file that does not hold the key fails the approval.
    std::fs::write(&signers, "someone-else ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB\n")
        .expect("writable");
    let run = git_c(
        &sandbox,
        &sandbox.root,
        &format!("hpp.allowedSignersFile={}", text(&signers)),
        &["verify"],
    );
    assert_ne!(run.code, 0, "{run}");
}

#[test]
fn git_c_trust_root_is_the_pin_every_reader_verifies_from() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let other = keygen(&p.sandbox, "other");
    let setting = format!("hpp.trustRoot={}", fingerprint(&p.sandbox, &other));
    let run = git_c(&p.sandbox, &p.sandbox.root, &setting, &["verify"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .contains("no policy in its log is rooted at the pinned root"),
        "{run}"
    );
    // Control: the root pinned in the config files verifies.
    let setting = format!("hpp.trustRoot={}", pinned_root(&p));
    let run = git_c(&p.sandbox, &p.sandbox.root, &setting, &["verify"]);
    assert_eq!(run.code, 0, "{run}");
}

/// A repository with SPEC.md committed on `main`, and an orphan branch `other` whose one commit
/// has the same tree: another history (another root) holding byte-identical files, as a fork
/// rebuilt from a tarball or another repository pushed to the same remote would.
fn twin_histories() -> Sandbox {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nIt works.\n").expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
    let orphan = sandbox.git(["commit-tree", tree.trim(), "-m", "another history"]);
    sandbox.git(["update-ref", "refs/heads/other", orphan.trim()]);
    sandbox
}

#[test]
fn an_approval_made_in_another_history_of_the_same_tree_does_not_verify_here() {
    // Issue 52: a record's roots were checked as "root commits that exist here"; another
    // history's approval of a byte-identical tree verified once its root was reachable from
    // any ref. They must be the roots HEAD's history starts from.
    let sandbox = twin_histories();
    let other = sandbox.path("other-worktree");
    sandbox.git(["worktree", "add", "-q", text(&other), "other"]);
    let mut args = attest_args("review:1", "approved");
    args.push("--no-sign");
    sandbox.hpp_in(&other, &args).ok();
    sandbox.hpp_in(&other, &["verify", "HEAD"]).ok();
    let run = sandbox.hpp(["verify", "HEAD"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stdout.contains("FAIL"), "{run}");
}

#[test]
fn control_an_approval_made_in_this_history_verifies_beside_another_historys() {
    let sandbox = twin_histories();
    let mut args = attest_args("review:1", "approved");
    args.push("--no-sign");
    sandbox.hpp_in(&sandbox.root, &args).ok();
    let run = sandbox.hpp(["verify", "HEAD"]);
    assert_eq!(run.code, 0, "{run}");
}

/// Rebuilds `refs/hpp/trust` in `repo` with the roots' signatures taken out of the change
/// `back` changes before the tip; every later change keeps its bytes and its signatures (they
/// sign the policy, not the commit). Returns the stripped change's new commit.
fn strip_signatures(sandbox: &Sandbox, repo: &Path, back: usize) -> String {
    let git = |args: &[&str]| sandbox.git_in(repo, args).trim().to_owned();
    let commits: Vec<String> = git(&["rev-list", "--reverse", "refs/hpp/trust"])
        .lines()
        .map(str::to_owned)
        .collect();
    let target = commits.len() - 1 - back;
    let mut parent = git(&["rev-parse", &format!("{}~1", commits[target])]);
    let mut stripped = String::new();
    for (i, commit) in commits.iter().enumerate().skip(target) {
        let mut tree = git(&["rev-parse", &format!("{commit}^{{tree}}")]);
        if i == target {
            let listing: String = git(&["ls-tree", &tree])
                .lines()
                .filter(|l| !l.ends_with("\tsignatures"))
                .map(|l| format!("{l}\n"))
                .collect();
            tree = sandbox
                .git_fed_in(repo, &["mktree"], &listing)
                .trim()
                .to_owned();
        }
        let message = git(&["log", "-1", "--format=%B", commit]);
        parent = git(&["commit-tree", &tree, "-p", &parent, "-m", &message]);
        if i == target {
            stripped = parent.clone();
        }
    }
    git(&["update-ref", "refs/hpp/trust", &parent]);
    stripped
}

/// A checker `name` added by the root: a change that keeps the roots.
fn add_checker(p: &Policy, name: &str) {
    let key = keygen(&p.sandbox, name);
    p.sandbox
        .hpp([
            "trust",
            "add",
            name,
            "--key",
            &public(&key),
            "--role",
            "checker",
            "--sign-key",
            text(&p.root),
            "--apply",
        ])
        .ok();
}

#[test]
fn a_fresh_clone_checks_every_change_of_roots_whatever_signed_changes_follow_it() {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    second_root(&p);
    add_checker(&p, "checker-c");
    add_checker(&p, "checker-d");
    // The change that made root2 a root, two changes before the tip, loses its signatures.
    let stripped = strip_signatures(&p.sandbox, &p.sandbox.root, 2);
    let (_remote, fresh) = published(&p, "fresh");
    let run = p.sandbox.hpp_in(&fresh, &["fetch"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stdout
            .contains(&format!("the trust policy at {stripped} is refused"))
            || run
                .stderr
                .contains(&format!("the trust policy at {stripped} is refused")),
        "{run}"
    );
}

#[test]
fn control_a_change_that_keeps_the_roots_is_vouched_for_by_the_checked_one_after_it() {
    // A reader checks the roots' signatures where they decide what is trusted now (every change
    // of roots, and the newest policy); a change in between is vouched for by the next one,
    // which signs its digest. `trust show`, which lists who signed each change, checks it.
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    add_checker(&p, "checker-c");
    add_checker(&p, "checker-d");
    let stripped = strip_signatures(&p.sandbox, &p.sandbox.root, 1);
    let (_remote, fresh) = published(&p, "fresh");
    pin_fetch_and_verify(&p, &fresh, &pinned_root(&p));
    let shown = p.sandbox.hpp_in(&fresh, &["trust", "show"]).refused();
    assert!(
        shown.contains(&format!("the trust policy at {stripped} is refused"))
            && shown.contains("signed by 0 of the 1"),
        "{shown}"
    );
    // The tip is always checked: the same stripping there is refused by the reader too.
    strip_signatures(&p.sandbox, &p.sandbox.root, 0);
    let (_remote, again) = published(&p, "again");
    p.sandbox
        .hpp_in(&again, &["trust", "pin", &pinned_root(&p), "--apply"])
        .ok();
    let run = p.sandbox.hpp_in(&again, &["fetch"]);
    assert_ne!(run.code, 0, "{run}");
    let taken = p
        .sandbox
        .command("git", &again)
        .args(["rev-parse", "--verify", "-q", "refs/hpp/trust"])
        .output()
        .expect("git runs");
    assert!(
        !taken.status.success(),
        "the unsigned tip was taken in: {run}"
    );
    let verified = p.sandbox.hpp_in(&again, &["verify", "HEAD"]);
    assert_ne!(verified.code, 0, "{verified}");
}
