//! Coming from the Python harness (`hpp` 2.11): its own manifest shape is read, and an event
//! appended here under it is the line the reference writes, byte for byte (the fixed lines below
//! were written by `hpp event append` 2.11.1 with the same data).

use assert_fs::prelude::*;
use serde_json::Value;

use crate::harness::Sandbox;

/// The lines `hpp event append` 2.11.1 wrote for the two appends of
/// [`appends_under_the_reference_manifest_write_the_reference_lines`]: integers past 64 bits kept,
/// floats in Python's repr.
const REFERENCE_LINES: &str = concat!(
    r#"{"data":{"big":123456789012345678901234567890,"huge":1e+16,"maker":"agent-a","ratio":1e-05,"tiny":1e-07,"whole":100000.0,"work":"W-1"},"id":"event:1","prev_sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","seq":1,"type":"work_started"}"#,
    "\n",
    r#"{"data":{"neg":-0.0,"score":2.5,"zero":0},"id":"event:2","prev_sha256":"12ef8d980c900cf8f17cf8e45a9c1777d3e8980102c916dc4bac0f86ec40c053","seq":2,"type":"evidence_recorded"}"#,
    "\n",
);

/// A manifest in the reference's protocol-2.1 shape: ours with the loop block cut to what the
/// reference's has (`initial` and `transitions`: no `states`, `next_step` or `gates`).
fn reference_shaped(sandbox: &Sandbox) -> String {
    let ours: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json"))
            .expect("the built-in manifest"),
    )
    .expect("JSON");
    let mut theirs = ours.clone();
    let block = theirs["loop"].as_object_mut().expect("a loop block");
    for key in ["states", "next_step", "gates"] {
        block.remove(key);
    }
    let path = sandbox.path("reference.manifest.json");
    std::fs::write(&path, theirs.to_string()).expect("writable");
    path.to_str().expect("UTF-8").to_owned()
}

#[test]
fn the_reference_manifest_shape_is_read_wherever_a_manifest_is() {
    let sandbox = Sandbox::repo();
    let manifest = reference_shaped(&sandbox);
    let m = ["--manifest", manifest.as_str()];
    let status = sandbox
        .hpp_in(&sandbox.root, &[&["status", "--json"][..], &m].concat())
        .json(0);
    assert_eq!(status["state"], "planned");
    assert_eq!(
        status["next_step"], "start work",
        "the reference's own step"
    );
    sandbox
        .hpp_in(&sandbox.root, &[&["doctor"][..], &m].concat())
        .ok();
    sandbox
        .hpp_in(
            &sandbox.root,
            &[&["graph", "--view", "capability"][..], &m].concat(),
        )
        .ok();
    sandbox
        .hpp_in(
            &sandbox.root,
            &[
                &["install", "--host", "claude-code", "--bundle", "solo"][..],
                &m,
            ]
            .concat(),
        )
        .ok();
    let appended = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                &["event", "append", "--type", "work_started", "--json"][..],
                &m,
            ]
            .concat(),
        )
        .json(0);
    assert_eq!(appended["next_step"], "record fresh evidence", "{appended}");
}

#[test]
fn appends_under_the_reference_manifest_write_the_reference_lines() {
    let sandbox = Sandbox::repo();
    let manifest = reference_shaped(&sandbox);
    for (kind, data) in [
        (
            "work_started",
            r#"{"work":"W-1","maker":"agent-a","ratio":0.00001,"big":123456789012345678901234567890,"tiny":1e-7,"huge":1e16,"whole":1E5}"#,
        ),
        (
            "evidence_recorded",
            r#"{"score":2.50,"neg":-0.0,"zero":-0}"#,
        ),
    ] {
        sandbox
            .hpp_in(
                &sandbox.root,
                &[
                    "event",
                    "append",
                    "--manifest",
                    &manifest,
                    "--loop",
                    "ref",
                    "--type",
                    kind,
                    "--data",
                    data,
                ],
            )
            .ok();
    }
    let exported = sandbox
        .hpp_in(
            &sandbox.root,
            &["event", "export", "--manifest", &manifest, "--loop", "ref"],
        )
        .ok();
    assert_eq!(exported, REFERENCE_LINES);
}

#[test]
fn control_a_loop_block_without_transitions_is_still_refused() {
    let sandbox = Sandbox::repo();
    let manifest = reference_shaped(&sandbox);
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("written")).expect("JSON");
    value["loop"]
        .as_object_mut()
        .expect("a loop block")
        .remove("transitions");
    std::fs::write(&manifest, value.to_string()).expect("writable");
    let reason = sandbox
        .hpp_in(&sandbox.root, &["status", "--manifest", &manifest])
        .refused();
    assert!(
        reason.contains("transitions must be a non-empty list"),
        "{reason}"
    );
}

