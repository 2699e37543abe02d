//! Whole-process latency of the `git-hpp` binary, against plain `git` doing comparable work.
//!
//! Measurement A, append scaling: one `git-hpp event append --type work_started --loop fresh-<n>`
//! (a new loop each time, so every sample is a loop's first event) in a repository with no loops,
//! with 10,000 loops stored as loose refs, and with 10,000 loops packed by `git pack-refs --all`.
//! The baseline, run on the same repositories, is `git update-ref refs/heads/b<n> <commit>`: a
//! git process that writes one ref. The ratios "10k loose / 0" and "10k packed / 0" of git-hpp's
//! medians are printed at the end; the target is under 2x.
//!
//! Measurement B, start-up: `git-hpp --version`, `git-hpp status` and `git status` in a
//! repository with one loop on branch main.
//!
//! Measurement C, a gate that measures: `git-hpp event append --type verified` on a loop at
//! `approved` whose fresh-evidence event named two bundles and whose checker event named one
//! attestation, so the closure gate re-verifies two evidence bundles, one attestation and the
//! person's event on the workspace tree; next to the same append with the gates' conditions
//! taken out of the manifest (`--manifest` with no `gates` block), which checks only the order
//! of events. Each sample appends to its own copy of the loop (a ref at the same `approved`
//! commit), so both series append the fifth event of the same history. The target: the gated
//! append within 3x of the bare one.
//!
//! Measurement D, long loops (imported under a one-state manifest whose only transition loops,
//! so any length is legal): `git-hpp event append` at 10, 1,000 and 10,000 events (and 100,000
//! with `HPP_BENCH_LONG=1`, a long run: the import alone writes 300,000 objects); `status` at 10
//! and 10,000; then `event verify`, `status` and `event export` of a 10,000-event loop next to
//! `git log --format=%B` of the same commits, with the loop's objects in the one pack `event
//! import` writes, loose (as appends leave them until git packs them), and after `git gc`, and,
//! when the Python reference (`hpp`, from
//! `pip install house-party-protocol==2.11.1`) is on PATH, its `hpp event verify` and `hpp
//! status` on the same events as its `.hpp/events.jsonl` (skipped, saying so, when it is not).
//! Targets: append at 10,000 within 1.5x of append at 10; status at 10,000 within 2x of 10;
//! verify faster than the reference; export within 3x of `git log`.
//!
//! Measurement E, doctor's memory: the peak resident set of `git-hpp doctor` in a repository
//! with 100,000 attestation refs, read by GNU time (`/usr/bin/time`; skipped when missing), next
//! to `git for-each-ref` of the same refs. Target: under 150 MiB.
//!
//! Measurement F, import's memory: the peak resident set of `git-hpp event import` of 10,000
//! events, each run into a new loop, next to `git fast-import` writing the same shape (10,000
//! commits of one small file) into a new ref, eight runs each: the median and the worst. Target:
//! at most 100 MiB in every run.
//!
//! Every sample is timed from spawn to exit. The series of a measurement run interleaved
//! (A, B, C, A, B, C, ...) so machine noise falls on all of them alike. Every repository lives in
//! a temporary directory and every process runs in a hermetic environment (no user or system git
//! config). The benchmark reports and never fails on timing, but it panics if a command it runs
//! exits non-zero, since timing a failing command means nothing.
//!
//! Run it with `cargo bench --bench spine` (this builds the release binary first); set
//! `HPP_BENCH_QUICK=1` for a smoke run with fewer samples.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{
    HPP, Rounds, Sandbox, Series, Stats, rev_parse, run, run_interleaved, run_with_input,
};

/// Loops created in the "many loops" repositories.
const MANY_LOOPS: usize = 10_000;

/// How many warm-up runs and measured samples each series gets.
fn plan() -> Rounds {
    Rounds::standard()
}

