//! `git hpp board start-review`: hand an item to a reviewer lane.

use super::{Writer, lanes};
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use hpp_core::board::Request;

/// Start a review
#[derive(Debug, clap::Args)]
pub struct StartReviewArgs {
    /// The item
    item: String,
    /// The reviewer's lane
    #[arg(long, value_name = "LANE")]
    target_lane: String,
    /// The reviewer's model (checked against the builders' families when given)
    #[arg(long, value_name = "MODEL")]
    target_model: Option<String>,
    #[command(flatten)]
    writer: Writer,
    /// The starting lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
}

/// The request `start-review` makes, with the lane registry now.
pub fn request(ctx: &Ctx, args: StartReviewArgs) -> Result<Request, CliError> {
    Ok(Request::StartReview {
        item: args.item,
        target_lane: args.target_lane,
        target_model: args.target_model,
        actor: args.writer.actor(&args.role),
        lanes: lanes(ctx)?,
    })
}
