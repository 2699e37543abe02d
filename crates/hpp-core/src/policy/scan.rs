//! The built-in rules, read on the parsed command: which programs run, with which options,
//! and what feeds what in a pipeline.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::BuiltIn;
use super::shell;

static DESTRUCTIVE_SQL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(drop|truncate)\s+(table|database)\b").expect("the SQL pattern compiles")
});

static DECISION_ADVISOR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)typed-decisions[\\/]decide\.py").expect("the advisor pattern compiles")
});

/// Programs that run the script they are given (`-c`), or read it from stdin.
const SHELLS: [&str; 8] = ["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"];

/// Programs whose arguments are data, never a command they run: the generic wrapper rule
/// ([`wrapped_argv`]) does not look inside them.
const DATA_ARGS: [&str; 10] = [
    "which", "type", "whereis", "apropos", "help", "tldr", "info", "file", "stat", "ls",
];

/// Programs known to run a command given to them as a string (`su -c '…'`): the option that
/// introduces it.
const RUNS_STRING: [(&str, &[&str]); 5] = [
    ("su", &["-c", "--command"]),
    ("runuser", &["-c", "--command"]),
    ("script", &["-c", "--command"]),
    ("flock", &["-c", "--command"]),
    ("sg", &["-c"]),
];

/// Programs that only print or search text: a SQL statement in their arguments is data.
const TEXT_ONLY: [&str; 22] = [
    "echo", "printf", "git", "grep", "egrep", "fgrep", "rg", "ag", "ack", "gh", "glab", "jj", "hg",
    "svn", "cat", "head", "tail", "less", "more", "man", "wc", "true",
];

/// Returns the built-in rules a command matches, wherever in it they match.
pub fn built_in_matches(command: &str) -> BTreeSet<BuiltIn> {
    let mut found = Found::default();
    scan_script(&shell::parse(command, 0), 0, &mut found);
    if DECISION_ADVISOR.is_match(command) {
        found.insert(BuiltIn::DecisionAdvisor);
    }
    found.rules
}

/// The arguments of every `git` a command runs, as the policy reads the command (through
/// quotes, nesting, prefixes and wrappers): what the lane git guard judges.
///
/// ```
/// let calls = hpp_core::policy::git_calls("cd a && sudo git add -A; echo ok");
/// assert_eq!(calls, vec![vec!["add".to_owned(), "-A".to_owned()]]);
/// ```
pub fn git_calls(command: &str) -> Vec<Vec<String>> {
    let mut found = Found::default();
    scan_script(&shell::parse(command, 0), 0, &mut found);
    found.git
}

/// What a scan finds: the built-in rules a command matches, and the `git` calls it makes.
#[derive(Debug, Default)]
struct Found {
    rules: BTreeSet<BuiltIn>,
    git: Vec<Vec<String>>,
}

impl Found {
    fn insert(&mut self, rule: BuiltIn) {
        self.rules.insert(rule);
    }
}

fn scan_script(script: &shell::Script, depth: usize, found: &mut Found) {
    for pipeline in &script.pipelines {
        scan_pipeline(pipeline, depth, found);
    }
}

fn scan_nested(text: &str, depth: usize, found: &mut Found) {
    if depth < shell::MAX_DEPTH {
        scan_script(&shell::parse(text, depth + 1), depth + 1, found);
    }
}

