//! The `git hpp` command tree: parse, dispatch, print, exit.
//!
//! One file per command (or folder per family); handlers return an [`Outcome`] and never
//! print. [`run`] is the whole program: `main` only hands it argv.

pub mod atlas;
pub mod attest;
pub mod benchmark;
pub mod board;
pub mod caps;
pub mod checker;
pub mod cite;
pub mod context;
pub mod ctx;
pub mod decide;
pub mod deliberate;
pub mod demo;
pub mod doctor;
pub mod drift;
pub mod eval;
pub mod event;
pub mod evidence;
pub mod examples;
pub mod exit;
pub mod findings;
pub mod gotcha;
pub mod graph;
pub mod handoff;
pub mod hook;
pub mod hooks;
pub mod hop;
pub mod init;
pub mod input;
pub mod install;
pub mod lane;
pub mod loops;
pub mod man_page;
pub mod manual;
pub mod map;
pub mod module;
pub mod monitor;
pub mod output;
pub mod policy;
pub mod remote;
pub mod restore;
pub mod resume;
pub mod retrieval;
pub mod route;
pub mod snapshot;
pub mod status;
pub mod suite_eval;
pub mod sync;
pub mod trust;
pub mod verify;
pub mod work;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use self::ctx::Ctx;
use self::exit::{CliError, Exit};
use self::output::Outcome;
use hpp_core::host::Host;
use hpp_store::refs::LoopId;

/// House Party Protocol harness, git-native: records under refs/hpp
///
/// Turns an agent's "done" into checks a command can answer: a loop of events with gates,
/// kept as git commits under refs/hpp/ so they travel with push and fetch.
///
/// Exit codes: 0 ok, 1 warn or manual gate, 2 block or refused input, 3 usage or internal error.
#[derive(Debug, Parser)]
#[command(name = "git-hpp", bin_name = "git hpp", version, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    globals: Globals,
    #[command(subcommand)]
    command: Command,
}

/// The flags every command takes.
#[derive(Debug, clap::Args)]
struct Globals {
    /// Run as if started in PATH, as `git -C PATH` does (before the command; given again, each
    /// is taken relative to the one before)
    #[arg(short = 'C', value_name = "PATH")]
    dir: Vec<PathBuf>,
    /// Manifest to read the loop from [default: hpp.manifest.json at the worktree root, else the built-in one]
    #[arg(long, global = true, value_name = "FILE")]
    manifest: Option<PathBuf>,
    /// Print nothing on success but what was asked for (--json documents, exports); warnings,
    /// refusals and failures still speak
    #[arg(short, long, global = true)]
    quiet: bool,
    /// When to colour the human text and mark it with glyphs: auto (on a terminal, colour unless
    /// NO_COLOR is set), always, never
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    color: output::ColorChoice,
}

/// The command tree for parsing `argv` when its command is one that runs on every step of an
/// agent or of git (a snapshot, a status, a verify, a hook): the global flags and that command
/// alone, with the arguments the derive gives it. Building the whole tree to parse one command
/// was 2.6 million instructions, a third of a snapshot of 1,800 files. `None` for any other
/// command, and whatever this tree cannot parse goes to the whole tree (`run`), which then
/// accepts or refuses and renders as before; `tests::the_hot_path_parses_as_the_whole_tree_does`
/// holds the two to the same result.
fn hot_path(argv: &[OsString]) -> Option<clap::Command> {
    use clap::{Args, Subcommand};
    // The command is the first argument that is not a global flag (`-q`, `--color WHEN`, ...).
    let mut rest = argv.iter().skip(1).map(|a| a.to_str());
    let name = loop {
        match rest.next()?? {
            "--manifest" | "--color" => {
                rest.next()?;
            }
            flag if flag.starts_with('-') => {
                if !(flag == "-q"
                    || flag == "--quiet"
                    || flag.starts_with("--color=")
                    || flag.starts_with("--manifest="))
                {
                    return None;
                }
            }
            name => break name,
        }
    };
    let leaf = |command: clap::Command| command;
    let family = |command: clap::Command| {
        command
            .subcommand_required(true)
            .arg_required_else_help(true)
    };
    let command = match name {
        "snapshot" => leaf(snapshot::SnapshotArgs::augment_args(clap::Command::new(
            "snapshot",
        ))),
        "status" => leaf(status::StatusArgs::augment_args(clap::Command::new(
            "status",
        ))),
        "verify" => leaf(verify::VerifyArgs::augment_args(clap::Command::new(
            "verify",
        ))),
        "policy" => {
            policy::PolicyCommand::augment_subcommands(family(clap::Command::new("policy")))
        }
        "hook" => hook::HookCommand::augment_subcommands(family(clap::Command::new("hook"))),
        _ => return None,
    };
    let root = clap::Command::new("git-hpp")
        .bin_name("git hpp")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg_required_else_help(true);
    Some(Globals::augment_args(root).subcommand(command))
}

