//! The test harness: real temporary repositories, the real `git`, and the built `git-hpp`,
//! all in one hermetic environment cut off from the user's configuration.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_fs::TempDir;
use assert_fs::fixture::ChildPath;
use assert_fs::prelude::*;

pub mod hosts;
pub mod python;

/// Returns `attest create` for SPEC.md by maker-a, checked by checker-b in `session`, with
/// `verdict`: the attestation most tests record.
pub fn attest_args<'a>(session: &'a str, verdict: &'a str) -> Vec<&'a str> {
    vec![
        "attest",
        "create",
        "--spec",
        "SPEC.md",
        "--maker",
        "maker-a",
        "--checker",
        "checker-b",
        "--session",
        session,
        "--verdict",
        verdict,
    ]
}

/// Makes an ed25519 key with the real `ssh-keygen` beside the repositories (no passphrase);
/// returns the private key's path and the public key line.
pub fn keygen(sandbox: &Sandbox, name: &str) -> (PathBuf, String) {
    let key = sandbox.path(name);
    let out = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen runs (the tests need the real one)");
    assert!(
        out.status.success(),
        "ssh-keygen failed:\n{}",
        Run::from_output(&out)
    );
    let public = std::fs::read_to_string(format!("{}.pub", key.display()))
        .expect("ssh-keygen wrote the public key");
    (key, public.trim().to_owned())
}

/// The built binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_git-hpp");

/// The built `hop` binary.
pub const HOP: &str = env!("CARGO_BIN_EXE_hop");

/// A sandbox: a temporary directory with its own HOME and an empty global git config.
pub struct Sandbox {
    tmp: TempDir,
    /// The repository the commands run in (a plain directory for `Sandbox::empty`).
    pub root: PathBuf,
    home: PathBuf,
    tick: Cell<u32>,
    /// Extra environment for every command (GIT_DIR, an identity, ...).
    pub env: BTreeMap<String, String>,
    identity: bool,
}

impl Sandbox {
    /// Returns a fresh repository on `main` with one commit, and no git identity configured
    /// (as on CI): commits made by the harness's own `git` get one through the environment,
    /// commands under test do not.
    pub fn repo() -> Self {
        Self::repo_in(Self::empty())
    }

    /// As [`Sandbox::repo`], with every repository the sandbox's git makes (`init`, `clone`) on
    /// the ref backend `format` (`files`, `reftable`), whatever `HPP_TEST_REF_FORMAT` says.
    pub fn repo_with_ref_format(format: &str) -> Self {
        let sandbox = Self::empty();
        std::fs::write(
            sandbox.home.join(".gitconfig"),
            format!("[init]\n\tdefaultRefFormat = {format}\n"),
        )
        .expect("the sandbox is writable");
        Self::repo_in(sandbox)
    }

    fn repo_in(sandbox: Self) -> Self {
        sandbox.git(["init", "-q", "-b", "main"]);
        sandbox
            .child("README")
            .write_str("hello\n")
            .expect("the sandbox is writable");
        sandbox.git(["add", "README"]);
        sandbox.git(["commit", "-q", "-m", "initial"]);
        sandbox
    }

    /// Returns a sandbox whose `root` is an empty directory that is not a repository.
    pub fn empty() -> Self {
        let tmp = TempDir::new().expect("a temporary directory can be created");
        let root = tmp.child("work");
        root.create_dir_all().expect("the sandbox is writable");
        let home = tmp.child("home");
        // HPP_TEST_REF_FORMAT=reftable runs the whole suite on git's reftable ref backend:
        // every repository and clone a test makes takes it from init.defaultRefFormat.
        let config = match std::env::var("HPP_TEST_REF_FORMAT") {
            Ok(format) if !format.is_empty() => format!("[init]\n\tdefaultRefFormat = {format}\n"),
            _ => String::new(),
        };
        home.child(".gitconfig")
            .write_str(&config)
            .expect("the sandbox is writable");
        Self {
            root: root.to_path_buf(),
            home: home.to_path_buf(),
            tmp,
            tick: Cell::new(0),
            env: BTreeMap::new(),
            identity: false,
        }
    }