fn scan_pipeline(pipeline: &shell::Pipeline, depth: usize, found: &mut Found) {
    let mut upstream_fetches = false;
    let mut previous: Option<Vec<&str>> = None;
    let mut text_only = true;
    for command in &pipeline.commands {
        for script in command.nested() {
            scan_script(script, depth + 1, found);
        }
        let words = command.texts();
        let argv = program(&words).map_or(&[][..], |start| &words[start..]);
        scan_argv(argv, depth, found);
        if let Some(inner) = wrapped_argv(argv) {
            scan_argv(inner, depth, found);
        }
        let name = argv.first().map(|w| program_name(w)).unwrap_or_default();
        text_only &= name.is_empty() || TEXT_ONLY.contains(&name.as_str());
        // `at` and `batch` run the commands they read, as a shell reading stdin does.
        let queues = matches!(name.as_str(), "at" | "batch") && !argv.contains(&"-f");
        if SHELLS.contains(&name.as_str()) || queues {
            if upstream_fetches {
                found.insert(BuiltIn::PipeToShell);
            }
            if queues || matches!(shell_call(&argv[1..]), ShellCall::Stdin) {
                for body in &command.stdin {
                    scan_nested(body, depth, found);
                }
                // `echo 'rm -rf x' | sh` runs the echoed text.
                let echoed = previous.as_deref().and_then(|prev| {
                    let start = program(prev)?;
                    let echo = matches!(program_name(prev[start]).as_str(), "echo" | "printf");
                    echo.then(|| prev[start + 1..].join(" "))
                });
                if let Some(text) = echoed {
                    scan_nested(&text, depth, found);
                }
            }
        }
        let runs_text =
            SHELLS.contains(&name.as_str()) || matches!(name.as_str(), "eval" | "source" | ".");
        if runs_text && command.nested().any(script_fetches) {
            found.insert(BuiltIn::PipeToShell);
        }
        upstream_fetches |= command_fetches(command);
        previous = Some(words);
    }
    if !text_only {
        let sql = pipeline.commands.iter().any(|command| {
            DESTRUCTIVE_SQL.is_match(&command.texts().join(" "))
                || command
                    .stdin
                    .iter()
                    .any(|body| DESTRUCTIVE_SQL.is_match(body))
        });
        if sql {
            found.insert(BuiltIn::DestructiveSql);
        }
    }
}

/// Reads one program invocation (prefixes already removed).
fn scan_argv(argv: &[&str], depth: usize, found: &mut Found) {
    let Some(first) = argv.first() else {
        return;
    };
    let args = &argv[1..];
    match program_name(first).as_str() {
        "rm" if rm_is_recursive_and_forced(args) => {
            found.insert(BuiltIn::RecursiveDelete);
        }
        "rmdir" | "rd" if args.iter().any(|a| a.eq_ignore_ascii_case("/s")) => {
            found.insert(BuiltIn::RecursiveDelete);
        }
        "find" => scan_find(args, depth, found),
        "git" => scan_git(args, found),
        "curl" | "wget" => {
            let url = |a: &&str| {
                let a = a.to_ascii_lowercase();
                a.starts_with("http://") || a.starts_with("https://")
            };
            if args.iter().any(url) {
                found.insert(BuiltIn::ExternalSend);
            }
        }
        "eval" => scan_nested(&args.join(" "), depth, found),
        "ssh" => {
            if let Some(remote) = ssh_remote_command(args) {
                scan_nested(&remote, depth, found);
            }
        }
        "cmd" => {
            let at = args
                .iter()
                .position(|a| a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k"));
            if let Some(at) = at {
                scan_nested(&args[at + 1..].join(" "), depth, found);
            }
        }
        name if SHELLS.contains(&name) => {
            if let ShellCall::Script(script) = shell_call(args) {
                scan_nested(script, depth, found);
            }
        }
        // `watch` joins its arguments into one command for `sh -c`.
        "watch" => {
            const WATCH: &[&str] = &["-n", "--interval", "-q", "--equexit", "-s", "--shotsdir"];
            let start = skip_options(argv, 1, WATCH);
            scan_nested(&argv[start.min(argv.len())..].join(" "), depth, found);
        }
        "tmux" => {
            if let Some(text) = tmux_command(args) {
                scan_nested(&text, depth, found);
            }
        }
        name => {
            let options = RUNS_STRING
                .iter()
                .find(|(program, _)| *program == name)
                .map(|(_, options)| *options);
            if let Some(options) = options {
                for (at, arg) in args.iter().enumerate() {
                    let attached = options.iter().find_map(|o| {
                        arg.strip_prefix(o)
                            .and_then(|rest| rest.strip_prefix('='))
                            .filter(|_| o.starts_with("--"))
                    });
                    if let Some(text) = attached {
                        scan_nested(text, depth, found);
                    } else if options.contains(arg)
                        && let Some(text) = args.get(at + 1)
                    {
                        scan_nested(text, depth, found);
                    }
                }
            }
        }
    }
}

/// The generic wrapper rule: a program this policy does not otherwise read, followed by a
/// program it does (`setsid rm -rf src`, `stdbuf -oL rm -rf x`, `docker exec box rm -rf /`,
/// `kubectl exec pod -- sh -c '…'`), is read as running that program with the words after it.
/// Wrappers run their arguments as a command, and an unknown program is given the benefit of
/// no doubt. Programs whose arguments are text or data (`echo`, `grep`, `git`, …) are exempt.
fn wrapped_argv<'a, 'w>(argv: &'a [&'w str]) -> Option<&'a [&'w str]> {
    let name = program_name(argv.first()?);
    if TEXT_ONLY.contains(&name.as_str())
        || DATA_ARGS.contains(&name.as_str())
        || reads_whole(&name)
    {
        return None;
    }
    let at = argv
        .iter()
        .skip(1)
        .position(|w| is_read(&program_name(w)))?
        + 1;
    let inner = &argv[at..];
    program(inner).map(|start| &inner[start..])
}