/// The command families.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum Command {
    /// Manage a loop's event log: append, verify, log, export, import, reconcile
    #[command(subcommand)]
    Event(event::EventCommand),
    /// Manage evidence bundles: run, verify, list, show, mutate, import, export
    #[command(subcommand)]
    Evidence(evidence::EvidenceCommand),
    /// Manage attestations: create, verify, import, export
    #[command(subcommand)]
    Attest(attest::AttestCommand),
    Verify(verify::VerifyArgs),
    /// Manage the trust policy: who may sign what (init, add, remove, set, show, pin, seal)
    #[command(subcommand)]
    Trust(trust::TrustCommand),
    Push(sync::PushArgs),
    Fetch(sync::FetchArgs),
    /// Manage the refspecs that carry records with plain git fetch and push
    #[command(subcommand)]
    Remote(remote::RemoteCommand),
    /// Manage the pre-push gate: install, status
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// Run a git hook (called by the installed hooks)
    #[command(subcommand, hide = true)]
    Hook(hook::HookCommand),
    /// Classify commands with the command policy
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Compile WorkGraph specs into waves; measure spec coverage
    #[command(subcommand)]
    Work(work::WorkCommand),
    /// Compile context blocks under a budget
    #[command(subcommand)]
    Context(context::ContextCommand),
    /// Check citations against their context
    #[command(subcommand)]
    Cite(cite::CiteCommand),
    /// Measure retrievers
    #[command(subcommand)]
    Retrieval(retrieval::RetrievalCommand),
    /// Validate and measure typed decisions
    #[command(subcommand)]
    Decide(decide::DecideCommand),
    /// Check review findings
    #[command(subcommand)]
    Findings(findings::FindingsCommand),
    Route(route::RouteArgs),
    /// Run eval suites: pass@k and pass^k
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    Benchmark(benchmark::BenchmarkArgs),
    Status(status::StatusArgs),
    Resume(resume::ResumeArgs),
    Loops(loops::LoopsArgs),
    Snapshot(snapshot::SnapshotArgs),
    Restore(restore::RestoreArgs),
    Demo(demo::DemoArgs),
    /// House Sessions: plan, validate, tally, stop, record, run, verify, decide
    ///
    /// A House Session checks a panel of pinned deciders (an hpp.panel/v1), counts its turns
    /// (hpp.turn/v1), decides by rule when it stops, and seals it as an hpp.deliberation/v2
    /// record kept at refs/hpp/deliberations/, so it travels with git push. git-hpp calls no
    /// model unless `run` is given the seats' commands.
    #[command(subcommand)]
    Deliberate(deliberate::DeliberateCommand),
    /// Project lanes, agents, monitors and context budgets as maps
    #[command(subcommand)]
    Map(map::MapCommand),
    Graph(graph::GraphArgs),
    Atlas(atlas::AtlasArgs),
    /// Manage lanes: linked worktrees with a claim on a territory
    #[command(subcommand)]
    Lane(lane::LaneCommand),
    /// Move items across the lane board; compete and select
    #[command(subcommand)]
    Board(board::BoardCommand),
    /// Pick a checker of another provider
    #[command(subcommand)]
    Checker(checker::CheckerCommand),
    Doctor(doctor::DoctorArgs),
    Init(init::InitArgs),
    Install(install::InstallArgs),
    /// Manage module directories: checksums
    #[command(subcommand)]
    Module(module::ModuleCommand),
    /// Write, show and inject session handoffs
    #[command(subcommand)]
    Handoff(handoff::HandoffCommand),
    /// Record failures and inject recurring gotchas
    #[command(subcommand)]
    Gotcha(gotcha::GotchaCommand),
    InstallMan(manual::InstallManArgs),
    Completions(manual::CompletionsArgs),
    /// Run the manifest's health probes and record their signals
    #[command(subcommand)]
    Monitor(monitor::MonitorCommand),
}

