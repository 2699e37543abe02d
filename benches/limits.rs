//! The limits of `git-hpp snapshot`: the same speed under every spawner, and memory bounded by a
//! constant.
//!
//! Fixtures, each a committed repository made with the real `git`, then left with 10 tracked
//! files modified and 10 untracked files added, after a wait that leaves no file racily clean
//! (both git and the snapshot re-read a file whose stat is too recent to vouch for its content):
//! - `wide-600`: 600 sibling directories at the root, 3 small files each, and a README;
//! - `wide-2000`: 2,000 sibling directories at the root, 2 small files each, and a README;
//! - `mid`: about 3,500 files in about 1,000 directories of mixed depth: a `src/` tree four
//!   levels deep (most directories with a few files, one in ten with 20 to 40) and a `samples/`
//!   directory with 500 sibling subdirectories of 1 to 4 files, as in github/linguist;
//! - `50k`: 50,000 files in 500 directories of 100 (as the trust bench's), plus 2,000 ignored
//!   files under `target/` and the `.gitignore` that ignores them;
//! - `deep`: a chain of 250 nested directories with one file at each level.
//!
//! In each, the snapshot is checked, once, to be the tree `git add -A` + `git write-tree`
//! write into a copy of the index (`GIT_INDEX_FILE`).
//!
//! Measurement A, spawners: in wide-600, wide-2000, mid and 50k, `git hpp snapshot` against the
//! baseline `git status --porcelain` in the same repository, from three spawners, each timing
//! spawn to exit itself and alternating the two commands (each round starts with the other one):
//! - bash: a `bash -c` loop timing each command with `$EPOCHREALTIME`;
//! - Python: `python3 -c`, `subprocess.run([...], stdout=DEVNULL, check=True)` with its other
//!   defaults (`close_fds=True`), timed with `time.perf_counter_ns`;
//! - Node: `node -e`, `child_process.spawnSync("git hpp snapshot", {shell: true, stdio:
//!   ["ignore", "pipe", "pipe"]})` (a harness's way: through `/bin/sh`, its output captured),
//!   timed with `process.hrtime.bigint`.
//!
//! `git hpp` goes through git's dispatcher, as a user's does: the directory of the binary under
//! test comes first on PATH, and each driver checks that `git-hpp` resolves to it. A spawner that
//! is not installed is skipped, saying so. In `deep`, only bash times the two commands. The
//! target: a snapshot within 1.2x of git status, by the ratio of medians, under every spawner.
//!
//! Measurement B, descriptors: in wide-2000 and deep, `bash -c 'ulimit -n 64 && exec git hpp
//! snapshot'` and the same for `git status --porcelain`; whether each exits 0 (and, for the
//! snapshot, whether it printed the checked tree). A failure is reported, not a panic.
//!
//! Measurement C, memory: a repository with one untracked file of 1 GiB (600 MiB under
//! `HPP_BENCH_QUICK=1`, still above git's `core.bigFileThreshold` of 512 MiB, so `git add`
//! streams it), one 1 MiB pseudo-random block repeated so it does not compress to nothing. The
//! peak resident set of one `git-hpp snapshot` and of one `git add -A` into a copy of the index,
//! read by GNU time (`/usr/bin/time -f %M`; skipped, saying so, when missing), and whether the
//! snapshot is the tree `git write-tree` writes after that add. Target: git-hpp under 100 MiB.
//! A failure is reported, not a panic.
//!
//! Measurement D, the pre-command checkpoint: in `50k`, bash alone times the policy gate as an
//! agent host runs it before a shell call it cannot prove harmless (`git hpp policy hook --host
//! claude-code` fed a PreToolUse payload for `make`: the verdict, then a checkpoint of the
//! workspace) against `git status --porcelain`, alternating. Twice: with the workspace as the
//! last checkpoint kept it (the snapshot, and no record written), and with one file rewritten
//! before each of the two commands (so every gate call writes a checkpoint record). Target:
//! within 1.2x of git status. `HPP_BENCH_ONLY=checkpoint` runs this measurement alone.
//!
//! Every repository lives in a temporary directory on disk and every process runs in a hermetic
//! environment (no user or system git config). The benchmark reports and never fails on timing,
//! but it panics if a command it times (or a fixture's set-up or check) exits non-zero, since
//! timing a failing command means nothing.
//!
//! Run it with `cargo bench --bench limits` (this builds the release binary first; the run itself
//! takes a few minutes on two cores, most of it the big file); set `HPP_BENCH_QUICK=1` for a
//! smoke run with fewer samples (about a minute).

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{HPP, Rng, Rounds, Sandbox, Stats, check, describe, run, write};

