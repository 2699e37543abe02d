//! The `hop` command tree (seeds/HOP-PROTOCOL.md): parse, dispatch, print, exit with hop's own
//! exit table (0, 1 error, 2 usage, 20 overlap, 21 head moved, 22 check failed, 23 the branch
//! to land into has local changes).
//!
//! Human or controller commands live in [`controller`] (`init`, `start`, `env`, `prompt`,
//! `land`, `undo`), agent commands in [`agent`] (`state`, `status`, `check`, `propose`) and
//! [`checkpoint`], the read-only views of the state graph in [`inspect`] (`diff`, `history`,
//! `graph`), the agent-host skill in [`skill`], and `doctor` in [`doctor`]; [`out`] owns the
//! terminal. `submit`, `accept` and `inspect` are the published alpha's names for `propose`,
//! `land` and `state`.

pub mod agent;
pub mod checkpoint;
pub mod controller;
pub mod doctor;
pub mod inspect;
pub mod out;
pub mod signing;
pub mod skill;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use self::out::{HopError, HopExit, HopOutcome};
use crate::hop::Hop;
use hpp_core::hop::states::Launch;
use hpp_store::Store;

/// Hop agent protocol controller: prompts, checkpoints, proposals, landing
///
/// Every state is a git commit pinned under refs/hpp/hop/, so `git hpp push` carries the state
/// graph to another machine.
///
/// Exit codes: 0 success, 1 error, 2 invalid usage or agent launch, 20 overlap or conflict
/// block, 21 head changed during compare-and-swap, 22 check or validation failed, 23 the branch
/// to land into is checked out with local changes.
#[derive(Debug, Parser)]
#[command(name = "hop", version, max_term_width = 100)]
pub struct HopCli {
    /// Print one JSON document: {"ok":true,"data":...} or {"ok":false,"error":...,"exit_code":N}
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: HopCommand,
}

/// The hop commands.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb's help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum HopCommand {
    Init(controller::HopInitArgs),
    Start(controller::HopStartArgs),
    Env(controller::HopEnvArgs),
    Prompt(controller::HopPromptArgs),
    #[command(visible_alias = "accept")]
    Land(controller::HopLandArgs),
    Undo(controller::HopUndoArgs),
    #[command(visible_alias = "inspect")]
    State(agent::HopStateArgs),
    Status(agent::HopStatusArgs),
    Checkpoint(checkpoint::HopCheckpointArgs),
    Check(agent::HopCheckArgs),
    #[command(visible_alias = "submit")]
    Propose(agent::HopProposeArgs),
    Diff(inspect::HopDiffArgs),
    History(inspect::HopHistoryArgs),
    Graph(inspect::HopGraphArgs),
    Doctor(doctor::HopDoctorArgs),
    Skill(skill::HopSkillArgs),
}

/// What every hop command may need: the repository (opened at `HOP_ROOT` when set, else the
/// working directory) and the launch variables.
pub struct HopCtx {
    cwd: PathBuf,
    store: std::cell::OnceCell<Store>,
}

impl HopCtx {
    fn new() -> Result<Self, HopError> {
        let cwd = std::env::current_dir().map_err(|e| {
            HopError::new(
                HopExit::Error,
                format!("cannot read the working directory: {e}"),
            )
        })?;
        Ok(Self {
            cwd,
            store: std::cell::OnceCell::new(),
        })
    }

    /// Returns the repository.
    pub fn store(&self) -> Result<&Store, HopError> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let at = std::env::var_os("HOP_ROOT")
            .filter(|v| !v.is_empty())
            .map_or_else(|| self.cwd.clone(), |root| self.cwd.join(root));
        let store = Store::discover(&at).map_err(|e| {
            HopError::new(HopExit::Error, e).hint("run hop inside a git repository")
        })?;
        Ok(self.store.get_or_init(|| store))
    }

    /// Returns the controller on the repository.
    pub fn hop(&self) -> Result<Hop<'_>, HopError> {
        Ok(Hop::new(self.store()?)?)
    }

    /// Returns `path` resolved against the working directory.
    pub fn absolute(&self, path: &Path) -> PathBuf {
        self.cwd.join(path)
    }

    /// Opens the repository at `path` (relative to the working directory), whatever `HOP_ROOT`
    /// says: `hop init PATH`.
    pub fn store_at(&self, path: &Path) -> Result<Store, HopError> {
        let at = self.absolute(path);
        if !at.is_dir() {
            return Err(HopError::new(
                HopExit::Error,
                format!("{}: no such directory", at.display()),
            ));
        }
        Store::discover(&at).map_err(|e| {
            HopError::new(HopExit::Error, e).hint("run `git init` there first, then hop init")
        })
    }

    /// Reads the agent launch (`HOP_*`); any missing variable is an invalid launch (exit 2).
    pub fn launch(&self) -> Result<Launch, HopError> {
        Launch::from_vars(|name| std::env::var(name).ok())
            .map_err(|e| HopError::from(crate::hop::Error::from(e)))
    }
}