/// Tells whether `scan_argv` reads every argument of the program `name` by its own rule, so
/// the generic wrapper rule has nothing to add.
fn reads_whole(name: &str) -> bool {
    matches!(
        name,
        "rm" | "rmdir"
            | "rd"
            | "find"
            | "git"
            | "curl"
            | "wget"
            | "eval"
            | "ssh"
            | "cmd"
            | "watch"
            | "tmux"
    ) || SHELLS.contains(&name)
}

/// Tells whether the program `name` is one the policy reads (a rule of `scan_argv`, a program
/// that runs a string, or a prefix [`program`] looks through): where a wrapped command starts.
fn is_read(name: &str) -> bool {
    reads_whole(name)
        || RUNS_STRING.iter().any(|(program, _)| *program == name)
        || matches!(
            name,
            "sudo" | "doas" | "env" | "xargs" | "nice" | "timeout" | "nohup" | "time"
        )
}

/// The shell command a `tmux` call runs: the trailing words of `new-session`, `new-window`,
/// `split-window`, `run-shell`, `respawn-pane`/`-window`, or the keys of `send-keys`.
fn tmux_command(args: &[&str]) -> Option<String> {
    const WITH_VALUE: &[&str] = &[
        "-s", "-n", "-t", "-c", "-x", "-y", "-e", "-F", "-f", "-l", "-p", "-L", "-S", "-N",
    ];
    let start = skip_options(args, 0, &["-L", "-S", "-f", "-T"]);
    let sub = *args.get(start)?;
    let runs = matches!(
        sub,
        "new"
            | "new-session"
            | "neww"
            | "new-window"
            | "splitw"
            | "split-window"
            | "run"
            | "run-shell"
            | "respawnp"
            | "respawn-pane"
            | "respawnw"
            | "respawn-window"
            | "send"
            | "send-keys"
    );
    if !runs {
        return None;
    }
    let rest = skip_options(args, start + 1, WITH_VALUE);
    let words = args.get(rest..)?;
    (!words.is_empty()).then(|| words.join(" "))
}

