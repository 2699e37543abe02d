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
pub(super) const SHELLS: [&str; 8] = ["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"];

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

/// Code an interpreter one-liner runs that deletes a tree: Python's `shutil.rmtree` and
/// `os.removedirs`, Perl's `rmtree`/`remove_tree`, Ruby's `FileUtils.rm_rf`/`rm_r`/
/// `remove_dir`/`remove_entry`.
static TREE_DELETE_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(rmtree|removedirs|remove_tree|rm_rf|rm_r|remove_dir|remove_entry(_secure)?)\b")
        .expect("the tree-delete pattern compiles")
});

/// JavaScript's `fs.rm`/`fs.rmSync`/`fs.rmdir(Sync)`/`Deno.remove`: a tree delete when the
/// code also says `recursive`.
static JS_REMOVE_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(rm|rmSync|rmdir|rmdirSync|remove|removeSync)\s*\(")
        .expect("the JavaScript remove pattern compiles")
});

/// What a command would destroy that the full rules read beyond the reference's: the policy
/// asks the workspace ([`super::Workspace`]) whether work is there before it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deletion {
    /// A recursive delete of one path as written (`rm -r PATH`, a start path of
    /// `find PATH … -exec rm`); `None` when no path can be read for certain: a glob, a
    /// variable, a substitution, a directory changed before it, arguments `xargs` supplies, an
    /// interpreter's code.
    Tree(Option<String>),
    /// `git clean` that removes files, with its arguments after `clean`; `None` when the
    /// repository it runs in cannot be read for certain (`git -C`, a directory changed first).
    Clean(Option<Vec<String>>),
    /// Uncommitted changes to tracked files thrown away (`git reset --hard`,
    /// `git checkout -- PATHS`, `git restore PATHS`, `git switch --discard-changes`): under
    /// these pathspecs, every file when the list is empty; `None` as for [`Deletion::Clean`].
    Discard(Option<Vec<String>>),
}

/// What one scan of a command finds: the built-in rules it matches by the reference's reading,
/// and what it would destroy by the full reading.
#[derive(Debug, Default)]
pub struct Scan {
    /// Rules matched whatever the workspace holds.
    pub rules: BTreeSet<BuiltIn>,
    /// Deletions whose rule depends on what the workspace holds.
    pub deletions: Vec<Deletion>,
}

/// Scans a command once.
pub fn scan(command: &str) -> Scan {
    let mut found = Found::default();
    scan_script(&shell::parse(command, 0), 0, &mut found);
    if DECISION_ADVISOR.is_match(command) {
        found.insert(BuiltIn::DecisionAdvisor);
    }
    Scan {
        rules: found.rules,
        deletions: found.deletions,
    }
}

/// Returns the built-in rules a command matches by the reference's reading, wherever in it
/// they match.
pub fn built_in_matches(command: &str) -> BTreeSet<BuiltIn> {
    scan(command).rules
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
    deletions: Vec<Deletion>,
    /// A `cd`, `pushd` or `popd` ran before: relative paths no longer name what they seem to.
    moved: bool,
}

/// How the operands of a program are read for [`Deletion`]s.
#[derive(Debug, Clone, Copy)]
enum Operands<'a> {
    /// As the shell passes them: for each word of the argv (the program first), whether it is
    /// dynamic.
    Read(&'a [bool]),
    /// Supplied or moved where the policy cannot follow: `xargs`, a wrapper running elsewhere.
    Unread,
    /// Already counted: the `{}` of `find -exec`, whose start paths were.
    Counted,
}

