//! Whole-process latency of `git-hpp fetch` taking in 10,000 board entries another machine
//! wrote, against plain `git fetch` of the same refs.
//!
//! The "other machine" is a repository `origin` whose board log (`refs/hpp/board/log`) holds
//! 10 claims written by `git-hpp board claim`, then 10,000 more claims of new items (one
//! commit each, each on its own lane), imported with `git fast-import` in the exact shape the
//! CLI writes: the `events.json` of a real claim is the template, its item id, lane and time
//! varied. Before anything is timed, `git-hpp board status` on `origin` must list the 10,010
//! items, so the imported log is one the board's rules accept.
//!
//! Two clones of `origin` were made and took its board in (`git-hpp fetch`) while it held only
//! the 10 base claims:
//! - fast-forward: the clone has the board at the base, so `git-hpp fetch` stages the
//!   remote's board and fast-forwards `refs/hpp/board/log` to it;
//! - merge: the clone also wrote 10 claims of its own on the base (the two machines diverged),
//!   so `git-hpp fetch` writes a merge commit after reading the whole merged board (10,020
//!   entries) and checking every board rule on it.
//!
//! In each case the series, run interleaved (each round starts with a different series), are
//! - `git-hpp fetch origin`;
//! - plain `git fetch` of the same refs, the baseline, as one would type it:
//!   `git --no-optional-locks fetch --quiet --no-tags --prune --no-write-fetch-head origin
//!   +refs/hpp/*:refs/hpp-remote/origin/* +refs/notes/hpp*:refs/notes/remote-hpp/origin/hpp*`,
//!   which moves the staging refs and nothing else;
//! - the same `git fetch` with `--no-show-forced-updates`, the very command git-hpp runs first
//!   (git then skips walking the new commits to label a forced update, which a mirror has no
//!   use for), so the table also shows what git-hpp adds to the git it runs.
//!
//! Every sample runs in its own fresh copy of the clone (`cp -a` of the pristine clone, made
//! and synced before the clock starts; none is removed until the end), so every sample of both series
//! does the same work from the same state: the 10,000 new entries' objects are absent, and
//! both commands transfer them (about 30,000 objects, one pack) from `origin` through
//! `git upload-pack`. The difference between the two series is the reconciliation: git-hpp's
//! start-up, listing the staged refs, the relation of the two tips and the compare-and-swap;
//! in the merge case also the merge commit and the validation of the merged board.
//!
//! The peak resident set of one `git-hpp fetch` (and of one plain `git fetch`) in the merge
//! case is read by GNU time (`/usr/bin/time -f %M`; skipped, saying so, when missing). It is
//! the peak of the largest process of the tree (git-hpp, the `git fetch` it runs, and that
//! fetch's `index-pack` and `upload-pack`), so a git-hpp peak above plain git's is git-hpp's
//! own.
//!
//! Every sample is timed from spawn to exit. Every repository lives in a temporary directory on
//! disk and every process runs in a hermetic environment (no user or system git config). The
//! benchmark reports and never fails on timing, but it panics if a command it runs exits
//! non-zero (`git-hpp fetch` exits 2 when a record diverged, say the merged board broke a
//! rule), since timing a failing command means nothing.
//!
//! A third case times a push with nothing new: a clone that took in 10,000 write-once records
//! (turn checkpoints, one ref each) from `records-origin` runs `git-hpp push origin` (which
//! first checks every record the remote lacks for secrets, here none) next to the `git push`
//! it runs, `git push --porcelain -- origin refs/hpp/*:refs/hpp/* refs/notes/hpp*:refs/notes/hpp*`,
//! both in the same clone, since neither writes anything.
//!
//! A fourth case fetches those 10,000 records into a fresh clone of `records-origin` (a fresh
//! copy per sample; fewer samples, since each takes seconds): `git-hpp fetch origin`, which
//! creates every record in one ref transaction, next to the plain `git fetch` it runs first.
//!
//! Run it with `cargo bench --bench sync` (this builds the release binary first); set
//! `HPP_BENCH_QUICK=1` for a smoke run with fewer samples.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{
    HPP, Rounds, Sandbox, Series, Stats, print_header, print_row, rev_parse, run, run_interleaved,
    run_with_input,
};
use serde_json::Value;

