//! Trust against an adversary: what a reviewer verifying from a fresh clone must refuse, and what
//! must still hold when the repository is reached another way. Each test reproduces one way the
//! trust layer was got around or broken, with its control beside it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use crate::harness::{Run, Sandbox, keygen};

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// A maker's repository with a bare remote, two keys (the maker's and the checker's) and an
/// allowed-signers file that lists both: any principal in it could sign, so only the binding of
/// the signer to the record's checker stops a self-approval.
struct Scene {
    sandbox: Sandbox,
    remote: PathBuf,
    maker_key: PathBuf,
    checker_key: PathBuf,
    allowed: PathBuf,
}

fn scene() -> Scene {
    let sandbox = Sandbox::repo();
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    sandbox.git(["remote", "add", "origin", text(&remote)]);
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nIt works.\n").expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    let (maker_key, maker_public) = keygen(&sandbox, "maker.key");
    let (checker_key, checker_public) = keygen(&sandbox, "checker.key");
    let allowed = sandbox.path("allowed_signers");
    std::fs::write(
        &allowed,
        format!("maker-a {maker_public}\nchecker-b {checker_public}\n"),
    )
    .expect("writable");
    Scene {
        sandbox,
        remote,
        maker_key,
        checker_key,
        allowed,
    }
}

impl Scene {
    /// Records an attestation of the maker's workspace by `checker`, signed with `key`.
    #[track_caller]
    fn attest(&self, checker: &str, verdict: &str, key: Option<&Path>, code: i32) -> Value {
        let mut args = vec![
            "attest",
            "create",
            "--spec",
            "SPEC.md",
            "--maker",
            "maker-a",
            "--checker",
            checker,
            "--session",
            "review:001",
            "--verdict",
            verdict,
            "--json",
        ];
        if let Some(key) = key {
            args.extend(["--sign-key", text(key)]);
        }
        self.sandbox.hpp_in(&self.sandbox.root, &args).json(code)
    }

    /// Pushes the maker's records and `main` to the remote.
    fn publish(&self) {
        self.sandbox.hpp(["push"]).ok();
        self.sandbox
            .git(["push", "-q", "--no-verify", "origin", "main"]);
    }

    /// Clones the remote afresh as `name` and fetches its records.
    fn fresh_clone(&self, name: &str) -> PathBuf {
        let dir = self.sandbox.path(name);
        self.sandbox
            .git(["clone", "-q", text(&self.remote), text(&dir)]);
        self.sandbox.hpp_in(&dir, &["fetch"]).ok();
        dir
    }

    /// Runs `git hpp verify --json` in `dir` with `extra`, asserting `code`.
    #[track_caller]
    fn verify(&self, dir: &Path, extra: &[&str], code: i32) -> Value {
        let mut args = vec!["verify", "--json"];
        args.extend_from_slice(extra);
        self.sandbox.hpp_in(dir, &args).json(code)
    }

    fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        self.sandbox.git_in(dir, args)
    }

    /// The attestation refs of HEAD's tree in `dir`.
    fn attestations(&self, dir: &Path) -> Vec<String> {
        let tree = self.git_in(dir, &["rev-parse", "HEAD^{tree}"]);
        let listed = self.git_in(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname)",
                &format!("refs/hpp/attestations/{tree}/"),
            ],
        );
        listed.lines().map(str::to_owned).collect()
    }

    /// Signs `bytes` as `key` would with `ssh-keygen -Y sign -n hpp`, by hand.
    fn sign_by_hand(&self, key: &Path, bytes: &[u8]) -> Vec<u8> {
        let mut child = self
            .sandbox
            .command("ssh-keygen", &self.sandbox.root)
            .args(["-q", "-Y", "sign", "-n", "hpp", "-f"])
            .arg(key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ssh-keygen runs");
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(bytes)
            .expect("ssh-keygen reads the record");
        let out = child.wait_with_output().expect("ssh-keygen finishes");
        assert!(out.status.success(), "{}", Run::from_output(&out));
        out.stdout
    }

    /// Writes, in `dir`, a copy of the record at `from` with `record` (and `sig`, or none) in
    /// place of its blobs, under the same tree's prefix as `name`; returns the new ref.
    fn forge(
        &self,
        dir: &Path,
        from: &str,
        name: &str,
        record: &[u8],
        sig: Option<&[u8]>,
    ) -> String {
        let write = |bytes: &[u8], file: &str| {
            let path = self.sandbox.path(file);
            std::fs::write(&path, bytes).expect("writable");
            self.git_in(dir, &["hash-object", "-w", text(&path)])
        };
        let record_blob = write(record, "forged.json");
        let sig_blob = sig.map(|s| write(s, "forged.sig"));
        let mut entries = String::new();
        for line in self.git_in(dir, &["ls-tree", from]).lines() {
            if line.ends_with("\tattestation.json") {
                entries.push_str(&format!("100644 blob {record_blob}\tattestation.json\n"));
            } else if line.ends_with("\tattestation.sig") {
                if let Some(blob) = &sig_blob {
                    entries.push_str(&format!("100644 blob {blob}\tattestation.sig\n"));
                }
            } else if line.ends_with("\tattestation.intoto.json") {
                // The in-toto envelope signed beside the genuine record states that record:
                // a forger drops it (records signed through ssh-agent carry none), so what is
                // judged is the forged record and its signature, not a stale envelope.
            } else {
                entries.push_str(&format!("{line}\n"));
            }
        }
        if sig_blob.is_some() && !entries.contains("attestation.sig") {
            let blob = sig_blob.as_deref().expect("some");
            entries.push_str(&format!("100644 blob {blob}\tattestation.sig\n"));
        }
        let mut mktree = self
            .sandbox
            .command("git", dir)
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
        let commit = self.git_in(dir, &["commit-tree", &tree, "-m", "forged"]);
        let prefix = from.rsplit_once('/').expect("a ref under a tree").0;
        let forged = format!("{prefix}/{name}");
        self.git_in(dir, &["update-ref", &forged, &commit]);
        forged
    }
}

fn first(report: &Value) -> &Value {
    &report["commits"][0]
}