impl Operands<'_> {
    /// The path word `at` (an index into the argv) names, if it can be read for certain.
    fn path(self, at: usize, word: &str, found: &Found) -> Option<String> {
        match self {
            Operands::Read(dynamic)
                if !found.moved && !dynamic.get(at).copied().unwrap_or(true) =>
            {
                Some(word.to_owned())
            }
            _ => None,
        }
    }

    /// Tells whether the command's directory is the one the policy was asked in.
    fn here(self, found: &Found) -> bool {
        matches!(self, Operands::Read(_)) && !found.moved
    }
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
        let dynamic = command.dynamic();
        let start = program(&words);
        let argv = start.map_or(&[][..], |start| &words[start..]);
        // `xargs rm -r` deletes what stdin names, not its own words.
        let fed = start.is_some_and(|s| words[..s].iter().any(|w| program_name(w) == "xargs"));
        let operands = match start {
            Some(start) if !fed => Operands::Read(&dynamic[start..]),
            _ => Operands::Unread,
        };
        scan_argv(argv, operands, depth, found);
        if let Some(inner) = wrapped_argv(argv) {
            scan_argv(inner, Operands::Unread, depth, found);
        }
        let name = argv.first().map(|w| program_name(w)).unwrap_or_default();
        if INTERPRETERS.iter().any(|i| name.starts_with(i)) {
            let code = argv.get(1..).unwrap_or_default().join(" ");
            let deletes = std::iter::once(code.as_str())
                .chain(command.stdin.iter().map(String::as_str))
                .any(deletes_a_tree);
            if deletes {
                found.deletions.push(Deletion::Tree(None));
            }
        }
        found.moved |= matches!(name.as_str(), "cd" | "pushd" | "popd");
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

/// Programs whose one-liners the full rules read for a tree delete: `python3.12`, `pypy3`,
/// `nodejs` start with one of these.
const INTERPRETERS: [&str; 7] = ["python", "pypy", "node", "deno", "bun", "perl", "ruby"];

/// Tells whether interpreter code deletes a tree.
fn deletes_a_tree(code: &str) -> bool {
    TREE_DELETE_CALL.is_match(code) || (JS_REMOVE_CALL.is_match(code) && code.contains("recursive"))
}