/// Claims on the board of both machines before they part.
const BASE_ENTRIES: usize = 10;
/// Claims the other machine writes after they part: what a fetch takes in.
const NEW_ENTRIES: usize = 10_000;
/// Claims the fetching clone writes after they part, in the merge case.
const LOCAL_ENTRIES: usize = 10;

const BOARD_LOG: &str = "refs/hpp/board/log";
const STAGED_BOARD_LOG: &str = "refs/hpp-remote/origin/board/log";

/// Plain `git fetch` of the refs `git-hpp fetch origin` stages, the baseline.
const GIT_FETCH: &[&str] = &[
    "--no-optional-locks",
    "fetch",
    "--quiet",
    "--no-tags",
    "--prune",
    "--no-write-fetch-head",
    "origin",
    "+refs/hpp/*:refs/hpp-remote/origin/*",
    "+refs/notes/hpp*:refs/notes/remote-hpp/origin/hpp*",
];

/// What `git-hpp fetch origin` runs first (the store's `fetch_staging`): the baseline with
/// `--no-show-forced-updates` before the remote.
fn git_fetch_as_run() -> Vec<&'static str> {
    let mut args = GIT_FETCH.to_vec();
    let remote = args
        .iter()
        .position(|a| *a == "origin")
        .expect("the baseline names origin");
    args.insert(remote, "--no-show-forced-updates");
    args
}

const HPP_FETCH: &[&str] = &["fetch", "origin"];

/// Write-once records (turn checkpoints, one commit and one ref each) on both machines in the
/// push case, where a push has nothing new to send.
const RECORDS: usize = 10_000;

const HPP_PUSH: &[&str] = &["push", "origin"];

/// A repository `records-origin` holding `RECORDS` turn checkpoints (written with `git
/// fast-import`, a commit each on its own ref under `refs/hpp/checkpoints/`); returns a fresh
/// clone of it (git's clone takes no record) and a copy of that clone that took them all in
/// with `git-hpp fetch`, from which a push has nothing new.
fn records_clones(sandbox: &Sandbox) -> (PathBuf, PathBuf) {
    let origin = sandbox.init("records-origin");
    common::write(&origin.join("README"), b"bench\n");
    run(sandbox.git(&origin, &["add", "README"]));
    run(sandbox.git(&origin, &["commit", "-q", "-m", "first"]));
    let mut stream = String::with_capacity(RECORDS * 300);
    for i in 0..RECORDS {
        let seconds = 1_780_000_000 + i as i64;
        let blob = format!("{{\"schema\":\"bench\",\"n\":{i}}}");
        stream.push_str(&format!(
            "commit refs/hpp/checkpoints/bench-{i:05}\n\
             committer Bench <bench@bench.invalid> {seconds} +0000\n\
             data 12\nbench record\n\
             M 100644 inline checkpoint.json\ndata {}\n{blob}\n",
            blob.len()
        ));
    }
    run_with_input(
        sandbox.git(&origin, &["fast-import", "--quiet"]),
        stream.as_bytes(),
    );
    let fresh = sandbox.root().join("records-fresh");
    run(sandbox.git(
        sandbox.root(),
        &[
            "clone",
            "-q",
            &origin.display().to_string(),
            &fresh.display().to_string(),
        ],
    ));
    let dir = fresh_copy(sandbox, &fresh, "records-clone", 0);
    run(sandbox.hpp(&dir, HPP_FETCH));
    let held = run(sandbox.git(
        &dir,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/hpp/checkpoints/",
        ],
    ));
    assert_eq!(
        held.lines().count(),
        RECORDS,
        "the clone should hold every record after git-hpp fetch"
    );
    let pushed = run(sandbox.hpp(&dir, &["push", "origin", "--json"]));
    let report: Value = serde_json::from_str(&pushed).expect("git-hpp push --json prints JSON");
    assert_eq!(
        report["updated"].as_array().map(Vec::len),
        Some(0),
        "a push after the fetch should have nothing new: {report}"
    );
    (fresh, dir)
}

/// Fewer rounds for the fetch of 10,000 records into a fresh clone: a sample takes seconds.
fn records_plan() -> Rounds {
    Rounds::pick(
        Rounds {
            warmup: 0,
            samples: 3,
        },
        Rounds {
            warmup: 1,
            samples: 8,
        },
    )
}

/// How many warm-up runs and measured samples each series gets.
fn plan() -> Rounds {
    Rounds::standard()
}

