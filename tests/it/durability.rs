//! Durable writes, seen by strace: every writer flushes the objects its new ref reaches before
//! the ref moves, and flushes the ref's directory after. Skipped, saying so, where strace is not
//! installed.

use std::path::Path;

use crate::harness::{Run, Sandbox};

/// Runs `git-hpp args` under strace and returns its fsync and rename calls, one per line, or
/// `None` when strace is not installed.
fn traced(sandbox: &Sandbox, args: &[&str]) -> Option<Vec<String>> {
    traced_in(sandbox, &sandbox.root, "", args)
}

/// [`traced`] in `dir`, tracing the calls of `more` too (`,openat`).
fn traced_in(sandbox: &Sandbox, dir: &Path, more: &str, args: &[&str]) -> Option<Vec<String>> {
    let probe = sandbox.command("strace", dir).arg("-V").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: strace is not installed, so the order of writes cannot be seen");
        return None;
    }
    let log = sandbox.path("strace.log");
    let out = sandbox
        .command("strace", dir)
        .args([
            "-f",
            "-y",
            "-e",
            &format!("trace=fsync,fdatasync,rename,renameat,renameat2{more}"),
            "-o",
        ])
        .arg(&log)
        .arg(crate::harness::BIN)
        .args(args)
        .output()
        .expect("strace runs");
    let run = Run::from_output(&out);
    assert_eq!(run.code, 0, "{run}");
    let text = std::fs::read_to_string(&log).expect("strace wrote its log");
    Some(text.lines().map(str::to_owned).collect())
}

/// Asserts the order around the move of `ref_name`: `object` (a loose object's path suffix) is
/// flushed before the rename that moves the ref, and the ref's directory after it.
#[track_caller]
fn assert_durable_order(calls: &[String], ref_name: &str, object: &str) {
    if calls.iter().any(|c| c.contains("reftable/tables.list")) {
        return assert_durable_reftable_order(calls, object);
    }
    let moved = calls
        .iter()
        .position(|c| c.contains("rename") && c.contains(&format!("{ref_name}\"")))
        .unwrap_or_else(|| panic!("no rename moved {ref_name}:\n{}", calls.join("\n")));
    let flushed = calls
        .iter()
        .position(|c| c.contains("fsync(") && c.contains(object))
        .unwrap_or_else(|| panic!("{object} was never flushed:\n{}", calls.join("\n")));
    assert!(
        flushed < moved,
        "{object} was flushed after {ref_name} moved"
    );
    // The rename publishes the lock file's bytes: they are flushed before it.
    let lock = format!("{ref_name}.lock>");
    assert!(
        calls[..moved]
            .iter()
            .any(|c| c.contains("fsync(") && c.contains(&lock)),
        "the lock file of {ref_name} was not flushed before it was renamed over the ref:\n{}",
        calls.join("\n")
    );
    let dir = Path::new(ref_name)
        .parent()
        .expect("a ref has a directory")
        .to_string_lossy()
        .into_owned();
    assert!(
        calls[moved..]
            .iter()
            .any(|c| c.contains("fsync(") && c.contains(&format!("{dir}>"))),
        "the directory of {ref_name} was not flushed after the move"
    );
}

/// [`assert_durable_order`] in a reftable repository, where refs move when git publishes a new
/// table by renaming `tables.list` into place: `object` is flushed before the last such rename,
/// the new table and the list are flushed before it, and the `reftable` directory after.
#[track_caller]
fn assert_durable_reftable_order(calls: &[String], object: &str) {
    let all = || calls.join("\n");
    let moved = calls
        .iter()
        .rposition(|c| c.contains("rename") && c.contains("reftable/tables.list\""))
        .unwrap_or_else(|| panic!("no table was published:\n{}", all()));
    let flushed = calls
        .iter()
        .position(|c| c.contains("fsync(") && c.contains(object))
        .unwrap_or_else(|| panic!("{object} was never flushed:\n{}", all()));
    assert!(
        flushed < moved,
        "{object} was flushed after the table was published"
    );
    assert!(
        calls[flushed..moved]
            .iter()
            .any(|c| c.contains("fsync(") && c.contains("reftable/tables.list.lock")),
        "the new list of tables was not flushed before it was published:\n{}",
        all()
    );
    assert!(
        calls[moved..]
            .iter()
            .any(|c| c.contains("fsync(") && c.contains("reftable>")),
        "the reftable directory was not flushed after the move:\n{}",
        all()
    );
}