/// Records `hpp evidence run` 2.11.1 wrote: a passed run whose artifact `out/r.txt` held "ok\n",
/// and a run that exited 3.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/python-harness");
const PASSED: &str = "smoke-20261203T104513Z.json";
const FAILED: &str = "broken-20261203T104710Z.json";

/// A repository holding the reference's two records where it wrote them, and the artifact.
fn with_reference_records() -> Sandbox {
    let sandbox = Sandbox::repo();
    let dir = sandbox.root.join(".hpp/evidence");
    std::fs::create_dir_all(&dir).expect("writable");
    for name in [PASSED, FAILED] {
        std::fs::copy(format!("{FIXTURES}/{name}"), dir.join(name)).expect("a fixture");
    }
    std::fs::create_dir_all(sandbox.root.join("out")).expect("writable");
    std::fs::write(sandbox.root.join("out/r.txt"), "ok\n").expect("writable");
    sandbox
}

#[test]
fn the_references_evidence_records_import_with_their_provenance_and_verify() {
    let sandbox = with_reference_records();
    // In place, by the reference's rules, as `hpp evidence verify RECORD` reads them.
    let passed = format!(".hpp/evidence/{PASSED}");
    let failed = format!(".hpp/evidence/{FAILED}");
    let in_place = sandbox
        .hpp_in(&sandbox.root, &["evidence", "verify", &passed, "--json"])
        .json(0);
    assert_eq!(in_place["status"], "valid");
    let not_evidence = sandbox
        .hpp_in(&sandbox.root, &["evidence", "verify", &failed, "--json"])
        .json(1);
    assert_eq!(not_evidence["status"], "not-evidence");

    let imported = sandbox
        .hpp_in(
            &sandbox.root,
            &["evidence", "import", &passed, &failed, "--json"],
        )
        .json(0);
    let refs: Vec<&str> = imported["imported"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|i| i["ref"].as_str().expect("a ref"))
        .collect();
    assert_eq!(
        refs,
        [
            "refs/hpp/evidence/smoke-20261203T104513Z",
            "refs/hpp/evidence/broken-20261203T104710Z"
        ]
    );
    assert_eq!(imported["imported"][1]["status"], "not-evidence");
    // The exact bytes are kept, and where they came from.
    let kept = sandbox.git([
        "show",
        "refs/hpp/evidence/smoke-20261203T104513Z:record.json",
    ]);
    let original = std::fs::read_to_string(format!("{FIXTURES}/{PASSED}")).expect("a fixture");
    assert_eq!(format!("{kept}\n"), original);
    let provenance: Value = serde_json::from_str(&sandbox.git([
        "show",
        "refs/hpp/evidence/smoke-20261203T104513Z:imported.json",
    ]))
    .expect("JSON");
    assert_eq!(provenance["schema"], "hpp.evidence-import/v1");
    assert_eq!(provenance["source"], passed.as_str());
    assert!(provenance["not_carried"].to_string().contains("snapshot"));
    // Verified from refs by the same rules; importing again changes nothing.
    let verified = sandbox
        .hpp_in(&sandbox.root, &["evidence", "verify", "smoke", "--json"])
        .json(0);
    assert_eq!(verified["status"], "valid", "{verified}");
    let again = sandbox
        .hpp_in(&sandbox.root, &["evidence", "import", &passed, "--json"])
        .json(0);
    assert_eq!(again["imported"][0]["created"], false);
}

