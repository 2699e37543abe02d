//! `git hpp board release-fix`: queue the fix of a NEEDS-FIX item for a lane.

use super::{Writer, lanes};
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use hpp_core::board::Request;

/// Queue a fix
#[derive(Debug, clap::Args)]
pub struct ReleaseFixArgs {
    /// The item
    item: String,
    /// The lane that builds the fix
    #[arg(long, value_name = "LANE")]
    target_lane: String,
    #[command(flatten)]
    writer: Writer,
    /// The releasing lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
    /// Released by an operator (needed to reroute a fix already queued)
    #[arg(long)]
    operator: bool,
}

/// The request `release-fix` makes, with the lane registry now.
pub fn request(ctx: &Ctx, args: ReleaseFixArgs) -> Result<Request, CliError> {
    Ok(Request::ReleaseFix {
        item: args.item,
        target_lane: args.target_lane,
        actor: args.writer.actor(&args.role),
        operator: args.operator,
        lanes: lanes(ctx)?,
    })
}