/// Tracked files modified, and untracked files added, in every fixture.
const MODIFIED: usize = 10;
const UNTRACKED: usize = 10;

/// How long the fixtures wait before they are measured: past the second of the last write for
/// git (an entry not older than the index is racily clean), and past the snapshot's fence (a
/// file changed less than two whole seconds before a snapshot started is read again).
const SETTLE: Duration = Duration::from_millis(3_100);

/// The open-file limit of measurement B.
const NOFILE: usize = 64;

/// A copy of the index, `git add -A` into it, and the tree it gives: git's own snapshot.
const ADD_WRITE_TREE: &str = "T=$(mktemp -u); cp .git/index \"$T\"; GIT_INDEX_FILE=\"$T\" git add -A; \
                              GIT_INDEX_FILE=\"$T\" git write-tree; rm -f \"$T\"";

/// The bash driver: `$1` rounds, the first `$2` unrecorded; prints `which <path>`, then
/// `snapshot <µs>...` and `status <µs>...`.
const BASH_DRIVER: &str = r#"set -euo pipefail
rounds=$1 warmup=$2
snapshot=() status=()
echo "which $(command -v git-hpp)"
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < 2; k++)); do
    if (( (r + k) % 2 == 0 )); then
      t0=${EPOCHREALTIME/./}; git hpp snapshot > /dev/null; t1=${EPOCHREALTIME/./}
      if (( r >= warmup )); then snapshot+=($((t1 - t0))); fi
    else
      t0=${EPOCHREALTIME/./}; git status --porcelain > /dev/null; t1=${EPOCHREALTIME/./}
      if (( r >= warmup )); then status+=($((t1 - t0))); fi
    fi
  done
done
echo "snapshot ${snapshot[*]}"
echo "status ${status[*]}"
"#;

/// The bash driver of measurement D: `$1` rounds, the first `$2` unrecorded, `$3` the
/// PreToolUse payload, `$4` 1 to rewrite `scratch.txt` before each command; prints
/// `which <path>`, then `hook <µs>...` and `status <µs>...`.
const CHECKPOINT_DRIVER: &str = r#"set -euo pipefail
rounds=$1 warmup=$2 payload=$3 change=$4
hook=() status=()
echo "which $(command -v git-hpp)"
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < 2; k++)); do
    if (( change )); then echo "$r $k" > scratch.txt; fi
    if (( (r + k) % 2 == 0 )); then
      t0=${EPOCHREALTIME/./}; git hpp policy hook --host claude-code < "$payload" > /dev/null; t1=${EPOCHREALTIME/./}
      if (( r >= warmup )); then hook+=($((t1 - t0))); fi
    else
      t0=${EPOCHREALTIME/./}; git status --porcelain > /dev/null; t1=${EPOCHREALTIME/./}
      if (( r >= warmup )); then status+=($((t1 - t0))); fi
    fi
  done
done
echo "hook ${hook[*]}"
echo "status ${status[*]}"
"#;

