//! `git hpp evidence mutate`: criterion sensitivity, measured on real temporary repositories
//! with real python3 checks (the examples under examples/criterion-sensitivity/).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::harness::Sandbox;

const EXAMPLES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/criterion-sensitivity"
);
const DIR: &str = "examples/criterion-sensitivity";
const DISCOUNT: &str = "examples/criterion-sensitivity/discount.py";
const WEAK: &str = "examples/criterion-sensitivity/check_weak.py";
const STRONG: &str = "examples/criterion-sensitivity/check_strong.py";
const MUTANTS: &str = "examples/criterion-sensitivity/mutants.json";

/// A repository holding the example, committed, as a user's project would.
fn example_repo() -> Sandbox {
    let sandbox = Sandbox::repo();
    let dir = sandbox.root.join(DIR);
    std::fs::create_dir_all(&dir).expect("the sandbox is writable");
    for name in [
        "discount.py",
        "check_weak.py",
        "check_strong.py",
        "mutants.json",
    ] {
        std::fs::copy(Path::new(EXAMPLES).join(name), dir.join(name)).expect("the example exists");
    }
    sandbox.git(["add", "."]);
    sandbox.git(["commit", "-q", "-m", "the discount example"]);
    sandbox
}

/// Every file under `root` except `.git`, with its bytes: the user's tree as it is now.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("readable") {
            let path = entry.expect("readable").path();
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("readable");
            if meta.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &path, out);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("a link");
                out.insert(rel, target.display().to_string().into_bytes());
            } else {
                out.insert(rel, std::fs::read(&path).expect("readable"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn write(sandbox: &Sandbox, rel: &str, text: &str) {
    let path = sandbox.root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("writable");
    std::fs::write(path, text).expect("writable");
}

fn outcomes(record: &Value) -> BTreeMap<String, String> {
    record["mutants"]
        .as_array()
        .expect("a mutants list")
        .iter()
        .map(|m| {
            (
                m["id"].as_str().expect("an id").to_owned(),
                m["outcome"].as_str().expect("an outcome").to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_weak_check_reports_blind_spots_with_three_survivors_and_exits_1() {
    let sandbox = example_repo();
    let run = sandbox.hpp([
        "evidence",
        "mutate",
        "--id",
        "weak",
        "--generate",
        DISCOUNT,
        "--",
        "python3",
        WEAK,
    ]);
    assert!(
        run.stderr.is_empty(),
        "no progress bar when stderr is not a terminal:\n{run}"
    );
    let record = run.json(1);
    assert_eq!(record["schema"], "hpp.mutation/v1");
    assert_eq!(record["verdict"], "blind-spots");
    assert_eq!(record["clean"]["verdict"], "passed");
    assert_eq!(record["command"], json!(["python3", WEAK]));
    assert_eq!(
        record["survivors"],
        json!([
            format!("{DISCOUNT}:10 >= -> >"),
            format!("{DISCOUNT}:10 10000 -> 10001"),
            format!("{DISCOUNT}:12 > -> >="),
        ])
    );
    assert_eq!(
        record["metrics"],
        json!({"total": 8, "killed": 5, "survived": 3, "not_applied": 0, "errors": 0, "score": 0.625})
    );
    let survived = &record["mutants"][0];
    assert_eq!(
        (&survived["line"], &survived["column"], &survived["outcome"]),
        (&json!(10), &json!(13), &json!("survived"))
    );
    // Stored like evidence: one commit whose tree holds record.json, the printed record.
    let record_ref = record["record_ref"].as_str().expect("a ref");
    assert!(
        record_ref.starts_with("refs/hpp/evidence/weak-"),
        "{record_ref}"
    );
    assert!(sandbox.hpp_refs().contains(record_ref));
    let stored: Value =
        serde_json::from_str(&sandbox.git(["show", &format!("{record_ref}:record.json")]))
            .expect("the stored record is JSON");
    assert_eq!(stored, record);
}

#[test]
fn the_strong_check_is_sensitive_and_exits_0() {
    let sandbox = example_repo();
    let record = sandbox
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "strong",
            "--generate",
            DISCOUNT,
            "--",
            "python3",
            STRONG,
        ])
        .json(0);
    assert_eq!(record["verdict"], "sensitive");
    assert_eq!(record["survivors"], json!([]));
    assert_eq!(record["metrics"]["killed"], 8);
    assert_eq!(record["metrics"]["score"], 1.0);
}

#[test]
fn control_a_criterion_that_fails_on_clean_code_is_no_control_and_runs_no_mutant() {
    let sandbox = example_repo();
    let run = sandbox.hpp([
        "evidence",
        "mutate",
        "--id",
        "broken",
        "--generate",
        DISCOUNT,
        "--",
        "python3",
        "-c",
        "raise SystemExit(3)",
    ]);
    let record = run.json(2);
    assert_eq!(record["verdict"], "no-control");
    assert_eq!(record["clean"]["verdict"], "failed");
    assert_eq!(record["clean"]["exit_code"], 3);
    assert_eq!(record["mutants"], json!([]));
    assert_eq!(record["metrics"]["score"], Value::Null);
    assert!(
        sandbox
            .hpp_refs()
            .contains(record["record_ref"].as_str().expect("a ref"))
    );
}

#[test]
fn the_users_tree_is_never_written_even_by_a_criterion_that_writes() {
    let sandbox = example_repo();
    // Untracked and not ignored: part of the workspace, so it is copied too.
    write(&sandbox, "notes/untracked.txt", "draft\n");
    let before = tree(&sandbox.root);
    let status_before = sandbox.git(["status", "--porcelain", "--ignored"]);
    // The criterion writes beside itself (and python3 writes __pycache__): all in the copy.
    let record = sandbox
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "writer",
            "--generate",
            DISCOUNT,
            "--mutants",
            MUTANTS,
            "--",
            "python3",
            "-c",
            "import subprocess, sys; open('scribble.txt', 'w').write('x'); sys.exit(subprocess.call([sys.executable, 'examples/criterion-sensitivity/check_weak.py']))",
        ])
        .json(1);
    assert_eq!(record["clean"]["verdict"], "passed");
    assert_eq!(tree(&sandbox.root), before, "the user's tree changed");
    assert_eq!(
        sandbox.git(["status", "--porcelain", "--ignored"]),
        status_before
    );
}

#[test]
fn declared_and_generated_mutants_run_together_and_absent_text_is_not_applied() {
    let sandbox = example_repo();
    let record = sandbox
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "both",
            "--mutants",
            MUTANTS,
            "--generate",
            DISCOUNT,
            "--",
            "python3",
            WEAK,
        ])
        .json(1);
    let outcomes = outcomes(&record);
    assert_eq!(outcomes["tier-rate"], "killed");
    assert_eq!(outcomes["flat-amount"], "killed");
    assert_eq!(outcomes["drop-member-test"], "survived");
    assert_eq!(outcomes["gone-since-refactor"], "not-applied");
    assert_eq!(
        record["mutants"][0]["id"], "tier-rate",
        "declared come first"
    );
    let m = &record["metrics"];
    assert_eq!(
        (&m["total"], &m["survived"], &m["not_applied"]),
        (&json!(12), &json!(4), &json!(1))
    );
    assert!(
        record["survivors"]
            .as_array()
            .expect("a list")
            .contains(&json!(format!("{DISCOUNT}:10  and member -> ")))
    );
}

#[test]
fn mutants_that_all_miss_their_text_measure_nothing_and_the_score_is_null() {
    let sandbox = example_repo();
    write(
        &sandbox,
        "stale.json",
        r#"{"schema": "hpp.mutants/v1", "mutants": [
            {"id": "old", "file": "examples/criterion-sensitivity/discount.py", "find": "rate * total", "replace": "rate + total"},
            {"id": "late", "file": "examples/criterion-sensitivity/discount.py", "find": "return", "replace": "yield", "occurrence": 9}
        ]}"#,
    );
    let record = sandbox
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "stale",
            "--mutants",
            "stale.json",
            "--",
            "python3",
            STRONG,
        ])
        .json(1);
    assert_eq!(record["verdict"], "no-mutants");
    assert_eq!(record["metrics"]["not_applied"], 2);
    assert_eq!(record["metrics"]["score"], Value::Null);
}

