//! `hop checkpoint`: capture an attempt's live workspace as a checkpoint state now.

use super::out::{HopError, HopOutcome};
use super::{HopCtx, state_arg};
use hpp_core::hop::StateId;

/// Capture the attempt's workspace now as a checkpoint
///
/// Snapshots the live workspace of STATE's attempt (its non-ignored files) as a checkpoint
/// state (C_) after the attempt's head, pinned at refs/hpp/hop/states/C_..., and moves
/// refs/hpp/hop/attempts/AT_... to it by compare-and-swap: the same step `hop prompt` and
/// `hop check` take first. Prints the new state id. Exit 1 for an unknown state or a missing
/// workspace, 2 for a state of no attempt (an accepted state) or a workspace file shaped like
/// a secret, 21 if the attempt's head moved meanwhile.
#[derive(Debug, clap::Args)]
pub struct HopCheckpointArgs {
    /// Any state of the attempt ("$HOP_STATE_ID")
    #[arg(value_parser = state_arg)]
    state: StateId,
}

/// `hop checkpoint`.
pub fn cmd_hop_checkpoint(ctx: &HopCtx, args: &HopCheckpointArgs) -> Result<HopOutcome, HopError> {
    let done = ctx.hop()?.checkpoint_now(&args.state)?;
    let human = format!(
        "{}\ncheckpoint of {} (tree {}) after {}",
        done.state.state.id,
        done.state
            .state
            .attempt
            .as_ref()
            .map_or_else(|| "-".to_owned(), ToString::to_string),
        done.state.state.tree,
        done.after
    );
    Ok(HopOutcome::ok(&done, human))
}