/// The repositories of this benchmark: one commit, and many loops besides.
impl Sandbox {
    /// A fresh repository on branch main with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        let dir = self.init(name);
        std::fs::write(dir.join("README"), "bench\n").expect("writing the first file");
        run(self.git(&dir, &["add", "README"]));
        run(self.git(&dir, &["commit", "-q", "-m", "first"]));
        dir
    }

    /// Adds `count` loops to `dir`, all pointing at the log of one real loop named `seed`.
    fn add_loops(&self, dir: &Path, count: usize) {
        run(self.hpp(
            dir,
            &[
                "event",
                "append",
                "--type",
                "work_started",
                "--loop",
                "seed",
                "--work",
                "W",
                "--maker",
                "agent-a",
            ],
        ));
        let seed = rev_parse(self, dir, "refs/hpp/loops/seed");
        let script: String = (0..count)
            .map(|i| format!("create refs/hpp/loops/l{i} {seed}\n"))
            .collect();
        run_with_input(self.git(dir, &["update-ref", "--stdin"]), script.as_bytes());
        let listed = run(self.git(dir, &["for-each-ref", "--format=x", "refs/hpp/loops/"]));
        assert_eq!(
            listed.lines().count(),
            count + 1,
            "git update-ref --stdin should have left {count} loops besides seed"
        );
    }
}

/// Measurement A: rows of (label, git-hpp append, git update-ref), one per repository.
fn measure_append(sandbox: &Sandbox, plan: Rounds) -> Vec<(&'static str, Stats, Stats)> {
    let zero = sandbox.repo("zero-loops");
    let loose = sandbox.repo("loose-loops");
    sandbox.add_loops(&loose, MANY_LOOPS);
    let packed = sandbox.repo("packed-loops");
    sandbox.add_loops(&packed, MANY_LOOPS);
    run(sandbox.git(&packed, &["pack-refs", "--all"]));
    assert!(
        !packed.join(".git/refs/hpp/loops/l0").exists(),
        "git pack-refs --all should have removed the loose loop refs"
    );
    assert!(
        loose.join(".git/refs/hpp/loops/l0").is_file(),
        "the loose repository should hold its loops as loose ref files"
    );

    let repos = [
        ("append, 0 loops", zero),
        ("append, 10k loose loops", loose),
        ("append, 10k packed loops", packed),
    ];
    let mut series = Vec::new();
    for (_, dir) in &repos {
        let head = rev_parse(sandbox, dir, "HEAD");
        series.push(Series::new(move |n| {
            let name = format!("fresh-{n}");
            sandbox.hpp(
                dir,
                &[
                    "event",
                    "append",
                    "--type",
                    "work_started",
                    "--loop",
                    &name,
                    "--work",
                    "W",
                    "--maker",
                    "agent-a",
                ],
            )
        }));
        series.push(Series::new(move |n| {
            let name = format!("refs/heads/b{n}");
            sandbox.git(dir, &["update-ref", &name, &head])
        }));
    }
    run_interleaved(&mut series, plan);
    repos
        .iter()
        .zip(series.chunks(2))
        .map(|((label, _), pair)| (*label, pair[0].stats(), pair[1].stats()))
        .collect()
}

/// Measurement B: (label, stats) for `git-hpp --version`, `git-hpp status` and `git status`.
fn measure_startup(sandbox: &Sandbox, plan: Rounds) -> Vec<(&'static str, Stats)> {
    let dir = sandbox.repo("one-loop");
    run(sandbox.hpp(
        &dir,
        &[
            "event",
            "append",
            "--type",
            "work_started",
            "--work",
            "W",
            "--maker",
            "agent-a",
        ],
    ));
    let dir = dir.as_path();
    let mut series = vec![
        Series::new(move |_| sandbox.hpp(dir, &["--version"])),
        Series::new(move |_| sandbox.hpp(dir, &["status"])),
        Series::new(move |_| sandbox.git(dir, &["status"])),
    ];
    run_interleaved(&mut series, plan);
    let labels = ["git-hpp --version", "git-hpp status", "git status"];
    labels
        .into_iter()
        .zip(series.iter().map(Series::stats))
        .collect()
}

