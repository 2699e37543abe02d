//! `git hpp board approve`: a person approves a VERIFIED red item.

use hpp_core::board::{Actor, Request};

/// Approve a red item
#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    /// The item
    item: String,
    /// Who approves
    #[arg(long, value_name = "LANE", default_value = "human")]
    lane: String,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// The request `approve` makes: the approver is a person.
pub fn request(args: ApproveArgs) -> Request {
    Request::Approve {
        item: args.item,
        actor: Actor {
            lane: args.lane,
            role: "human".to_owned(),
            model: "human".to_owned(),
        },
        reason: args.reason,
    }
}