/// The Python driver, the same protocol as the bash one.
const PYTHON_DRIVER: &str = r#"import shutil, subprocess, sys, time
rounds, warmup = int(sys.argv[1]), int(sys.argv[2])
cmds = {"snapshot": ["git", "hpp", "snapshot"], "status": ["git", "status", "--porcelain"]}
names = ["snapshot", "status"]
out = {name: [] for name in names}
print("which", shutil.which("git-hpp"))
for r in range(rounds):
    for k in range(2):
        name = names[(r + k) % 2]
        t0 = time.perf_counter_ns()
        subprocess.run(cmds[name], stdout=subprocess.DEVNULL, check=True)
        t1 = time.perf_counter_ns()
        if r >= warmup:
            out[name].append((t1 - t0) // 1000)
for name in names:
    print(name, *out[name])
"#;

/// The Node driver, the same protocol as the bash one.
const NODE_DRIVER: &str = r#"const { spawnSync } = require("child_process");
const [rounds, warmup] = process.argv.slice(1).map(Number);
const cmds = { snapshot: "git hpp snapshot", status: "git status --porcelain" };
const names = ["snapshot", "status"];
const out = { snapshot: [], status: [] };
const which = spawnSync("command -v git-hpp", { shell: true, encoding: "utf8" });
console.log("which " + which.stdout.trim());
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < 2; k++) {
    const name = names[(r + k) % 2];
    const t0 = process.hrtime.bigint();
    const res = spawnSync(cmds[name], { shell: true, stdio: ["ignore", "pipe", "pipe"] });
    const t1 = process.hrtime.bigint();
    if (res.error || res.status !== 0) {
      process.stderr.write(`${cmds[name]} failed: ${res.error || "exit " + res.status}\n${res.stderr}`);
      process.exit(1);
    }
    if (r >= warmup) out[name].push(String((t1 - t0) / 1000n));
  }
}
for (const name of names) console.log(name + " " + out[name].join(" "));
"#;

/// A process that spawns the two commands and times them itself.
#[derive(Clone, Copy, PartialEq)]
enum Spawner {
    Bash,
    Python,
    Node,
}

impl Spawner {
    const ALL: [Spawner; 3] = [Spawner::Bash, Spawner::Python, Spawner::Node];

    fn name(self) -> &'static str {
        match self {
            Spawner::Bash => "bash",
            Spawner::Python => "python3",
            Spawner::Node => "node",
        }
    }

    /// The driver's command, for `rounds` of which the first `warmup` are not recorded.
    fn command(self, sandbox: &Sandbox, dir: &Path, rounds: Rounds) -> Command {
        let (flag, script) = match self {
            Spawner::Bash => ("-c", BASH_DRIVER),
            Spawner::Python => ("-c", PYTHON_DRIVER),
            Spawner::Node => ("-e", NODE_DRIVER),
        };
        let mut cmd = user_command(sandbox, self.name(), dir);
        cmd.args([flag, script]);
        if self == Spawner::Bash {
            cmd.arg("bash");
        }
        cmd.arg((rounds.warmup + rounds.samples).to_string())
            .arg(rounds.warmup.to_string());
        cmd
    }

    /// The spawner's version, or `None` when it is not installed.
    fn version(self, sandbox: &Sandbox) -> Option<String> {
        let mut cmd = user_command(sandbox, self.name(), sandbox.root());
        cmd.arg("--version");
        let out = cmd.output().ok().filter(|o| o.status.success())?;
        let text = String::from_utf8_lossy(&out.stdout);
        Some(text.lines().next().unwrap_or_default().trim().to_owned())
    }
}

/// A hermetic command with the directory of the binary under test first on PATH, so `git hpp`
/// runs it through git's dispatcher as it would for a user who installed it.
fn user_command(sandbox: &Sandbox, program: &str, dir: &Path) -> Command {
    let bin = Path::new(HPP)
        .parent()
        .expect("the binary under test lives in a directory");
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&rest)),
    )
    .expect("the binary's directory can go on PATH");
    let mut cmd = sandbox.command(program, dir);
    cmd.env("PATH", path);
    cmd
}

/// A few hundred bytes of text that differ from file to file.
fn filler(seed: u64) -> String {
    let mut rng = Rng(seed);
    let target = 200 + rng.below(400);
    let mut text = format!("// file {seed}\n");
    while text.len() < target {
        text.push_str(&format!("let x{} = {:#x};\n", rng.below(100), rng.next()));
    }
    text
}

/// A committed repository with some files changed and some added.
struct Fixture {
    name: &'static str,
    dir: PathBuf,
    /// The generated tracked files, relative to `dir`.
    files: Vec<String>,
    /// Files git tracks: the generated ones, the README and any `.gitignore`.
    tracked: usize,
    /// Directories holding the generated files.
    dirs: usize,
    /// The tree git writes for the workspace, set once it has settled.
    tree: String,
}