/// The top-level commands by what they are for, in the order `--help` lists them.
pub const GROUPS: [(&str, &[&str]); 4] = [
    (
        "Records: the loop, its evidence and who checked it",
        &[
            "status",
            "event",
            "evidence",
            "attest",
            "verify",
            "trust",
            "snapshot",
            "restore",
            "resume",
            "loops",
            "deliberate",
            "handoff",
            "gotcha",
            "push",
            "fetch",
            "remote",
        ],
    ),
    (
        "Rulers: deterministic checks",
        &[
            "policy",
            "work",
            "context",
            "cite",
            "retrieval",
            "decide",
            "findings",
            "route",
            "eval",
            "benchmark",
        ],
    ),
    (
        "Lanes and views: many agents at once",
        &[
            "lane", "board", "checker", "map", "monitor", "graph", "atlas",
        ],
    ),
    (
        "Setup",
        &[
            "demo",
            "init",
            "install",
            "module",
            "hooks",
            "doctor",
            "install-man",
            "completions",
        ],
    ),
];

/// The `git hpp` command tree as it runs: [`Cli`]'s, with the top-level commands listed in
/// [`GROUPS`] in `--help` (clap lists subcommands in one flat block).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let command = Cli::command();
    let width = command
        .get_subcommands()
        .map(|s| s.get_name().len())
        .max()
        .unwrap_or(0);
    let mut listed = String::new();
    for (heading, names) in GROUPS {
        listed.push_str(&format!("{heading}:\n"));
        for name in names {
            let about = command
                .find_subcommand(name)
                .and_then(clap::Command::get_about)
                .map(ToString::to_string)
                .unwrap_or_default();
            listed.push_str(&format!("  {name:<width$}  {about}\n"));
        }
        listed.push('\n');
    }
    let template = format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{listed}\
         Options:\n{{options}}{{after-help}}"
    );
    examples::attach(command.help_template(template), "git-hpp")
}

/// The `--loop` flag shared by every command that acts on one loop.
#[derive(Debug, Clone, clap::Args)]
pub struct LoopArg {
    /// Loop to act on [default: the current branch's name]
    #[arg(long = "loop", value_name = "NAME")]
    pub name: Option<LoopId>,
}

/// The trust flags of every command that checks signatures (`verify`, `attest verify|import`,
/// and the loop gates of `event append` and `evidence run`): the allowed signers and whether
/// signatures are required ([`Ctx::signature_policy`], one rule for all of them).
#[derive(Debug, Clone, clap::Args)]
pub struct TrustArgs {
    /// Allowed-signers file (git's format) signatures are checked against [default: git config
    /// hpp.allowedSignersFile, then gpg.ssh.allowedSignersFile]
    #[arg(long, value_name = "FILE")]
    pub allowed_signers: Option<PathBuf>,
    /// Require a signature by an allowed signer, even with no allowed-signers file configured
    #[arg(long, conflicts_with = "allow_unsigned")]
    pub require_signed: bool,
    /// Let unsigned records pass although an allowed-signers file is configured (a signature
    /// that is there is still checked)
    #[arg(long)]
    pub allow_unsigned: bool,
}

