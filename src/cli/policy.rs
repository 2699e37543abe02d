//! `git hpp policy`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `policy` verbs.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Classify a command as ALLOW, MANUAL or BLOCK
    Check,
    /// Answer an agent host's PreToolUse hook with the policy
    Hook,
}

/// Runs one `policy` verb.
pub fn dispatch(_ctx: &Ctx, _command: PolicyCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp policy is not implemented yet"))
}