/// A repository named `name` holding a README, `files` (relative paths, created with their
/// directories) and, when `ignored` is not empty, those files under an ignored `target/`;
/// committed, then dirtied ([`dirty`]).
fn fixture(
    sandbox: &Sandbox,
    name: &'static str,
    files: Vec<String>,
    ignored: &[String],
) -> Fixture {
    let dir = sandbox.init(name);
    let start = Instant::now();
    write(&dir.join("README.md"), format!("# {name}\n").as_bytes());
    let mut dirs = BTreeSet::new();
    for (i, file) in files.iter().enumerate() {
        let path = dir.join(file);
        let parent = path.parent().expect("a file has a directory");
        if dirs.insert(parent.to_path_buf()) {
            std::fs::create_dir_all(parent).expect("creating a directory");
        }
        write(&path, filler(i as u64).as_bytes());
    }
    if !ignored.is_empty() {
        write(&dir.join(".gitignore"), b"target/\n");
        for (i, file) in ignored.iter().enumerate() {
            let path = dir.join("target").join(file);
            std::fs::create_dir_all(path.parent().expect("a file has a directory"))
                .expect("creating an ignored directory");
            write(&path, filler(1_000_000 + i as u64).as_bytes());
        }
    }
    let generated = start.elapsed();
    let start = Instant::now();
    run(sandbox.git(&dir, &["add", "-A"]));
    run(sandbox.git(&dir, &["commit", "-q", "-m", name]));
    let committed = start.elapsed();
    let tracked = run(sandbox.git(&dir, &["ls-files"])).lines().count();
    let expected = files.len() + 1 + usize::from(!ignored.is_empty());
    assert_eq!(
        tracked, expected,
        "{name}: every generated file but the ignored ones should be tracked"
    );
    println!(
        "setup {name:<9}: {tracked} tracked files in {} directories{}, written in {:.1} s, \
         `git add -A && git commit` in {:.1} s",
        dirs.len(),
        if ignored.is_empty() {
            String::new()
        } else {
            format!(" + {} ignored", ignored.len())
        },
        generated.as_secs_f64(),
        committed.as_secs_f64()
    );
    let fixture = Fixture {
        name,
        dir,
        dirs: dirs.len(),
        files,
        tracked,
        tree: String::new(),
    };
    dirty(&fixture);
    fixture
}

/// Appends a line to `MODIFIED` tracked files and adds `UNTRACKED` files next to others, both
/// spread over the fixture's files.
fn dirty(fixture: &Fixture) {
    let n = fixture.files.len();
    for i in 0..MODIFIED {
        let path = fixture.dir.join(&fixture.files[i * n / MODIFIED]);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
        file.write_all(format!("modified {i}\n").as_bytes())
            .unwrap_or_else(|e| panic!("cannot append to {}: {e}", path.display()));
    }
    for i in 0..UNTRACKED {
        let next_to = fixture
            .dir
            .join(&fixture.files[(i * n + n / 2) / UNTRACKED]);
        let parent = next_to.parent().expect("a file has a directory");
        write(
            &parent.join(format!("new{i:02}.txt")),
            filler(2_000_000 + i as u64).as_bytes(),
        );
    }
}

/// `wide-<dirs>`: `dirs` sibling directories at the root, `per_dir` files each.
fn wide(dirs: usize, per_dir: usize) -> Vec<String> {
    (0..dirs)
        .flat_map(|d| (0..per_dir).map(move |f| format!("w{d:04}/f{f}.txt")))
        .collect()
}