/// `git-hpp board claim ITEM --lane LANE --model bench-model` in `dir`.
fn claim(sandbox: &Sandbox, dir: &Path, item: &str, lane: &str) {
    run(sandbox.hpp(
        dir,
        &[
            "board",
            "claim",
            item,
            "--lane",
            lane,
            "--model",
            "bench-model",
        ],
    ));
}

/// The item ids `git-hpp board status` lists in `dir`, every event's (each once).
fn board_items(sandbox: &Sandbox, dir: &Path) -> BTreeSet<String> {
    let status = run(sandbox.hpp(dir, &["board", "status"]));
    let events: Vec<Value> =
        serde_json::from_str(&status).expect("git-hpp board status prints a JSON array");
    events
        .iter()
        .map(|e| {
            e["item_id"]
                .as_str()
                .expect("every board event here names an item")
                .to_owned()
        })
        .collect()
}

/// `seconds` since the epoch as the board writes a time: `2026-01-02T03:04:05Z`.
fn utc(seconds: i64) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::from_unix_timestamp(seconds)
        .expect("a time in range")
        .format(&format)
        .expect("the time formats")
}

/// The `git fast-import` stream of `NEW_ENTRIES` board writes on `BOARD_LOG` after `base` (a
/// commit dated `base_time`): one commit per write, a second apart, each a claim of a new item
/// on a new lane in the shape of `template` (the `events.json` of a claim the CLI wrote).
fn import_stream(template: &Value, base: &str, base_time: i64) -> String {
    let mut out = String::with_capacity(NEW_ENTRIES * 600);
    for i in 1..=NEW_ENTRIES {
        let seconds = base_time + i as i64;
        let item = format!("item-{i:05}");
        let mut write = template.clone();
        let event = &mut write["events"][0];
        event["item_id"] = Value::from(item.as_str());
        event["lane_id"] = Value::from(format!("lane-{i:05}"));
        event["ts"] = Value::from(utc(seconds));
        let blob = serde_json::to_string(&write).expect("JSON serialises");
        let message = format!("hpp board: {item} CLAIMED\n\nHpp-Writer: bench-import-{i}\n");
        out.push_str(&format!(
            "commit {BOARD_LOG}\n\
             author Bench Author <author@bench.invalid> {seconds} +0000\n\
             committer Bench Committer <committer@bench.invalid> {seconds} +0000\n\
             data {}\n{message}",
            message.len()
        ));
        if i == 1 {
            out.push_str(&format!("from {base}\n"));
        }
        out.push_str(&format!(
            "deleteall\nM 100644 inline events.json\ndata {}\n{blob}\n",
            blob.len()
        ));
    }
    out
}

/// Whether `dir` holds the object `id`.
fn has_object(sandbox: &Sandbox, dir: &Path, id: &str) -> bool {
    sandbox
        .git(dir, &["cat-file", "-e", id])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git runs")
        .success()
}

/// The repositories of the benchmark, ready to fetch from.
struct Setup {
    /// Its board's tip: base and the 10,000 new entries.
    origin_tip: String,
    /// The clone whose board is at the base (the fast-forward case).
    behind: PathBuf,
    /// The clone that wrote entries of its own on the base (the merge case).
    diverged: PathBuf,
}

/// A clone of `origin` (while it holds only the base) that took its board in, named `name`.
fn clone_at_base(sandbox: &Sandbox, origin: &Path, name: &str, base: &str) -> PathBuf {
    let dir = sandbox.root().join(name);
    run(sandbox.git(
        sandbox.root(),
        &[
            "clone",
            "-q",
            &origin.display().to_string(),
            &dir.display().to_string(),
        ],
    ));
    run(sandbox.hpp(&dir, HPP_FETCH));
    assert_eq!(
        rev_parse(sandbox, &dir, BOARD_LOG),
        base,
        "the clone should have taken in the base board"
    );
    dir
}