/// Walks loop `seed` of `dir` to `approved` on real records: two bundles, one approval by a
/// checker who is not the maker, a person's approval; then makes `copies` loops at the same
/// commit. `manifest` is passed to every append (`None`: the built-in, gated loop).
fn approved_loops(sandbox: &Sandbox, dir: &Path, manifest: Option<&Path>, copies: usize) {
    let hpp = |args: &[&str]| {
        let mut all: Vec<&str> = Vec::new();
        if let Some(m) = manifest {
            all.extend(["--manifest", m.to_str().expect("a UTF-8 path")]);
        }
        all.extend(args);
        run(sandbox.hpp(dir, &all));
    };
    common::write(&dir.join(".git/info/exclude"), b"out/\n");
    let scope = ["--work", "W", "--maker", "agent-a"];
    let loop_flag = ["--loop", "seed"];
    let mut start = vec!["event", "append", "--type", "work_started"];
    start.extend(scope);
    start.extend(loop_flag);
    hpp(&start);
    for id in ["unit", "lint"] {
        let artifact = format!("out/{id}.txt");
        let script = format!("mkdir -p out && echo ok > {artifact}");
        hpp(&[
            "evidence",
            "run",
            "--id",
            id,
            "--artifact",
            &artifact,
            "--",
            "sh",
            "-c",
            &script,
        ]);
    }
    let mut evidence = vec!["event", "append", "--type", "evidence_recorded"];
    evidence.extend(["--evidence", "unit", "--evidence", "lint"]);
    evidence.extend(loop_flag);
    hpp(&evidence);
    hpp(&[
        "attest",
        "create",
        "--spec",
        "README",
        "--maker",
        "agent-a",
        "--checker",
        "checker-b",
        "--session",
        "bench:1",
        "--verdict",
        "approved",
    ]);
    let mut check = vec!["event", "append", "--type", "check_passed"];
    check.extend(loop_flag);
    hpp(&check);
    let mut human = vec![
        "event",
        "append",
        "--type",
        "human_approved",
        "--by",
        "alice",
    ];
    human.extend(loop_flag);
    hpp(&human);
    let seed = rev_parse(sandbox, dir, "refs/hpp/loops/seed");
    let script: String = (0..copies)
        .map(|i| format!("create refs/hpp/loops/c{i} {seed}\n"))
        .collect();
    run_with_input(
        sandbox.git(dir, &["update-ref", "--stdin"]),
        script.as_bytes(),
    );
}

/// Measurement C: (gated append, bare append) of `verified` to a loop at `approved`.
fn measure_gates(sandbox: &Sandbox, plan: Rounds) -> (Stats, Stats) {
    let copies = plan.warmup + plan.samples;
    let gated = sandbox.repo("gated");
    approved_loops(sandbox, &gated, None, copies);
    let bare = sandbox.repo("bare");
    let mut manifest: serde_json::Value =
        serde_json::from_str(include_str!("../hpp.manifest.json")).expect("the manifest is JSON");
    manifest["loop"]
        .as_object_mut()
        .expect("a loop block")
        .remove("gates");
    let ungated = sandbox.root().join("ungated.manifest.json");
    common::write(
        &ungated,
        serde_json::to_string(&manifest).expect("JSON").as_bytes(),
    );
    approved_loops(sandbox, &bare, Some(&ungated), copies);
    let (gated, bare, ungated) = (gated.as_path(), bare.as_path(), ungated.as_path());
    let mut series = vec![
        Series::new(move |n| {
            let name = format!("c{n}");
            sandbox.hpp(
                gated,
                &["event", "append", "--type", "verified", "--loop", &name],
            )
        }),
        Series::new(move |n| {
            let name = format!("c{n}");
            sandbox.hpp(
                bare,
                &[
                    "--manifest",
                    ungated.to_str().expect("a UTF-8 path"),
                    "event",
                    "append",
                    "--type",
                    "verified",
                    "--loop",
                    &name,
                ],
            )
        }),
    ];
    run_interleaved(&mut series, plan);
    (series[0].stats(), series[1].stats())
}