/// `mid`: a `src/` tree four levels deep of mixed sizes, and `samples/` with 500 siblings.
fn mid() -> Vec<String> {
    let mut rng = Rng(0x5eed);
    let mut files = Vec::new();
    let add = |files: &mut Vec<String>, dir: &str, count: usize| {
        files.extend((0..count).map(|f| format!("{dir}/m{f:02}.rs")));
    };
    for s in 0..500 {
        let count = 1 + rng.below(4);
        add(&mut files, &format!("samples/lang{s:03}"), count);
    }
    for a in 0..8 {
        let a = format!("src/a{a}");
        add(&mut files, &a, 1 + rng.below(3));
        for b in 0..4 {
            let b = format!("{a}/b{b}");
            add(&mut files, &b, 1 + rng.below(3));
            for c in 0..4 {
                let c = format!("{b}/c{c}");
                add(&mut files, &c, 1 + rng.below(3));
                for d in 0..3 {
                    let count = if rng.below(10) == 0 {
                        20 + rng.below(21)
                    } else {
                        1 + rng.below(4)
                    };
                    add(&mut files, &format!("{c}/d{d}"), count);
                }
            }
        }
    }
    files
}

/// `50k`: 500 directories of 100 files; and its 2,000 ignored files (under `target/`).
fn fifty_k() -> (Vec<String>, Vec<String>) {
    let files = (0..500)
        .flat_map(|d| (0..100).map(move |f| format!("d{d:03}/f{f:03}.txt")))
        .collect();
    let ignored = (0..20)
        .flat_map(|k| (0..100).map(move |j| format!("debug/b{k:02}/o{j:03}.o")))
        .collect();
    (files, ignored)
}

/// `deep`: a chain of 250 nested directories, one file at each level.
fn deep() -> Vec<String> {
    (0..250)
        .map(|i| format!("{}f{i:03}.txt", "d/".repeat(i + 1)))
        .collect()
}

/// After the fixtures have settled: git status sees exactly the changes (and writes its
/// refreshed index), and the snapshot is git's tree.
fn settle_and_check(sandbox: &Sandbox, fixtures: &mut [Fixture]) {
    // What the set-up wrote goes to disk now, not during the timing.
    let _ = Command::new("sync").status();
    std::thread::sleep(SETTLE);
    for fixture in fixtures {
        let dir = &fixture.dir;
        let status = run(sandbox.git(dir, &["status", "--porcelain"]));
        assert_eq!(
            status.lines().count(),
            MODIFIED + UNTRACKED,
            "{}: git status should see exactly the modified and the untracked files",
            fixture.name
        );
        let snapshot = run(sandbox.hpp(dir, &["snapshot"]));
        let tree = run(sandbox.bash(dir, ADD_WRITE_TREE));
        assert_eq!(
            snapshot, tree,
            "{}: git-hpp snapshot should be the tree git add -A && git write-tree writes",
            fixture.name
        );
        fixture.tree = tree;
    }
}

/// The samples (microseconds) a driver printed on its `name` line.
fn samples(lines: &BTreeMap<&str, &str>, name: &str, what: &str, text: &str) -> Vec<Duration> {
    lines
        .get(name)
        .unwrap_or_else(|| panic!("the {what} printed no {name} line:\n{text}"))
        .split_whitespace()
        .map(|us| Duration::from_micros(us.parse().expect("a sample in microseconds")))
        .collect()
}

/// What a driver measured: (snapshot, git status).
fn drive(sandbox: &Sandbox, spawner: Spawner, dir: &Path, rounds: Rounds) -> (Stats, Stats) {
    let mut cmd = spawner.command(sandbox, dir, rounds);
    let what = format!("{} driver in {}", spawner.name(), dir.display());
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn the {what}: {e}"));
    check(&what, &out);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    assert_eq!(
        lines.get("which").copied(),
        Some(HPP),
        "the {what}: git-hpp should resolve to the binary under test"
    );
    let series = |name: &str| -> Stats {
        let samples = samples(&lines, name, &what, &text);
        assert_eq!(
            samples.len(),
            rounds.samples,
            "the {what} should print one {name} sample per recorded round"
        );
        Stats::of(&samples)
    };
    (series("snapshot"), series("status"))
}

