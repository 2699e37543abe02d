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
    sandbox.rebind_to_workspace(&reference);
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

// ---- item 2: git-hpp's manifest is one the reference reads -----------------------------------

/// This repository's top level, where the manifest, `installers/` and `modules/` are.
const PRODUCT: &str = env!("CARGO_MANIFEST_DIR");

/// Copies `rel` (a file or a directory) from this repository into the sandbox's worktree.
fn copy_in(sandbox: &Sandbox, rel: &str) {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        if from.is_dir() {
            std::fs::create_dir_all(to).expect("writable");
            for entry in std::fs::read_dir(from).expect("readable") {
                let entry = entry.expect("an entry");
                copy(&entry.path(), &to.join(entry.file_name()));
            }
        } else {
            std::fs::copy(from, to).expect("copied");
        }
    }
    copy(
        &std::path::Path::new(PRODUCT).join(rel),
        &sandbox.root.join(rel),
    );
}

/// A repository with git-hpp's `hpp.manifest.json` committed at its top level.
fn with_our_manifest() -> Sandbox {
    let sandbox = Sandbox::repo();
    copy_in(&sandbox, "hpp.manifest.json");
    sandbox.git(["add", "hpp.manifest.json"]);
    sandbox.git(["commit", "-q", "-m", "the protocol"]);
    sandbox
}

#[test]
fn both_tools_read_git_hpps_manifest_on_one_repository() {
    const DATA: &str = r#"{"work":"W-1","maker":"agent-a"}"#;
    let bin = reference_or_skip!("beside::both_tools_read_git_hpps_manifest_on_one_repository");
    let sandbox = with_our_manifest();
    let theirs = sandbox.reference_in(&bin, &sandbox.root, &["doctor"]).ok();
    assert!(theirs.starts_with("HPP doctor: ok"), "{theirs}");
    sandbox.hpp_in(&sandbox.root, &["doctor"]).ok();
    let appended: Value = serde_json::from_str(
        &sandbox
            .reference_in(
                &bin,
                &sandbox.root,
                &["event", "append", "--type", "work_started", "--data", DATA],
            )
            .ok(),
    )
    .expect("JSON");
    let ours = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "event",
                "append",
                "--type",
                "work_started",
                "--data",
                DATA,
                "--json",
            ],
        )
        .json(0);
    assert_eq!(appended["state"], "active");
    assert_eq!(ours["state"], appended["state"], "{ours}");
    assert_eq!(ours["next_step"], appended["next_step"], "{ours}");
}

#[test]
fn the_references_init_wires_modules_through_git_hpp_install() {
    let bin = reference_or_skip!("beside::the_references_init_wires_modules_through_git_hpp");
    let sandbox = with_our_manifest();
    copy_in(&sandbox, "installers");
    copy_in(&sandbox, "modules");
    let plan: Value = serde_json::from_str(
        &sandbox
            .reference_in(
                &bin,
                &sandbox.root,
                &["init", "--host", "codex", "--bundle", "solo", "--json"],
            )
            .ok(),
    )
    .expect("JSON");
    let wire = plan["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .find(|s| s["stage"] == "wire-suggest")
        .expect("a wire-suggest stage");
    assert_eq!(wire["detail"]["installer_present"], true, "{wire}");
    let line = wire["detail"]["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .filter_map(Value::as_str)
        .find(|l| l.contains("--kit modules/continuity-kit"))
        .expect("the module's install line")
        .to_owned();
    // The line as printed, run with the reference's own interpreter.
    let args: Vec<&str> = line
        .strip_prefix("python ")
        .expect("a python line")
        .split(' ')
        .collect();
    let python = bin.with_file_name("python");
    let out = sandbox
        .command(python.to_str().expect("UTF-8"), &sandbox.root)
        .args(&args)
        .output()
        .expect("python runs");
    let run = crate::harness::Run::from_output(&out);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        sandbox
            .root
            .join(".agents/hpp/continuity-kit/hooks/turn-checkpoint.sh")
            .is_file(),
        "{run}"
    );
}

#[test]
fn control_a_manifest_naming_only_a_command_is_refused_by_the_reference() {
    let bin = reference_or_skip!("beside::control_a_manifest_naming_only_a_command");
    let sandbox = with_our_manifest();
    let path = sandbox.root.join("hpp.manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the manifest")).expect("JSON");
    manifest["installer"]
        .as_object_mut()
        .expect("an installer")
        .remove("path");
    std::fs::write(&path, manifest.to_string()).expect("writable");
    for args in [
        &["doctor"][..],
        &["event", "append", "--type", "work_started"],
    ] {
        let run = sandbox.reference_in(&bin, &sandbox.root, args);
        assert_eq!(run.code, 2, "{run}");
        assert!(run.stderr.contains("installer needs a path"), "{run}");
    }
    // git-hpp still reads it: a command is how it names its installer.
    sandbox.hpp_in(&sandbox.root, &["doctor"]).ok();
}