/// The events.jsonl of a loop of `n` `tick` events, hash-chained as the reference writes it.
fn ticks(n: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut prev = format!("{:x}", Sha256::digest(b""));
    let mut out = String::new();
    for seq in 1..=n {
        let line = format!(
            r#"{{"data":{{}},"id":"event:{seq}","prev_sha256":"{prev}","seq":{seq},"type":"tick"}}"#
        );
        prev = format!("{:x}", Sha256::digest(line.as_bytes()));
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A one-state loop whose only transition loops, so any length is legal. The state is named
/// `active` so the Python reference, whose next steps are fixed per state name, projects it too.
const TICK_LOOP: &str = r#"{"initial":"active","states":["active"],"next_step":{"active":"tick"},"transitions":[{"from":"active","event":"tick","to":"active","gate":"g"}]}"#;

/// The Python reference's `hpp` on PATH, when installed.
fn reference_hpp() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("hpp"))
        .find(|candidate| candidate.is_file())
}

/// The reference's own manifest with [`TICK_LOOP`] in place of its loop (its manifest needs
/// blocks ours does not read), written beside the sandbox; `None` when `python3` cannot import
/// the reference's package to find it.
fn reference_manifest(sandbox: &Sandbox) -> Option<PathBuf> {
    let mut find = sandbox.command("python3", sandbox.root());
    find.args([
        "-c",
        "import hpp, os; print(os.path.join(os.path.dirname(hpp.__file__), 'hpp.manifest.json'))",
    ]);
    let out = find.output().ok().filter(|o| o.status.success())?;
    let file = String::from_utf8(out.stdout).ok()?;
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file.trim()).ok()?).ok()?;
    manifest["loop"] = serde_json::from_str(TICK_LOOP).expect("the tick loop is JSON");
    let target = sandbox.root().join("reference-tick.manifest.json");
    common::write(&target, manifest.to_string().as_bytes());
    Some(target)
}

/// How the 10,000-event loop's objects are stored when it is read: one pack as `event import`
/// writes it; as 10,000 `event append`s leave them (the store packs past about 1,024 loose
/// objects, so at most that many are loose, beside a few geometric packs); all loose (as a
/// store that never packed would leave them); and after `git gc`.
const LAYOUTS: [&str; 4] = ["imported", "appended", "loose", "after gc"];

/// The loop each layout reads: the appended one is its own loop, the others the imported copy.
fn layout_loop(how: &str) -> &'static str {
    if how == "appended" {
        "appended"
    } else {
        "read"
    }
}

/// Turns every pack of `dir` into loose objects (`git unpack-objects` of each, moved aside).
fn unpack_all(sandbox: &Sandbox, dir: &Path) {
    let packs = dir.join(".git/objects/pack");
    let names: Vec<PathBuf> = std::fs::read_dir(&packs)
        .expect("a pack directory")
        .map(|e| e.expect("listable").path())
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .collect();
    for pack in names {
        let aside = sandbox
            .root()
            .join(pack.file_name().expect("a pack has a name"));
        std::fs::rename(&pack, &aside).expect("moving the pack aside");
        std::fs::remove_file(pack.with_extension("idx")).expect("removing its index");
        let bytes = std::fs::read(&aside).expect("reading the pack");
        run_with_input(sandbox.git(dir, &["unpack-objects", "-q"]), &bytes);
    }
}

/// Measurement D's findings.
struct LongLoops {
    /// (events, event append) per loop length.
    append: Vec<(usize, Stats)>,
    /// (events, status) at 10 and 10,000 events.
    status: Vec<(usize, Stats)>,
    /// Reads of the 10,000-event loop, loose then packed: (label, series) rows.
    reads: Vec<(String, Stats)>,
    /// Why the reference's series are missing, when they are.
    reference_skipped: Option<String>,
}