#[test]
fn control_an_edited_record_or_a_changed_artifact_is_not_imported() {
    let sandbox = with_reference_records();
    let passed = format!(".hpp/evidence/{PASSED}");
    std::fs::write(sandbox.root.join("out/r.txt"), "changed\n").expect("writable");
    let reason = sandbox
        .hpp_in(&sandbox.root, &["evidence", "import", &passed])
        .refused();
    assert!(
        reason.contains("1 artifact(s) changed since the run"),
        "{reason}"
    );
    std::fs::write(sandbox.root.join("out/r.txt"), "ok\n").expect("writable");
    let path = sandbox.root.join(&passed);
    let text = std::fs::read_to_string(&path).expect("the record");
    std::fs::write(
        &path,
        text.replace("\"exit_code\": 0", "\"exit_code\": 0, \"note\": 1"),
    )
    .expect("writable");
    let reason = sandbox
        .hpp_in(&sandbox.root, &["evidence", "import", &passed])
        .refused();
    assert!(
        reason.contains("the record was edited after it was written"),
        "{reason}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "nothing was imported");
}

/// Attestations `hpp attest create` 2.11.1 wrote in the repository [`with_reference_attestations`]
/// builds (the same commits, byte for byte): `review:001` approved, unsigned; `review:002`
/// approved, signed by checker-b, whose public key is in the allowed-signers fixture.
const ATTESTED: &str = "attestation-review.json";
const ATTESTED_SIGNED: &str = "attestation-review-signed.json";
const ALLOWED: &str = "attestation-allowed-signers";

/// The repository the reference attested, rebuilt: the harness's first commit, then `.gitignore`
/// (`.hpp/`), `SPEC.md`, `src/app.txt` and a symlink committed, the origin the reference hashed,
/// an untracked `notes.txt`, and the two attestation files where the reference wrote them.
fn with_reference_attestations() -> Sandbox {
    let sandbox = Sandbox::repo();
    for (path, text) in [
        (".gitignore", ".hpp/\n"),
        ("SPEC.md", "# Spec\n\nThe tool greets.\n"),
        ("src/app.txt", "greet = \"hello\"\n"),
    ] {
        sandbox.child(path).write_str(text).expect("writable");
    }
    std::os::unix::fs::symlink("SPEC.md", sandbox.root.join("spec-link")).expect("a symlink");
    sandbox.git(["add", ".gitignore", "SPEC.md", "src/app.txt", "spec-link"]);
    sandbox.git(["commit", "-q", "-m", "work"]);
    sandbox.git([
        "config",
        "remote.origin.url",
        "https://example.invalid/team/demo.git",
    ]);
    assert_eq!(
        sandbox.git(["rev-parse", "HEAD"]),
        "247f9c2c0fadde1d0b45bc6bece59a4cd550b36c",
        "the commit the reference attested"
    );
    sandbox
        .child("notes.txt")
        .write_str("draft, not committed\n")
        .expect("writable");
    let dir = sandbox.root.join(".hpp/attestations");
    std::fs::create_dir_all(&dir).expect("writable");
    for name in [ATTESTED, ATTESTED_SIGNED] {
        std::fs::copy(format!("{FIXTURES}/{name}"), dir.join(name)).expect("a fixture");
    }
    sandbox
}

#[test]
fn the_references_attestations_import_bound_to_the_tree_they_attested() {
    let sandbox = with_reference_attestations();
    let file = format!(".hpp/attestations/{ATTESTED}");
    let imported = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", &file, "--json"])
        .json(0);
    let item = &imported["imported"][0];
    assert_eq!(item["created"], true);
    assert_eq!(item["verdict"], "approved");
    assert_eq!(item["mismatches"], serde_json::json!([]), "{imported}");
    let reference = item["ref"].as_str().expect("a ref");
    // The workspace as it is now verifies by that record alone, and the pre-push gate agrees.
    let verified = sandbox
        .hpp_in(&sandbox.root, &["attest", "verify", "--json"])
        .json(0);
    assert_eq!(verified["status"], "valid");
    assert_eq!(verified["attestation"], reference);
    assert_eq!(verified["tree"], item["tree"]);
    // Its exact bytes are kept, with where they came from and what they cannot carry.
    let kept = sandbox.git(["show", &format!("{reference}:attestation.json")]);
    let original = std::fs::read_to_string(format!("{FIXTURES}/{ATTESTED}")).expect("a fixture");
    assert_eq!(format!("{kept}\n"), original);
    let provenance: Value =
        serde_json::from_str(&sandbox.git(["show", &format!("{reference}:imported.json")]))
            .expect("JSON");
    assert_eq!(provenance["schema"], "hpp.attestation-import/v1");
    assert_eq!(provenance["source"], file.as_str());
    assert!(provenance["not_carried"].to_string().contains("created_at"));
    // Importing again changes nothing.
    let again = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", &file, "--json"])
        .json(0);
    assert_eq!(again["imported"][0]["created"], false);
    assert_eq!(again["imported"][0]["ref"], reference);
    // Change one attested byte: the workspace is no longer what was attested.
    sandbox
        .child("notes.txt")
        .write_str("edited\n")
        .expect("writable");
    let blocked = sandbox
        .hpp_in(&sandbox.root, &["attest", "verify", "--json"])
        .json(2);
    assert_eq!(blocked["status"], "blocked");
}

#[test]
fn a_signed_reference_attestation_verifies_its_embedded_signature_after_import() {
    let sandbox = with_reference_attestations();
    let allowed = format!("{FIXTURES}/{ALLOWED}");
    let file = format!(".hpp/attestations/{ATTESTED_SIGNED}");
    let imported = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "attest",
                "import",
                &file,
                "--allowed-signers",
                &allowed,
                "--require-signed",
                "--json",
            ],
        )
        .json(0);
    assert_eq!(imported["imported"][0]["mismatches"], serde_json::json!([]));
    let verified = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "attest",
                "verify",
                "--allowed-signers",
                &allowed,
                "--require-signed",
                "--json",
            ],
        )
        .json(0);
    assert_eq!(verified["checked"], "signature verified (checker-b)");
    // The unsigned one does not pass where a signature is required.
    let unsigned = format!(".hpp/attestations/{ATTESTED}");
    let reason = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "attest",
                "import",
                &unsigned,
                "--allowed-signers",
                &allowed,
                "--require-signed",
            ],
        )
        .refused();
    assert!(reason.contains("(signature)"), "{reason}");
}