/// The path suffix of a loose object in the object directory.
fn loose(id: &str) -> String {
    format!("objects/{}/{}", &id[..2], &id[2..])
}

#[test]
fn an_event_append_flushes_its_event_before_the_loop_moves() {
    event_append_is_durable(Sandbox::repo());
}

#[test]
fn an_event_append_on_reftable_flushes_its_event_before_the_table_naming_it() {
    event_append_is_durable(Sandbox::repo_with_ref_format("reftable"));
}

fn event_append_is_durable(sandbox: Sandbox) {
    let args = [
        "event",
        "append",
        "--type",
        "work_started",
        "--work",
        "W",
        "--maker",
        "agent-a",
    ];
    let Some(calls) = traced(&sandbox, &args) else {
        return;
    };
    let event = sandbox.git(["rev-parse", "refs/hpp/loops/main:event.json"]);
    assert_durable_order(&calls, "refs/hpp/loops/main", &loose(&event));
}

#[test]
fn attest_create_flushes_the_snapshot_it_keeps_before_its_ref_moves() {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("new.txt"), "not yet committed\n").expect("writable");
    let blob = sandbox.git(["hash-object", "new.txt"]);
    let args = [
        "attest",
        "create",
        "--spec",
        "README",
        "--maker",
        "maker-a",
        "--checker",
        "checker-b",
        "--session",
        "review:1",
        "--verdict",
        "approved",
    ];
    let Some(calls) = traced(&sandbox, &args) else {
        return;
    };
    let name = sandbox.git([
        "for-each-ref",
        "--format=%(refname)",
        "refs/hpp/attestations/",
    ]);
    assert_durable_order(&calls, name.trim(), &loose(&blob));
}

#[test]
fn evidence_with_kept_artifacts_flushes_the_artifacts_before_its_ref_moves() {
    let sandbox = Sandbox::repo();
    sandbox.ignore_outputs();
    let args = [
        "evidence",
        "run",
        "--id",
        "kept",
        "--artifact",
        "hpp-out/deep/a.txt",
        "--keep-artifacts",
        "--",
        "sh",
        "-c",
        "mkdir -p hpp-out/deep && echo kept bytes > hpp-out/deep/a.txt",
    ];
    let Some(calls) = traced(&sandbox, &args) else {
        return;
    };
    let name = sandbox.git(["for-each-ref", "--format=%(refname)", "refs/hpp/evidence/"]);
    let artifact = sandbox.git([
        "rev-parse",
        &format!("{}:artifacts/hpp-out/deep/a.txt", name.trim()),
    ]);
    assert_durable_order(&calls, name.trim(), &loose(&artifact));
}

#[test]
fn control_the_order_check_fails_when_the_flush_comes_after_the_move() {
    let calls = [
        "1 renameat(AT_FDCWD, \"/r/.git/refs/hpp/loops/main.lock\", AT_FDCWD, \"/r/.git/refs/hpp/loops/main\") = 0".to_owned(),
        "1 fsync(3</r/.git/objects/ab/cdef>) = 0".to_owned(),
        "1 fsync(4</r/.git/refs/hpp/loops>) = 0".to_owned(),
    ];
    let late = std::panic::catch_unwind(|| {
        assert_durable_order(&calls, "refs/hpp/loops/main", "objects/ab/cdef");
    });
    assert!(late.is_err(), "a flush after the move must fail the check");
    let lock = "1 fsync(5</r/.git/refs/hpp/loops/main.lock>) = 0".to_owned();
    let good = [
        calls[1].clone(),
        lock.clone(),
        calls[0].clone(),
        calls[2].clone(),
    ];
    assert_durable_order(&good, "refs/hpp/loops/main", "objects/ab/cdef");
    // A value renamed into place before its lock file reached the disk fails it too.
    let unflushed = [calls[1].clone(), calls[0].clone(), lock, calls[2].clone()];
    let early = std::panic::catch_unwind(|| {
        assert_durable_order(&unflushed, "refs/hpp/loops/main", "objects/ab/cdef");
    });
    assert!(
        early.is_err(),
        "a lock flushed after the rename must fail the check"
    );
}