/// Measurement D: appends at 10 / 1,000 / 10,000 events (and 100,000 with `HPP_BENCH_LONG=1`);
/// `status` at 10 and 10,000; `event verify`, `status` and `event export` of the 10,000-event
/// loop next to `git log --format=%B` of the same commits and the Python reference's
/// `hpp event verify` / `hpp status` on the same events as its `.hpp/events.jsonl`, with the
/// loop's objects as imported, loose and after `git gc`.
fn measure_long_loops(sandbox: &Sandbox, plan: Rounds) -> LongLoops {
    let dir = sandbox.repo("long-loops");
    let manifest = sandbox.root().join("tick.manifest.json");
    common::write(
        &manifest,
        format!(r#"{{"protocol_version":"2.1","loop":{TICK_LOOP}}}"#).as_bytes(),
    );
    let manifest = manifest.to_str().expect("a UTF-8 path").to_owned();
    let mut sizes = vec![10, 1_000, 10_000];
    if std::env::var_os("HPP_BENCH_LONG").is_some() {
        sizes.push(100_000);
    }
    for &n in &sizes {
        let log = sandbox.root().join(format!("ticks-{n}.jsonl"));
        common::write(&log, ticks(n).as_bytes());
        let name = format!("l{n}");
        let args = [
            "--manifest",
            &manifest,
            "event",
            "import",
            log.to_str().expect("a UTF-8 path"),
            "--loop",
            &name,
        ];
        run(sandbox.hpp(&dir, &args));
        // The reads below work on a copy that appends do not grow.
        if n == 10_000 {
            let args = [
                "--manifest",
                &manifest,
                "event",
                "import",
                log.to_str().expect("a UTF-8 path"),
                "--loop",
                "read",
            ];
            run(sandbox.hpp(&dir, &args));
        }
    }
    let (dir, manifest) = (dir.as_path(), manifest.as_str());
    let mut series = Vec::new();
    for &n in &sizes {
        series.push(Series::new(move |_| {
            let name = format!("l{n}");
            let args = [
                "--manifest",
                manifest,
                "event",
                "append",
                "--type",
                "tick",
                "--loop",
                &name,
            ];
            sandbox.hpp(dir, &args)
        }));
    }
    for n in [10, 10_000] {
        series.push(Series::new(move |_| {
            let name = format!("l{n}");
            sandbox.hpp(dir, &["--manifest", manifest, "status", "--loop", &name])
        }));
    }
    run_interleaved(&mut series, plan);
    let append: Vec<(usize, Stats)> = sizes
        .iter()
        .zip(&series)
        .map(|(n, s)| (*n, s.stats()))
        .collect();
    let status = vec![
        (10, series[sizes.len()].stats()),
        (10_000, series[sizes.len() + 1].stats()),
    ];

    // The reference reads the same 10,000 events from its own log in a repository of its own.
    let reference = reference_hpp();
    let python_dir = sandbox.repo("reference-log");
    std::fs::create_dir_all(python_dir.join(".hpp")).expect("creating .hpp");
    std::fs::copy(
        sandbox.root().join("ticks-10000.jsonl"),
        python_dir.join(".hpp/events.jsonl"),
    )
    .expect("copying the log");
    let reference_manifest = reference.as_ref().and_then(|_| reference_manifest(sandbox));
    let reference_skipped = match (&reference, &reference_manifest) {
        (None, _) => Some(
            "the Python reference is not installed (pip install house-party-protocol==2.11.1)"
                .to_owned(),
        ),
        (Some(_), None) => {
            Some("python3 cannot import the reference's package to find its manifest".to_owned())
        }
        _ => None,
    };
    // The layout appends leave: the same 10,000 events, one `event append` each.
    for _ in 0..10_000 {
        run(sandbox.hpp(
            dir,
            &[
                "--manifest",
                manifest,
                "event",
                "append",
                "--type",
                "tick",
                "--loop",
                "appended",
            ],
        ));
    }
    let mut reads = Vec::new();
    for how in LAYOUTS {
        let name = layout_loop(how);
        let tip = format!("refs/hpp/loops/{name}");
        let tip = tip.as_str();
        match how {
            "loose" => unpack_all(sandbox, dir),
            "after gc" => {
                run(sandbox.git(dir, &["gc", "-q", "--prune=now"]));
            }
            _ => {}
        }
        let mut series = vec![
            Series::new(move |_| {
                sandbox.hpp(
                    dir,
                    &["--manifest", manifest, "event", "verify", "--loop", name],
                )
            }),
            Series::new(move |_| {
                sandbox.hpp(dir, &["--manifest", manifest, "status", "--loop", name])
            }),
            Series::new(move |_| {
                sandbox.hpp(
                    dir,
                    &["--manifest", manifest, "event", "export", "--loop", name],
                )
            }),
            Series::new(move |_| sandbox.git(dir, &["log", "--format=%B", tip])),
        ];
        let mut labels = vec![
            format!("git-hpp event verify, 10,000 events, {how}"),
            format!("git-hpp status, 10,000 events, {how}"),
            format!("git-hpp event export, 10,000 events, {how}"),
            format!("git log --format=%B, same commits, {how}"),
        ];
        if let (Some(hpp), Some(m), "imported") = (&reference, &reference_manifest, how) {
            let python_dir = python_dir.as_path();
            series.push(Series::new(move |_| {
                let mut cmd = sandbox.command(hpp, python_dir);
                cmd.args(["event", "verify"]);
                cmd
            }));
            series.push(Series::new(move |_| {
                let mut cmd = sandbox.command(hpp, python_dir);
                cmd.args(["status", "--manifest", m.to_str().expect("UTF-8"), "--json"]);
                cmd
            }));
            labels.push("Python hpp event verify, same events".to_owned());
            labels.push("Python hpp status, same events".to_owned());
        }
        run_interleaved(&mut series, plan);
        reads.extend(labels.into_iter().zip(series.iter().map(Series::stats)));
    }
    LongLoops {
        append,
        status,
        reads,
        reference_skipped,
    }
}

/// Measurement E: the peak resident memory of `git-hpp doctor` in a repository with 100,000
/// attestation refs (one real record, as the trust bench lays them out), and of `git
/// for-each-ref` over the same refs, read by GNU time; `None` when `/usr/bin/time` is missing.
fn measure_doctor_memory(sandbox: &Sandbox) -> Option<(f64, f64, Duration)> {
    use sha2::{Digest, Sha256};
    if !Path::new("/usr/bin/time").is_file() {
        return None;
    }
    let dir = sandbox.repo("many-attestations");
    run(sandbox.hpp(
        &dir,
        &[
            "attest",
            "create",
            "--spec",
            "README",
            "--maker",
            "agent-a",
            "--checker",
            "checker-b",
            "--session",
            "bench",
            "--verdict",
            "approved",
        ],
    ));
    let real = run(sandbox.git(
        &dir,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/hpp/attestations/",
        ],
    ));
    let record = rev_parse(sandbox, &dir, &real);
    let id = real.rsplit('/').next().expect("a ref has a last component");
    let script: String = (0..100_000)
        .map(|i| {
            let digest = Sha256::digest(format!("fake tree {i}").as_bytes());
            let hex: String = digest[..20].iter().map(|b| format!("{b:02x}")).collect();
            format!("create refs/hpp/attestations/{hex}/{id} {record}\n")
        })
        .collect();
    run_with_input(
        sandbox.git(&dir, &["update-ref", "--stdin"]),
        script.as_bytes(),
    );
    run(sandbox.git(&dir, &["pack-refs", "--all"]));
    let (doctor, took) = peak_rss(sandbox, &dir, HPP, &["doctor"], None);
    let (git, _) = peak_rss(
        sandbox,
        &dir,
        "git",
        &["for-each-ref", "refs/hpp/attestations/"],
        None,
    );
    Some((doctor, git, took))
}

