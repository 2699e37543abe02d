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

/// Whether strace runs here; says so on stderr when it does not (the test is then skipped).
fn strace_runs(sandbox: &Sandbox, dir: &Path) -> bool {
    let probe = sandbox.command("strace", dir).arg("-V").output();
    let runs = probe.is_ok_and(|o| o.status.success());
    if !runs {
        eprintln!("skipped: strace is not installed, so the order of writes cannot be seen");
    }
    runs
}

/// [`traced`] in `dir`, tracing the calls of `more` too (`,openat`).
fn traced_in(sandbox: &Sandbox, dir: &Path, more: &str, args: &[&str]) -> Option<Vec<String>> {
    let calls = format!("trace=fsync,fdatasync,rename,renameat,renameat2{more}");
    let text = strace_log(sandbox, dir, &["-f", "-y", "-e", &calls], args)?;
    Some(text.lines().map(str::to_owned).collect())
}

/// Runs `git-hpp args` in `dir` under `strace` with `flags`, asserts it succeeded, and
/// returns strace's log; `None` when strace is not installed.
fn strace_log(sandbox: &Sandbox, dir: &Path, flags: &[&str], args: &[&str]) -> Option<String> {
    if !strace_runs(sandbox, dir) {
        return None;
    }
    let log = sandbox.path("strace.log");
    let out = sandbox
        .command("strace", dir)
        .args(flags)
        .arg("-o")
        .arg(&log)
        .arg(crate::harness::BIN)
        .args(args)
        .output()
        .expect("strace runs");
    let run = Run::from_output(&out);
    assert_eq!(run.code, 0, "{run}");
    Some(std::fs::read_to_string(&log).expect("strace wrote its log"))
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

/// A bare remote holding the sandbox's `main`, and two clones of it: (writer, reader).
fn writer_and_reader(sandbox: &Sandbox) -> [std::path::PathBuf; 2] {
    let text = |p: &Path| p.to_str().expect("UTF-8 paths").to_owned();
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", &text(&remote)]);
    sandbox.git(["push", "-q", &text(&remote), "main"]);
    ["writer", "reader"].map(|name| {
        let dir = sandbox.path(name);
        sandbox.git(["clone", "-q", &text(&remote), &text(&dir)]);
        dir
    })
}

#[test]
fn a_fetch_flushes_the_records_and_packed_refs_before_it_names_them_with_no_lock_per_ref() {
    let sandbox = Sandbox::repo();
    let text = |p: &Path| p.to_str().expect("UTF-8 paths").to_owned();
    let [writer, reader] = writer_and_reader(&sandbox);
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

/// The sixteen object directories the store counts to estimate the loose objects.
const SAMPLED: [&str; 16] = [
    "07", "17", "27", "37", "47", "57", "67", "77", "87", "97", "a7", "b7", "c7", "d7", "e7", "f7",
];

/// Loose objects in the store's sample of the object directories.
fn sample(sandbox: &Sandbox) -> usize {
    SAMPLED
        .iter()
        .map(|dir| {
            std::fs::read_dir(sandbox.root.join(".git/objects").join(dir))
                .map(|entries| entries.count())
                .unwrap_or(0)
        })
        .sum()
}

/// Every loose object of the repository, counted exactly.
fn loose_count(sandbox: &Sandbox) -> usize {
    std::fs::read_dir(sandbox.root.join(".git/objects"))
        .expect("an object directory")
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            name.len() == 2
                && name
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit())
        })
        .map(|e| std::fs::read_dir(e.path()).map_or(0, |d| d.count()))
        .sum()
}

/// Writes loose blobs until the sample holds two: past a `gc.auto` of 1.
fn fill_sample(sandbox: &Sandbox) {
    fill_sample_to(sandbox, 2);
}