#[test]
fn an_imported_attestation_verifies_from_a_plain_clone() {
    let sandbox = with_reference_attestations();
    let file = format!(".hpp/attestations/{ATTESTED}");
    let imported = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", &file, "--json"])
        .json(0);
    let reference = imported["imported"][0]["ref"]
        .as_str()
        .expect("a ref")
        .to_owned();
    let remote = sandbox.path("remote.git");
    let remote = remote.to_str().expect("UTF-8");
    sandbox.git(["init", "-q", "--bare", remote]);
    sandbox.git(["push", "-q", remote, "main", "refs/hpp/*:refs/hpp/*"]);
    let clone = sandbox.path("clone");
    let clone = clone.to_str().expect("UTF-8");
    sandbox.git(["clone", "-q", remote, clone]);
    sandbox.git_in(
        std::path::Path::new(clone),
        &["fetch", "-q", "origin", "refs/hpp/*:refs/hpp/*"],
    );
    let verified = sandbox
        .hpp_in(
            std::path::Path::new(clone),
            &["attest", "verify", &reference, "--json"],
        )
        .json(0);
    assert_eq!(verified["status"], "valid", "{verified}");
}

#[test]
fn control_a_reference_attestation_the_workspace_no_longer_matches_is_not_imported() {
    let sandbox = with_reference_attestations();
    let file = format!(".hpp/attestations/{ATTESTED}");
    // One attested byte changed.
    sandbox
        .child("src/app.txt")
        .write_str("greet = \"bye\"\n")
        .expect("writable");
    let reason = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", &file])
        .refused();
    assert!(reason.contains("(snapshot_digest)"), "{reason}");
    assert!(reason.contains("src/app.txt"), "{reason}");
    sandbox.git(["checkout", "-q", "--", "src/app.txt"]);
    // HEAD moved: the reference binds HEAD.
    sandbox.git(["commit", "-q", "--allow-empty", "-m", "later"]);
    let reason = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", &file])
        .refused();
    assert!(reason.contains("(base_commit)"), "{reason}");
    // Not one of the reference's attestations at all.
    let reason = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", "SPEC.md"])
        .refused();
    assert!(
        reason.contains("not an hpp.evidence-attestation/v1"),
        "{reason}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "nothing was imported");
}

/// The reference's unsigned `review:001` record, signed (as the reference embeds a signature)
/// by a fresh key of principal `signer`; returns the record's path in the workspace and an
/// allowed-signers file naming that key.
fn signed_by(sandbox: &Sandbox, signer: &str) -> (String, String) {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{ATTESTED}")).expect("a fixture");
    let mut rec: serde_json::Map<String, Value> = serde_json::from_str(&text).expect("JSON");
    let bytes = hpp_core::record::canonical_json(&Value::Object(rec.clone()));
    let (key, public) = crate::harness::keygen(sandbox, signer);
    let message = sandbox.path(&format!("{signer}.msg"));
    std::fs::write(&message, &bytes).expect("writable");
    let out = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-q", "-Y", "sign", "-n", "hpp", "-f"])
        .arg(&key)
        .arg(&message)
        .output()
        .expect("ssh-keygen runs");
    assert!(
        out.status.success(),
        "{}",
        crate::harness::Run::from_output(&out)
    );
    let armored =
        std::fs::read_to_string(format!("{}.sig", message.display())).expect("a signature");
    rec.insert(
        "signature".into(),
        serde_json::json!({
            "namespace": "hpp",
            "scheme": "sshsig",
            "sha256": hpp_core::record::sha256_hex(&bytes),
            "signature": armored,
            "signer": signer,
        }),
    );
    let file = format!(".hpp/attestations/signed-by-{signer}.json");
    std::fs::write(
        sandbox.root.join(&file),
        serde_json::to_string_pretty(&rec).expect("JSON"),
    )
    .expect("writable");
    let allowed = sandbox.path(&format!("{signer}.allowed"));
    std::fs::write(&allowed, format!("{signer} {public}\n")).expect("writable");
    (file, allowed.to_str().expect("UTF-8").to_owned())
}

#[test]
fn control_a_reference_attestation_signed_by_someone_but_its_checker_is_refused_not_imported() {
    let sandbox = with_reference_attestations();
    for signer in ["maker-a", "reviewer-z"] {
        let (file, allowed) = signed_by(&sandbox, signer);
        // By the reference's rules its signature holds: `attest verify FILE` says so.
        let in_place = sandbox
            .hpp_in(
                &sandbox.root,
                &[
                    "attest",
                    "verify",
                    &file,
                    "--allowed-signers",
                    &allowed,
                    "--json",
                ],
            )
            .json(0);
        assert_eq!(in_place["signature"]["status"], "verified", "{in_place}");
        let reason = sandbox
            .hpp_in(
                &sandbox.root,
                &["attest", "import", &file, "--allowed-signers", &allowed],
            )
            .refused();
        assert!(reason.contains("(signer)"), "{reason}");
        assert!(reason.contains(&format!("signed by {signer}")), "{reason}");
        assert_eq!(sandbox.hpp_refs(), "", "nothing was written for {signer}");
    }
    // The checker's own signature is imported and counts.
    let (file, allowed) = signed_by(&sandbox, "checker-b");
    let imported = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "attest",
                "import",
                &file,
                "--allowed-signers",
                &allowed,
                "--json",
            ],
        )
        .json(0);
    assert_eq!(imported["imported"][0]["mismatches"], serde_json::json!([]));
}