/// Reads one program invocation (prefixes already removed).
fn scan_argv(argv: &[&str], operands: Operands<'_>, depth: usize, found: &mut Found) {
    let Some(first) = argv.first() else {
        return;
    };
    let args = &argv[1..];
    match program_name(first).as_str() {
        "rm" => {
            let (recursive, force) = rm_options(args);
            if recursive && force {
                found.insert(BuiltIn::RecursiveDelete);
            } else if recursive && !matches!(operands, Operands::Counted) {
                if matches!(operands, Operands::Unread) {
                    // Paths `xargs` or a wrapper supplies, beside any written here.
                    found.deletions.push(Deletion::Tree(None));
                }
                let mut options = true;
                for (at, arg) in args.iter().enumerate() {
                    if options && *arg == "--" {
                        options = false;
                    } else if !options || !arg.starts_with('-') || *arg == "-" {
                        let path = operands.path(at + 1, arg, found);
                        found.deletions.push(Deletion::Tree(path));
                    }
                }
            }
        }
        "rmdir" | "rd" if args.iter().any(|a| a.eq_ignore_ascii_case("/s")) => {
            found.insert(BuiltIn::RecursiveDelete);
        }
        "find" => scan_find(args, operands, depth, found),
        "git" => scan_git(args, operands, found),
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

/// Returns (recursive, forced) for the arguments of `rm`. Options are read until `--`, in any
/// order and spelling: `-rf`, `-fr`, `-r -f`, `-R`, `--recursive --force` and their
/// unambiguous prefixes (`--rec`), as GNU getopt reads them.
fn rm_options(args: &[&str]) -> (bool, bool) {
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
    (recursive, force)
}

fn scan_find(args: &[&str], operands: Operands<'_>, depth: usize, found: &mut Found) {
    if args.contains(&"-delete") {
        found.insert(BuiltIn::RecursiveDelete);
    }
    // `find PATH… -exec rm …` deletes what it finds under its start paths.
    let removes = args.windows(2).any(|pair| {
        matches!(pair[0], "-exec" | "-execdir" | "-ok" | "-okdir")
            && matches!(program_name(pair[1]).as_str(), "rm" | "unlink" | "shred")
    });
    if removes && !matches!(operands, Operands::Counted) {
        let mut at = 0;
        while let Some(arg) = args.get(at) {
            match *arg {
                "-H" | "-L" | "-P" => at += 1,
                "-D" => at += 2,
                o if o.starts_with("-O") => at += 1,
                _ => break,
            }
        }
        let first = at;
        while args
            .get(at)
            .is_some_and(|a| !a.starts_with('-') && !matches!(*a, "(" | "!" | ","))
        {
            let path = operands.path(at + 1, args[at], found);
            found.deletions.push(Deletion::Tree(path));
            at += 1;
        }
        if at == first {
            let path = operands.here(found).then(|| ".".to_owned());
            found.deletions.push(Deletion::Tree(path));
        }
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
            scan_argv(&rest[start..end], Operands::Counted, depth, found);
        }
        rest = &rest[end..];
    }
}

fn scan_git(args: &[&str], operands: Operands<'_>, found: &mut Found) {
    found
        .git
        .push(args.iter().map(|a| (*a).to_owned()).collect());
    let mut i = 0;
    let mut here = operands.here(found);
    while let Some(arg) = args.get(i) {
        here &= !matches!(*arg, "-C" | "--git-dir" | "--work-tree")
            && !arg.starts_with("--git-dir=")
            && !arg.starts_with("--work-tree=");
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
    let sub = args
        .get(i)
        .map(|s| s.to_ascii_lowercase())
        .unwrap_or_default();
    if sub != "push" {
        let rest = args.get(i + 1..).unwrap_or_default();
        // The operands' dynamic flags, aligned with `rest`.
        let dynamic = match operands {
            Operands::Read(flags) => flags.get(i + 2..).unwrap_or_default(),
            _ => &[],
        };
        if let Some(deletion) = git_discard(&sub, rest, dynamic, here) {
            found.deletions.push(deletion);
        }
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

/// What `git SUB REST…` throws away: uncommitted changes, or untracked files. `here` says
/// whether it runs in the directory the policy was asked in.
fn git_discard(sub: &str, rest: &[&str], dynamic: &[bool], here: bool) -> Option<Deletion> {
    let has = |long: &str, short: char| {
        rest.iter().take_while(|a| **a != "--").any(|a| {
            *a == long
                || (short != '\0'
                    && a.len() > 1
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && a.contains(short))
        })
    };
    // Pathspecs as written; `None` when one cannot be read for certain.
    let pathspecs = |takes_value: &[&str]| -> Option<Vec<String>> {
        let mut paths = Vec::new();
        let mut options = true;
        let mut at = 0;
        while let Some(arg) = rest.get(at) {
            if options && *arg == "--" {
                options = false;
            } else if options && arg.starts_with('-') && *arg != "-" {
                if arg.starts_with("--pathspec-from-file") {
                    return None;
                }
                if takes_value.contains(arg) {
                    at += 1;
                }
            } else {
                if dynamic.get(at).copied().unwrap_or(true) {
                    return None;
                }
                paths.push((*arg).to_owned());
            }
            at += 1;
        }
        Some(paths)
    };
    let certain = |list: Option<Vec<String>>| if here { list } else { None };
    match sub {
        "reset" if has("--hard", '\0') => Some(Deletion::Discard(certain(Some(Vec::new())))),
        "checkout" | "co" => {
            if has("--force", 'f') {
                return Some(Deletion::Discard(certain(Some(Vec::new()))));
            }
            let values = ["-b", "-B", "--orphan", "--conflict", "--track", "-t"];
            match pathspecs(&values) {
                // The first operand may be a branch or a commit; as a pathspec it matches
                // nothing, so the workspace finds no change under it.
                Some(paths) if paths.is_empty() => None,
                paths => Some(Deletion::Discard(certain(paths))),
            }
        }
        "restore" => {
            let staged_only = has("--staged", 'S') && !has("--worktree", 'W');
            if staged_only {
                return None;
            }
            match pathspecs(&["-s", "--source"]) {
                Some(paths) if paths.is_empty() => None,
                paths => Some(Deletion::Discard(certain(paths))),
            }
        }
        "switch" if has("--discard-changes", '\0') || has("--force", 'f') => {
            Some(Deletion::Discard(certain(Some(Vec::new()))))
        }
        "clean" => {
            let dry = has("--dry-run", 'n');
            let forced = has("--force", 'f');
            (forced && !dry).then(|| {
                let args = rest.iter().map(|a| (*a).to_owned()).collect();
                Deletion::Clean(certain(Some(args)))
            })
        }
        _ => None,
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
pub(super) enum ShellCall<'a> {
    /// `-c SCRIPT`.
    Script(&'a str),
    /// A script file.
    File,
    /// The script comes on stdin.
    Stdin,
}

pub(super) fn shell_call<'a>(args: &[&'a str]) -> ShellCall<'a> {
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
pub(super) fn program(words: &[&str]) -> Option<usize> {
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
pub(super) fn program_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let lower = base.to_ascii_lowercase();
    match lower.strip_suffix(".exe") {
        Some(stem) => stem.to_owned(),
        None => lower,
    }
}