    /// Returns a path inside the sandbox's temporary directory, next to `root`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.beside(name).to_path_buf()
    }

    /// Returns `rel` under `root` (in the repository), to write with assert_fs (`write_str`,
    /// `touch`, `create_dir_all`, missing parents made) or to check with `assert`.
    pub fn child(&self, rel: &str) -> ChildPath {
        ChildPath::new(self.root.join(rel))
    }

    /// Returns `name` in the sandbox's temporary directory next to `root`: outside the
    /// repository, so writing it leaves the worktree clean.
    pub fn beside(&self, name: &str) -> ChildPath {
        self.tmp.child(name)
    }

    /// Returns `program` in the hermetic environment, run in `cwd`.
    pub fn command(&self, program: &str, cwd: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(cwd).env_clear();
        // The built binaries come first, so `git hpp` in a hook script runs the one under test.
        let bin_dir = Path::new(BIN).parent().expect("the binary has a directory");
        let mut dirs = vec![bin_dir.to_path_buf()];
        if let Some(path) = std::env::var_os("PATH") {
            dirs.extend(std::env::split_paths(&path));
        }
        cmd.env(
            "PATH",
            std::env::join_paths(dirs).expect("PATH entries join"),
        );
        let gitconfig = self.home.join(".gitconfig");
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", &gitconfig)
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .env("NO_COLOR", "1")
            .env("GIT_TERMINAL_PROMPT", "0");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs the real `git` in `root`; panics with its output on failure.
    pub fn git<const N: usize>(&self, args: [&str; N]) -> String {
        self.git_in(&self.root, &args)
    }

    /// Runs the real `git` in `cwd`; panics with its output on failure.
    pub fn git_in(&self, cwd: &Path, args: &[&str]) -> String {
        let t = self.tick.get() + 1;
        self.tick.set(t);
        let date = format!("{} +0000", 1_700_000_000 + u64::from(t) * 60);
        let mut cmd = self.command("git", cwd);
        cmd.args(args)
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date);
        let out = cmd.output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} failed in {}:\n{}",
            cwd.display(),
            Run::from_output(&out)
        );
        String::from_utf8(out.stdout)
            .expect("git prints UTF-8 here")
            .trim_end()
            .to_owned()
    }

    /// Runs the real `git` in `root` with `input` on its stdin (`mktree`, `hash-object
    /// --stdin`); panics with its output on failure, returns its stdout trimmed.
    pub fn git_fed(&self, args: &[&str], input: &str) -> String {
        let mut cmd = self.command("git", &self.root);
        cmd.args(args);
        let run = Run::fed(cmd, input);
        assert_eq!(run.code, 0, "git {args:?} failed:\n{run}");
        run.stdout.trim_end().to_owned()
    }

    /// As [`Sandbox::git_fed`], in `cwd`.
    pub fn git_fed_in(&self, cwd: &Path, args: &[&str], input: &str) -> String {
        let mut cmd = self.command("git", cwd);
        cmd.args(args);
        let run = Run::fed(cmd, input);
        assert_eq!(run.code, 0, "git {args:?} failed:\n{run}");
        run.stdout.trim_end().to_owned()
    }

    /// Forges what someone who can write refs could: the attestation record at `reference`
    /// copied under the workspace's tree now (`attest verify --json`), with that tree as its
    /// snapshot.
    pub fn rebind_to_workspace(&self, reference: &str) {
        let now = self
            .hpp_in(&self.root, &["attest", "verify", "--json"])
            .json(2);
        let tree = now["tree"].as_str().expect("a tree").to_owned();
        let forged_listing: String = self
            .git(["ls-tree", reference])
            .lines()
            .map(|line| {
                if line.ends_with("\tsnapshot") {
                    format!("040000 tree {tree}\tsnapshot\n")
                } else {
                    format!("{line}\n")
                }
            })
            .collect();
        let forged_tree = self.git_fed(&["mktree"], &forged_listing);
        let commit = self.git(["commit-tree", &forged_tree, "-m", "forged"]);
        self.git([
            "update-ref",
            &format!("refs/hpp/attestations/{tree}/forged"),
            &commit,
        ]);
    }

    /// Gives commands under test a git identity (by default they run without one).
    pub fn with_identity(mut self) -> Self {
        self.identity = true;
        self
    }

    /// Runs `git-hpp` in `root`.
    pub fn hpp<const N: usize>(&self, args: [&str; N]) -> Run {
        self.hpp_in(&self.root, &args)
    }

    /// Runs `git-hpp` in `cwd`.
    pub fn hpp_in(&self, cwd: &Path, args: &[&str]) -> Run {
        self.hpp_command(cwd, args)
            .output()
            .map(|o| Run::from_output(&o))
            .expect("git-hpp runs")
    }

    /// Runs `hop` in `cwd`.
    pub fn hop_in(&self, cwd: &Path, args: &[&str]) -> Run {
        self.command(HOP, cwd)
            .args(args)
            .output()
            .map(|o| Run::from_output(&o))
            .expect("hop runs")
    }

    /// Starts `git-hpp args` in `root` with its output piped, and returns at once (for races:
    /// wait for it with `wait_with_output`).
    pub fn spawn_hpp(&self, args: &[&str]) -> std::process::Child {
        self.hpp_command(&self.root, args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("git-hpp starts")
    }

    /// Returns the `git-hpp` command, ready to spawn (for races).
    pub fn hpp_command(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command(BIN, cwd);
        cmd.args(args);
        if self.identity {
            cmd.env("GIT_COMMITTER_NAME", "Hpp Tester")
                .env("GIT_COMMITTER_EMAIL", "tester@example.com");
        }
        cmd
    }

    /// Returns every ref under refs/hpp/ with its target, as `git for-each-ref` prints them.
    pub fn hpp_refs(&self) -> String {
        self.git([
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/hpp/",
        ])
    }

    /// Starts the work on the current branch's loop ([`START`]).
    pub fn start_work(&self) -> Run {
        self.hpp(START)
    }

    /// Appends a `tick` to the loop `name` in `dir` under `manifest` (a [`TICKS`] machine):
    /// a loop as long as a test needs.
    pub fn tick_in(&self, dir: &Path, manifest: &str, name: &str) -> Run {
        let args = [
            "--manifest",
            manifest,
            "event",
            "append",
            "--type",
            "tick",
            "--loop",
            name,
        ];
        self.hpp_in(dir, &args)
    }

    /// A sandbox whose temporary files go to its own `tmp` directory (returned), so a test
    /// can see what a command left there, or left running with it in its command line.
    pub fn with_own_tmp() -> (Self, PathBuf) {
        let mut sandbox = Self::empty();
        let tmp = sandbox.path("tmp");
        std::fs::create_dir_all(&tmp).expect("the sandbox is writable");
        sandbox
            .env
            .insert("TMPDIR".into(), tmp.display().to_string());
        (sandbox, tmp)
    }

    /// Starts the loop `name` in `dir` (a `work_started` event by agent-one): a loop record to
    /// sync, with nothing more to it.
    pub fn start_loop_in(&self, dir: &Path, name: &str) -> Run {
        let data = r#"{"work":"W","maker":"agent-one"}"#;
        let args = [
            "event",
            "append",
            "--type",
            "work_started",
            "--loop",
            name,
            "--data",
            data,
        ];
        self.hpp_in(dir, &args)
    }

    /// Appends the five events that take a loop to verified, each gate passed by real records.
    pub fn walk_to_verified(&self, loop_name: &str) {
        self.walk_steps(loop_name, 0..5);
    }

    /// Appends `events` (0-based) of the five that take a loop to verified, each gate passed
    /// by real records: the scope names the work and `agent-a` as maker; a real evidence run
    /// (its artifact in an ignored directory, so the tree does not move); an approval by
    /// `checker-b` of README; a person's approval by `alice`, unsigned (no signatures required).
    pub fn walk_steps(&self, loop_name: &str, events: std::ops::Range<usize>) {
        let steps: [&dyn Fn(); 5] = [
            &|| {
                let mut args = vec!["event", "append", "--loop", loop_name, "--type"];
                args.push("work_started");
                args.extend(SCOPE);
                self.hpp_in(&self.root, &args).ok();
            },
            &|| self.record_evidence(loop_name),
            &|| {
                self.approve_tree("checker-b");
                self.hpp([
                    "event",
                    "append",
                    "--loop",
                    loop_name,
                    "--type",
                    "check_passed",
                ])
                .ok();
            },
            &|| {
                self.hpp([
                    "event",
                    "append",
                    "--loop",
                    loop_name,
                    "--type",
                    "human_approved",
                    "--by",
                    "alice",
                ])
                .ok();
            },
            &|| {
                self.hpp(["event", "append", "--loop", loop_name, "--type", "verified"])
                    .ok();
            },
        ];
        for step in &steps[events] {
            step();
        }
    }

    /// Runs a real criterion for `loop_name` and records it as its `evidence_recorded`; the
    /// artifact goes to `hpp-out/`, which the repository ignores, so the tree stays put.
    pub fn record_evidence(&self, loop_name: &str) {
        self.ignore_outputs();
        let artifact = format!("hpp-out/{loop_name}.txt");
        let script = format!("mkdir -p hpp-out && date +%s%N >> {artifact}");
        self.hpp_in(
            &self.root,
            &[
                "evidence",
                "run",
                "--loop",
                loop_name,
                "--id",
                "unit",
                "--artifact",
                &artifact,
                "--record-event",
                "--",
                "sh",
                "-c",
                &script,
            ],
        )
        .ok();
    }

    /// Records `checker`'s approval of the workspace tree (spec README, maker `agent-a`).
    pub fn approve_tree(&self, checker: &str) {
        self.approve_tree_in(&self.root, checker);
    }

    /// As [`Sandbox::approve_tree`], in the repository at `dir` (a clone beside it).
    pub fn approve_tree_in(&self, dir: &Path, checker: &str) {
        self.hpp_in(
            dir,
            &[
                "attest",
                "create",
                "--spec",
                "README",
                "--maker",
                "agent-a",
                "--checker",
                checker,
                "--session",
                "review:1",
                "--verdict",
                "approved",
            ],
        )
        .ok();
    }

    /// Makes the repository ignore `hpp-out/`, where the harness's criteria write.
    pub fn ignore_outputs(&self) {
        let exclude = self.git(["rev-parse", "--git-path", "info/exclude"]);
        let path = self.root.join(exclude.trim());
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if !text.lines().any(|l| l == "hpp-out/") {
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("writable");
            std::fs::write(&path, format!("{text}hpp-out/\n")).expect("writable");
        }
    }
}