fn mismatches(report: &Value) -> Vec<String> {
    first(report)["verification"]["mismatches"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| m.as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_record_naming_the_checker_but_signed_by_the_maker_fails_from_a_fresh_clone() {
    let scene = scene();
    // Asked directly, attest create refuses a signer other than the checker and writes nothing.
    let before = scene.sandbox.hpp_refs();
    let mut args = vec![
        "attest",
        "create",
        "--spec",
        "SPEC.md",
        "--maker",
        "maker-a",
        "--checker",
        "checker-b",
        "--session",
        "review:001",
        "--verdict",
        "approved",
        "--signer",
        "maker-a",
        "--sign-key",
    ];
    args.push(text(&scene.maker_key));
    let refused = scene.sandbox.hpp_in(&scene.sandbox.root, &args).refused();
    assert!(
        refused.contains("maker-a") && refused.contains("checker-b"),
        "{refused}"
    );
    assert_eq!(scene.sandbox.hpp_refs(), before, "nothing was written");

    // An adversary writes it by hand instead: the checker's record, re-signed by the maker.
    scene.attest("checker-b", "approved", Some(&scene.checker_key), 0);
    scene.publish();
    let clone = scene.fresh_clone("reviewer");
    let [genuine] = scene
        .attestations(&clone)
        .try_into()
        .expect("one attestation");
    let record = scene.git_in(&clone, &["show", &format!("{genuine}:attestation.json")]);
    let forged_record = record.replace("\"signer\":\"checker-b\"", "\"signer\":\"maker-a\"");
    assert_ne!(forged_record, record);
    let sig = scene.sign_by_hand(&scene.maker_key, forged_record.as_bytes());
    scene.forge(
        &clone,
        &genuine,
        "forged",
        forged_record.as_bytes(),
        Some(&sig),
    );
    scene.git_in(&clone, &["update-ref", "-d", &genuine]);

    let allowed = ["--allowed-signers", text(&scene.allowed)];
    let report = scene.verify(&clone, &allowed, 2);
    assert_eq!(mismatches(&report), ["signer"], "{report}");
    let missing = first(&report)["missing"].as_str().unwrap_or_default();
    assert!(
        missing.contains("maker-a") && missing.contains("checker-b"),
        "{missing}"
    );
}

#[test]
fn control_the_checkers_own_signature_verifies_from_a_fresh_clone() {
    let scene = scene();
    scene.attest("checker-b", "approved", Some(&scene.checker_key), 0);
    scene.publish();
    let clone = scene.fresh_clone("reviewer");
    let allowed = ["--allowed-signers", text(&scene.allowed)];
    let report = scene.verify(&clone, &allowed, 0);
    assert_eq!(report["signatures"], "required");
    assert_eq!(
        first(&report)["verification"]["checked"],
        "signature verified (checker-b)"
    );
    let human = scene
        .sandbox
        .hpp_in(&clone, &["verify", allowed[0], allowed[1]])
        .ok();
    assert!(
        human.contains("approved by checker-b: signature verified (checker-b)"),
        "{human}"
    );
}

#[test]
fn a_later_revise_or_blocked_by_the_same_checker_revokes_the_approval() {
    let scene = scene();
    scene.attest("checker-b", "approved", Some(&scene.checker_key), 0);
    let blocked = scene.attest("checker-b", "blocked", Some(&scene.checker_key), 2);
    scene.publish();
    let clone = scene.fresh_clone("reviewer");
    let allowed = ["--allowed-signers", text(&scene.allowed)];
    let report = scene.verify(&clone, &allowed, 2);
    assert_eq!(mismatches(&report), ["revoked"], "{report}");
    let verification = &first(&report)["verification"];
    assert_eq!(verification["revoked_by"], blocked["ref"]);
    let missing = first(&report)["missing"].as_str().unwrap_or_default();
    assert!(
        missing.contains("revoked by") && missing.contains("blocked by checker-b"),
        "{missing}"
    );

    // The checker approves again once the work holds: the latest verdict stands.
    scene.attest("checker-b", "approved", Some(&scene.checker_key), 0);
    scene.publish();
    scene.sandbox.hpp_in(&clone, &["fetch"]).ok();
    scene.verify(&clone, &allowed, 0);
}

#[test]
fn control_an_unsigned_revision_does_not_revoke_a_signed_approval_when_signatures_count() {
    let scene = scene();
    scene.attest("checker-b", "approved", Some(&scene.checker_key), 0);
    // Anyone can write an unsigned "blocked" in the checker's name; it must not revoke.
    scene.attest("checker-b", "blocked", None, 2);
    scene.publish();
    let clone = scene.fresh_clone("reviewer");
    let allowed = ["--allowed-signers", text(&scene.allowed)];
    let report = scene.verify(&clone, &allowed, 0);
    assert_eq!(first(&report)["verification"]["revoked_by"], Value::Null);
}

#[test]
fn unsigned_approvals_pass_only_where_signatures_are_not_required_and_say_so() {
    let scene = scene();
    scene.attest("checker-b", "approved", None, 0);
    scene.publish();
    let clone = scene.fresh_clone("reviewer");
    let report = scene.verify(&clone, &[], 0);
    assert_eq!(report["signatures"], "not-required");
    assert_eq!(
        first(&report)["verification"]["checked"],
        "unsigned: not checked"
    );
    assert!(
        report["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("hpp.allowedSignersFile")
    );
    let human = scene.sandbox.hpp_in(&clone, &["verify"]).ok();
    assert!(human.contains("unsigned: not checked"), "{human}");
    assert!(
        human.contains("note: signatures are not required"),
        "{human}"
    );

    // Configuring the signers requires signatures, unless unsigned ones are allowed explicitly.
    scene.git_in(
        &clone,
        &["config", "hpp.allowedSignersFile", text(&scene.allowed)],
    );
    let report = scene.verify(&clone, &[], 2);
    assert_eq!(mismatches(&report), ["signature"]);
    scene.verify(&clone, &["--allow-unsigned"], 0);
    scene.git_in(&clone, &["config", "hpp.requireSigned", "false"]);
    scene.verify(&clone, &[], 0);
}

#[test]
fn control_a_forged_signature_fails_even_without_an_allowed_signers_file() {
    let scene = scene();
    scene.attest("checker-b", "approved", Some(&scene.checker_key), 0);
    scene.publish();
    let clone = scene.fresh_clone("reviewer");
    let [genuine] = scene
        .attestations(&clone)
        .try_into()
        .expect("one attestation");
    let record = scene.git_in(&clone, &["show", &format!("{genuine}:attestation.json")]);
    let sig = scene.git_in(&clone, &["show", &format!("{genuine}:attestation.sig")]);
    let garbled = sig.replacen('A', "B", 3);
    scene.forge(
        &clone,
        &genuine,
        "garbled",
        record.as_bytes(),
        Some(garbled.as_bytes()),
    );
    scene.git_in(&clone, &["update-ref", "-d", &genuine]);
    let report = scene.verify(&clone, &[], 2);
    assert_eq!(mismatches(&report), ["signature"], "{report}");
}

#[test]
fn a_ref_that_is_not_a_record_is_named_broken_and_the_records_beside_it_decide() {
    let scene = scene();
    scene.attest("checker-b", "approved", None, 0);
    let tree = scene.sandbox.git(["rev-parse", "HEAD^{tree}"]);
    let blob = scene.sandbox.git(["hash-object", "-w", "SPEC.md"]);
    let junk = format!("refs/hpp/attestations/{tree}/x");
    scene.sandbox.git(["update-ref", &junk, &blob]);
    let report = scene.verify(&scene.sandbox.root, &[], 0);
    let broken = &first(&report)["verification"]["broken"];
    assert_eq!(broken[0]["ref"], junk.as_str(), "{report}");
    let human = scene.sandbox.hpp(["verify"]).ok();
    assert!(
        human.contains(&format!("warn {junk} holds no readable record")),
        "{human}"
    );
    let doctor = scene.sandbox.hpp(["doctor"]).exit(2);
    assert!(
        doctor.stdout.contains(&junk),
        "doctor names it too: {doctor}"
    );
    // The pre-push gate is not held hostage by it either.
    scene.sandbox.hpp(["hooks", "install", "--apply"]).ok();
    scene.sandbox.git(["push", "-q", "origin", "main"]);
}

#[test]
fn control_a_tree_with_only_a_broken_ref_is_refused_not_an_internal_error() {
    let scene = scene();
    let tree = scene.sandbox.git(["rev-parse", "HEAD^{tree}"]);
    let blob = scene.sandbox.git(["hash-object", "-w", "SPEC.md"]);
    scene.sandbox.git([
        "update-ref",
        &format!("refs/hpp/attestations/{tree}/x"),
        &blob,
    ]);
    let report = scene.verify(&scene.sandbox.root, &[], 2);
    assert!(
        first(&report)["missing"]
            .as_str()
            .unwrap_or_default()
            .contains("broken ref"),
        "{report}"
    );
}

#[test]
fn the_repository_identity_holds_however_the_repository_is_reached() {
    let scene = scene();
    scene.attest("checker-b", "approved", None, 0);
    scene.publish();
    let sandbox = &scene.sandbox;

    // The maker renames its remote and adds another.
    sandbox.git(["remote", "rename", "origin", "upstream"]);
    sandbox.git([
        "remote",
        "add",
        "origin",
        &text(&scene.remote).to_uppercase(),
    ]);
    scene.verify(&sandbox.root, &[], 0);

    // A clone over file:// and one by path, a copy without any remote, a bare mirror.
    let by_url = sandbox.path("by-url");
    sandbox.git([
        "clone",
        "-q",
        &format!("file://{}", text(&scene.remote)),
        text(&by_url),
    ]);
    sandbox.hpp_in(&by_url, &["fetch"]).ok();
    scene.verify(&by_url, &[], 0);
    let lonely = scene.fresh_clone("lonely");
    scene.git_in(&lonely, &["remote", "remove", "origin"]);
    scene.verify(&lonely, &[], 0);
    let bare = sandbox.path("mirror.git");
    sandbox.git(["clone", "-q", "--mirror", text(&scene.remote), text(&bare)]);
    let report = scene.verify(&bare, &["main"], 0);
    assert_eq!(report["status"], "valid");
}

#[test]
fn control_a_record_copied_into_an_unrelated_history_names_both_identities() {
    let scene = scene();
    scene.attest("checker-b", "approved", None, 0);
    let sandbox = &scene.sandbox;
    // Another repository with the same files but its own history (another root commit).
    let other = sandbox.path("other");
    sandbox.git(["init", "-q", "-b", "main", text(&other)]);
    let archive = sandbox.path("files.tar");
    sandbox.git(["archive", "-o", text(&archive), "HEAD"]);
    let out = sandbox
        .command("tar", &other)
        .arg("-xf")
        .arg(&archive)
        .output()
        .expect("tar runs");
    assert!(out.status.success(), "{}", Run::from_output(&out));
    scene.git_in(&other, &["add", "-A"]);
    scene.git_in(&other, &["commit", "-q", "-m", "spec, elsewhere"]);
    assert_eq!(
        scene.git_in(&other, &["rev-parse", "HEAD^{tree}"]),
        sandbox.git(["rev-parse", "HEAD^{tree}"]),
        "the same tree"
    );
    scene.git_in(
        &other,
        &["fetch", "-q", text(&sandbox.root), "refs/hpp/*:refs/hpp/*"],
    );
    let report = scene.verify(&other, &[], 2);
    assert_eq!(mismatches(&report), ["repo"], "{report}");
    let missing = first(&report)["missing"].as_str().unwrap_or_default();
    let ours = sandbox.git(["rev-list", "--max-parents=0", "HEAD"]);
    let theirs = scene.git_in(&other, &["rev-list", "--max-parents=0", "HEAD"]);
    assert!(
        missing.contains(&ours[..12]) && missing.contains(&theirs[..12]),
        "{missing}"
    );
}

#[test]
fn a_forged_notes_line_is_flagged_by_doctor_and_dropped_by_its_repair() {
    let scene = scene();
    scene.attest("checker-b", "approved", None, 0);
    // A commit nobody attested, with a note that says it was approved, fetched from elsewhere.
    std::fs::write(scene.sandbox.root.join("work.txt"), "unreviewed\n").expect("writable");
    scene.sandbox.git(["add", "-A"]);
    scene.sandbox.git(["commit", "-q", "-m", "unreviewed"]);
    let tree = scene.sandbox.git(["rev-parse", "HEAD^{tree}"]);
    let forged = format!(
        "hpp attestation: approved by checker-b (maker maker-a, session review:001) refs/hpp/attestations/{tree}/forged"
    );
    scene.sandbox.git([
        "notes",
        "--ref",
        "refs/notes/hpp",
        "add",
        "-m",
        &forged,
        "HEAD",
    ]);
    let shown = scene.sandbox.git(["log", "-1", "--notes=hpp"]);
    assert!(
        shown.contains("approved by checker-b"),
        "the lie shows in git log: {shown}"
    );

    let report = scene.sandbox.hpp(["doctor", "--json"]).json(2);
    let unbacked = report["store"]["notes_unbacked"].as_u64();
    assert_eq!(unbacked, Some(1), "{report}");
    let text = report.to_string();
    assert!(text.contains("claims more than the records"), "{text}");

    let plan = scene.sandbox.hpp(["doctor", "--repair"]).exit(2);
    assert!(
        plan.stdout.contains("drop from the note of commit"),
        "{plan}"
    );
    scene.sandbox.hpp(["doctor", "--repair", "--apply"]).ok();
    let shown = scene.sandbox.git(["log", "-1", "--notes=hpp"]);
    assert!(
        !shown.contains("approved by checker-b"),
        "the lie is gone: {shown}"
    );
}

#[test]
fn control_a_genuine_note_passes_doctor_and_a_revoked_one_is_flagged() {
    let scene = scene();
    scene.attest("checker-b", "approved", None, 0);
    let report = scene.sandbox.hpp(["doctor", "--json"]).json(0);
    assert_eq!(report["store"]["notes_unbacked"], 0, "{report}");
    assert!(
        scene
            .sandbox
            .git(["log", "-1", "--notes=hpp"])
            .contains("approved by checker-b")
    );
    // The checker blocks the same tree: the approval's line no longer holds.
    scene.attest("checker-b", "blocked", None, 2);
    let report = scene.sandbox.hpp(["doctor", "--json"]).json(2);
    assert!(report.to_string().contains("revoked by"), "{report}");
    scene.sandbox.hpp(["doctor", "--repair", "--apply"]).ok();
    let shown = scene.sandbox.git(["log", "-1", "--notes=hpp"]);
    assert!(!shown.contains("approved by"), "{shown}");
    assert!(shown.contains("blocked by checker-b"), "{shown}");
}

/// An `ssh-agent` in the foreground on a socket in the sandbox, killed when dropped.
struct Agent {
    child: std::process::Child,
    socket: PathBuf,
}

impl Agent {
    fn start(sandbox: &Sandbox) -> Agent {
        let socket = sandbox.path("agent.sock");
        let child = sandbox
            .command("ssh-agent", &sandbox.root)
            .args(["-D", "-a"])
            .arg(&socket)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ssh-agent runs");
        // Dropping it kills and reaps the agent, whether or not it came up.
        let agent = Agent { child, socket };
        for _ in 0..200 {
            if agent.socket.exists() {
                return agent;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("ssh-agent did not open its socket");
    }

    fn add(&self, sandbox: &Sandbox, key: &Path) {
        let out = sandbox
            .command("ssh-add", &sandbox.root)
            .env("SSH_AUTH_SOCK", &self.socket)
            .arg(key)
            .output()
            .expect("ssh-add runs");
        assert!(out.status.success(), "{}", Run::from_output(&out));
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_key_held_by_ssh_agent_signs_through_its_public_half() {
    let mut scene = scene();
    let agent = Agent::start(&scene.sandbox);
    agent.add(&scene.sandbox, &scene.checker_key);
    scene
        .sandbox
        .env
        .insert("SSH_AUTH_SOCK".into(), agent.socket.display().to_string());
    let public = PathBuf::from(format!("{}.pub", scene.checker_key.display()));
    let created = scene.attest("checker-b", "approved", Some(&public), 0);
    assert_eq!(created["record"]["signer"], "checker-b");
    let allowed = ["--allowed-signers", text(&scene.allowed)];
    let report = scene.verify(&scene.sandbox.root, &allowed, 0);
    assert_eq!(
        first(&report)["verification"]["checked"],
        "signature verified (checker-b)"
    );
}

#[test]
fn control_a_public_key_whose_private_half_no_agent_holds_cannot_sign() {
    let mut scene = scene();
    let agent = Agent::start(&scene.sandbox);
    scene
        .sandbox
        .env
        .insert("SSH_AUTH_SOCK".into(), agent.socket.display().to_string());
    let before = scene.sandbox.hpp_refs();
    let public = format!("{}.pub", scene.checker_key.display());
    let mut args = crate::harness::attest_args("review:001", "approved");
    args.extend(["--sign-key", &public]);
    let refused = scene.sandbox.hpp_in(&scene.sandbox.root, &args).refused();
    assert!(refused.contains("ssh-keygen -Y sign failed"), "{refused}");
    assert_eq!(scene.sandbox.hpp_refs(), before, "nothing was written");
}

#[test]
fn with_gpg_format_ssh_the_users_signing_key_signs_like_git_commit_s() {
    let scene = scene();
    let sandbox = &scene.sandbox;
    sandbox.git(["config", "gpg.format", "ssh"]);
    sandbox.git(["config", "user.signingKey", text(&scene.checker_key)]);
    let created = scene.attest("checker-b", "approved", None, 0);
    assert_eq!(created["record"]["signer"], "checker-b");
    let allowed = ["--allowed-signers", text(&scene.allowed)];
    scene.verify(&sandbox.root, &allowed, 0);
    // --no-sign opts out.
    let mut args = crate::harness::attest_args("review:002", "approved");
    args.extend(["--no-sign", "--json"]);
    let unsigned = sandbox.hpp_in(&sandbox.root, &args).json(0);
    assert!(unsigned["record"].get("signer").is_none(), "{unsigned}");
}

#[test]
fn a_human_decision_is_signed_by_the_person_it_names() {
    let scene = scene();
    let sandbox = &scene.sandbox;
    let recorded = crate::harness::record_session(sandbox, "review", &[]).json(0);
    let reference = recorded["ref"].as_str().expect("a ref").to_owned();
    let decided = sandbox
        .hpp([
            "deliberate",
            "decide",
            &reference,
            "--value",
            "high",
            "--by",
            "checker-b",
            "--sign-key",
            text(&scene.checker_key),
        ])
        .json(0);
    assert_eq!(decided["signed"], true);
    let verify = |allowed: &Path, code: i32| {
        sandbox
            .hpp([
                "deliberate",
                "verify",
                &reference,
                "--allowed-signers",
                text(allowed),
            ])
            .json(code)
    };
    // The session itself is unsigned, so only a file that also lets it through is used: the
    // decision's signature is what this checks.
    let report = verify(&scene.allowed, 2);
    assert!(
        report["reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("signature"),
        "the unsigned session is reported first: {report}"
    );
    assert_eq!(report["human_decision_signature"]["status"], "verified");
}

#[test]
fn control_a_decision_signed_by_someone_else_does_not_hold() {
    let scene = scene();
    let sandbox = &scene.sandbox;
    let recorded = crate::harness::record_session(sandbox, "review", &[]).json(0);
    let reference = recorded["ref"].as_str().expect("a ref").to_owned();
    // The maker's key signs a decision that says the checker decided.
    sandbox
        .hpp([
            "deliberate",
            "decide",
            &reference,
            "--value",
            "high",
            "--by",
            "checker-b",
            "--sign-key",
            text(&scene.maker_key),
        ])
        .json(0);
    let report = sandbox
        .hpp([
            "deliberate",
            "verify",
            &reference,
            "--allowed-signers",
            text(&scene.allowed),
        ])
        .json(2);
    assert_eq!(
        report["human_decision_signature"]["status"], "refused",
        "{report}"
    );
}
