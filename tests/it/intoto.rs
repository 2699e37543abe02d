//! Records other tools read (issue 32): attestations and evidence bundles exported as in-toto
//! statements in DSSE envelopes, verified by the in-toto reference implementation (PyPI
//! `in-toto` and `securesystemslib`) with nothing but the SSH public key; an in-toto test
//! result imported as evidence that feeds the fresh-evidence gate.
//!
//! The Python side runs in a virtual environment under the target directory
//! (`target/tmp/intoto-venv`), made on first use with the pinned versions below and reused
//! after. A test that needs it skips, loudly, only when PyPI cannot be reached.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use hpp_core::intoto::{decode, encode};
use serde_json::{Value, json};

use crate::harness::{Run, Sandbox, attest_args, keygen};

/// The in-toto reference implementation, pinned.
const PINNED: [&str; 2] = ["in-toto==3.1.0", "securesystemslib==1.3.1"];

/// The verifier script the tests run in the venv.
const VERIFY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/intoto/verify_envelopes.py"
);
/// The script that signs a test result as a CI using in-toto's own signer would.
const SIGN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/intoto/sign_test_result.py"
);

/// The venv's python, made once per test run (and kept across runs); `None` when PyPI cannot
/// be reached.
fn python() -> Option<PathBuf> {
    static VENV: OnceLock<Option<PathBuf>> = OnceLock::new();
    VENV.get_or_init(make_venv).clone()
}

