//! `git hpp board compete`: declare a competition (best-of-N) between claimed items.

use super::Writer;
use hpp_core::board::Request;

/// Declare a competition
#[derive(Debug, clap::Args)]
pub struct CompeteArgs {
    /// The competition's id
    #[arg(long)]
    task: String,
    /// The candidate items, comma-separated (at least two)
    #[arg(long, value_delimiter = ',', required = true)]
    items: Vec<String>,
    #[command(flatten)]
    writer: Writer,
    /// The declaring lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
}

/// The request `compete` makes.
pub fn request(args: CompeteArgs) -> Request {
    Request::Compete {
        task: args.task,
        items: args.items.iter().map(|s| s.trim().to_owned()).collect(),
        actor: args.writer.actor(&args.role),
    }
}