fn setup(sandbox: &Sandbox) -> Setup {
    let started = Instant::now();
    let origin = sandbox.init("origin");
    common::write(&origin.join("README"), b"bench\n");
    run(sandbox.git(&origin, &["add", "README"]));
    run(sandbox.git(&origin, &["commit", "-q", "-m", "first"]));
    for i in 1..=BASE_ENTRIES {
        claim(
            sandbox,
            &origin,
            &format!("base-{i:02}"),
            &format!("base-lane-{i:02}"),
        );
    }
    let base = rev_parse(sandbox, &origin, BOARD_LOG);
    let template: Value = serde_json::from_str(&run(
        sandbox.git(&origin, &["show", &format!("{BOARD_LOG}:events.json")])
    ))
    .expect("a board write is JSON");
    let events = template["events"]
        .as_array()
        .expect("a board write holds a list of events");
    assert_eq!(events.len(), 1, "a claim writes one event: {template}");
    assert_eq!(events[0]["state"], "CLAIMED", "a claim's event: {template}");
    for field in ["item_id", "lane_id", "ts"] {
        assert!(
            events[0][field].is_string(),
            "a claim's event has a {field}: {template}"
        );
    }

    // Both clones are made before the new entries exist, so none of their objects is local.
    let behind = clone_at_base(sandbox, &origin, "behind-pristine", &base);
    let diverged = clone_at_base(sandbox, &origin, "diverged-pristine", &base);
    for i in 1..=LOCAL_ENTRIES {
        claim(
            sandbox,
            &diverged,
            &format!("local-{i:02}"),
            &format!("local-lane-{i:02}"),
        );
    }

    let base_time: i64 = run(sandbox.git(&origin, &["log", "-1", "--format=%ct", &base]))
        .parse()
        .expect("a commit time");
    let imported = Instant::now();
    run_with_input(
        sandbox.git(&origin, &["fast-import", "--quiet"]),
        import_stream(&template, &base, base_time).as_bytes(),
    );
    let imported = imported.elapsed();
    let origin_tip = rev_parse(sandbox, &origin, BOARD_LOG);
    let count: usize = run(sandbox.git(&origin, &["rev-list", "--count", BOARD_LOG]))
        .parse()
        .expect("a count");
    assert_eq!(
        count,
        BASE_ENTRIES + NEW_ENTRIES,
        "one commit per board write"
    );
    let items = board_items(sandbox, &origin);
    assert_eq!(
        items.len(),
        BASE_ENTRIES + NEW_ENTRIES,
        "git-hpp board status should list every item of the imported log"
    );
    assert_eq!(
        items.iter().filter(|i| i.starts_with("item-")).count(),
        NEW_ENTRIES,
        "git-hpp board status should list the {NEW_ENTRIES} imported items"
    );
    for dir in [&behind, &diverged] {
        assert!(
            !has_object(sandbox, dir, &origin_tip),
            "the clones should not hold the new entries before a fetch"
        );
    }
    println!(
        "setup:  {} + {NEW_ENTRIES} board entries on origin ({NEW_ENTRIES} imported in {:.1} s), \
         `git-hpp board status` lists {} items; setup took {:.1} s",
        BASE_ENTRIES,
        imported.as_secs_f64(),
        items.len(),
        started.elapsed().as_secs_f64()
    );
    Setup {
        origin_tip,
        behind,
        diverged,
    }
}

/// The `n`th fresh copy of `pristine`, named `<name>-<n>`. Made while a series builds its
/// command, before the clock starts.
fn fresh_copy(sandbox: &Sandbox, pristine: &Path, name: &str, n: usize) -> PathBuf {
    // Earlier copies stay until the sandbox goes: on a file system mounted with `discard`, as
    // this machine's is, removing a copy's 10,000 ref files trims them while the next sample
    // runs, and a `git fetch` that took 1 s took 2 to 4.
    let dir = sandbox.root().join(format!("{name}-{n}"));
    let mut cp = sandbox.command("cp", sandbox.root());
    cp.arg("-a").arg(pristine).arg(&dir);
    run(cp);
    // The copy reaches the disk before the clock starts, so a sample does not pay for its
    // writeback (10,000 ref files in the records case).
    run(sandbox.command("sync", sandbox.root()));
    dir
}