/// Returns the command `ssh [options] host command...` runs on the remote host.
fn ssh_remote_command(args: &[&str]) -> Option<String> {
    const WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if *arg == "--" {
            i += 1;
            break;
        }
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            break;
        };
        // `-p 22` takes the next word; `-p22` and `-vA` do not.
        let last = flags.chars().last().unwrap_or_default();
        let attached = flags.len() > 1
            && flags
                .find(|c| WITH_VALUE.contains(c))
                .is_some_and(|at| at + 1 < flags.len());
        i += if WITH_VALUE.contains(last) && !attached {
            2
        } else {
            1
        };
    }
    let remote = args.get(i + 1..)?;
    (!remote.is_empty()).then(|| remote.join(" "))
}

/// Options are read until `--`, in any order and spelling: `-rf`, `-fr`, `-r -f`, `-R`,
/// `--recursive --force` and their unambiguous prefixes (`--rec`), as GNU getopt reads them.
fn rm_is_recursive_and_forced(args: &[&str]) -> bool {
    let (mut recursive, mut force) = (false, false);
    for arg in args.iter().take_while(|a| **a != "--") {
        if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or_default();
            recursive |= !name.is_empty() && "recursive".starts_with(name);
            force |= !name.is_empty() && "force".starts_with(name);
        } else if let Some(short) = arg.strip_prefix('-') {
            recursive |= short.contains(['r', 'R']);
            force |= short.contains('f');
        }
    }
    recursive && force
}