#[test]
fn the_log_writers_flush_their_entry_before_their_log_moves() {
    let writers: [(&[&str], &str); 3] = [
        (
            &[
                "board", "claim", "ITEM-1", "--lane", "lane-a", "--model", "gpt-5",
            ],
            "refs/hpp/board/log",
        ),
        (
            &[
                "gotcha",
                "record",
                "--task",
                "build",
                "--message",
                "linker failed",
            ],
            "refs/hpp/gotchas/failures",
        ),
        (
            &[
                "handoff",
                "write",
                "--summary",
                "half done",
                "--loop",
                "main",
            ],
            "",
        ),
    ];
    for (args, ref_name) in writers {
        let sandbox = Sandbox::repo();
        let Some(calls) = traced(&sandbox, args) else {
            return;
        };
        let name = if ref_name.is_empty() {
            sandbox
                .git(["for-each-ref", "--format=%(refname)", "refs/hpp/handoffs/"])
                .trim()
                .to_owned()
        } else {
            ref_name.to_owned()
        };
        // The entry's commit is the newest object the ref names.
        let commit = sandbox.git(["rev-parse", &name]);
        assert_durable_order(&calls, &name, &loose(&commit));
    }
}

#[test]
fn a_fetch_flushes_the_records_and_packed_refs_before_it_names_them_with_no_lock_per_ref() {
    let sandbox = Sandbox::repo();
    let text = |p: &Path| p.to_str().expect("UTF-8 paths").to_owned();
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", &text(&remote)]);
    sandbox.git(["push", "-q", &text(&remote), "main"]);
    let [writer, reader] = ["writer", "reader"].map(|name| {
        let dir = sandbox.path(name);
        sandbox.git(["clone", "-q", &text(&remote), &text(&dir)]);
        dir
    });
    for work in ["a", "b", "c"] {
        sandbox.start_loop_in(&writer, work).ok();
    }
    sandbox.hpp_in(&writer, &["push"]).ok();

    let Some(calls) = traced_in(&sandbox, &reader, ",openat", &["fetch"]) else {
        return;
    };
    let ref_locks: Vec<&String> = calls
        .iter()
        .filter(|c| c.contains("O_CREAT") && c.contains("refs/hpp/") && c.contains(".lock"))
        .collect();
    assert!(ref_locks.is_empty(), "a lock file per ref: {ref_locks:#?}");
    let calls: Vec<String> = calls
        .into_iter()
        .filter(|c| !c.contains("openat("))
        .collect();
    let all = || calls.join("\n");
    let moved = calls
        .iter()
        .position(|c| c.contains("rename") && c.contains("packed-refs.lock") && c.ends_with("= 0"))
        .unwrap_or_else(|| panic!("packed-refs was not written:\n{}", all()));
    assert!(
        calls[..moved]
            .iter()
            .any(|c| c.contains("fsync(") && c.contains("packed-refs.lock>")),
        "packed-refs' new bytes were not flushed before the rename:\n{}",
        all()
    );
    let dir = format!("{}>", text(&reader.join(".git")));
    assert!(
        calls[moved..]
            .iter()
            .any(|c| c.contains("fsync(") && c.contains(&dir)),
        "the directory of packed-refs was not flushed after the rename:\n{}",
        all()
    );
    // Each record's commit reached the disk before packed-refs named it: in the pack git
    // wrote and flushed, or as a loose object this fetch flushed.
    for work in ["a", "b", "c"] {
        let commit = sandbox.git_in(&reader, &["rev-parse", &format!("refs/hpp/loops/{work}")]);
        let flushed = calls[..moved]
            .iter()
            .any(|c| c.contains("fsync(") && (c.contains(&loose(&commit)) || c.contains(".pack>")));
        assert!(
            flushed,
            "{commit} was not flushed before packed-refs named it:\n{}",
            all()
        );
    }
}