/// The peak resident set in MiB of `program args` run in `dir` (fed `input` on stdin), read by
/// GNU time, and its wall time.
fn peak_rss(
    sandbox: &Sandbox,
    dir: &Path,
    program: &str,
    args: &[&str],
    input: Option<&[u8]>,
) -> (f64, Duration) {
    use std::io::Write as _;
    let mut cmd = sandbox.command("/usr/bin/time", dir);
    cmd.args(["-f", "%M"]).arg(program).args(args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let started = std::time::Instant::now();
    let mut child = cmd.spawn().expect("GNU time runs");
    let mut stdin = child.stdin.take().expect("a piped stdin");
    stdin
        .write_all(input.unwrap_or_default())
        .expect("feeding stdin");
    drop(stdin);
    let out = child.wait_with_output().expect("GNU time runs");
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "`{program} {args:?}` failed: {text}");
    let kib: f64 = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("GNU time prints the peak in KiB");
    (kib / 1024.0, elapsed)
}

/// Runs of measurement F: the peak memory of an import moved from run to run (50 MiB to 3 GiB
/// for the same file), so one run says little; the worst of several is the figure.
const IMPORT_RUNS: usize = 8;

/// Measurement F: the peak resident memory of `event import` of 10,000 events, each into a new
/// loop, next to `git fast-import` writing the same shape (10,000 commits of one small file
/// each) into a new ref: (git-hpp median, git-hpp worst, fast-import median, fast-import
/// worst) in MiB; `None` without GNU time.
fn measure_import_memory(sandbox: &Sandbox) -> Option<(f64, f64, f64, f64)> {
    if !Path::new("/usr/bin/time").is_file() {
        return None;
    }
    let dir = sandbox.repo("import-memory");
    let manifest = sandbox.root().join("tick-import.manifest.json");
    common::write(
        &manifest,
        format!(r#"{{"protocol_version":"2.1","loop":{TICK_LOOP}}}"#).as_bytes(),
    );
    let log = sandbox.root().join("ticks-import.jsonl");
    let events = ticks(10_000);
    common::write(&log, events.as_bytes());
    let mut stream = String::new();
    for (i, line) in events.lines().enumerate() {
        let seq = i + 1;
        stream.push_str(&format!(
            "blob\nmark :{}\ndata {}\n{line}\n",
            2 * seq,
            line.len()
        ));
        let message = format!("hpp event {seq}: tick (imported)");
        stream.push_str(&format!(
            "commit refs/bench/REF\nmark :{}\ncommitter bench <bench@bench.invalid> {} +0000\ndata {}\n{message}\n",
            2 * seq + 1,
            1_700_000_000 + seq,
            message.len()
        ));
        if seq > 1 {
            stream.push_str(&format!("from :{}\n", 2 * seq - 1));
        }
        stream.push_str(&format!("M 100644 :{} event.json\n\n", 2 * seq));
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for run in 0..IMPORT_RUNS {
        let name = format!("m{run}");
        let args = [
            "--manifest",
            manifest.to_str().expect("a UTF-8 path"),
            "event",
            "import",
            log.to_str().expect("a UTF-8 path"),
            "--loop",
            &name,
        ];
        ours.push(peak_rss(sandbox, &dir, HPP, &args, None).0);
        let input = stream.replace("REF", &name);
        theirs.push(
            peak_rss(
                sandbox,
                &dir,
                "git",
                &["fast-import", "--quiet"],
                Some(input.as_bytes()),
            )
            .0,
        );
    }
    let summary = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() - 1])
    };
    let ((om, ow), (tm, tw)) = (summary(&mut ours), summary(&mut theirs));
    Some((om, ow, tm, tw))
}