fn scan_find(args: &[&str], depth: usize, found: &mut Found) {
    if args.contains(&"-delete") {
        found.insert(BuiltIn::RecursiveDelete);
    }
    let mut rest = args;
    while let Some(at) = rest
        .iter()
        .position(|a| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir"))
    {
        rest = &rest[at + 1..];
        let end = rest
            .iter()
            .position(|a| matches!(*a, ";" | "+"))
            .unwrap_or(rest.len());
        if let Some(start) = program(&rest[..end]) {
            scan_argv(&rest[start..end], depth, found);
        }
        rest = &rest[end..];
    }
}

fn scan_git(args: &[&str], found: &mut Found) {
    found
        .git
        .push(args.iter().map(|a| (*a).to_owned()).collect());
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if matches!(
            *arg,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--super-prefix"
                | "--config-env"
        ) {
            i += 2;
        } else if arg.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    if !args
        .get(i)
        .is_some_and(|sub| sub.eq_ignore_ascii_case("push"))
    {
        return;
    }
    found.insert(BuiltIn::ExternalPush);
    let (force, main) = read_push(&args[i + 1..]);
    if force {
        found.insert(BuiltIn::ForcePush);
    }
    if main {
        found.insert(BuiltIn::MainPush);
    }
}

/// Returns (forced, names main or master as a destination) for the arguments of `git push`.
fn read_push(args: &[&str]) -> (bool, bool) {
    let mut force = false;
    let mut positional = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if options_done || !arg.starts_with('-') || *arg == "-" {
            positional.push(*arg);
        } else if *arg == "--" {
            options_done = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            force |= name.starts_with("force");
            let takes_value = matches!(name, "repo" | "push-option" | "receive-pack" | "exec");
            if takes_value && !attached {
                i += 1;
            }
        } else {
            for (at, flag) in arg.char_indices().skip(1) {
                match flag {
                    'f' => force = true,
                    'o' => {
                        if at + 1 == arg.len() {
                            i += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
        }
    }
    let mut main = false;
    for spec in positional.iter().skip(1) {
        force |= spec.starts_with('+');
        let spec = spec.trim_start_matches('+');
        let destination = spec.split_once(':').map_or(spec, |(_, dst)| dst);
        let destination = destination
            .strip_prefix("refs/heads/")
            .unwrap_or(destination);
        main |=
            destination.eq_ignore_ascii_case("main") || destination.eq_ignore_ascii_case("master");
    }
    (force, main)
}

/// How a shell is asked to run code.
enum ShellCall<'a> {
    /// `-c SCRIPT`.
    Script(&'a str),
    /// A script file.
    File,
    /// The script comes on stdin.
    Stdin,
}

fn shell_call<'a>(args: &[&'a str]) -> ShellCall<'a> {
    let (mut command, mut stdin) = (false, false);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if matches!(*arg, "--" | "-") {
            i += 1;
            break;
        }
        if matches!(*arg, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if arg.starts_with("--") {
            i += 1;
            continue;
        }
        if arg.len() > 1 && (arg.starts_with('-') || arg.starts_with('+')) {
            command |= arg.starts_with('-') && arg.contains('c');
            stdin |= arg.contains('s');
            i += 1;
            continue;
        }
        break;
    }
    match args.get(i) {
        Some(script) if command => ShellCall::Script(script),
        None if command => ShellCall::File,
        Some(_) if !stdin => ShellCall::File,
        _ => ShellCall::Stdin,
    }
}

fn command_fetches(command: &shell::Command) -> bool {
    let words = command.texts();
    let fetch = program(&words)
        .is_some_and(|start| matches!(program_name(words[start]).as_str(), "curl" | "wget"));
    fetch || command.nested().any(script_fetches)
}

fn script_fetches(script: &shell::Script) -> bool {
    script
        .pipelines
        .iter()
        .flat_map(|pipeline| &pipeline.commands)
        .any(command_fetches)
}

/// Returns the index of the program a command runs once its prefixes are read: assignments,
/// `sudo`, `doas`, `env`, `command`, `nice`, `nohup`, `time`, `timeout`, `xargs`, `exec`,
/// `builtin` and the shell's reserved words (`if`, `then`, `do`, `!`, `{`, ...).
fn program(words: &[&str]) -> Option<usize> {
    const SUDO: &[&str] = &[
        "-u",
        "-g",
        "-h",
        "-p",
        "-C",
        "-D",
        "-r",
        "-t",
        "-T",
        "-U",
        "-R",
        "--user",
        "--group",
        "--host",
        "--prompt",
        "--close-from",
        "--chdir",
        "--role",
        "--type",
        "--command-timeout",
        "--other-user",
        "--chroot",
    ];
    const ENV: &[&str] = &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"];
    const XARGS: &[&str] = &[
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-E",
        "-I",
        "-L",
        "--max-lines",
        "-n",
        "--max-args",
        "-P",
        "--max-procs",
        "-s",
        "--max-chars",
        "--process-slot-var",
    ];
    let mut i = 0;
    loop {
        let word = *words.get(i)?;
        if is_assignment(word) {
            i += 1;
            continue;
        }
        i = match program_name(word).as_str() {
            "sudo" | "doas" => skip_options(words, i + 1, SUDO),
            "env" => skip_options(words, i + 1, ENV),
            "nice" => skip_options(words, i + 1, &["-n", "--adjustment"]),
            "xargs" => skip_options(words, i + 1, XARGS),
            "timeout" => skip_options(words, i + 1, &["-s", "--signal", "-k", "--kill-after"]) + 1,
            "exec" | "time" | "nohup" | "builtin" => skip_options(words, i + 1, &["-a"]),
            "command" => {
                let next = skip_options(words, i + 1, &[]);
                if words[i + 1..next].iter().any(|w| w.contains(['v', 'V'])) {
                    return None; // `command -v rm` looks a program up; it runs nothing
                }
                next
            }
            "!" | "{" | "}" | "if" | "then" | "do" | "else" | "elif" | "while" | "until" => i + 1,
            _ => return Some(i),
        };
    }
}

fn skip_options(words: &[&str], mut i: usize, with_value: &[&str]) -> usize {
    while let Some(word) = words.get(i) {
        if *word == "--" {
            return i + 1;
        }
        if !word.starts_with('-') || *word == "-" {
            return i;
        }
        i += if with_value.contains(word) { 2 } else { 1 };
    }
    i
}

fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `/usr/bin/git`, `GIT`, `git.exe` all name `git`.
fn program_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let lower = base.to_ascii_lowercase();
    match lower.strip_suffix(".exe") {
        Some(stem) => stem.to_owned(),
        None => lower,
    }
}