impl TrustArgs {
    /// Returns the signature rule in force: the repository's trust policy when it has one,
    /// else the allowed signers and whether signatures are required ([`Ctx::trust`]).
    pub fn policy(&self, ctx: &Ctx) -> Result<crate::trust::Trust, CliError> {
        ctx.trust(
            self.allowed_signers.as_deref(),
            self.require_signed,
            self.allow_unsigned,
        )
    }
}

/// The `--json` flag shared by every command with a human rendering.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct JsonArg {
    /// Print one pretty, sorted-key JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

/// An agent host as a command-line value (`--host claude-code|codex`; the core knows no clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostArg(pub Host);

impl clap::ValueEnum for HostArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [HostArg; 2] = [HostArg(Host::ALL[0]), HostArg(Host::ALL[1])];
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let help = match self.0 {
            Host::ClaudeCode => "Claude Code",
            Host::Codex => "Codex CLI (its PreToolUse hook cannot ask)",
        };
        Some(clap::builder::PossibleValue::new(self.0.as_str()).help(help))
    }
}

/// Runs `git hpp` with `argv` (the program name first) and returns the exit code. An argv that is
/// exactly `[prog, "--self-test"]` runs the packaged benchmark instead ([`benchmark::self_test`]).
/// The process's entry, called once: what the store's reads kept is left for the process's
/// exit to return, not freed ([`hpp_store::Store::leave_caches_to_exit`]).
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // Before any thread starts: the descriptor table the kernel then never grows under threads.
    hpp_store::descriptors::size_table();
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    let argv = match change_dir(argv) {
        Ok(argv) => argv,
        Err(e) => return ExitCode::from(output::emit(Err(e)).code()),
    };
    manual::keep_current();
    // `--help` at a terminal is the manual page, as `git commit --help` is (piped, or with no
    // page or no man, it is clap's text, which ends with the same examples).
    if let Some(page) = man_page::page_asked(&argv, command, "git-hpp")
        && output::stdout_is_terminal()
        && let Some(code) = man_page::open(&page)
    {
        return ExitCode::from(u8::try_from(code).unwrap_or(Exit::Fault.code()));
    }
    // The reference's special form: exactly `--self-test` and nothing else; not a subcommand.
    if let [_, flag] = argv.as_slice()
        && flag == "--self-test"
    {
        return ExitCode::from(output::emit(benchmark::self_test()).code());
    }
    // Parsed by the bare command first: what only help shows (the grouped listing, every
    // command's examples) was 5 million instructions of every run. The same arguments, so
    // what the bare command refuses or answers (help, a version, a usage error) the whole
    // command refuses or answers too, and renders.
    use clap::CommandFactory;
    let parse = |command: clap::Command| {
        command
            .try_get_matches_from(&argv)
            .and_then(|matches| <Cli as clap::FromArgMatches>::from_arg_matches(&matches))
    };
    let hot = hot_path(&argv).and_then(|command| parse(command).ok());
    let cli = match hot
        .map(Ok)
        .unwrap_or_else(|| parse(Cli::command()).or_else(|_| parse(command())))
    {
        Ok(cli) => cli,
        Err(error) => return ExitCode::from(clap_exit(&error).code()),
    };
    let quiet = cli.globals.quiet;
    output::set_color(cli.globals.color);
    let result = Ctx::new(cli.globals.manifest.clone(), quiet).and_then(|ctx| {
        let done = dispatch(&ctx, cli.command);
        // Housekeeping after a command that wrote, as git's own commands do: the records'
        // loose objects are packed once there are many (`Store::keep_packed`).
        let result = match (done, ctx.opened()) {
            (Ok(outcome), Some(store)) => match store.keep_packed() {
                Ok(_) => Ok(outcome),
                Err(e) => Ok(outcome.warn(format!("packing the records' objects failed: {e}"))),
            },
            (done, _) => done,
        };
        // The process ends next and returns the store's caches at once (2-3 ms to free one
        // by one after a board fetch); the store itself still drops, its temporary
        // directories with it.
        if let Some(store) = ctx.opened() {
            store.leave_caches_to_exit();
        }
        result
    });
    ExitCode::from(output::emit_quietly(result, quiet).code())
}

