//! Beside the Python harness: one repository, both tools. Teams move one person at a time, so
//! what the reference (`hpp`, PyPI house-party-protocol 2.11.1, installed by
//! [`crate::harness::python`]) writes, git-hpp reads, and the other way round. Each test runs
//! the reference itself; it skips loudly only when PyPI cannot be reached.

use serde_json::Value;

use crate::harness::Sandbox;
use crate::harness::python;

/// Runs the reference, or returns from the test (loudly) when it cannot be installed.
macro_rules! reference_or_skip {
    ($test:expr) => {
        match python::reference($test) {
            Some(bin) => bin,
            None => return,
        }
    };
}

// ---- item 1: `attest import` from where the reference writes --------------------------------

/// A repository the reference was set up in as its README says (`hpp init --apply`, which
/// writes `.hpp/profile.json` and no `.gitignore`), with a committed spec and an attestation
/// `hpp attest create` wrote to `.hpp/a.json`.
fn reference_attested(bin: &std::path::Path) -> Sandbox {
    let sandbox = Sandbox::repo();
    sandbox
        .reference_in(bin, &sandbox.root, &["init", "--apply"])
        .ok();
    assert!(sandbox.root.join(".hpp/profile.json").is_file());
    assert!(!sandbox.root.join(".gitignore").exists(), "no .gitignore");
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\n").expect("writable");
    sandbox.git(["add", "SPEC.md"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    sandbox
        .reference_in(
            bin,
            &sandbox.root,
            &[
                "attest",
                "create",
                "--spec",
                "SPEC.md",
                "--output",
                ".hpp/a.json",
                "--maker",
                "maker-a",
                "--checker",
                "checker-b",
                "--session",
                "review-1",
                "--verdict",
                "approved",
            ],
        )
        .ok();
    sandbox
}

#[test]
fn an_attestation_the_reference_wrote_into_its_own_hpp_dir_imports_and_verifies() {
    let bin = reference_or_skip!("beside::an_attestation_the_reference_wrote_into_its_own_hpp_dir");
    let sandbox = reference_attested(&bin);
    let imported = sandbox
        .hpp_in(
            &sandbox.root,
            &["attest", "import", ".hpp/a.json", "--json"],
        )
        .json(0);
    let item = &imported["imported"][0];
    assert_eq!(item["mismatches"], serde_json::json!([]), "{imported}");
    let reference = item["ref"].as_str().expect("a ref");
    let provenance: Value =
        serde_json::from_str(&sandbox.git(["show", &format!("{reference}:imported.json")]))
            .expect("JSON");
    assert_eq!(provenance["left_out"], ".hpp/a.json", "{provenance}");
    // The workspace as it stands (the attestation file in it) verifies by that record, and both
    // tools agree on it.
    let verified = sandbox
        .hpp_in(&sandbox.root, &["attest", "verify", "--json"])
        .json(0);
    assert_eq!(verified["status"], "valid", "{verified}");
    assert_eq!(verified["attestation"], reference);
    let theirs: Value = serde_json::from_str(
        &sandbox
            .reference_in(&bin, &sandbox.root, &["attest", "verify", ".hpp/a.json"])
            .ok(),
    )
    .expect("JSON");
    assert_eq!(theirs["status"], "valid");
}

#[test]
fn control_only_the_attestation_file_is_left_out_of_the_comparison() {
    let bin = reference_or_skip!("beside::control_only_the_attestation_file_is_left_out");
    let sandbox = reference_attested(&bin);
    // The rest of the reference's .hpp/ was attested: an edit there is refused, as the
    // reference's own verify blocks it.
    let profile = sandbox.root.join(".hpp/profile.json");
    let original = std::fs::read_to_string(&profile).expect("the profile");
    std::fs::write(&profile, format!("{original} ")).expect("writable");
    let reason = sandbox
        .hpp_in(&sandbox.root, &["attest", "import", ".hpp/a.json"])
        .refused();
    assert!(reason.contains("(snapshot_digest)"), "{reason}");
    assert!(reason.contains(".hpp/profile.json"), "{reason}");
    let theirs = sandbox.reference_in(&bin, &sandbox.root, &["attest", "verify", ".hpp/a.json"]);
    assert_ne!(theirs.code, 0, "{theirs}");
    assert_eq!(sandbox.hpp_refs(), "", "nothing was imported");
    std::fs::write(&profile, original).expect("writable");

    // Imported, then the same record rebound to a tree whose left-out path holds other bytes:
    // the path is left out only while it holds the record itself.
    let imported = sandbox
        .hpp_in(
            &sandbox.root,
            &["attest", "import", ".hpp/a.json", "--json"],
        )
        .json(0);
    let reference = imported["imported"][0]["ref"]
        .as_str()
        .expect("a ref")
        .to_owned();
    let own = sandbox.root.join(".hpp/a.json");
    let bytes = std::fs::read_to_string(&own).expect("the attestation");
    std::fs::write(&own, format!("{bytes}\n")).expect("writable");
    let now = sandbox
        .hpp_in(&sandbox.root, &["attest", "verify", "--json"])
        .json(2);
    let tree = now["tree"].as_str().expect("a tree").to_owned();
    let forged_listing: String = sandbox
        .git(["ls-tree", &reference])
        .lines()
        .map(|line| {
            if line.ends_with("\tsnapshot") {
                format!("040000 tree {tree}\tsnapshot\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    let forged_tree = sandbox.git_fed(&["mktree"], &forged_listing);
    let commit = sandbox.git(["commit-tree", &forged_tree, "-m", "forged"]);
    sandbox.git([
        "update-ref",
        &format!("refs/hpp/attestations/{tree}/forged"),
        &commit,
    ]);
    let verified = sandbox
        .hpp_in(&sandbox.root, &["attest", "verify", "--json"])
        .json(2);
    assert!(
        verified["mismatches"]
            .to_string()
            .contains("snapshot_digest"),
        "{verified}"
    );
}