#[test]
fn a_mutant_the_criterion_cannot_judge_makes_the_run_incomplete() {
    let sandbox = example_repo();
    write(
        &sandbox,
        "check.sh",
        "#!/bin/sh\nexec python3 examples/criterion-sensitivity/check_strong.py\n",
    );
    let status = std::process::Command::new("chmod")
        .args(["+x", "check.sh"])
        .current_dir(&sandbox.root)
        .status()
        .expect("chmod runs");
    assert!(status.success());
    write(
        &sandbox,
        "shebang.json",
        r##"{"schema": "hpp.mutants/v1", "mutants": [
            {"id": "rate", "file": "examples/criterion-sensitivity/discount.py", "find": "// 10", "replace": "// 5"},
            {"id": "no-shell", "file": "check.sh", "find": "#!/bin/sh", "replace": "#!/nonexistent/sh"}
        ]}"##,
    );
    let record = sandbox
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "shebang",
            "--mutants",
            "shebang.json",
            "--",
            "./check.sh",
        ])
        .json(1);
    assert_eq!(record["verdict"], "incomplete");
    let outcomes = outcomes(&record);
    assert_eq!(outcomes["rate"], "killed");
    assert_eq!(outcomes["no-shell"], "error");
    assert_eq!(record["metrics"]["score"], 1.0);
}

