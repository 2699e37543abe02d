//! The command surface: help, version, exit codes for usage errors, running through `git`.

use crate::harness::{BIN, Sandbox};

#[test]
fn help_lists_the_command_families() {
    let sandbox = Sandbox::empty();
    let help = sandbox.hpp(["--help"]).ok();
    for family in [
        "event",
        "evidence",
        "attest",
        "verify",
        "push",
        "fetch",
        "remote",
        "hooks",
        "status",
        "resume",
        "loops",
        "snapshot",
        "demo",
        "deliberate",
        "map",
        "graph",
        "atlas",
        "lane",
        "board",
        "checker",
        "doctor",
        "init",
        "install",
        "module",
        "handoff",
        "gotcha",
    ] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(family)),
            "{family} missing from:\n{help}"
        );
    }
    assert!(help.contains("Exit codes: 0 ok, 1 warn or manual gate, 2 block or refused input, 3 usage or internal error"));
}

#[test]
fn version_prints_the_crate_version() {
    let sandbox = Sandbox::empty();
    assert_eq!(
        sandbox.hpp(["--version"]).ok().trim(),
        format!("git-hpp {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn git_finds_the_binary_as_the_hpp_subcommand() {
    let sandbox = Sandbox::repo();
    let dir = std::path::Path::new(BIN)
        .parent()
        .expect("the binary has a directory");
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = std::process::Command::new("git")
        .args(["hpp", "--version"])
        .current_dir(&sandbox.root)
        .env("PATH", path)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("git-hpp "));
}

#[test]
fn control_usage_errors_exit_3_with_nothing_on_stdout() {
    let sandbox = Sandbox::repo();
    for args in [
        &["frobnicate"][..],
        &["event", "append"][..],
        &["status", "--no-such-flag"][..],
    ] {
        let run = sandbox.hpp_in(&sandbox.root, args).exit(3);
        assert!(run.stdout.is_empty(), "{run}");
        assert!(run.stderr.contains("error:"), "{run}");
    }
    assert!(
        sandbox.hpp_in(&sandbox.root, &[]).exit(3).stdout.is_empty(),
        "no subcommand is a usage error"
    );
}

#[test]
fn control_an_invalid_loop_name_is_refused_input_not_a_usage_error() {
    let sandbox = Sandbox::repo();
    for name in ["a..b", "x.lock", "has space", "-dash", "a:b"] {
        let flag = format!("--loop={name}");
        let reason = sandbox
            .hpp(["event", "append", "--type", "work_started", &flag])
            .refused();
        assert!(reason.contains("invalid loop name"), "{reason}");
    }
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
}

#[test]
fn json_output_is_pretty_and_sorted() {
    let sandbox = Sandbox::repo();
    let text = sandbox.hpp(["status", "--json"]).ok();
    assert!(text.starts_with("{\n  \""), "{text}");
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  \"") && !l.starts_with("   "))
        .map(|l| l.trim_start().split('"').nth(1).unwrap_or_default())
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(keys, sorted);
}