// ---- item 3: `evidence verify --json FILE` prints the reference's keys -----------------------

/// Runs `hpp evidence run` (the reference) with `id`, an `out/*.txt` artifact and `script`
/// (`sh -c`), plus `extra` options; returns the record's path.
fn reference_run(
    sandbox: &Sandbox,
    bin: &std::path::Path,
    id: &str,
    script: &str,
    extra: &[&str],
) -> String {
    let run = sandbox.reference_in(
        bin,
        &sandbox.root,
        &[
            &["evidence", "run", "--id", id, "--artifact", "out/*.txt"][..],
            extra,
            &["--", "sh", "-c", script],
        ]
        .concat(),
    );
    let record: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|_| panic!("{run}"));
    record["record_path"].as_str().expect("a path").to_owned()
}

/// Both tools' `evidence verify` of `file` (with `extra` options): (theirs, ours), each exit
/// code checked against the other's.
fn both_verify(
    sandbox: &Sandbox,
    bin: &std::path::Path,
    file: &str,
    extra: &[&str],
) -> (Value, Value) {
    let theirs = sandbox.reference_in(
        bin,
        &sandbox.root,
        &[&["evidence", "verify", file][..], extra].concat(),
    );
    let ours = sandbox.hpp_in(
        &sandbox.root,
        &[&["evidence", "verify", file, "--json"][..], extra].concat(),
    );
    assert_eq!(ours.code, theirs.code, "ours:\n{ours}\ntheirs:\n{theirs}");
    let theirs: Value = serde_json::from_str(&theirs.stdout).expect("JSON");
    let mut ours = ours.json(theirs_code(&theirs));
    assert_eq!(ours["file"], file, "{ours}");
    ours.as_object_mut().expect("an object").remove("file");
    (theirs, ours)
}

/// The exit code both tools give a report's status.
fn theirs_code(report: &Value) -> i32 {
    match report["status"].as_str() {
        Some("valid") => 0,
        Some("not-evidence") => 1,
        _ => 2,
    }
}

#[test]
fn evidence_verify_of_a_reference_file_prints_the_references_report() {
    let bin = reference_or_skip!("beside::evidence_verify_of_a_reference_file_prints");
    let sandbox = Sandbox::repo();
    let passed = reference_run(
        &sandbox,
        &bin,
        "smoke",
        "mkdir -p out && echo a > out/a.txt && echo b > out/b.txt",
        &[],
    );
    let (theirs, ours) = both_verify(&sandbox, &bin, &passed, &[]);
    assert_eq!(theirs["status"], "valid");
    assert_eq!(ours, theirs, "the same keys, the same values");
    for key in ["base_commit", "changed", "id", "missing", "signature"] {
        assert!(ours.get(key).is_some(), "{key} in {ours}");
    }
    let failed = reference_run(&sandbox, &bin, "broken", "exit 3", &[]);
    let (theirs, ours) = both_verify(&sandbox, &bin, &failed, &[]);
    assert_eq!(theirs["status"], "not-evidence");
    assert_eq!(ours, theirs);

    // Signed by the checker: verified with the signers, reported (and not claimed) without.
    let (key, public) = crate::harness::keygen(&sandbox, "checker");
    let allowed = sandbox.path("allowed_signers");
    std::fs::write(&allowed, format!("checker-b {public}\n")).expect("writable");
    let allowed = allowed.to_str().expect("UTF-8");
    let signed = reference_run(
        &sandbox,
        &bin,
        "signed",
        "mkdir -p out && echo a > out/a.txt && echo b > out/b.txt",
        &[
            "--sign-key",
            key.to_str().expect("UTF-8"),
            "--signer",
            "checker-b",
        ],
    );
    let (theirs, ours) = both_verify(&sandbox, &bin, &signed, &[]);
    assert_eq!(theirs["signature"]["status"], "not-verified");
    assert_eq!(ours["signature"]["status"], "not-verified", "{ours}");
    assert_eq!(ours["signature"]["signer"], "checker-b", "{ours}");
    let (theirs, ours) = both_verify(&sandbox, &bin, &signed, &["--allowed-signers", allowed]);
    assert_eq!(theirs["status"], "valid", "{theirs}");
    assert_eq!(ours, theirs, "verified, signer and sha256 alike");
}