/// The flags that pass the scope gate of `work_started`: a work item and the maker.
pub const SCOPE: [&str; 4] = ["--work", "ITEM-1", "--maker", "agent-a"];

/// `event append --type work_started` with [`SCOPE`]: the first event of most tests' loops.
pub const START: [&str; 8] = [
    "event",
    "append",
    "--type",
    "work_started",
    "--work",
    "ITEM-1",
    "--maker",
    "agent-a",
];

/// What one command did.
#[must_use = "assert on it (.ok(), .refused(), .exit(n))"]
pub struct Run {
    /// The exit code (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Runs `cmd` with `input` on its stdin (a hook's payload) and captures it.
    pub fn fed(mut cmd: Command, input: &str) -> Self {
        use std::io::Write;
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the command starts");
        // A command may end without reading its input (a hook that fails before it reads):
        // the pipe it closed is its answer, not the test's failure.
        match child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(input.as_bytes())
        {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => panic!("writing the command's input: {e}"),
        }
        Self::from_output(&child.wait_with_output().expect("the command finishes"))
    }

    /// Captures a finished process.
    pub fn from_output(out: &Output) -> Self {
        Self {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts exit 0 and returns stdout.
    #[track_caller]
    pub fn ok(self) -> String {
        assert_eq!(self.code, 0, "expected success:\n{self}");
        self.stdout
    }

    /// Asserts exit 0 and returns stdout followed by stderr (for what a command says beside
    /// its output: warnings).
    #[track_caller]
    pub fn ok_with_stderr(self) -> String {
        assert_eq!(self.code, 0, "expected success:\n{self}");
        format!("{}{}", self.stdout, self.stderr)
    }

    /// Asserts the given exit code and returns self.
    #[track_caller]
    pub fn exit(self, code: i32) -> Self {
        assert_eq!(self.code, code, "expected exit {code}:\n{self}");
        self
    }

    /// Asserts a refusal: exit 2, nothing on stdout, one `hpp:` reason line (then `hint:` lines);
    /// returns the reason.
    #[track_caller]
    pub fn refused(self) -> String {
        assert_eq!(self.code, 2, "expected a refusal (exit 2):\n{self}");
        assert!(
            self.stdout.is_empty(),
            "a refusal prints nothing on stdout:\n{self}"
        );
        let mut lines = self.stderr.lines();
        let first = lines.next().unwrap_or_default();
        assert!(
            first.starts_with("hpp: "),
            "a refusal starts with `hpp: `:\n{self}"
        );
        assert!(
            lines.all(|l| l.starts_with("hint: ")),
            "only hint lines follow the reason:\n{self}"
        );
        first["hpp: ".len()..].to_owned()
    }

    /// Parses stdout as JSON, asserting exit `code`.
    #[track_caller]
    pub fn json(self, code: i32) -> serde_json::Value {
        assert_eq!(self.code, code, "expected exit {code}:\n{self}");
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self}"))
    }
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.stdout)?;
        if !self.stderr.is_empty() {
            write!(f, "--- stderr ---\n{}", self.stderr)?;
        }
        write!(f, "[exit {}]", self.code)
    }
}