/// Runs each command once in its own fresh copy and checks what it left: `git-hpp fetch` took
/// the board in (a fast-forward to origin's tip, or a merge commit whose board lists every
/// item), plain `git fetch` (either way) only staged it.
fn check_outcomes(sandbox: &Sandbox, setup: &Setup) {
    let as_run = git_fetch_as_run();
    let base = rev_parse(sandbox, &setup.behind, BOARD_LOG);
    let dir = fresh_copy(sandbox, &setup.behind, "check-behind-hpp", 0);
    run(sandbox.hpp(&dir, HPP_FETCH));
    assert_eq!(
        rev_parse(sandbox, &dir, BOARD_LOG),
        setup.origin_tip,
        "git-hpp fetch should fast-forward the board to origin's"
    );

    let ours = rev_parse(sandbox, &setup.diverged, BOARD_LOG);
    let dir = fresh_copy(sandbox, &setup.diverged, "check-diverged-hpp", 0);
    run(sandbox.hpp(&dir, HPP_FETCH));
    let merged = run(sandbox.git(&dir, &["rev-list", "--parents", "-n", "1", BOARD_LOG]));
    let parents: BTreeSet<&str> = merged.split_whitespace().skip(1).collect();
    assert_eq!(
        parents,
        BTreeSet::from([ours.as_str(), setup.origin_tip.as_str()]),
        "git-hpp fetch should merge the two boards"
    );
    assert_eq!(
        board_items(sandbox, &dir).len(),
        BASE_ENTRIES + NEW_ENTRIES + LOCAL_ENTRIES,
        "the merged board should list every item of both machines"
    );

    for (pristine, name, local, fetch) in [
        (&setup.behind, "check-behind-git", &base, GIT_FETCH),
        (&setup.diverged, "check-diverged-git", &ours, GIT_FETCH),
        (&setup.behind, "check-behind-run", &base, as_run.as_slice()),
        (
            &setup.diverged,
            "check-diverged-run",
            &ours,
            as_run.as_slice(),
        ),
    ] {
        let dir = fresh_copy(sandbox, pristine, name, 0);
        run(sandbox.git(&dir, fetch));
        assert_eq!(
            rev_parse(sandbox, &dir, STAGED_BOARD_LOG),
            setup.origin_tip,
            "plain git fetch should stage origin's board"
        );
        assert_eq!(
            &rev_parse(sandbox, &dir, BOARD_LOG),
            local,
            "plain git fetch should leave the board alone"
        );
    }
}

/// The peak resident set, in MiB, of `program args` in a fresh copy of `pristine`, read by GNU
/// time; `None` when `/usr/bin/time` is missing.
fn peak_rss(
    sandbox: &Sandbox,
    pristine: &Path,
    name: &str,
    program: &str,
    args: &[&str],
) -> Option<f64> {
    let time = Path::new("/usr/bin/time");
    if !time.is_file() {
        return None;
    }
    let dir = fresh_copy(sandbox, pristine, name, 0);
    let mut cmd: Command = sandbox.command(time, &dir);
    cmd.args(["-f", "%M"]).arg(program).args(args);
    let what = common::describe(&cmd);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    common::check(&what, &out);
    let text = String::from_utf8_lossy(&out.stderr);
    let kib: f64 = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("GNU time prints the peak in KiB");
    Some(kib / 1024.0)
}

/// One ratio line: `hpp` against its baseline `git`, at the median and at p90 (the slow tail
/// a loaded machine shows).
fn print_ratio(what: &str, hpp: &Stats, git: &Stats) {
    println!(
        "ratio: {what} = {:.2}x median ({:+.1} ms), {:.2}x p90, n = {}",
        hpp.median / git.median,
        hpp.median - git.median,
        hpp.p90 / git.p90,
        hpp.n
    );
}