/// Measurement D in `dir`: (gate with its checkpoint, git status), the workspace changed
/// before each command when `change`; also how many checkpoints the gate wrote.
fn drive_checkpoint(
    sandbox: &Sandbox,
    dir: &Path,
    rounds: Rounds,
    change: bool,
) -> (Stats, Stats, usize) {
    let payload = sandbox.root().join("pre-tool-use.json");
    write(
        &payload,
        &format!(
            "{{\"session_id\":\"bench\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\
             \"tool_input\":{{\"command\":\"make\"}},\"cwd\":{:?}}}",
            dir.display().to_string()
        )
        .into_bytes(),
    );
    let count = || {
        let out = run(sandbox.git(dir, &["for-each-ref", "refs/hpp/checkpoints/"]));
        out.lines().count()
    };
    let before = count();
    let mut cmd = user_command(sandbox, "bash", dir);
    cmd.arg("-c")
        .arg(CHECKPOINT_DRIVER)
        .arg("checkpoint-driver")
        .arg((rounds.warmup + rounds.samples).to_string())
        .arg(rounds.warmup.to_string())
        .arg(&payload)
        .arg(if change { "1" } else { "0" });
    let what = format!("checkpoint driver in {}", dir.display());
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn the {what}: {e}"));
    check(&what, &out);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|line| line.split_once(' '))
        .collect();
    assert_eq!(
        lines.get("which").copied(),
        Some(HPP),
        "the {what}: git-hpp"
    );
    let series = |name: &str| Stats::of(&samples(&lines, name, &what, &text));
    (series("hook"), series("status"), count() - before)
}

/// One row of measurement A.
struct Timing {
    fixture: &'static str,
    spawner: &'static str,
    snapshot: Stats,
    status: Stats,
}

/// How a command under a limit ended: its stdout, or why it failed.
fn outcome(out: &Output) -> Result<String, String> {
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first: String = first.chars().take(100).collect();
    Err(format!("{}: {first}", out.status))
}

/// Measurement B in one fixture: (snapshot, git status) under `ulimit -n NOFILE`.
fn under_ulimit(sandbox: &Sandbox, fixture: &Fixture) -> (String, String) {
    let limited = |command: &str| -> Output {
        let mut cmd = user_command(sandbox, "bash", &fixture.dir);
        cmd.args(["-c", &format!("ulimit -n {NOFILE} && exec {command}")]);
        let what = describe(&cmd);
        cmd.output()
            .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"))
    };
    let snapshot = match outcome(&limited("git hpp snapshot")) {
        Ok(tree) if tree == fixture.tree => "ok, the checked tree".to_owned(),
        Ok(tree) => format!(
            "exit 0 but a DIFFERENT tree: {tree} (git's: {})",
            fixture.tree
        ),
        Err(why) => format!("FAILED, {why}"),
    };
    let out = limited("git status --porcelain");
    let status = match outcome(&out) {
        Ok(text) if text.lines().count() == MODIFIED + UNTRACKED => "ok".to_owned(),
        // git warns ("Too many open files") and lists what it could read, exiting 0.
        Ok(text) => format!(
            "exit 0 but WRONG, {} of {} lines, {} warnings on stderr",
            text.lines().count(),
            MODIFIED + UNTRACKED,
            String::from_utf8_lossy(&out.stderr)
                .matches("warning:")
                .count()
        ),
        Err(why) => format!("FAILED, {why}"),
    };
    (snapshot, status)
}

/// The peak resident set in MiB of `cmd`, read by GNU time, its wall time and how it ended.
struct Peak {
    mib: Option<f64>,
    took: Duration,
    outcome: Result<String, String>,
}

fn peak_rss(
    sandbox: &Sandbox,
    dir: &Path,
    program: &str,
    args: &[&str],
    index: Option<&Path>,
) -> Peak {
    let mut cmd = sandbox.command("/usr/bin/time", dir);
    cmd.args(["-f", "%M"]).arg(program).args(args);
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let what = describe(&cmd);
    let started = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mib = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse::<f64>().ok())
        .map(|kib| kib / 1024.0);
    Peak {
        mib,
        took,
        outcome: outcome(&out),
    }
}