/// The `hop` command tree as it runs: [`HopCli`]'s, each command's `--help` ending with its
/// examples ([`super::examples`]).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    super::examples::attach(HopCli::command(), "hop")
}

/// Runs `hop` with `argv` (the program name first) and returns the exit code.
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    // Before any thread starts: the descriptor table the kernel then never grows under threads.
    hpp_store::descriptors::size_table();
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    // `hop <command> --help` at a terminal is its manual page, as for git hpp.
    if let Some(page) = super::man_page::page_asked(&argv, command, "hop")
        && super::output::stdout_is_terminal()
        && let Some(code) = super::man_page::open(&page)
    {
        return ExitCode::from(u8::try_from(code).unwrap_or(HopExit::Usage.code()));
    }
    // The bare command first, as `git hpp` parses (`cli::run`): help is built only to be shown.
    use clap::CommandFactory;
    let parse = |command: clap::Command| {
        command
            .try_get_matches_from(&argv)
            .and_then(|matches| <HopCli as clap::FromArgMatches>::from_arg_matches(&matches))
    };
    let cli = match parse(HopCli::command()).or_else(|_| parse(command())) {
        Ok(cli) => cli,
        Err(error) => {
            out::emit_clap(&error);
            let exit = if error.use_stderr() {
                HopExit::Usage
            } else {
                HopExit::Ok
            };
            return ExitCode::from(exit.code());
        }
    };
    let json = cli.json;
    let result = HopCtx::new().and_then(|ctx| dispatch(&ctx, cli.command));
    ExitCode::from(out::emit(json, result).code())
}

fn dispatch(ctx: &HopCtx, command: HopCommand) -> Result<HopOutcome, HopError> {
    match command {
        HopCommand::Init(args) => controller::cmd_hop_init(ctx, &args),
        HopCommand::Start(args) => controller::cmd_hop_start(ctx, &args),
        HopCommand::Env(args) => controller::cmd_hop_env(ctx, &args),
        HopCommand::Prompt(args) => controller::cmd_hop_prompt(ctx, &args),
        HopCommand::Land(args) => controller::cmd_hop_land(ctx, &args),
        HopCommand::Undo(args) => controller::cmd_hop_undo(ctx, &args),
        HopCommand::State(args) => agent::cmd_hop_state(ctx, &args),
        HopCommand::Status(args) => agent::cmd_hop_status(ctx, &args),
        HopCommand::Check(args) => agent::cmd_hop_check(ctx, &args),
        HopCommand::Propose(args) => agent::cmd_hop_propose(ctx, &args),
        HopCommand::Checkpoint(args) => checkpoint::cmd_hop_checkpoint(ctx, &args),
        HopCommand::Diff(args) => inspect::cmd_hop_diff(ctx, &args),
        HopCommand::History(args) => inspect::cmd_hop_history(ctx, &args),
        HopCommand::Graph(args) => inspect::cmd_hop_graph(ctx, &args),
        HopCommand::Doctor(args) => doctor::cmd_hop_doctor(ctx, &args),
        HopCommand::Skill(args) => skill::cmd_hop_skill(ctx, &args),
    }
}

/// Parses a state id argument (clap value parser: a bad id is a usage error, exit 2).
pub fn state_arg(text: &str) -> Result<hpp_core::hop::StateId, String> {
    text.parse()
        .map_err(|e: hpp_core::hop::Error| e.to_string())
}

/// Returns a prompt argument's exact bytes.
pub fn prompt_bytes(prompt: &OsString) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    prompt.as_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    #[test]
    fn the_hop_command_tree_is_well_formed() {
        super::HopCli::command().debug_assert();
    }

    #[test]
    fn control_a_bad_state_id_or_unknown_command_does_not_parse() {
        assert!(super::HopCli::try_parse_from(["hop", "status", "--json"]).is_ok());
        assert!(super::HopCli::try_parse_from(["hop", "state", "Q_1"]).is_err());
        assert!(super::HopCli::try_parse_from(["hop", "fly"]).is_err());
        let land = super::HopCli::try_parse_from([
            "hop",
            "land",
            "R_00000000000000000000000",
            "--branch",
            "release",
            "--",
            "sh",
            "-c",
            "exit 0",
        ]);
        assert!(land.is_ok(), "{land:?}");
    }
}