#[test]
fn the_demo_tours_the_whole_story_and_cleans_up() {
    let (sandbox, tmp) = Sandbox::with_own_tmp();
    let out = sandbox.hpp(["demo"]).ok();
    for needle in [
        "$ git hpp event append --type verified\nhpp: invalid transition at event 1: planned --verified--> ?\nhint: from planned the loop takes: work_started (git hpp event append --type work_started)\n[exit 2]",
        "hpp: push to origin refused: refs/heads/main at ",
        "evidence tests: passed (exit code 0)",
        "recorded approved by checker-b for snapshot ",
        "HPP status: verified · events=5 · evidence=1 · next=no-op",
        "$ git hpp trust init --root owner --key ../owner-key.pub --sign-key ../owner-key --apply\nwrote refs/hpp/trust ",
        "trusting the trust policy's root SHA256:",
        "(reviewer) $ git hpp verify\nok   ",
        "signatures required by the trust policy ",
        "HPP event chain: intact · loop=main · events=5",
        "$ git hpp event append --type check_passed\nhpp: gate read-only-checker refused: no attestation of tree ",
        "  event:4 human_approved · gate human: ok",
        "  event:3 check_passed · gate read-only-checker: no longer holds: checker-b revoked the approval",
        "imported 5 events into loop imported (chain intact",
        "$ git hpp lane start api-docs --territory docs/api --role maker --model gpt-5\nhpp: ",
        "$ git hpp lane list\ndocs · alive · open · exclusive docs",
        "review-guard: unchanged",
        "lane docs closed",
        "HPP doctor: ok",
        "removed the throwaway directory",
    ] {
        assert!(
            out.contains(needle),
            "{needle:?} missing from the tour:\n{out}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&tmp).expect("readable").collect();
    assert!(left.is_empty(), "the tour left {left:?} behind");
    // Nor a server: the daemon it served the remote with (and the `git-daemon` that runs) is
    // stopped. A killed process may take a moment to leave /proc.
    let running = still_running_after(&tmp, std::time::Duration::from_secs(2));
    assert!(
        running.is_empty(),
        "the tour left processes {running:?} running"
    );
}

/// The processes naming `path` that are still there after waiting up to `wait` for them to go.
fn still_running_after(path: &std::path::Path, wait: std::time::Duration) -> Vec<u32> {
    let start = std::time::Instant::now();
    loop {
        let running = crate::harness::processes_naming(path);
        if running.is_empty() || start.elapsed() > wait {
            return running;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn control_a_process_left_running_with_the_path_is_seen() {
    let sandbox = Sandbox::empty();
    let dir = sandbox.path("served");
    let mut child = std::process::Command::new("sh")
        // Not the last command, so the shell waits for it instead of becoming it.
        .args(["-c", "sleep 30; exit 0", "sh"])
        .arg(&dir)
        .spawn()
        .expect("sh runs");
    let start = std::time::Instant::now();
    let mut running = crate::harness::processes_naming(&dir);
    // The shell forks to run `sleep`, so for a moment its child names the path too.
    while !running.contains(&child.id()) && start.elapsed() < std::time::Duration::from_secs(2) {
        std::thread::sleep(std::time::Duration::from_millis(10));
        running = crate::harness::processes_naming(&dir);
    }
    child.kill().expect("killing it");
    child.wait().expect("reaping it");
    assert!(
        running.contains(&child.id()),
        "the shell naming the path should be seen: {running:?}"
    );
    let gone = still_running_after(&dir, std::time::Duration::from_secs(2));
    assert!(gone.is_empty(), "{gone:?} after it was reaped");
}

/// Runs `git hpp push origin` in a repository whose remote does not exist, with `PATH` holding
/// only an empty directory (no `git`) or the real one.
fn push_to_a_missing_remote(git_on_path: bool) -> crate::harness::Run {
    let sandbox = Sandbox::repo();
    sandbox.git(["remote", "add", "origin", "/nonexistent/remote.git"]);
    let empty = sandbox.path("empty-bin");
    std::fs::create_dir_all(&empty).expect("the sandbox is writable");
    let mut cmd = sandbox.hpp_command(&sandbox.root, &["push", "origin"]);
    if !git_on_path {
        cmd.env("PATH", &empty);
    }
    crate::harness::Run::from_output(&cmd.output().expect("the binary runs"))
}

#[test]
fn a_missing_git_is_the_tools_failure_exit_3_not_refused_input() {
    let run = push_to_a_missing_remote(false).exit(3);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("cannot run git"), "{run}");
    assert!(run.stderr.contains("hint: install git"), "{run}");
}

#[test]
fn control_with_git_on_path_a_missing_remote_is_refused_input() {
    let run = push_to_a_missing_remote(true).exit(2);
    assert!(!run.stderr.contains("cannot run git"), "{run}");
}

/// Runs `git-hpp ARGS` with a terminal for stdout (script(1)); `None` when script(1) is not
/// installed. `no_color` sets NO_COLOR, else it is removed.
fn at_a_terminal(sandbox: &Sandbox, args: &str, no_color: bool) -> Option<String> {
    let has_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        return None;
    }
    let mut command = sandbox.command("script", &sandbox.root);
    command
        .args(["-qec", &format!("'{BIN}' {args}"), "/dev/null"])
        .env("TERM", "xterm");
    if no_color {
        command.env("NO_COLOR", "1");
    } else {
        command.env_remove("NO_COLOR");
    }
    let out = command.output().expect("script runs");
    assert!(
        out.status.success(),
        "{}",
        crate::harness::Run::from_output(&out)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn status_is_coloured_and_marked_at_a_terminal_and_respects_no_color() {
    // Issue 31, friction 8: no colour or glyphs anywhere.
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let Some(coloured) = at_a_terminal(&sandbox, "status", false) else {
        eprintln!("SKIPPED: script(1) is not installed");
        return;
    };
    assert!(
        coloured.contains("\u{1b}[32m") || coloured.contains("\u{1b}[1m\u{1b}[32m"),
        "{coloured:?}"
    );
    assert!(coloured.contains("\u{2713} holds"), "{coloured:?}");
    let plain = at_a_terminal(&sandbox, "status", true).expect("script is there");
    assert!(!plain.contains('\u{1b}'), "NO_COLOR: no colour: {plain:?}");
    assert!(
        plain.contains("\u{2713} holds"),
        "the glyphs stay: {plain:?}"
    );
    let always = sandbox.hpp(["--color=always", "status"]).ok();
    assert!(
        always.contains('\u{1b}'),
        "--color=always colours a pipe too"
    );
}

#[test]
fn control_piped_or_never_the_text_is_plain() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let piped = sandbox.hpp(["status"]).ok();
    assert!(
        !piped.contains('\u{1b}') && !piped.contains('\u{2713}'),
        "{piped:?}"
    );
    assert!(piped.contains("gate scope: holds"), "{piped}");
    if let Some(never) = at_a_terminal(&sandbox, "--color=never status", false) {
        assert!(
            !never.contains('\u{1b}') && !never.contains('\u{2713}'),
            "{never:?}"
        );
    }
    let json = sandbox.hpp(["--color=always", "status", "--json"]).ok();
    assert!(!json.contains('\u{1b}'), "JSON is never coloured");
}

/// Every document a reader of the loop scripts against names itself under one key, `schema`,
/// spelled `hpp.<name>/v<n>` as the records are (issue 31: the key differed between outputs).
#[test]
fn the_loop_documents_name_their_schema_under_one_key() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    for (args, want) in [
        (&["status", "--json"][..], "hpp.status/v1"),
        (&["verify", "--json"], "hpp.verify/v1"),
        (&["loops", "--json"], "hpp.loops/v1"),
        (&["resume"], "hpp.resume/v1"),
    ] {
        let run = sandbox.hpp_in(&sandbox.root, args);
        let value: serde_json::Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("{args:?} prints one JSON document ({e}):\n{run}"));
        assert_eq!(value["schema"], want, "{args:?}:\n{run}");
        for other in ["schema_version", "$schema", "format"] {
            assert!(value.get(other).is_none(), "{args:?} also has {other}");
        }
    }
}

#[test]
fn dash_c_runs_the_command_in_that_directory_as_git_does() {
    let sandbox = Sandbox::repo();
    let outside = sandbox.path("elsewhere");
    std::fs::create_dir_all(&outside).expect("writable");
    let root = sandbox.root.to_str().expect("UTF-8");
    let here = sandbox.hpp_in(&sandbox.root, &["status", "--json"]);
    let there = sandbox.hpp_in(&outside, &["-C", root, "status", "--json"]);
    assert_eq!(
        (there.code, &there.stdout),
        (here.code, &here.stdout),
        "{there}"
    );
    // Each -C is taken relative to the one before, and -CPATH is the same flag.
    let name = sandbox
        .root
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a name");
    let relative = sandbox.hpp_in(
        &outside,
        &["-C", "..", &format!("-C{name}"), "status", "--json"],
    );
    assert_eq!(relative.stdout, here.stdout, "{relative}");
}

#[test]
fn control_dash_c_to_a_missing_directory_is_refused_with_one_line() {
    let sandbox = Sandbox::repo();
    let run = sandbox
        .hpp_in(&sandbox.root, &["-C", "no-such-dir", "status"])
        .exit(2);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("cannot change to no-such-dir"), "{run}");
    assert_eq!(run.stderr.trim().lines().count(), 1, "{run}");
    // Without -C the same command runs.
    sandbox.hpp_in(&sandbox.root, &["status"]).ok();
}