/// Takes every `-C PATH` (or `-CPATH`) before the command out of `argv`, changing into each in
/// turn as git does, so every path the command reads after is relative to the last.
fn change_dir(mut argv: Vec<OsString>) -> Result<Vec<OsString>, CliError> {
    let into = |dir: &std::ffi::OsStr| {
        std::env::set_current_dir(dir).map_err(|e| {
            CliError::refused(format!(
                "cannot change to {}: {e}",
                Path::new(dir).display()
            ))
        })
    };
    let mut i = 1;
    while i < argv.len() {
        match argv[i].to_str() {
            Some("-C") => {
                let Some(dir) = argv.get(i + 1).cloned() else {
                    return Err(CliError::refused(
                        "-C needs a path: git hpp -C PATH <command>",
                    ));
                };
                into(&dir)?;
                argv.drain(i..i + 2);
            }
            Some(flag) if flag.starts_with("-C") => {
                into(std::ffi::OsStr::new(&flag[2..]))?;
                argv.remove(i);
            }
            Some("--manifest" | "--color") => i += 2,
            Some(flag) if flag.starts_with('-') => i += 1,
            _ => break,
        }
    }
    Ok(argv)
}

/// Help and version print to stdout and exit 0; a value our parsers refused is refused input
/// (exit 2, `hpp: <reason>`); any other usage error exits 3 with clap's message.
fn clap_exit(error: &clap::Error) -> Exit {
    use clap::error::ErrorKind;
    if !error.use_stderr() {
        output::emit_clap(error);
        return Exit::Ok;
    }
    if error.kind() == ErrorKind::ValueValidation
        && let Some(source) = std::error::Error::source(error)
    {
        return output::emit(Err(CliError::refused(source)));
    }
    output::emit_clap(error);
    Exit::Fault
}