#[test]
fn control_a_changed_edited_or_unsigned_reference_file_is_blocked_as_the_reference_blocks_it() {
    let bin = reference_or_skip!("beside::control_a_changed_edited_or_unsigned_reference_file");
    let sandbox = Sandbox::repo();
    let file = reference_run(
        &sandbox,
        &bin,
        "smoke",
        "mkdir -p out && echo a > out/a.txt && echo b > out/b.txt",
        &[],
    );
    // An artifact changed and one gone: named, path by path.
    std::fs::write(sandbox.root.join("out/a.txt"), "changed\n").expect("writable");
    std::fs::remove_file(sandbox.root.join("out/b.txt")).expect("removable");
    let (theirs, ours) = both_verify(&sandbox, &bin, &file, &[]);
    assert_eq!(theirs["status"], "blocked");
    assert_eq!(theirs["changed"], serde_json::json!(["out/a.txt"]));
    assert_eq!(theirs["missing"], serde_json::json!(["out/b.txt"]));
    assert_eq!(ours, theirs);
    // Signers known and the record unsigned: blocked for its signature as well.
    let (key, public) = crate::harness::keygen(&sandbox, "checker");
    drop(key);
    let allowed = sandbox.path("allowed_signers");
    std::fs::write(&allowed, format!("checker-b {public}\n")).expect("writable");
    let allowed = allowed.to_str().expect("UTF-8");
    let (theirs, ours) = both_verify(&sandbox, &bin, &file, &["--allowed-signers", allowed]);
    assert_eq!(theirs["signature"]["status"], "refused");
    assert_eq!(ours["signature"]["status"], "refused", "{ours}");
    assert_eq!(ours["problems"], theirs["problems"], "{ours}");
    // The record edited: blocked before any artifact is read, so none is listed.
    let path = sandbox.root.join(&file);
    let text = std::fs::read_to_string(&path).expect("the record");
    std::fs::write(
        &path,
        text.replace("\"exit_code\": 0", "\"exit_code\": 0, \"x\": 1"),
    )
    .expect("writable");
    let (theirs, ours) = both_verify(&sandbox, &bin, &file, &[]);
    assert_eq!(
        theirs["problems"],
        serde_json::json!(["the record was edited after it was written"])
    );
    assert_eq!(theirs["changed"], serde_json::json!([]));
    assert_eq!(ours, theirs);
}

// ---- item 4: integers of any size in the rulers ---------------------------------------------

/// 10^30 and friends: past 64 bits, as Python's `int` reads them.
const HUGE: &str = "1000000000000000000000000000000";

/// Both tools on the same command, in the same directory: the same exit code and stdout.
fn both_print(sandbox: &Sandbox, bin: &std::path::Path, args: &[&str]) -> String {
    let theirs = sandbox.reference_in(bin, &sandbox.root, args);
    let ours = sandbox.hpp_in(&sandbox.root, args);
    assert_eq!(ours.code, theirs.code, "ours:\n{ours}\ntheirs:\n{theirs}");
    assert_eq!(
        ours.stdout, theirs.stdout,
        "ours:\n{ours}\ntheirs:\n{theirs}"
    );
    ours.stdout
}