fn main() {
    let plan = plan();
    let sandbox = Sandbox::new();
    sandbox.print_preamble(HPP);
    println!(
        "plan:  {} warm-up + {} samples per series, interleaved{}",
        plan.warmup,
        plan.samples,
        if common::quick() {
            " (HPP_BENCH_QUICK)"
        } else {
            ""
        }
    );
    println!();

    let append = measure_append(&sandbox, plan);
    for (label, hpp, git) in &append {
        println!("{label:<26} git-hpp {hpp}  | git update-ref {git}");
    }
    let startup = measure_startup(&sandbox, plan);
    for (label, stats) in &startup {
        println!("{:<26} {label:<17} {stats}", "start-up, 1 loop");
    }

    let (gated, bare) = measure_gates(&sandbox, plan);
    println!(
        "{:<26} gated   {gated}\n{:<26} bare    {bare}",
        "append verified, gates", "append verified, no gates"
    );

    let long = measure_long_loops(&sandbox, plan);
    for (n, stats) in &long.append {
        println!("{:<44} {stats}", format!("event append, {n} events"));
    }
    for (n, stats) in &long.status {
        println!("{:<44} {stats}", format!("status, {n} events"));
    }
    for (label, stats) in &long.reads {
        println!("{label:<44} {stats}");
    }
    if let Some(why) = &long.reference_skipped {
        println!("Python reference series skipped: {why}");
    }
    let doctor = measure_doctor_memory(&sandbox);
    let import = measure_import_memory(&sandbox);

    let ratio = |i: usize, pick: fn(&(&str, Stats, Stats)) -> Stats| {
        pick(&append[i]).median / pick(&append[0]).median
    };
    println!();
    println!(
        "append ratios (median): git-hpp 10k loose / 0 = {:.2}x, 10k packed / 0 = {:.2}x \
         (target < 2x); git update-ref {:.2}x, {:.2}x",
        ratio(1, |r| r.1),
        ratio(2, |r| r.1),
        ratio(1, |r| r.2),
        ratio(2, |r| r.2),
    );
    println!(
        "gate ratio (median): append verified checking 2 bundles + 1 attestation / bare = {:.2}x (target < 3x)",
        gated.median / bare.median
    );
    let append_at = |n: usize| {
        long.append
            .iter()
            .find(|(m, _)| *m == n)
            .map(|(_, s)| s.median)
    };
    let base = append_at(10).expect("measured at 10 events");
    for (n, stats) in &long.append {
        println!(
            "append at {n} events / at 10 = {:.2}x (target <= 1.5x)",
            stats.median / base
        );
    }
    println!(
        "status at 10,000 / at 10 = {:.2}x (target < 2x)",
        long.status[1].1.median / long.status[0].1.median
    );
    let read = |label: &str| {
        long.reads
            .iter()
            .find(|(l, _)| l.starts_with(label))
            .map(|(_, s)| s.median)
    };
    for how in LAYOUTS {
        let pick = |what: &str| {
            long.reads
                .iter()
                .find(|(l, _)| l.starts_with(what) && l.ends_with(how))
                .map(|(_, s)| s.median)
                .expect("measured")
        };
        println!(
            "{how}: export / git log --format=%B = {:.2}x (target <= 3x); event verify / git log = {:.2}x",
            pick("git-hpp event export") / pick("git log"),
            pick("git-hpp event verify") / pick("git log"),
        );
        if let (Some(py_verify), Some(py_status)) =
            (read("Python hpp event verify"), read("Python hpp status"))
        {
            println!(
                "{how}: event verify / Python hpp event verify = {:.2}x (target < 1x); status / Python hpp status = {:.2}x",
                pick("git-hpp event verify") / py_verify,
                pick("git-hpp status") / py_status,
            );
        }
    }
    match doctor {
        Some((doctor, git, took)) => println!(
            "doctor at 100,000 attestations: peak {doctor:.0} MiB (target < 150 MiB) in {:.1} s; git for-each-ref of the same refs: peak {git:.0} MiB",
            took.as_secs_f64()
        ),
        None => println!("doctor memory skipped: /usr/bin/time (GNU time) is not installed"),
    }
    match import {
        Some((ours, ours_worst, git, git_worst)) => println!(
            "event import of 10,000 events, {IMPORT_RUNS} runs: peak median {ours:.0} MiB, worst {ours_worst:.0} MiB (target <= 100 MiB every run); git fast-import of the same shape: median {git:.0} MiB, worst {git_worst:.0} MiB"
        ),
        None => println!("import memory skipped: /usr/bin/time (GNU time) is not installed"),
    }
}
