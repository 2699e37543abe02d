//! `git hpp module checksums` and the doctor's inventory check: plan first, `--apply` writes,
//! `--check` exits 2 when out of date, and a changed, missing or unlisted file, an escaping
//! path or an empty inventory makes the doctor exit 2.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::Sandbox;

/// The manifest of this repository.
pub const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json");

/// Builds a distribution beside the sandbox: this repository's manifest and, for each module,
/// its hook scripts and one skill, without CHECKSUMS.txt. Returns its directory.
pub fn distribution(sandbox: &Sandbox) -> PathBuf {
    let dist = sandbox.path("dist");
    std::fs::create_dir_all(&dist).unwrap();
    let text = std::fs::read_to_string(MANIFEST).unwrap();
    std::fs::write(dist.join("hpp.manifest.json"), &text).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    for module in value["modules"].as_array().unwrap() {
        let id = module["id"].as_str().unwrap();
        let dir = dist.join(module["path"].as_str().unwrap());
        write(
            &dir.join(format!("skills/{id}/SKILL.md")),
            &format!("# {id}\n"),
        );
        for hook in value["hooks"].as_array().unwrap() {
            if hook["module"] == id {
                let script = hook["script"].as_str().unwrap();
                write(
                    &dir.join(script),
                    &format!("#!/bin/sh\n# {script}\nexit 0\n"),
                );
            }
        }
    }
    dist
}

/// Builds a distribution and writes every CHECKSUMS.txt with the command under test.
pub fn sealed_distribution(sandbox: &Sandbox) -> PathBuf {
    let dist = distribution(sandbox);
    let manifest = dist.join("hpp.manifest.json");
    sandbox
        .hpp_in(
            &dist,
            &[
                "module",
                "checksums",
                "--manifest",
                manifest.to_str().unwrap(),
                "--apply",
            ],
        )
        .ok();
    dist
}

/// Runs `git hpp ARGS --manifest <dist>/hpp.manifest.json` in the distribution.
pub fn in_dist(sandbox: &Sandbox, dist: &Path, args: &[&str]) -> crate::harness::Run {
    let manifest = dist.join("hpp.manifest.json");
    let mut all = args.to_vec();
    all.push("--manifest");
    all.push(manifest.to_str().unwrap());
    sandbox.hpp_in(dist, &all)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn checksums(sandbox: &Sandbox, dist: &Path, extra: &[&str]) -> crate::harness::Run {
    let mut args = vec!["module", "checksums"];
    args.extend_from_slice(extra);
    in_dist(sandbox, dist, &args)
}

#[test]
fn checksums_plan_writes_nothing_and_apply_writes_sorted_two_space_lines() {
    let sandbox = Sandbox::empty();
    let dist = distribution(&sandbox);
    let plan = checksums(&sandbox, &dist, &["modules/lane-kit"]).ok();
    assert!(plan.contains("modules/lane-kit: would-write"), "{plan}");
    assert!(plan.contains("(plan only"), "{plan}");
    assert!(!dist.join("modules/lane-kit/CHECKSUMS.txt").exists());

    checksums(&sandbox, &dist, &["modules/lane-kit", "--apply"]).ok();
    let text = std::fs::read_to_string(dist.join("modules/lane-kit/CHECKSUMS.txt")).unwrap();
    let paths: Vec<&str> = text.lines().map(|l| &l[66..]).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    assert!(paths.contains(&"skills/lane-kit/SKILL.md"), "{text}");
    for line in text.lines() {
        assert_eq!(&line[64..66], "  ", "{line}");
    }
    let again = checksums(&sandbox, &dist, &["modules/lane-kit", "--json"]).json(0);
    assert_eq!(again["modules"][0]["status"], "up-to-date");
}

#[test]
fn without_dirs_every_module_of_the_manifest_is_covered() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let doc = checksums(&sandbox, &dist, &["--check", "--json"]).json(0);
    assert_eq!(doc["modules"].as_array().unwrap().len(), 5);
    let doctor = in_dist(&sandbox, &dist, &["doctor", "--json"]).json(0);
    assert_eq!(doctor["distribution"]["status"], "ok");
    assert_eq!(doctor["distribution"]["checked"], true);
}

#[test]
fn control_a_changed_file_is_out_of_date_and_fails_the_doctor() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    write(
        &dist.join("modules/operator-kit/hooks/policy-gate.sh"),
        "#!/bin/sh\nexit 2\n",
    );
    let out = checksums(&sandbox, &dist, &["--check"]).exit(2).stdout;
    assert!(out.contains("modules/operator-kit: out-of-date"), "{out}");
    let doctor = in_dist(&sandbox, &dist, &["doctor"]).exit(2).stdout;
    assert!(
        doctor.contains("does not verify: changed: hooks/policy-gate.sh"),
        "{doctor}"
    );
}

#[test]
fn an_unlisted_file_a_missing_script_and_a_missing_inventory_are_reported() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    write(&dist.join("modules/lane-kit/extra.txt"), "surprise\n");
    let doctor = in_dist(&sandbox, &dist, &["doctor"]).exit(2).stdout;
    assert!(doctor.contains("unlisted: extra.txt"), "{doctor}");
    std::fs::remove_file(dist.join("modules/lane-kit/extra.txt")).unwrap();
    std::fs::remove_file(dist.join("modules/gotcha-memory/hooks/gotcha-record.sh")).unwrap();
    let doctor = in_dist(&sandbox, &dist, &["doctor"]).exit(2).stdout;
    assert!(
        doctor.contains("hook script modules/gotcha-memory/hooks/gotcha-record.sh is missing"),
        "{doctor}"
    );
    assert!(
        doctor.contains("missing: hooks/gotcha-record.sh"),
        "{doctor}"
    );
    let other = Sandbox::empty();
    let unsealed = distribution(&other);
    let out = in_dist(&other, &unsealed, &["doctor"]).exit(1).stdout;
    assert!(out.contains("CHECKSUMS.txt is missing"), "{out}");
}

#[test]
fn an_escaping_path_or_an_empty_inventory_fails() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let lane = dist.join("modules/lane-kit/CHECKSUMS.txt");
    std::fs::write(
        &lane,
        format!("{}  ../operator-kit/hooks/policy-gate.sh\n", "0".repeat(64)),
    )
    .unwrap();
    let doctor = in_dist(&sandbox, &dist, &["doctor"]).exit(2).stdout;
    assert!(
        doctor.contains("names a path outside the module: ../operator-kit"),
        "{doctor}"
    );
    std::fs::write(&lane, "\n").unwrap();
    let doctor = in_dist(&sandbox, &dist, &["doctor"]).exit(2).stdout;
    assert!(doctor.contains("CHECKSUMS.txt lists no file"), "{doctor}");
}

#[test]
fn control_checksums_refuses_a_missing_or_empty_directory() {
    let sandbox = Sandbox::empty();
    let reason = sandbox.hpp(["module", "checksums", "nowhere"]).refused();
    assert_eq!(reason, "not a directory: nowhere");
    std::fs::create_dir_all(sandbox.root.join("empty")).unwrap();
    let reason = sandbox.hpp(["module", "checksums", "empty"]).refused();
    assert!(reason.contains("has no file to list"), "{reason}");
}