#[test]
fn the_rulers_take_integers_of_any_size_as_the_reference_does() {
    let bin = reference_or_skip!("beside::the_rulers_take_integers_of_any_size");
    let sandbox = Sandbox::empty();
    let write = |name: &str, text: String| {
        std::fs::write(sandbox.root.join(name), text).expect("writable");
    };
    write(
        "ctx.json",
        format!(
            r#"[{{"source":"a","priority":{HUGE},"content":"x"}},{{"source":"b","priority":-{HUGE},"content":"y"}},{{"source":"c","priority":-0,"content":"z"}}]"#
        ),
    );
    write(
        "lanes.json",
        r#"[{"id":"a","territory":["src"],"heartbeat_at":99999999999999999950},{"id":"b","territory":["src/x"],"heartbeat_at":5},{"id":"c","territory":["doc"]}]"#.to_owned(),
    );
    write(
        "monitors.json",
        format!(
            r#"[{{"id":"m","target":"t","type":"x","cadence":{HUGE},"freshness":{HUGE},"severity":"s","cost":"c","consumer_gate":"g","last_signal":99999999999999999999}}]"#
        ),
    );
    let compiled = both_print(
        &sandbox,
        &bin,
        &["context", "compile", "--budget", HUGE, "ctx.json"],
    );
    assert!(
        compiled.contains(&format!("\"priority\": {HUGE}")),
        "{compiled}"
    );
    both_print(
        &sandbox,
        &bin,
        &["context", "compile", "--budget", "3", "ctx.json"],
    );
    let lanes = both_print(
        &sandbox,
        &bin,
        &[
            "map",
            "lane",
            "--now",
            "100000000000000000000",
            "lanes.json",
        ],
    );
    assert!(lanes.contains("\"a\": \"alive\""), "{lanes}");
    both_print(
        &sandbox,
        &bin,
        &[
            "map",
            "lane",
            "--now",
            "100000000000000000000",
            "--suspect-after",
            "10",
            "--dead-after",
            HUGE,
            "lanes.json",
        ],
    );
    both_print(
        &sandbox,
        &bin,
        &[
            "map",
            "monitor",
            "--now",
            "100000000000000000000",
            "monitors.json",
        ],
    );
    both_print(
        &sandbox,
        &bin,
        &["map", "context", "--budget", HUGE, "ctx.json"],
    );
}

#[test]
fn control_floats_are_still_not_integers_to_either_tool() {
    let bin = reference_or_skip!("beside::control_floats_are_still_not_integers");
    let sandbox = Sandbox::empty();
    std::fs::write(
        sandbox.root.join("ctx.json"),
        r#"[{"source":"a","priority":1e30,"content":"x"}]"#,
    )
    .expect("writable");
    std::fs::write(
        sandbox.root.join("lanes.json"),
        r#"[{"id":"a","territory":["src"],"heartbeat_at":1e3}]"#,
    )
    .expect("writable");
    for args in [
        &["context", "compile", "--budget", "10", "ctx.json"][..],
        &["map", "lane", "--now", "2000", "lanes.json"],
        &["map", "lane", "--now", &format!("-{HUGE}"), "lanes.json"],
    ] {
        let theirs = sandbox.reference_in(&bin, &sandbox.root, args);
        assert_eq!(theirs.code, 2, "{theirs}");
        let reason = sandbox.hpp_in(&sandbox.root, args).refused();
        // The reference's sentence, sometimes with why after it.
        assert!(
            format!("hpp: {reason}").starts_with(theirs.stderr.trim_end()),
            "ours: {reason}\ntheirs: {theirs}"
        );
    }
}

// ---- item 5: init's hook table, deep event data, doctor's sentence ----------------------------

