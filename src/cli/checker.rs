//! `git hpp checker route`: pick a checker of another provider than the maker, from the agent
//! CLIs on PATH. Needs no repository.

use std::path::Path;

use super::JsonArg;
use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use hpp_core::board::checker::{self, DEFAULT_MAKER, DEFAULT_PREFER, PROVIDERS};

/// The verbs of `git hpp checker`.
#[derive(Debug, clap::Subcommand)]
pub enum CheckerCommand {
    /// Pick a checker of another provider than the maker from the agent CLIs on PATH
    ///
    /// Looks for codex, cursor (agent, cursor-agent or cursor), gemini and claude on PATH and
    /// picks the first provider of --prefer that is not the maker. Prints
    /// {"status","maker","checker","command","available","note"} with --json. Exit 0 found,
    /// 1 none found, 2 none found with --require, 3 unknown provider.
    Route(RouteArgs),
}

/// Pick a checker
#[derive(Debug, clap::Args)]
pub struct RouteArgs {
    /// The maker's provider (codex, cursor, gemini, claude)
    #[arg(long, default_value = DEFAULT_MAKER)]
    maker: String,
    /// Providers to try, in order, comma-separated
    #[arg(long, default_value = DEFAULT_PREFER)]
    prefer: String,
    /// Finding no checker is a block (exit 2) instead of a warning (exit 1)
    #[arg(long)]
    require: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Runs one verb of `git hpp checker`.
pub fn dispatch(ctx: &Ctx, cmd: CheckerCommand) -> Result<Outcome, CliError> {
    match cmd {
        CheckerCommand::Route(args) => cmd_route(ctx, &args),
    }
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file() || path.with_extension("exe").is_file()
    }
}

fn cmd_route(ctx: &Ctx, args: &RouteArgs) -> Result<Outcome, CliError> {
    let maker = args.maker.trim().to_lowercase();
    checker::commands(&maker).map_err(CliError::usage)?;
    let prefer = checker::parse_prefer(&args.prefer).map_err(CliError::usage)?;
    let dirs = ctx.path_dirs();
    let found: Vec<(String, String)> = PROVIDERS
        .iter()
        .filter_map(|(provider, commands)| {
            commands
                .iter()
                .find(|cmd| dirs.iter().any(|dir| is_executable(&dir.join(cmd))))
                .map(|cmd| ((*provider).to_owned(), (*cmd).to_owned()))
        })
        .collect();
    let route = checker::route(&maker, &prefer, &found);
    let exit = match (&route.checker, args.require) {
        (Some(_), _) => Exit::Ok,
        (None, false) => Exit::Warn,
        (None, true) => Exit::Block,
    };
    let human = match (&route.checker, &route.command) {
        (Some(provider), Some(command)) => {
            format!("checker: {provider} ({command}) for maker {maker}")
        }
        _ => format!("no checker: {}", route.note),
    };
    Ok(Outcome::document(args.format.json, &route, human, exit))
}