#[test]
fn a_mutant_that_hangs_the_criterion_is_killed_by_the_timeout_with_a_note() {
    let sandbox = example_repo();
    write(
        &sandbox,
        "hang.json",
        r#"{"schema": "hpp.mutants/v1", "mutants": [
            {"id": "spin", "file": "examples/criterion-sensitivity/discount.py", "find": "return 0", "replace": "while True: pass"}
        ]}"#,
    );
    let record = sandbox
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "hang",
            "--mutants",
            "hang.json",
            "--timeout",
            "1",
            "--",
            "python3",
            WEAK,
        ])
        .json(0);
    let spin = &record["mutants"][0];
    assert_eq!(spin["outcome"], "killed");
    assert_eq!(spin["exit_code"], Value::Null);
    assert!(spin["note"].as_str().expect("a note").contains("timeout"));
}

#[test]
fn one_job_and_many_jobs_record_the_same_outcomes_in_the_same_order() {
    let sandbox = example_repo();
    let run = |jobs: &str| {
        sandbox
            .hpp([
                "evidence",
                "mutate",
                "--id",
                "jobs",
                "--jobs",
                jobs,
                "--mutants",
                MUTANTS,
                "--generate",
                DISCOUNT,
                "--",
                "python3",
                WEAK,
            ])
            .json(1)
    };
    let (one, four) = (run("1"), run("4"));
    assert_eq!(one["mutants"], four["mutants"]);
    assert_ne!(
        one["record_ref"], four["record_ref"],
        "each run is its own record"
    );
    let zero = sandbox.hpp([
        "evidence",
        "mutate",
        "--id",
        "z",
        "--jobs",
        "0",
        "--generate",
        DISCOUNT,
        "--",
        "true",
    ]);
    assert_eq!(
        zero.refused(),
        "--jobs must be a whole number of at least 1, not \"0\""
    );
}

#[test]
fn from_a_subdirectory_paths_are_relative_to_it_and_the_command_runs_there() {
    let sandbox = example_repo();
    let run = sandbox.hpp_in(
        &sandbox.root.join(DIR),
        &[
            "evidence",
            "mutate",
            "--id",
            "sub",
            "--generate",
            "discount.py",
            "--",
            "python3",
            "check_weak.py",
        ],
    );
    let record = run.json(1);
    assert_eq!(record["survivors"][0], "discount.py:10 >= -> >", "{record}");
}

#[test]
fn ignored_files_are_left_out_of_the_copy_and_untracked_ones_are_in() {
    let sandbox = example_repo();
    write(&sandbox, ".gitignore", "build.log\n");
    write(&sandbox, "build.log", "old\n");
    write(&sandbox, "fixture.txt", "untracked but not ignored\n");
    let record = sandbox
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "ignore",
            "--generate",
            DISCOUNT,
            "--",
            "python3",
            "-c",
            "import os, sys; sys.exit(0 if os.path.exists('fixture.txt') and not os.path.exists('build.log') else 1)",
        ])
        .json(1);
    assert_eq!(record["clean"]["verdict"], "passed");
    assert_eq!(record["verdict"], "blind-spots", "this check reads no code");
}