/// The lines of the section `title` of an `init` report: its heading to the blank line after.
fn section(report: &str, title: &str) -> Vec<String> {
    report
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(title))
        .take_while(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn init_prints_the_references_hook_capabilities_table() {
    let bin = reference_or_skip!("beside::init_prints_the_references_hook_capabilities_table");
    let sandbox = with_our_manifest();
    copy_in(&sandbox, "modules");
    let args = [
        "init",
        "--host",
        "claude-code",
        "--bundle",
        "reliable-coding",
        "--non-interactive",
    ];
    let theirs = sandbox
        .reference_in(
            &bin,
            &sandbox.root,
            &[&args[..], &["--no-animation"]].concat(),
        )
        .ok();
    let ours = sandbox.hpp_in(&sandbox.root, &args).ok();
    let table = section(&theirs, "HOOK CAPABILITIES");
    assert!(table.len() > 2, "{theirs}");
    assert_eq!(section(&ours, "HOOK CAPABILITIES"), table, "{ours}");
    assert!(table.last().is_some_and(|l| l.starts_with("        ")));
    assert!(table.iter().any(|l| l.starts_with("    └ ")), "{table:?}");
}

#[test]
fn control_a_hook_without_capabilities_is_refused_in_the_references_words() {
    let bin = reference_or_skip!("beside::control_a_hook_without_capabilities");
    let sandbox = with_our_manifest();
    let ours: Value = serde_json::from_str(
        &std::fs::read_to_string(sandbox.root.join("hpp.manifest.json")).expect("the manifest"),
    )
    .expect("JSON");
    let mutations: [(&str, Option<Value>); 5] = [
        ("absent", None),
        ("empty", Some(serde_json::json!([]))),
        (
            "blank",
            Some(serde_json::json!(["automatic-permission-gates", ""])),
        ),
        (
            "twice",
            Some(serde_json::json!([
                "automatic-permission-gates",
                "automatic-permission-gates"
            ])),
        ),
        ("unknown", Some(serde_json::json!(["telepathy", "astral"]))),
    ];
    for (name, capabilities) in mutations {
        let mut manifest = ours.clone();
        let hook = manifest["hooks"][0].as_object_mut().expect("a hook");
        match capabilities {
            Some(list) => hook.insert("capabilities".into(), list),
            None => hook.remove("capabilities"),
        };
        let file = format!("{name}.json");
        std::fs::write(sandbox.path(&file), manifest.to_string()).expect("writable");
        let path = sandbox.path(&file);
        let path = path.to_str().expect("UTF-8");
        let theirs = sandbox.reference_in(&bin, &sandbox.root, &["doctor", "--manifest", path]);
        assert_eq!(theirs.code, 2, "{theirs}");
        let sentence = theirs
            .stderr
            .trim_end()
            .strip_prefix("hpp: ")
            .expect("the reference's prefix")
            .to_owned();
        let reason = sandbox
            .hpp_in(&sandbox.root, &["doctor", "--manifest", path])
            .refused();
        assert!(
            reason.ends_with(&sentence),
            "{name}: ours {reason:?}, theirs {sentence:?}"
        );
    }
}

/// `--data` with `levels` arrays nested inside the data object (which is one level more).
fn nested_data(levels: usize) -> String {
    format!(
        r#"{{"work":"W-1","maker":"agent-a","x":{}{}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

#[test]
fn event_data_as_deep_as_every_reader_parses_is_kept() {
    let bin = reference_or_skip!("beside::event_data_as_deep_as_every_reader_parses_is_kept");
    let sandbox = Sandbox::repo();
    let data = nested_data(125);
    sandbox
        .reference_in(
            &bin,
            &sandbox.root,
            &["event", "append", "--type", "work_started", "--data", &data],
        )
        .ok();
    sandbox
        .hpp_in(
            &sandbox.root,
            &["event", "append", "--type", "work_started", "--data", &data],
        )
        .ok();
    // Every reader reads it back: the chain, the export, the status.
    sandbox.hpp_in(&sandbox.root, &["event", "verify"]).ok();
    let line = sandbox.hpp_in(&sandbox.root, &["event", "export"]).ok();
    assert!(line.contains(&"[".repeat(125)), "{line}");
    sandbox.hpp_in(&sandbox.root, &["status"]).ok();
}

#[test]
fn control_event_data_deeper_than_its_readers_parse_is_refused_before_writing() {
    let bin = reference_or_skip!("beside::control_event_data_deeper_than_its_readers_parse");
    let sandbox = Sandbox::repo();
    for levels in [126, 500] {
        let data = nested_data(levels);
        // The reference takes it (up to about 990 levels, then fails with exit 3)...
        sandbox
            .reference_in(
                &bin,
                &sandbox.root,
                &["event", "append", "--type", "work_started", "--data", &data],
            )
            .ok();
        std::fs::remove_dir_all(sandbox.root.join(".hpp")).expect("removable");
        // ...git-hpp refuses what its readers could not read back, and writes nothing.
        let reason = sandbox
            .hpp_in(
                &sandbox.root,
                &["event", "append", "--type", "work_started", "--data", &data],
            )
            .refused();
        assert!(reason.contains("at most 126 are kept"), "{reason}");
        assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
    }
}
