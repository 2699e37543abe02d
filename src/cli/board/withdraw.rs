//! `git hpp board withdraw`: withdraw one candidate from an undecided competition.

use super::Writer;
use hpp_core::board::Request;

/// Withdraw a candidate
#[derive(Debug, clap::Args)]
pub struct WithdrawArgs {
    /// The competition
    #[arg(long)]
    task: String,
    /// The candidate to withdraw
    #[arg(long)]
    item: String,
    #[command(flatten)]
    writer: Writer,
    /// The withdrawing lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
    /// Why (required)
    #[arg(long)]
    reason: String,
}

/// The request `withdraw` makes.
pub fn request(args: WithdrawArgs) -> Request {
    Request::Withdraw {
        task: args.task,
        item: args.item,
        actor: args.writer.actor(&args.role),
        reason: args.reason,
    }
}