/// Writes `value` into the sandbox (next to `root`) with every array and every object's keys in
/// reverse order, and returns its path: the same document, permuted, for determinism tests.
pub fn write_reversed(sandbox: &Sandbox, name: &str, value: &serde_json::Value) -> String {
    fn render(value: &serde_json::Value, out: &mut String) {
        use serde_json::Value;
        match value {
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().rev().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    render(item, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                out.push('{');
                for (i, (k, v)) in map.iter().rev().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    render(v, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut text = String::new();
    render(value, &mut text);
    let file = sandbox.beside(name);
    file.write_str(&text).expect("the sandbox is writable");
    file.display().to_string()
}

/// Runs `git hpp deliberate record` on the example session `examples/house-session/<session>/`
/// (its panel, turns, judge, and rationale when it has one), with `extra` arguments.
pub fn record_session(sandbox: &Sandbox, session: &str, extra: &[&str]) -> Run {
    let file = |name: &str| {
        format!(
            "{}/examples/house-session/{session}/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        )
    };
    let mut owned = Vec::new();
    for (flag, name) in [
        ("--panel", "panel"),
        ("--turns", "turns"),
        ("--judge", "judge"),
        ("--rationale", "rationale"),
    ] {
        let path = file(name);
        if Path::new(&path).exists() {
            owned.push(flag.to_owned());
            owned.push(path);
        }
    }
    let mut args: Vec<&str> = vec!["deliberate", "record"];
    args.extend(owned.iter().map(String::as_str));
    args.extend_from_slice(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

/// A `git daemon` serving `base` on 127.0.0.1 with pushes enabled, started by a test and stopped
/// when dropped: a real transport (`git://`), with hooks run by git's own receive-pack.
pub struct GitDaemon {
    child: std::process::Child,
    /// The port it listens on.
    pub port: u16,
}

impl GitDaemon {
    /// Starts the daemon in the sandbox's hermetic environment (so the hooks it runs find the
    /// built `git-hpp` first on PATH) and waits until it accepts connections.
    pub fn start(sandbox: &Sandbox, base: &Path) -> Self {
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port on 127.0.0.1")
                .port();
            let child = sandbox
                .command("git", base)
                .args([
                    "daemon",
                    "--reuseaddr",
                    "--listen=127.0.0.1",
                    "--export-all",
                    "--enable=receive-pack",
                    "--informative-errors",
                ])
                .arg(format!("--port={port}"))
                .arg(format!("--base-path={}", base.display()))
                .arg(base)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .process_group(0)
                .spawn()
                .expect("git daemon starts");
            let mut daemon = GitDaemon { child, port };
            for _ in 0..200 {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return daemon;
                }
                if daemon.child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            // The port was taken between choosing it and binding it: try another (the drop
            // stops this one).
        }
        panic!("git daemon did not start on 127.0.0.1");
    }

    /// Returns the `git://` URL of the repository `name` under the daemon's base.
    pub fn url(&self, name: &str) -> String {
        format!("git://127.0.0.1:{}/{name}", self.port)
    }
}

impl Drop for GitDaemon {
    /// Stops the daemon's whole process group: `git daemon` runs `git-daemon` as its child,
    /// which killing the spawned process alone would leave serving.
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(i32::MAX));
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// The processes (pids) whose command line names `path`, this one's aside: what a command that
/// was handed `path` left running.
pub fn processes_naming(path: &Path) -> Vec<u32> {
    let needle = path.as_os_str().as_encoded_bytes();
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .expect("/proc is readable")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| line.windows(needle.len()).any(|w| w == needle))
        })
        .collect()
}

/// The sha256 of `bytes`, as lowercase hex (what event logs link to).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A one-state loop machine whose only transition loops, so a loop can be as long as a test
/// needs.
pub const TICKS: &str = r#"{"protocol_version":"2.1","loop":{"initial":"a","states":["a"],"next_step":{"a":"tick"},"transitions":[{"from":"a","event":"tick","to":"a","gate":"g"}]}}"#;

/// The lines of a hash-chained loop of `n` tick events; with `tamper`, that event's data is
/// edited after its successor linked to it (so the chain breaks at the successor).
pub fn tick_lines(n: usize, tamper: Option<usize>) -> Vec<String> {
    let mut prev = sha256_hex(b"");
    let mut lines = Vec::with_capacity(n);
    for seq in 1..=n {
        let line = format!(
            r#"{{"data":{{}},"id":"event:{seq}","prev_sha256":"{prev}","seq":{seq},"type":"tick"}}"#
        );
        prev = sha256_hex(line.as_bytes());
        lines.push(if tamper == Some(seq) {
            line.replace(r#""data":{}"#, r#""data":{"edited":true}"#)
        } else {
            line
        });
    }
    lines
}

/// [`tick_lines`] as an `events.jsonl` file's text.
pub fn tick_log(n: usize) -> String {
    tick_lines(n, None)
        .into_iter()
        .map(|line| line + "\n")
        .collect()
}