#[test]
fn a_long_import_flushes_its_one_pack_and_index_before_the_loop_moves() {
    let sandbox = Sandbox::repo();
    let manifest = sandbox.path("ticks.json");
    std::fs::write(&manifest, crate::harness::TICKS).expect("writable");
    let log = crate::harness::tick_log(300);
    let file = sandbox.path("ticks.jsonl");
    std::fs::write(&file, log).expect("writable");
    let args = [
        "--manifest",
        manifest.to_str().expect("utf-8"),
        "event",
        "import",
        file.to_str().expect("utf-8"),
        "--loop",
        "long",
    ];
    let Some(calls) = traced(&sandbox, &args) else {
        return;
    };
    let packs: Vec<String> = std::fs::read_dir(sandbox.root.join(".git/objects/pack"))
        .expect("a pack directory")
        .map(|e| {
            e.expect("listable")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let pack = packs
        .iter()
        .find(|n| n.ends_with(".pack"))
        .unwrap_or_else(|| panic!("the import wrote one pack: {packs:?}"));
    let index = pack.replace(".pack", ".idx");
    assert_durable_order(&calls, "refs/hpp/loops/long", pack);
    assert_durable_order(&calls, "refs/hpp/loops/long", &index);
}

/// Loose objects under `objects/17`, git's sample of the loose objects.
fn sample(sandbox: &Sandbox) -> usize {
    std::fs::read_dir(sandbox.root.join(".git/objects/17"))
        .map(|entries| entries.count())
        .unwrap_or(0)
}

/// Writes loose blobs until git's sample holds two: past a `gc.auto` of 1.
fn fill_sample(sandbox: &Sandbox) {
    fill_sample_to(sandbox, 2);
}

/// Writes loose blobs until git's sample (`objects/17`) holds `files`.
fn fill_sample_to(sandbox: &Sandbox, files: usize) {
    let mut n = 0;
    while sample(sandbox) < files {
        sandbox.git_fed_in(
            &sandbox.root,
            &["hash-object", "-w", "--stdin"],
            &format!("{n}\n"),
        );
        n += 1;
    }
}

/// Whether `id` is a loose object file.
fn is_loose(sandbox: &Sandbox, id: &str) -> bool {
    let id = id.trim();
    sandbox
        .root
        .join(".git/objects")
        .join(&id[..2])
        .join(&id[2..])
        .exists()
}

#[test]
fn records_written_past_gc_auto_are_packed_after_the_command() {
    let sandbox = Sandbox::repo();
    sandbox.git(["config", "gc.auto", "1"]);
    sandbox.start_work().ok();
    fill_sample(&sandbox);
    sandbox.walk_steps("main", 1..2);
    let tip = sandbox.git(["rev-parse", "refs/hpp/loops/main"]);
    assert!(!is_loose(&sandbox, &tip), "the loop's new event was packed");
    sandbox.hpp(["event", "verify"]).ok();
}

#[test]
fn control_with_gc_auto_off_the_records_stay_loose() {
    let sandbox = Sandbox::repo();
    sandbox.git(["config", "gc.auto", "0"]);
    sandbox.start_work().ok();
    fill_sample(&sandbox);
    sandbox.walk_steps("main", 1..2);
    let tip = sandbox.git(["rev-parse", "refs/hpp/loops/main"]);
    assert!(is_loose(&sandbox, &tip), "gc.auto=0 turns the packing off");
}

/// The store's own limit: `LOOSE_LIMIT` (1,024) spread over 256 directories is 4 a directory.
const STORE_SAMPLE_LIMIT: usize = 4;

#[test]
fn records_past_the_stores_own_limit_are_packed_long_before_gc_auto() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    fill_sample_to(&sandbox, STORE_SAMPLE_LIMIT + 1);
    sandbox.walk_steps("main", 1..2);
    let tip = sandbox.git(["rev-parse", "refs/hpp/loops/main"]);
    assert!(
        !is_loose(&sandbox, &tip),
        "past about 1,024 loose objects the store packs them, gc.auto's 6,700 notwithstanding"
    );
    assert_eq!(sample(&sandbox), 0, "the loose objects went into the pack");
    let packs = std::fs::read_dir(sandbox.root.join(".git/objects/pack"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
        .count();
    assert!(packs >= 1, "a pack was written");
    sandbox.hpp(["event", "verify"]).ok();
}

#[test]
fn control_below_the_stores_limit_the_records_stay_loose() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    fill_sample_to(&sandbox, STORE_SAMPLE_LIMIT - 2);
    sandbox.walk_steps("main", 1..2);
    let tip = sandbox.git(["rev-parse", "refs/hpp/loops/main"]);
    assert!(
        is_loose(&sandbox, &tip),
        "a few loose objects are not worth a repack after every append"
    );
}