/// Writes loose blobs until the sample holds `files`, in batches (one `git hash-object
/// --stdin-paths` each) that land on average half of what is missing, so it stops at `files`
/// or just past it.
fn fill_sample_to(sandbox: &Sandbox, files: usize) {
    let scratch = sandbox.root.join(".git/fill");
    std::fs::create_dir_all(&scratch).expect("writable");
    let mut n = 0;
    loop {
        let have = sample(sandbox);
        if have >= files {
            break;
        }
        // An object lands in the sample one time in sixteen.
        let batch = ((files - have) * 8).saturating_sub(8).max(1);
        let mut paths = String::new();
        for _ in 0..batch {
            let path = scratch.join(format!("{n}"));
            std::fs::write(&path, format!("{n}\n")).expect("writable");
            paths.push_str(&format!("{}\n", path.display()));
            n += 1;
        }
        sandbox.git_fed_in(
            &sandbox.root,
            &["hash-object", "-w", "--stdin-paths"],
            &paths,
        );
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

/// The store's own limit: `LOOSE_LIMIT` (1,024) spread over the 16 of 256 directories sampled.
const STORE_SAMPLE_LIMIT: usize = 64;

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
    // A step writes three or four objects, each landing in the sample one time in sixteen.
    fill_sample_to(&sandbox, STORE_SAMPLE_LIMIT - 6);
    sandbox.walk_steps("main", 1..2);
    let tip = sandbox.git(["rev-parse", "refs/hpp/loops/main"]);
    assert!(
        is_loose(&sandbox, &tip),
        "a few loose objects are not worth a repack after every append"
    );
}

/// Records one gotcha failure for each of `count` tasks: a record commit each.
fn record_failures(sandbox: &Sandbox, count: usize) -> usize {
    let mut most = 0;
    for i in 0..count {
        sandbox
            .hpp([
                "gotcha",
                "record",
                "--task",
                &format!("task {i}"),
                "--message",
                "error: the build failed",
                "--at",
                "2026-01-01T00:00:00Z",
            ])
            .ok();
        most = most.max(loose_count(sandbox));
    }
    most
}

/// The most loose objects a repository with `gc.auto` 128 holds between the store's repacks,
/// with margin: 300 writing commands of three objects each peaked at 426 in 5,000 simulated
/// runs of the store's sampling.
const BOUND_AT_128: usize = 600;

#[test]
fn records_stay_packed_within_the_stated_bound_after_hundreds_of_writes() {
    let sandbox = Sandbox::repo();
    sandbox.git(["config", "gc.auto", "128"]);
    let most = record_failures(&sandbox, 300);
    assert!(
        most <= BOUND_AT_128,
        "{most} loose objects at once, past the bound {BOUND_AT_128}"
    );
    assert!(loose_count(&sandbox) <= BOUND_AT_128);
    sandbox.hpp(["gotcha", "list"]).ok();
}

#[test]
fn control_without_the_stores_repacks_the_same_writes_pass_the_bound() {
    let sandbox = Sandbox::repo();
    sandbox.git(["config", "gc.auto", "0"]);
    let most = record_failures(&sandbox, 250);
    assert!(
        most > BOUND_AT_128,
        "only {most} loose objects: the bound tests nothing"
    );
}

/// What one run's trace shows about durability: every object file a git-hpp or hop process
/// moved into place was flushed (by `fsync` of it, of a file renamed onto it, or a `syncfs`)
/// before that process next moved a ref, and every ref value was flushed in its lock file
/// before the lock was renamed over the ref. Git's own processes are not audited here: what
/// they flush is git's `core.fsync` to decide.
#[derive(Debug, Default)]
struct Audit {
    /// Ref moves seen, by our processes.
    moves: usize,
    /// Object files our processes moved into place.
    objects: usize,
    /// The programs of ours that moved a ref.
    writers: std::collections::BTreeSet<String>,
    /// What broke the order: (program, the ref moved, what was not flushed before it).
    broken: Vec<(String, String, String)>,
}

/// Lexically normal form of `path` (`a/b/../c` is `a/c`): a linked worktree names the common
/// object directory through `..`, and the kernel names the file without it.
fn normal(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether `path` is a loose object or a pack file in an object directory.
fn is_object_file(path: &str) -> bool {
    let Some((_, rest)) = path.rsplit_once("/objects/") else {
        return false;
    };
    let loose = rest.len() == 41
        && rest.as_bytes()[2] == b'/'
        && rest
            .bytes()
            .filter(|b| *b != b'/')
            .all(|b| b.is_ascii_hexdigit());
    let pack = rest.starts_with("pack/pack-")
        && [".pack", ".idx", ".rev"].iter().any(|e| rest.ends_with(e));
    loose || pack
}

/// Whether a rename onto `path` moves a ref: a loose ref, `packed-refs`, or a reftable list.
fn is_ref_file(path: &str) -> bool {
    path.contains("/refs/") && !path.contains("/objects/")
        || path.ends_with("/packed-refs")
        || path.ends_with("/reftable/tables.list")
}

/// The file names a traced call's arguments give, each joined to the directory its `dirfd`
/// names when relative (`renameat(AT_FDCWD</cwd>, "a", 3</dir>, "b")`).
fn call_paths(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut dir = String::new();
    let mut rest = args;
    while let Some(open) = rest.find(['<', '"']) {
        let tail = &rest[open + 1..];
        let close = if rest.as_bytes()[open] == b'<' {
            '>'
        } else {
            '"'
        };
        let Some(end) = tail.find(close) else { break };
        let text = &tail[..end];
        if close == '>' {
            dir = text.to_owned();
        } else if text.starts_with('/') {
            out.push(normal(text));
        } else {
            out.push(normal(&format!("{dir}/{text}")));
        }
        rest = &tail[end + 1..];
    }
    out
}

/// Reads an `strace -f -y` log (`pid call` per line) into an [`Audit`].
fn audit(log: &str) -> Audit {
    use std::collections::{BTreeSet, HashMap};
    let mut program: HashMap<u32, String> = HashMap::new();
    let mut group: HashMap<u32, u32> = HashMap::new();
    let mut unfinished: HashMap<u32, String> = HashMap::new();
    let mut created: HashMap<u32, BTreeSet<String>> = HashMap::new();
    let mut flushed: HashMap<u32, BTreeSet<String>> = HashMap::new();
    let mut found = Audit::default();
    for line in log.lines() {
        let Some((pid, call)) = line.split_once(' ') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        // strace pads the pid column to the widest pid it has shown.
        let call = call.trim_start();
        let call = match call.strip_suffix("<unfinished ...>") {
            Some(start) => {
                unfinished.insert(pid, start.to_owned());
                continue;
            }
            None => match call
                .strip_prefix("<... ")
                .and_then(|c| c.split_once(" resumed>"))
            {
                Some((_, end)) => format!("{}{end}", unfinished.remove(&pid).unwrap_or_default()),
                None => call.to_owned(),
            },
        };
        let ok = call.trim_end().ends_with("= 0");
        let tgid = *group.get(&pid).unwrap_or(&pid);
        if call.starts_with("execve(") && ok {
            if let Some(path) = call.split('"').nth(1) {
                program.insert(pid, path.to_owned());
            }
            continue;
        }
        if ["clone(", "clone3(", "fork(", "vfork("]
            .iter()
            .any(|c| call.starts_with(c))
        {
            if let Some(child) = call.rsplit("= ").next().and_then(|c| c.trim().parse().ok()) {
                // A vfork'd child runs (and may exec) before its parent's call returns: the
                // program it exec'd is its own, not the parent's.
                let inherited = program.get(&pid).cloned().unwrap_or_default();
                program.entry(child).or_insert(inherited);
                group.insert(
                    child,
                    if call.contains("CLONE_THREAD") {
                        tgid
                    } else {
                        child
                    },
                );
            }
            continue;
        }
        let name = program
            .get(&pid)
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_owned());
        let Some(name) = name.filter(|n| n == "git-hpp" || n == "hop") else {
            continue;
        };
        let flushed = flushed.entry(tgid).or_default();
        let created = created.entry(tgid).or_default();
        if call.starts_with("fsync(") || call.starts_with("fdatasync(") {
            if let Some(path) = call_paths(&call).into_iter().next().or_else(|| {
                let start = call.find('<')? + 1;
                Some(normal(&call[start..start + call[start..].find('>')?]))
            }) {
                flushed.insert(path);
            }
        } else if call.starts_with("syncfs(") && ok {
            flushed.extend(created.iter().cloned());
        } else if (call.starts_with("rename") || call.starts_with("link")) && ok {
            let paths = call_paths(&call);
            let (Some(from), Some(to)) = (paths.first(), paths.last()) else {
                continue;
            };
            if flushed.contains(from) {
                flushed.insert(to.clone());
            }
            if is_object_file(to) {
                found.objects += 1;
                created.insert(to.clone());
            } else if is_ref_file(to) {
                found.moves += 1;
                found.writers.insert(name.clone());
                let lock = from.ends_with(".lock").then_some(from);
                for path in created.iter().chain(lock).filter(|p| !flushed.contains(*p)) {
                    found.broken.push((name.clone(), to.clone(), path.clone()));
                }
                created.retain(|p| !flushed.contains(p));
            }
        }
    }
    found
}

/// Runs `git-hpp args` in `dir` under `strace -f` (its children, git and hop included) and
/// audits the trace; `None` when strace is not installed.
fn audited(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> Option<Audit> {
    let calls = "trace=execve,clone,clone3,fork,vfork,fsync,fdatasync,syncfs,rename,renameat,\
                 renameat2,link,linkat";
    let flags = ["-f", "-y", "-qq", "-s", "4096", "-e", calls];
    strace_log(sandbox, dir, &flags, args).map(|text| audit(&text))
}

#[test]
fn every_writer_in_the_tour_flushes_what_its_refs_name_before_they_move() {
    let (sandbox, _tmp) = Sandbox::with_own_tmp();
    let Some(found) = audited(&sandbox, &sandbox.root, &["demo"]) else {
        return;
    };
    // The tour writes loops, evidence, attestations, notes, lanes, the trust policy, a
    // fetch's records and hop's states: dozens of moves by both programs.
    assert!(found.moves >= 30 && found.objects >= 30, "{found:?}");
    assert_eq!(
        found.writers.iter().map(String::as_str).collect::<Vec<_>>(),
        ["git-hpp", "hop"],
        "{found:?}"
    );
    assert!(
        found.broken.is_empty(),
        "moved before flushed: {:#?}",
        found.broken
    );
}

#[test]
fn a_fetch_that_moves_a_loose_loop_beside_new_records_flushes_packed_refs_before_its_rename() {
    let sandbox = Sandbox::repo();
    let text = |p: &Path| p.to_str().expect("UTF-8 paths").to_owned();
    let [writer, reader] = writer_and_reader(&sandbox);
    let manifest = sandbox.path("ticks.json");
    std::fs::write(&manifest, crate::harness::TICKS).expect("writable");
    let manifest = text(&manifest);
    let tick = |dir: &Path, name: &str| {
        sandbox.tick_in(dir, &manifest, name).ok();
    };
    // The reader's own loop: a loose ref here, which the fetch below moves forward.
    let fetch = ["--manifest", manifest.as_str(), "fetch"];
    tick(&reader, "mine");
    sandbox.hpp_in(&reader, &["push"]).ok();
    sandbox.hpp_in(&writer, &fetch).ok();
    tick(&writer, "mine");
    for name in ["a", "b", "c"] {
        tick(&writer, name);
    }
    sandbox.hpp_in(&writer, &["push"]).ok();
    let loose_loop = reader.join(".git/refs/hpp/loops/mine");
    assert!(
        loose_loop.is_file(),
        "the reader's loop should be a loose ref"
    );

    let Some(found) = audited(&sandbox, &reader, &fetch) else {
        return;
    };
    assert!(
        found.broken.is_empty(),
        "moved before flushed: {:#?}",
        found.broken
    );
    let tip = |dir: &Path, name: &str| sandbox.git_in(dir, &["rev-parse", name]);
    assert_eq!(
        tip(&reader, "refs/hpp/loops/mine"),
        tip(&writer, "refs/hpp/loops/mine")
    );
    // Every ref went into packed-refs: the loose loop's file, which would shadow it, is gone.
    let packed = std::fs::read_to_string(reader.join(".git/packed-refs")).expect("packed-refs");
    for name in ["mine", "a", "b", "c"] {
        assert!(
            packed.contains(&format!(" refs/hpp/loops/{name}\n")),
            "{name}: {packed}"
        );
        assert!(
            !reader.join(format!(".git/refs/hpp/loops/{name}")).exists(),
            "{name} is loose"
        );
        assert_eq!(
            tip(&reader, &format!("refs/hpp/loops/{name}")),
            tip(&writer, &format!("refs/hpp/loops/{name}"))
        );
    }
}

#[test]
fn control_the_audit_sees_an_object_or_a_lock_not_flushed_before_the_move() {
    // The pid column is padded once a wider pid has been shown.
    let start = "7    execve(\"/bin/git-hpp\", [\"git-hpp\"], 0x0 /* 1 vars */) = 0";
    let object = "7 renameat(AT_FDCWD</r>, \"/r/.git/objects/.tmpA\", AT_FDCWD</r>, \"/r/.git/objects/ab/cdef0123456789abcdef0123456789abcdef01\") = 0";
    let flush = "8 fsync(3</r/.git/objects/ab/cdef0123456789abcdef0123456789abcdef01>) = 0";
    let thread = "7 clone3({flags=CLONE_VM|CLONE_THREAD, stack=0x0}, 88) = 8";
    let lock = "7 fsync(4</r/.git/refs/hpp/x.lock>) = 0";
    let moved =
        "7 renameat(AT_FDCWD</r>, \".git/refs/hpp/x.lock\", AT_FDCWD</r>, \".git/refs/hpp/x\") = 0";
    let good = audit(&[start, thread, object, flush, lock, moved].join("\n"));
    assert_eq!((good.moves, good.objects), (1, 1), "{good:?}");
    assert!(
        good.broken.is_empty(),
        "flushed by a thread of the writer: {good:?}"
    );
    let late = audit(&[start, thread, object, lock, moved, flush].join("\n"));
    assert_eq!(
        late.broken.len(),
        1,
        "an object flushed after the move: {late:?}"
    );
    let unlocked = audit(&[start, thread, object, flush, moved].join("\n"));
    assert_eq!(
        unlocked.broken,
        [(
            "git-hpp".to_owned(),
            "/r/.git/refs/hpp/x".to_owned(),
            "/r/.git/refs/hpp/x.lock".to_owned()
        )],
        "a lock renamed unflushed"
    );
    // A vfork'd child that exec'd git before its parent's clone returned is git.
    let spawned = [
        start,
        "9 execve(\"/usr/bin/git\", [\"git\"], 0x0 /* 1 vars */) = 0",
        "7 clone(child_stack=NULL, flags=CLONE_VM|CLONE_VFORK|SIGCHLD) = 9",
        &object.replace("7 ", "9 "),
        &moved.replace("7 ", "9 "),
    ];
    let child = audit(&spawned.join("\n"));
    assert_eq!((child.moves, child.broken.len()), (0, 0), "{child:?}");
    // Another program's writes are git's to order, not ours.
    let git = audit(&[&start.replace("git-hpp", "git"), object, moved].join("\n"));
    assert_eq!((git.moves, git.broken.len()), (0, 0), "{git:?}");
}
