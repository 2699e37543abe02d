//! `git hpp board claim`: claim an item for a lane (set ITEM CLAIMED).

use super::Writer;
use hpp_core::board::{Request, SetRequest, State};

/// Claim an item
#[derive(Debug, clap::Args)]
pub struct ClaimArgs {
    /// The item
    item: String,
    #[command(flatten)]
    writer: Writer,
    /// The claiming lane's role
    #[arg(long, default_value = "executor")]
    role: String,
    /// Tag the item (red: merging it needs a person's approval; sticky)
    #[arg(long, value_parser = ["red"])]
    tag: Option<String>,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// The request `claim` makes: CLAIMED, by the writing lane.
pub fn request(args: ClaimArgs) -> Request {
    let mut set = SetRequest::new(&args.item, State::Claimed, args.writer.actor(&args.role));
    set.red = args.tag.is_some();
    set.reason = args.reason;
    Request::Set(set)
}