fn main() {
    let plan = plan();
    let sandbox = Sandbox::new();
    sandbox.print_preamble(HPP);
    println!(
        "plan:   {} warm-up + {} samples per series, 8 series interleaved, each fetch sample in a \
         fresh copy of its clone{}",
        plan.warmup,
        plan.samples,
        if common::quick() {
            " (HPP_BENCH_QUICK)"
        } else {
            ""
        }
    );

    let setup = setup(&sandbox);
    check_outcomes(&sandbox, &setup);
    let (records_fresh, records) = records_clones(&sandbox);

    let (sandbox, behind, diverged) = (&sandbox, setup.behind.as_path(), setup.diverged.as_path());
    let (records, records_fresh) = (records.as_path(), records_fresh.as_path());
    let as_run = git_fetch_as_run();
    let as_run = as_run.as_slice();
    let mut series = vec![
        Series::new(move |n| sandbox.hpp(&fresh_copy(sandbox, behind, "ff-hpp", n), HPP_FETCH)),
        Series::new(move |n| sandbox.git(&fresh_copy(sandbox, behind, "ff-git", n), GIT_FETCH)),
        Series::new(move |n| {
            sandbox.hpp(&fresh_copy(sandbox, diverged, "merge-hpp", n), HPP_FETCH)
        }),
        Series::new(move |n| {
            sandbox.git(&fresh_copy(sandbox, diverged, "merge-git", n), GIT_FETCH)
        }),
        // Nothing new writes nothing: every sample runs in the same clone.
        Series::new(move |_| sandbox.hpp(records, HPP_PUSH)),
        Series::new(move |_| sandbox.git(records, common::GIT_PUSH)),
        Series::new(move |n| sandbox.git(&fresh_copy(sandbox, behind, "ff-run", n), as_run)),
        Series::new(move |n| sandbox.git(&fresh_copy(sandbox, diverged, "merge-run", n), as_run)),
    ];
    run_interleaved(&mut series, plan);
    let mut stats: Vec<Stats> = series.iter().map(Series::stats).collect();
    let mut fresh = vec![
        Series::new(move |n| {
            sandbox.hpp(
                &fresh_copy(sandbox, records_fresh, "fresh-hpp", n),
                HPP_FETCH,
            )
        }),
        Series::new(move |n| {
            sandbox.git(
                &fresh_copy(sandbox, records_fresh, "fresh-git", n),
                GIT_FETCH,
            )
        }),
    ];
    run_interleaved(&mut fresh, records_plan());
    stats.extend(fresh.iter().map(Series::stats));

    let hpp_peak = peak_rss(sandbox, diverged, "rss-hpp", HPP, HPP_FETCH);
    let git_peak = peak_rss(sandbox, diverged, "rss-git", "git", GIT_FETCH);

    println!();
    print_header();
    println!(
        "1. fast-forward: the clone's board at the base ({BASE_ENTRIES} entries), origin's \
         {BASE_ENTRIES} + {NEW_ENTRIES}"
    );
    print_row(
        "git-hpp fetch origin",
        &stats[0],
        "stage + fast-forward refs/hpp/board/log",
    );
    print_row("git fetch (same refs, baseline)", &stats[1], "stage only");
    print_row(
        "git fetch as git-hpp runs it",
        &stats[6],
        "stage only, --no-show-forced-updates",
    );
    println!(
        "2. merge: the clone also wrote {LOCAL_ENTRIES} entries on the base; merged board {}",
        BASE_ENTRIES + NEW_ENTRIES + LOCAL_ENTRIES
    );
    print_row(
        "git-hpp fetch origin",
        &stats[2],
        "stage + validate merged board + merge commit",
    );
    print_row("git fetch (same refs, baseline)", &stats[3], "stage only");
    print_row(
        "git fetch as git-hpp runs it",
        &stats[7],
        "stage only, --no-show-forced-updates",
    );
    println!("3. push with nothing new: {RECORDS} write-once records on both sides");
    print_row(
        "git-hpp push origin",
        &stats[4],
        "secret check of unpushed records + git push",
    );
    print_row("git push (same refspecs, baseline)", &stats[5], "");
    println!(
        "4. fetch of {RECORDS} write-once records into a fresh clone ({} samples)",
        records_plan().samples
    );
    print_row(
        "git-hpp fetch origin",
        &stats[8],
        "stage + create every record, one ref transaction",
    );
    print_row("git fetch (same refs, baseline)", &stats[9], "stage only");

    println!();
    print_ratio(
        "git-hpp fetch / git fetch, fast-forward",
        &stats[0],
        &stats[1],
    );
    print_ratio("git-hpp fetch / git fetch, merge", &stats[2], &stats[3]);
    print_ratio(
        "git-hpp fetch / the git fetch it runs, fast-forward",
        &stats[0],
        &stats[6],
    );
    print_ratio(
        "git-hpp fetch / the git fetch it runs, merge",
        &stats[2],
        &stats[7],
    );
    print_ratio("git-hpp push / git push, nothing new", &stats[4], &stats[5]);
    print_ratio(
        "git-hpp fetch / git fetch, 10,000 records into a fresh clone",
        &stats[8],
        &stats[9],
    );
    match (hpp_peak, git_peak) {
        (Some(hpp), Some(git)) => println!(
            "peak RSS (GNU time, largest process of the tree), merge case: git-hpp fetch \
             {hpp:.1} MiB, git fetch {git:.1} MiB"
        ),
        _ => println!("peak RSS: skipped (/usr/bin/time is not installed)"),
    }
}