fn make_venv() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("intoto-venv");
    let python = dir.join("bin/python");
    let stamp = dir.join("hpp-pinned.txt");
    let pins = PINNED.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == pins) && python.exists() {
        return Some(python);
    }
    // Made beside and renamed into place, so a run that stops half-way leaves nothing reused.
    let building = dir.with_extension(format!("building-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&building)
        .output()
        .expect("python3 runs (the in-toto tests need it)");
    assert!(
        made.status.success(),
        "python3 -m venv failed:\n{}",
        Run::from_output(&made)
    );
    let pip = Command::new(building.join("bin/pip"))
        .args([
            "install",
            "-q",
            "--disable-pip-version-check",
            "--timeout",
            "30",
        ])
        .args(PINNED)
        .output()
        .expect("pip runs");
    if !pip.status.success() {
        let said = Run::from_output(&pip).to_string();
        let _ = std::fs::remove_dir_all(&building);
        let unreachable = [
            "NewConnectionError",
            "Max retries exceeded",
            "Temporary failure in name resolution",
            "Network is unreachable",
            "ConnectTimeout",
            "ReadTimeout",
            "No matching distribution found",
        ];
        if unreachable.iter().any(|s| said.contains(s)) {
            eprintln!(
                "\n!!!!!!!! SKIPPING the in-toto reference checks: PyPI cannot be reached, so \
                 in-toto and securesystemslib cannot be installed !!!!!!!!\n{said}\n"
            );
            return None;
        }
        panic!("pip install {PINNED:?} failed:\n{said}");
    }
    std::fs::write(building.join("hpp-pinned.txt"), &pins).expect("the venv is writable");
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::rename(&building, &dir).is_err() {
        // Another test process put its own in place first: use that one.
        let _ = std::fs::remove_dir_all(&building);
    }
    // A venv's scripts name the directory they were made in; python itself does not care.
    Some(python)
}

/// Runs the verifier on `bundle` with the public key line `public`; returns its reports, one
/// per envelope, and whether all verified.
fn reference_verify(
    sandbox: &Sandbox,
    python: &Path,
    public: &str,
    bundle: &str,
) -> (Vec<Value>, bool) {
    let key = sandbox.beside("verify-key.pub");
    std::fs::write(key.path(), format!("{public}\n")).expect("writable");
    let file = sandbox.beside("bundle.intoto.jsonl");
    std::fs::write(file.path(), bundle).expect("writable");
    let out = Command::new(python)
        .arg(VERIFY)
        .arg(key.path())
        .arg(file.path())
        .output()
        .expect("the verifier runs");
    let run = Run::from_output(&out);
    let reports: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {run}")))
        .collect();
    assert!(!reports.is_empty(), "the verifier reported nothing:\n{run}");
    (reports, run.code == 0)
}

/// The statement inside an envelope line.
fn statement(line: &str) -> Value {
    let envelope: Value = serde_json::from_str(line).expect("an envelope is JSON");
    let payload = decode(envelope["payload"].as_str().expect("a payload")).expect("base64");
    serde_json::from_slice(&payload).expect("the payload is JSON")
}

/// The same envelope with its statement's `path` (a JSON pointer) set to `value`, the
/// signatures kept: a tampered payload.
fn tampered(line: &str, path: &str, value: Value) -> String {
    let mut envelope: Value = serde_json::from_str(line).expect("an envelope is JSON");
    let mut stmt = statement(line);
    *stmt.pointer_mut(path).expect("the field exists") = value;
    envelope["payload"] = Value::from(encode(
        serde_json::to_string(&stmt).expect("JSON").as_bytes(),
    ));
    serde_json::to_string(&envelope).expect("JSON")
}

/// A repository with SPEC.md committed and a key of `kind` (`ed25519`, `ecdsa-256`, ...).
fn signed_repo(kind: &str) -> (Sandbox, PathBuf, String) {
    let sandbox = Sandbox::repo().with_identity();
    std::fs::write(sandbox.root.join("SPEC.md"), "the spec\n").expect("writable");
    sandbox.git(["add", "SPEC.md"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    let (key, public) = match kind.split_once('-') {
        None => keygen(&sandbox, "checker-key"),
        Some((t, bits)) => {
            let key = sandbox.path("checker-key");
            let out = sandbox
                .command("ssh-keygen", &sandbox.root)
                .args(["-q", "-t", t, "-b", bits, "-N", "", "-f"])
                .arg(&key)
                .output()
                .expect("ssh-keygen runs");
            assert!(out.status.success(), "{}", Run::from_output(&out));
            let public =
                std::fs::read_to_string(format!("{}.pub", key.display())).expect("a public key");
            (key, public.trim().to_owned())
        }
    };
    (sandbox, key, public)
}

/// Records checker-b's signed `verdict` (approved exits 0, the others 2).
fn attest_signed(sandbox: &Sandbox, key: &Path, session: &str, verdict: &str) {
    let mut args = attest_args(session, verdict);
    args.extend(["--sign-key", key.to_str().expect("UTF-8")]);
    let _ = sandbox
        .hpp_in(&sandbox.root, &args)
        .exit(if verdict == "approved" { 0 } else { 2 });
}

#[test]
fn a_signed_approval_verifies_under_in_toto_with_only_the_public_key() {
    for kind in ["ed25519", "ecdsa-256", "ecdsa-384"] {
        let (sandbox, key, public) = signed_repo(kind);
        attest_signed(&sandbox, &key, "review:1", "approved");
        let run = sandbox.hpp(["attest", "export", "--format", "in-toto"]);
        assert!(
            run.stderr.is_empty(),
            "a signed record exports with no note:\n{run}"
        );
        let bundle = run.ok();
        assert_eq!(bundle.lines().count(), 1, "{bundle}");
        let stmt = statement(bundle.trim());
        let head = sandbox.git(["rev-parse", "HEAD"]);
        let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
        assert_eq!(stmt["_type"], "https://in-toto.io/Statement/v1");
        assert_eq!(
            stmt["predicateType"],
            "https://slsa.dev/verification_summary/v1"
        );
        assert_eq!(
            stmt["subject"],
            json!([{"name": "tree", "digest": {"gitTree": tree.trim()}},
                   {"name": "commit", "digest": {"gitCommit": head.trim()}}])
        );
        let predicate = &stmt["predicate"];
        assert_eq!(predicate["verificationResult"], "PASSED");
        assert_eq!(predicate["verifier"]["id"], "git-hpp:checker/checker-b");
        let record_ref = predicate["inputAttestations"][0]["uri"]
            .as_str()
            .expect("a link back");
        assert!(
            record_ref.starts_with(&format!("refs/hpp/attestations/{}/", tree.trim())),
            "{record_ref}"
        );
        let Some(python) = python() else { return };
        let (reports, ok) = reference_verify(&sandbox, &python, &public, &bundle);
        assert!(ok, "{kind}: in-toto refused it: {reports:?}");
        assert_eq!(reports[0]["verified"], true, "{reports:?}");
        // Control: the same signature over a payload that says FAILED does not verify.
        let forged = tampered(
            bundle.trim(),
            "/predicate/verificationResult",
            json!("FAILED"),
        );
        let (reports, ok) = reference_verify(&sandbox, &python, &public, &forged);
        assert!(!ok, "{kind}: a tampered payload verified: {reports:?}");
        assert_eq!(reports[0]["verified"], false);
        // Control: another key does not verify it.
        let (_, other) = keygen(&sandbox, "other-key");
        let (_, ok) = reference_verify(&sandbox, &python, &other, &bundle);
        assert!(!ok, "{kind}: another key verified it");
    }
}

#[test]
fn blocked_and_revise_export_failed_and_unsigned_records_say_so() {
    let (sandbox, key, _) = signed_repo("ed25519");
    attest_signed(&sandbox, &key, "review:1", "blocked");
    let _ = sandbox
        .hpp_in(&sandbox.root, &attest_args("review:2", "revise"))
        .exit(2);
    let run = sandbox.hpp(["attest", "export", "HEAD", "--format", "in-toto"]);
    assert_eq!(run.code, 0, "{run}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{run}");
    let mut signed = 0;
    for line in &lines {
        let stmt = statement(line);
        assert_eq!(stmt["predicate"]["verificationResult"], "FAILED", "{line}");
        assert_eq!(stmt["predicate"]["verifiedLevels"][0], "FAILED", "{line}");
        let envelope: Value = serde_json::from_str(line).expect("JSON");
        signed += envelope["signatures"].as_array().map_or(0, Vec::len);
    }
    assert_eq!(
        signed, 1,
        "only the signed record's envelope is signed: {run}"
    );
    assert!(
        run.stderr
            .contains("exported unsigned: the record is not signed"),
        "the unsigned one is named on stderr:\n{run}"
    );
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
}

#[test]
fn control_a_tree_with_no_attestation_exports_nothing_and_says_so() {
    let (sandbox, _, _) = signed_repo("ed25519");
    let reason = sandbox
        .hpp(["attest", "export", "--format", "in-toto"])
        .refused();
    assert!(reason.contains("has no attestation to export"), "{reason}");
    let reason = sandbox.hpp(["attest", "export", "HEAD~1..HEAD"]).refused();
    assert!(reason.contains("is a range"), "{reason}");
}

/// Runs `sh -c SCRIPT` as bundle `id`, signed by `key` as ci-bot when one is given.
fn evidence(sandbox: &Sandbox, id: &str, key: Option<&Path>, script: &str, code: i32) {
    let mut args = vec!["evidence", "run", "--id", id];
    if let Some(key) = key {
        args.extend([
            "--sign-key",
            key.to_str().expect("UTF-8"),
            "--signer",
            "ci-bot",
        ]);
    }
    args.extend(["--", "sh", "-c", script]);
    let _ = sandbox.hpp_in(&sandbox.root, &args).exit(code);
}

#[test]
fn a_signed_evidence_bundle_verifies_under_in_toto_and_a_failed_one_exports_failed() {
    for kind in ["ed25519", "ecdsa-256"] {
        let (sandbox, key, public) = signed_repo(kind);
        let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
        evidence(&sandbox, "unit", Some(&key), "true", 0);
        evidence(&sandbox, "red", Some(&key), "exit 3", 1);
        let run = sandbox.hpp(["evidence", "export", "unit", "--format", "in-toto"]);
        assert!(run.stderr.is_empty(), "{run}");
        let unit = run.ok();
        let stmt = statement(unit.trim());
        assert_eq!(
            stmt["predicateType"],
            "https://in-toto.io/attestation/test-result/v0.1"
        );
        assert_eq!(
            stmt["subject"],
            json!([{"name": "tree", "digest": {"gitTree": tree.trim()}}])
        );
        assert_eq!(stmt["predicate"]["result"], "PASSED");
        assert_eq!(stmt["predicate"]["passedTests"], json!(["unit"]));
        assert_eq!(
            stmt["predicate"]["configuration"][0]["annotations"]["argv"],
            json!(["sh", "-c", "true"])
        );
        let red = sandbox
            .hpp(["evidence", "export", "red", "--format", "in-toto"])
            .ok();
        assert_eq!(statement(red.trim())["predicate"]["result"], "FAILED");
        assert_eq!(
            statement(red.trim())["predicate"]["failedTests"],
            json!(["red"])
        );
        let Some(python) = python() else { return };
        let (reports, ok) = reference_verify(&sandbox, &python, &public, &format!("{unit}{red}"));
        assert!(ok, "{kind}: in-toto refused them: {reports:?}");
        assert_eq!(reports[1]["result"], "FAILED", "{reports:?}");
        // Control: a FAILED run restated as PASSED under the same signature does not verify.
        let forged = tampered(red.trim(), "/predicate/result", json!("PASSED"));
        let (reports, ok) = reference_verify(&sandbox, &python, &public, &forged);
        assert!(!ok, "{kind}: a tampered payload verified: {reports:?}");
    }
}

#[test]
fn an_unsigned_bundle_exports_unsigned_and_says_so() {
    let (sandbox, _, _) = signed_repo("ed25519");
    evidence(&sandbox, "unit", None, "true", 0);
    let run = sandbox.hpp(["evidence", "export", "unit"]);
    assert_eq!(run.code, 0, "{run}");
    let envelope: Value = serde_json::from_str(run.stdout.trim()).expect("JSON");
    assert_eq!(envelope["signatures"], json!([]), "{run}");
    assert_eq!(
        statement(run.stdout.trim())["predicate"]["result"],
        "PASSED"
    );
    assert!(
        run.stderr
            .contains("exported unsigned: the record is not signed"),
        "{run}"
    );
}

/// Replaces `file` in the tree of the record at `record_ref` with `bytes`, as someone with
/// push access to the refs could.
fn rewrite_record(sandbox: &Sandbox, record_ref: &str, file: &str, bytes: &str) {
    let blob = sandbox.git_fed(&["hash-object", "-w", "--stdin"], bytes);
    let listing = sandbox.git(["ls-tree", record_ref]);
    let mut tree = String::new();
    for line in listing.lines() {
        let (meta, name) = line.split_once('\t').expect("an ls-tree line");
        if name == file {
            tree.push_str(&format!("100644 blob {}\t{name}\n", blob.trim()));
        } else {
            tree.push_str(&format!("{meta}\t{name}\n"));
        }
    }
    let tree = sandbox.git_fed(&["mktree"], &tree);
    let commit = sandbox.git(["commit-tree", tree.trim(), "-m", "rewritten"]);
    sandbox.git(["update-ref", record_ref, commit.trim()]);
}

/// An allowed-signers file naming `principal` with `public`, beside the repository.
fn allowed(sandbox: &Sandbox, principal: &str, public: &str) -> String {
    let path = sandbox.path("allowed_signers");
    std::fs::write(&path, format!("{principal} {public}\n")).expect("writable");
    path.display().to_string()
}

#[test]
fn verify_checks_the_envelope_beside_the_signature() {
    let (sandbox, key, public) = signed_repo("ed25519");
    attest_signed(&sandbox, &key, "review:1", "approved");
    let signers = allowed(&sandbox, "checker-b", &public);
    let verify = |sandbox: &Sandbox| {
        sandbox.hpp(["attest", "verify", "--allowed-signers", &signers, "--json"])
    };
    let report = verify(&sandbox).json(0);
    assert_eq!(report["status"], "valid", "{report}");
    let record_ref = report["attestation"].as_str().expect("a ref").to_owned();
    let line = sandbox.git(["show", &format!("{record_ref}:attestation.intoto.json")]);
    // Control: the envelope's statement changed, its signature kept.
    let forged = tampered(
        line.trim(),
        "/predicate/timeVerified",
        json!("2020-01-01T00:00:00Z"),
    );
    rewrite_record(&sandbox, &record_ref, "attestation.intoto.json", &forged);
    let report = verify(&sandbox).json(2);
    assert_eq!(report["mismatches"], json!(["signature"]), "{report}");
    let detail = report["candidates"][0]["signature"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(detail.contains("does not verify"), "{report}");
    // Control: another key's envelope over a statement of its own, the SSHSIG kept.
    let (other_key, _) = keygen(&sandbox, "other-key");
    let other = Sandbox::repo().with_identity();
    std::fs::write(other.root.join("SPEC.md"), "x\n").expect("writable");
    other.git(["add", "SPEC.md"]);
    other.git(["commit", "-q", "-m", "x"]);
    attest_signed(&other, &other_key, "review:1", "approved");
    let theirs = other.hpp(["attest", "export"]).ok();
    rewrite_record(
        &sandbox,
        &record_ref,
        "attestation.intoto.json",
        theirs.trim(),
    );
    let report = verify(&sandbox).json(2);
    let detail = report["candidates"][0]["signature"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(detail.contains("carries no signature by key"), "{report}");
    // The one stored restores it.
    rewrite_record(
        &sandbox,
        &record_ref,
        "attestation.intoto.json",
        line.trim(),
    );
    assert_eq!(verify(&sandbox).json(0)["status"], "valid");
}

#[test]
fn evidence_verify_checks_the_envelope_beside_the_signature() {
    let (sandbox, key, public) = signed_repo("ed25519");
    evidence(&sandbox, "unit", Some(&key), "true", 0);
    let signers = allowed(&sandbox, "ci-bot", &public);
    let verify = |sandbox: &Sandbox, code| {
        sandbox
            .hpp([
                "evidence",
                "verify",
                "unit",
                "--allowed-signers",
                &signers,
                "--json",
            ])
            .json(code)
    };
    let report = verify(&sandbox, 0);
    assert_eq!(report["status"], "valid", "{report}");
    let record_ref = report["ref"].as_str().expect("a ref").to_owned();
    let line = sandbox.git(["show", &format!("{record_ref}:record.intoto.json")]);
    let forged = tampered(
        line.trim(),
        "/subject/0/digest/gitTree",
        json!("0".repeat(40)),
    );
    rewrite_record(&sandbox, &record_ref, "record.intoto.json", &forged);
    let report = verify(&sandbox, 2);
    assert_eq!(report["status"], "blocked", "{report}");
    assert!(
        report["signature"]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("in-toto envelope"),
        "{report}"
    );
}

/// Signs a test result of `tree` with `key` as a CI using in-toto's own signer would.
fn ci_result(sandbox: &Sandbox, python: &Path, key: &Path, tree: &str, result: &str) -> PathBuf {
    let out = Command::new(python)
        .arg(SIGN)
        .arg(key)
        .args([tree, result, "https://ci.example/workflows/test.yml"])
        .output()
        .expect("the signer runs");
    let run = Run::from_output(&out);
    assert_eq!(run.code, 0, "{run}");
    let path = sandbox.path(&format!("ci-{result}.intoto.jsonl"));
    std::fs::write(&path, run.stdout).expect("writable");
    path
}

fn import(sandbox: &Sandbox, file: &Path, id: &str, signers: &str) -> Run {
    let file = file.to_str().expect("UTF-8");
    sandbox.hpp_in(
        &sandbox.root,
        &[
            "evidence",
            "import",
            "--format",
            "in-toto",
            file,
            "--id",
            id,
            "--allowed-signers",
            signers,
            "--json",
        ],
    )
}

fn append(sandbox: &Sandbox, args: &[&str]) -> Run {
    let mut argv = vec!["event", "append"];
    argv.extend(args);
    sandbox.hpp_in(&sandbox.root, &argv)
}

#[test]
fn a_ci_test_result_imported_as_evidence_feeds_the_fresh_evidence_gate() {
    let Some(python) = python() else { return };
    let (sandbox, _, _) = signed_repo("ed25519");
    let (ci_key, ci_public) = keygen(&sandbox, "ci-key");
    let signers = allowed(&sandbox, "ci-bot", &ci_public);
    let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
    let tree = tree.trim();
    sandbox.hpp_in(&sandbox.root, &crate::harness::START).ok();
    // A failed CI run imports as failed evidence, which the gate refuses.
    let red = ci_result(&sandbox, &python, &ci_key, tree, "FAILED");
    let report = import(&sandbox, &red, "ci-red", &signers).json(0);
    assert_eq!(report["imported"][0]["verdict"], "failed", "{report}");
    let run = append(
        &sandbox,
        &["--type", "evidence_recorded", "--evidence", "ci-red"],
    );
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("did not pass"), "{run}");
    // A passed one, signed by a key the allowed signers list, satisfies it.
    let green = ci_result(&sandbox, &python, &ci_key, tree, "PASSED");
    let report = import(&sandbox, &green, "ci", &signers).json(0);
    let imported = &report["imported"][0];
    assert_eq!(imported["signer"], "ci-bot", "{report}");
    assert_eq!(imported["tree"], tree, "{report}");
    let verified = sandbox
        .hpp([
            "evidence",
            "verify",
            "ci",
            "--allowed-signers",
            &signers,
            "--json",
        ])
        .json(0);
    assert_eq!(verified["signature"]["status"], "verified", "{verified}");
    append(
        &sandbox,
        &["--type", "evidence_recorded", "--evidence", "ci"],
    )
    .ok();
}

#[test]
fn control_an_unknown_key_a_tampered_result_or_another_tree_does_not_pass() {
    let Some(python) = python() else { return };
    let (sandbox, _, _) = signed_repo("ed25519");
    let (ci_key, ci_public) = keygen(&sandbox, "ci-key");
    let (stranger, _) = keygen(&sandbox, "stranger-key");
    let signers = allowed(&sandbox, "ci-bot", &ci_public);
    let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
    // A key the allowed signers do not list.
    let theirs = ci_result(&sandbox, &python, &stranger, tree.trim(), "PASSED");
    let reason = import(&sandbox, &theirs, "ci", &signers).refused();
    assert!(reason.contains("signature does not verify"), "{reason}");
    // A FAILED result restated as PASSED under the CI's signature.
    let red = ci_result(&sandbox, &python, &ci_key, tree.trim(), "FAILED");
    let line = std::fs::read_to_string(&red).expect("readable");
    let forged = sandbox.path("forged.jsonl");
    std::fs::write(
        &forged,
        tampered(line.trim(), "/predicate/result", json!("PASSED")),
    )
    .expect("writable");
    let reason = import(&sandbox, &forged, "ci", &signers).refused();
    assert!(reason.contains("signature does not verify"), "{reason}");
    // Without signers, nothing says whose key it is.
    let green = ci_result(&sandbox, &python, &ci_key, tree.trim(), "PASSED");
    let file = green.to_str().expect("UTF-8");
    let reason = sandbox
        .hpp(["evidence", "import", "--format", "in-toto", file])
        .refused();
    assert!(
        reason.contains("needs to know whose key signed it"),
        "{reason}"
    );
    // A passed result of an older tree is stale once the work changes.
    import(&sandbox, &green, "ci", &signers).json(0);
    sandbox.hpp_in(&sandbox.root, &crate::harness::START).ok();
    std::fs::write(sandbox.root.join("README"), "changed\n").expect("writable");
    let run = append(
        &sandbox,
        &["--type", "evidence_recorded", "--evidence", "ci"],
    );
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("run it again on this tree"), "{run}");
}

#[test]
fn an_exported_bundle_imports_back_with_its_command() {
    let (sandbox, key, public) = signed_repo("ed25519");
    evidence(&sandbox, "unit", Some(&key), "true", 0);
    let exported = sandbox.hpp(["evidence", "export", "unit"]).ok();
    let file = sandbox.path("unit.intoto.jsonl");
    std::fs::write(&file, exported).expect("writable");
    let signers = allowed(&sandbox, "ci-bot", &public);
    let report = import(&sandbox, &file, "unit-again", &signers).json(0);
    let record_ref = report["imported"][0]["ref"].as_str().expect("a ref");
    let record: Value =
        serde_json::from_str(&sandbox.git(["show", &format!("{record_ref}:record.json")]))
            .expect("JSON");
    assert_eq!(record["command"], json!(["sh", "-c", "true"]));
    assert_eq!(record["signer"], "ci-bot");
    assert_eq!(record["verdict"], "passed");
}