#[test]
fn control_inputs_are_refused_before_anything_runs_or_is_written() {
    let sandbox = example_repo();
    std::fs::create_dir_all(sandbox.path("elsewhere")).expect("writable");
    std::fs::write(sandbox.path("elsewhere/outside.py"), "x = 1 < 2\n").expect("writable");
    std::os::unix::fs::symlink("discount.py", sandbox.root.join(DIR).join("link.py"))
        .expect("a symlink");
    std::os::unix::fs::symlink(DIR, sandbox.root.join("linked-dir")).expect("a symlink");
    write(&sandbox, "array.json", "[]");
    write(&sandbox, "broken.json", "{");
    write(&sandbox, "notes.txt", "a < b\n");
    let outside = sandbox.path("elsewhere/outside.py").display().to_string();
    let inside = sandbox.root.join(WEAK).display().to_string();
    let tmp_inside = sandbox.root.join("tmp");
    std::fs::create_dir_all(&tmp_inside).expect("writable");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["--", "python3", WEAK],
            "evidence mutate needs --mutants FILE or --generate FILE (or both)".into(),
        ),
        (
            vec!["--mutants", "array.json", "--", "python3", WEAK],
            "array.json must be an hpp.mutants/v1 object with a mutants list".into(),
        ),
        (
            vec!["--mutants", "missing.json", "--", "python3", WEAK],
            "JSON file not found: missing.json".into(),
        ),
        (
            vec!["--mutants", "broken.json", "--", "python3", WEAK],
            "invalid JSON in broken.json: EOF while parsing an object at line 1 column 1".into(),
        ),
        (
            vec!["--generate", DISCOUNT, "--", "python3", WEAK, "--token=s3cr3tvalue99"],
            "the command line looks like it carries a secret; pass it through the environment instead".into(),
        ),
        (
            vec!["--generate", "../elsewhere/outside.py", "--", "python3", WEAK],
            "../elsewhere/outside.py is outside the workspace: give a path relative to the workspace".into(),
        ),
        (
            vec!["--generate", &outside, "--", "python3", WEAK],
            format!("{outside} is outside the workspace: give a path relative to the workspace"),
        ),
        (
            vec!["--generate", "examples/criterion-sensitivity/link.py", "--", "python3", WEAK],
            "examples/criterion-sensitivity/link.py is reached through a symlink (examples/criterion-sensitivity/link.py); mutate the file it points to".into(),
        ),
        (
            vec!["--generate", "linked-dir/discount.py", "--", "python3", WEAK],
            "linked-dir/discount.py is reached through a symlink (linked-dir); mutate the file it points to".into(),
        ),
        (
            vec!["--generate", "notes.txt", "--", "python3", WEAK],
            "notes.txt: --generate reads Python (.py) and Rust (.rs) sources".into(),
        ),
        (
            vec!["--generate", "gone.py", "--", "python3", WEAK],
            "mutant file not found: gone.py".into(),
        ),
        (
            vec!["--generate", ".git/config.py", "--", "python3", WEAK],
            ".git/config.py is under .git, which mutation never touches".into(),
        ),
        (
            vec!["--generate", DISCOUNT, "--", "python3", &inside],
            format!("the command names {inside} by an absolute path inside the workspace; it runs inside a copy, so give paths relative to the workspace"),
        ),
        (
            vec!["--generate", DISCOUNT, "--timeout", "0", "--", "python3", WEAK],
            "timeout must be a positive, finite number of seconds, at most 86400".into(),
        ),
    ];
    for (args, message) in cases {
        let mut argv = vec!["evidence", "mutate", "--id", "refused"];
        argv.extend(args);
        assert_eq!(sandbox.hpp_in(&sandbox.root, &argv).refused(), message);
    }
    let bad_id = sandbox.hpp([
        "evidence",
        "mutate",
        "--id",
        "a..b",
        "--generate",
        DISCOUNT,
        "--",
        "true",
    ]);
    assert!(bad_id.refused().starts_with("evidence id must be"));
    let mut in_tmp = Sandbox::repo();
    in_tmp.env.insert(
        "TMPDIR".into(),
        in_tmp.root.join("tmp").display().to_string(),
    );
    std::fs::create_dir_all(in_tmp.root.join("tmp")).expect("writable");
    std::fs::write(in_tmp.root.join("m.py"), "x = 1\n").expect("writable");
    let message = in_tmp
        .hpp([
            "evidence",
            "mutate",
            "--id",
            "t",
            "--generate",
            "m.py",
            "--",
            "true",
        ])
        .refused();
    assert!(
        message.ends_with("is inside the workspace; point TMPDIR elsewhere"),
        "{message}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "a refusal writes nothing");
    assert_eq!(in_tmp.hpp_refs(), "");
}