#[test]
fn control_a_forged_import_bound_to_another_tree_does_not_verify() {
    let sandbox = with_reference_attestations();
    let file = format!(".hpp/attestations/{ATTESTED}");
    let imported = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", &file, "--json"])
        .json(0);
    let reference = imported["imported"][0]["ref"].as_str().expect("a ref");
    // Someone who can write refs rebinds the record to the workspace after an edit: the same
    // record, the new snapshot tree beside it, under the new tree's name.
    sandbox
        .child("src/app.txt")
        .write_str("greet = \"bye\"\n")
        .expect("writable");
    sandbox.rebind_to_workspace(reference);
    let verified = sandbox
        .hpp_in(&sandbox.root, &["attest", "verify", "--json"])
        .json(2);
    assert_eq!(verified["status"], "blocked");
    assert!(
        verified["mismatches"]
            .to_string()
            .contains("snapshot_digest"),
        "{verified}"
    );
}

#[test]
fn a_reference_attestation_file_verifies_in_place_by_its_own_rules() {
    let sandbox = with_reference_attestations();
    let allowed = format!("{FIXTURES}/{ALLOWED}");
    let file = format!(".hpp/attestations/{ATTESTED_SIGNED}");
    let valid = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "attest",
                "verify",
                &file,
                "--allowed-signers",
                &allowed,
                "--json",
            ],
        )
        .json(0);
    assert_eq!(valid["status"], "valid", "{valid}");
    assert_eq!(valid["signature"]["status"], "verified");
    assert_eq!(
        valid["base_commit"],
        "247f9c2c0fadde1d0b45bc6bece59a4cd550b36c"
    );
    assert_eq!(sandbox.hpp_refs(), "", "judged in place, nothing stored");
}

#[test]
fn control_a_reference_attestation_file_of_another_workspace_is_blocked_in_place() {
    let sandbox = with_reference_attestations();
    let file = format!(".hpp/attestations/{ATTESTED}");
    std::fs::remove_file(sandbox.root.join("notes.txt")).expect("removable");
    let blocked = sandbox
        .hpp_in(&sandbox.root, &["attest", "verify", &file, "--json"])
        .json(2);
    assert_eq!(blocked["status"], "blocked");
    assert_eq!(
        blocked["mismatches"],
        serde_json::json!(["snapshot_digest"])
    );
    assert!(
        blocked["detail"]
            .as_str()
            .is_some_and(|d| d.contains("notes.txt")),
        "{blocked}"
    );
}