fn dispatch(ctx: &Ctx, command: Command) -> Result<Outcome, CliError> {
    match command {
        Command::Event(cmd) => event::dispatch(ctx, cmd),
        Command::Evidence(cmd) => evidence::dispatch(ctx, cmd),
        Command::Attest(cmd) => attest::dispatch(ctx, cmd),
        Command::Status(args) => status::cmd_status(ctx, &args),
        Command::Policy(cmd) => policy::dispatch(ctx, cmd),
        Command::Work(cmd) => work::dispatch(ctx, cmd),
        Command::Context(cmd) => context::dispatch(ctx, cmd),
        Command::Cite(cmd) => cite::dispatch(ctx, cmd),
        Command::Retrieval(cmd) => retrieval::dispatch(ctx, cmd),
        Command::Decide(cmd) => decide::dispatch(ctx, cmd),
        Command::Findings(cmd) => findings::dispatch(ctx, cmd),
        Command::Route(args) => route::cmd_route(ctx, &args),
        Command::Eval(cmd) => eval::dispatch(ctx, cmd),
        Command::Benchmark(args) => benchmark::cmd_benchmark(ctx, &args),
        Command::Push(args) => sync::cmd_push(ctx, &args),
        Command::Fetch(args) => sync::cmd_fetch(ctx, &args),
        Command::Remote(cmd) => remote::dispatch(ctx, cmd),
        Command::Hooks(cmd) => hooks::dispatch(ctx, cmd),
        Command::Hook(cmd) => hook::dispatch(ctx, cmd),
        Command::Verify(args) => verify::cmd_verify(ctx, &args),
        Command::Trust(cmd) => trust::dispatch(ctx, cmd),
        Command::Resume(args) => resume::cmd_resume(ctx, &args),
        Command::Loops(args) => loops::cmd_loops(ctx, &args),
        Command::Snapshot(args) => snapshot::cmd_snapshot(ctx, &args),
        Command::Restore(args) => restore::cmd_restore(ctx, &args),
        Command::Demo(args) => demo::cmd_demo(ctx, &args),
        Command::Deliberate(cmd) => deliberate::dispatch(ctx, cmd),
        Command::Map(cmd) => map::dispatch(ctx, cmd),
        Command::Graph(cmd) => graph::dispatch(ctx, cmd),
        Command::Atlas(cmd) => atlas::dispatch(ctx, cmd),
        Command::Lane(cmd) => lane::dispatch(ctx, cmd),
        Command::Board(cmd) => board::dispatch(ctx, cmd),
        Command::Checker(cmd) => checker::dispatch(ctx, cmd),
        Command::Doctor(cmd) => doctor::dispatch(ctx, cmd),
        Command::Init(cmd) => init::dispatch(ctx, cmd),
        Command::Install(cmd) => install::dispatch(ctx, cmd),
        Command::Module(cmd) => module::dispatch(ctx, cmd),
        Command::Handoff(cmd) => handoff::dispatch(ctx, cmd),
        Command::Gotcha(cmd) => gotcha::dispatch(ctx, cmd),
        Command::InstallMan(args) => manual::cmd_install_man(&args),
        Command::Completions(args) => manual::cmd_completions(&args),
        Command::Monitor(cmd) => monitor::dispatch(ctx, cmd),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The whole command line of `git-hpp ARGS`.
    fn argv_of(args: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("git-hpp")
            .chain(args.iter().copied())
            .map(Into::into)
            .collect()
    }

    /// Parses `argv` (after the program's name) with `command`.
    fn parsed(command: clap::Command, argv: &[&str]) -> Result<String, String> {
        command
            .try_get_matches_from(argv_of(argv))
            .and_then(|m| <super::Cli as clap::FromArgMatches>::from_arg_matches(&m))
            .map(|cli| format!("{cli:?}"))
            .map_err(|e| e.kind().to_string())
    }

    /// The subcommands a command's one-line help lists ("…: a, b, c" or "… (a, b, c)") that
    /// are not `names`, and the names it leaves out; `None` when it lists none of them.
    fn list_gaps(about: &str, names: &[&str]) -> Option<(Vec<String>, Vec<String>)> {
        let list = match about.rfind('(') {
            Some(open) => about[open + 1..].trim_end_matches(')'),
            None => about.rsplit_once(": ")?.1,
        };
        let listed: Vec<&str> = list.split(", ").map(str::trim).collect();
        if listed.iter().filter(|l| names.contains(l)).count() < 2 {
            return None;
        }
        let unknown = listed
            .iter()
            .filter(|l| !names.contains(l))
            .map(|l| (*l).to_owned())
            .collect();
        let missing = names
            .iter()
            .filter(|n| !listed.contains(n))
            .map(|n| (*n).to_owned())
            .collect();
        Some((unknown, missing))
    }

    #[test]
    fn a_command_whose_help_lists_its_subcommands_lists_every_one() {
        let cli = super::Cli::command();
        let mut checked = 0;
        for command in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
            let names: Vec<&str> = command
                .get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(clap::Command::get_name)
                .collect();
            let about = command
                .get_about()
                .map(ToString::to_string)
                .unwrap_or_default();
            if let Some((unknown, missing)) = list_gaps(&about, &names) {
                checked += 1;
                assert!(
                    unknown.is_empty() && missing.is_empty(),
                    "`{}`'s help \"{about}\" names {unknown:?}, which it lacks, and leaves out {missing:?}",
                    command.get_name()
                );
            }
        }
        assert!(checked >= 6, "only {checked} helps list their subcommands");
    }

    #[test]
    fn control_a_help_that_leaves_a_subcommand_out_is_caught() {
        let names = ["run", "verify", "list", "show", "mutate"];
        assert_eq!(
            list_gaps("Manage evidence bundles: run, verify, list, show", &names),
            Some((vec![], vec!["mutate".to_owned()]))
        );
        assert_eq!(
            list_gaps("Who may sign what (run, verify, gone)", &names),
            Some((
                vec!["gone".to_owned()],
                vec!["list".into(), "show".into(), "mutate".into()]
            ))
        );
        assert_eq!(
            list_gaps("Compile context blocks under a budget", &names),
            None
        );
    }

    #[test]
    fn the_hot_path_parses_as_the_whole_tree_does() {
        let cases: &[&[&str]] = &[
            &["snapshot"],
            &["snapshot", "--explain"],
            &["snapshot", "--json"],
            &["-q", "snapshot"],
            &["--color", "never", "snapshot", "-q"],
            &["--color=always", "status", "--json"],
            &["status", "--loop", "main"],
            &["--manifest", "m.json", "status"],
            &["--manifest=m.json", "status", "--quiet"],
            &["verify"],
            &["verify", "HEAD", "--json"],
            &["verify", "main~3..main"],
            &["policy", "hook", "--host", "claude-code"],
            &[
                "policy",
                "check",
                "--mode",
                "enforce",
                "--command",
                "rm -rf /",
            ],
            &["hook", "pre-push", "origin", "url"],
            &["hook", "pre-receive"],
        ];
        for argv in cases {
            let whole = parsed(super::Cli::command(), argv);
            let hot = super::hot_path(&argv_of(argv)).expect("a hot command");
            assert!(whole.is_ok(), "{argv:?}: {whole:?}");
            assert_eq!(parsed(hot, argv), whole, "{argv:?}");
        }
    }

    #[test]
    fn control_what_the_hot_path_refuses_the_whole_tree_refuses_too() {
        // The run falls back to the whole tree on any refusal; what matters is that the hot
        // path never takes what the whole tree refuses.
        let refused: &[&[&str]] = &[
            &["snapshot", "--no-such-flag"],
            &["status", "--loop"],
            &["policy"],
            &["policy", "no-such-verb"],
            &["hook"],
            &["verify", "--json", "--json"],
        ];
        for argv in refused {
            let whole = parsed(super::Cli::command(), argv);
            assert!(whole.is_err(), "{argv:?} is refused by the whole tree");
            let hot = super::hot_path(&argv_of(argv)).expect("a hot command");
            assert!(parsed(hot, argv).is_err(), "{argv:?} taken by the hot path");
        }
        // Any other command, or an unknown global flag first, is not a hot path at all.
        for argv in [&["event", "verify"][..], &["--frobnicate", "status"][..]] {
            assert!(super::hot_path(&argv_of(argv)).is_none(), "{argv:?}");
        }
    }

    #[test]
    fn the_command_tree_is_well_formed() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn every_top_level_command_is_in_exactly_one_group() {
        let command = super::Cli::command();
        let mut grouped: Vec<&str> = super::GROUPS
            .iter()
            .flat_map(|(_, n)| n.iter().copied())
            .collect();
        let mut visible: Vec<&str> = command
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(clap::Command::get_name)
            .collect();
        grouped.sort_unstable();
        visible.sort_unstable();
        assert_eq!(grouped, visible);
    }

    #[test]
    fn control_a_command_left_out_of_the_groups_is_found() {
        let command = super::Cli::command().subcommand(clap::Command::new("stray"));
        let grouped: Vec<&str> = super::GROUPS
            .iter()
            .flat_map(|(_, n)| n.iter().copied())
            .collect();
        let missing: Vec<&str> = command
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(clap::Command::get_name)
            .filter(|name| !grouped.contains(name))
            .collect();
        assert_eq!(missing, ["stray"]);
    }

    #[test]
    fn control_an_unknown_command_or_flag_does_not_parse() {
        use clap::Parser;
        assert!(super::Cli::try_parse_from(["git-hpp", "status"]).is_ok());
        assert!(super::Cli::try_parse_from(["git-hpp", "no-such-command"]).is_err());
        assert!(super::Cli::try_parse_from(["git-hpp", "status", "--no-such-flag"]).is_err());
    }
}