/// Measurement C: (git-hpp snapshot, git add -A, trees agree, file size in MiB); `None`
/// without GNU time.
fn measure_memory(sandbox: &Sandbox) -> Option<(Peak, Peak, String, usize)> {
    if !Path::new("/usr/bin/time").is_file() {
        return None;
    }
    let mib = if common::quick() { 600 } else { 1024 };
    let dir = sandbox.init("one-big-file");
    write(&dir.join("README.md"), b"# one big file\n");
    run(sandbox.git(&dir, &["add", "-A"]));
    run(sandbox.git(&dir, &["commit", "-q", "-m", "first"]));
    let mut rng = Rng(0xb16_f11e);
    let block: Vec<u8> = (0..(1 << 20) / 8)
        .flat_map(|_| rng.next().to_le_bytes())
        .collect();
    let start = Instant::now();
    let path = dir.join("big.bin");
    let mut file = std::fs::File::create(&path)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    for _ in 0..mib {
        file.write_all(&block)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
    drop(file);
    let _ = Command::new("sync").status();
    println!(
        "setup one-big-file: {mib} MiB untracked file written in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let hpp = peak_rss(sandbox, &dir, HPP, &["snapshot"], None);
    let index = sandbox.root().join("one-big-file.index");
    std::fs::copy(dir.join(".git/index"), &index).expect("copying the index");
    let git = peak_rss(sandbox, &dir, "git", &["add", "-A"], Some(&index));
    let same = match (&hpp.outcome, &git.outcome) {
        (Ok(snapshot), Ok(_)) => {
            let mut cmd = sandbox.git(&dir, &["write-tree"]);
            cmd.env("GIT_INDEX_FILE", &index);
            let tree = run(cmd);
            if *snapshot == tree {
                format!("same tree {tree}")
            } else {
                format!("DIFFERENT trees: snapshot {snapshot}, git {tree}")
            }
        }
        _ => "trees not compared: a command failed".to_owned(),
    };
    Some((hpp, git, same, mib))
}

fn print_peak(label: &str, peak: &Peak, note: &str) {
    let mib = peak
        .mib
        .map_or_else(|| "n/a".to_owned(), |m| format!("{m:.1}"));
    let ended = match &peak.outcome {
        Ok(_) => "exit 0".to_owned(),
        Err(why) => format!("FAILED, {why}"),
    };
    println!(
        "{label:<34} {mib:>9} MiB {:>8.1} s  {ended}{note}",
        peak.took.as_secs_f64()
    );
}

fn main() {
    let rounds = Rounds::standard();
    let sandbox = Sandbox::new();
    sandbox.print_preamble(HPP);
    let spawners: Vec<Spawner> = Spawner::ALL
        .into_iter()
        .filter(|s| match s.version(&sandbox) {
            Some(version) => {
                println!("{:<7} {version}", format!("{}:", s.name()));
                true
            }
            None => {
                println!("{:<7} skipped: not installed", format!("{}:", s.name()));
                false
            }
        })
        .collect();
    println!(
        "plan:   {} warm-up + {} samples of each command per fixture and spawner, the two \
         alternating{}",
        rounds.warmup,
        rounds.samples,
        if common::quick() {
            " (HPP_BENCH_QUICK)"
        } else {
            ""
        }
    );

    let only_checkpoint = std::env::var("HPP_BENCH_ONLY").is_ok_and(|v| v == "checkpoint");
    let (files, ignored) = fifty_k();
    let mut fixtures = if only_checkpoint {
        vec![fixture(&sandbox, "50k", files, &ignored)]
    } else {
        vec![
            fixture(&sandbox, "wide-600", wide(600, 3), &[]),
            fixture(&sandbox, "wide-2000", wide(2_000, 2), &[]),
            fixture(&sandbox, "mid", mid(), &[]),
            fixture(&sandbox, "50k", files, &ignored),
            fixture(&sandbox, "deep", deep(), &[]),
        ]
    };
    settle_and_check(&sandbox, &mut fixtures);
    if only_checkpoint {
        report_checkpoint(&sandbox, &fixtures, rounds);
        return;
    }

    let mut timings = Vec::new();
    for fixture in &fixtures {
        let only_bash = fixture.name == "deep";
        for &spawner in &spawners {
            if only_bash && spawner != Spawner::Bash {
                continue;
            }
            let (snapshot, status) = drive(&sandbox, spawner, &fixture.dir, rounds);
            timings.push(Timing {
                fixture: fixture.name,
                spawner: spawner.name(),
                snapshot,
                status,
            });
        }
    }

    let limited: Vec<(&str, (String, String))> = fixtures
        .iter()
        .filter(|f| matches!(f.name, "wide-2000" | "deep"))
        .map(|f| (f.name, under_ulimit(&sandbox, f)))
        .collect();

    let memory = measure_memory(&sandbox);
    let checkpoint = checkpoint_rows(&sandbox, &fixtures, rounds);

    println!();
    println!(
        "fixtures ({MODIFIED} modified, {UNTRACKED} untracked each): snapshot = git add -A + \
         write-tree on a copy of the index"
    );
    for fixture in &fixtures {
        println!(
            "{:<10} {:>6} tracked files {:>5} dirs  same tree {}",
            fixture.name, fixture.tracked, fixture.dirs, fixture.tree
        );
    }

    println!();
    println!(
        "A. git hpp snapshot vs git status --porcelain, timed inside each spawner (target <= 1.2x)"
    );
    println!(
        "{:<10} {:<8} {:>20} {:>20} {:>6}",
        "fixture", "spawner", "snapshot ms (p90)", "git status ms (p90)", "ratio"
    );
    for t in &timings {
        println!(
            "{:<10} {:<8} {:>9.1} ({:>7.1}) {:>9.1} ({:>7.1}) {:>5.2}x",
            t.fixture,
            t.spawner,
            t.snapshot.median,
            t.snapshot.p90,
            t.status.median,
            t.status.p90,
            t.snapshot.median / t.status.median,
        );
    }

    println!();
    println!("B. under `ulimit -n {NOFILE}`");
    for (name, (snapshot, status)) in &limited {
        println!("{name:<10} git hpp snapshot: {snapshot}");
        println!("{name:<10} git status:       {status}");
    }

    println!();
    match memory {
        Some((hpp, git, same, mib)) => {
            println!(
                "C. peak resident memory, one untracked file of {mib} MiB (target for git-hpp < 100 MiB)"
            );
            print_peak("git-hpp snapshot", &hpp, "");
            print_peak("git add -A (index copy)", &git, &format!("; {same}"));
        }
        None => println!("C. memory skipped: /usr/bin/time (GNU time) is not installed"),
    }
    println!();
    print_checkpoint(&checkpoint);
}

/// Measurement D's rows: (what, gate with its checkpoint, git status, checkpoints written).
fn checkpoint_rows(
    sandbox: &Sandbox,
    fixtures: &[Fixture],
    rounds: Rounds,
) -> Vec<(&'static str, Stats, Stats, usize)> {
    let dir = &fixtures
        .iter()
        .find(|f| f.name == "50k")
        .expect("the 50k fixture")
        .dir;
    let (hook, status, written) = drive_checkpoint(sandbox, dir, rounds, false);
    let unchanged = ("unchanged", hook, status, written);
    let (hook, status, written) = drive_checkpoint(sandbox, dir, rounds, true);
    vec![unchanged, ("changed", hook, status, written)]
}

fn print_checkpoint(rows: &[(&'static str, Stats, Stats, usize)]) {
    println!(
        "D. the policy gate with its pre-command checkpoint vs git status --porcelain, 50k, bash \
         (target <= 1.2x)"
    );
    println!(
        "{:<10} {:>20} {:>20} {:>6} {:>12}",
        "workspace", "gate ms (p90)", "git status ms (p90)", "ratio", "checkpoints"
    );
    for (what, hook, status, written) in rows {
        println!(
            "{:<10} {:>9.1} ({:>7.1}) {:>9.1} ({:>7.1}) {:>5.2}x {:>12}",
            what,
            hook.median,
            hook.p90,
            status.median,
            status.p90,
            hook.median / status.median,
            written
        );
    }
}

fn report_checkpoint(sandbox: &Sandbox, fixtures: &[Fixture], rounds: Rounds) {
    let rows = checkpoint_rows(sandbox, fixtures, rounds);
    println!();
    print_checkpoint(&rows);
}
