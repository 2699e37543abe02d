//! git-hpp: the House Party Protocol harness, git-native.
//!
//! Every record the harness keeps is a git object reachable from a ref under `refs/hpp/`, so
//! records travel with `git push`/`git fetch` and a reviewer verifies them from a plain clone.
//!
//! Three crates, and the direction of their dependencies:
//! - [`hpp_core`] is the protocol as values: every concept, every rule, no I/O;
//! - [`hpp_store`] is the only code that talks to git (gix and the git CLI), and knows nothing of
//!   the concepts: records, logs, trees, refs;
//! - this crate joins them. Its workflows read from the store, decide with the core and write
//!   through the store; [`cli`] is the only module that prints and the only one that decides
//!   exit codes; [`process`] and [`sign`] are the side effects the core takes as values.
//!
//! The workflows stand in floors, bottom first; each imports only floors below its own
//! (`tests/it/layers.rs` holds the table):
//! - the loop log, [`events`], at the bottom of the trust spine, beside what needs nothing of
//!   the application: [`process`], [`paths`], [`outbound`], [`board`], [`continuity`]
//!   (handoffs), [`continuity_checkpoint`] (turn checkpoints), [`gotcha`] (the failure memory),
//!   [`hooks`] (git hooks), [`modules`] (install);
//! - [`sign`], [`lanes`], [`monitors`] (health probes and their signals); then [`trust`] (the
//!   signed policy at `refs/hpp/trust` and the one signature rule every reader uses);
//! - the records above the log: [`evidence`], [`deliberation`] (sealed House Sessions and the
//!   seat runner that drives one); then [`attest`] and [`hop`];
//! - [`gates`], the top of the trust spine: the loop gates, the gated append, the pre-push and
//!   pre-receive gates;
//! - [`evals`] (controls and command cases), [`reconcile`] (fetched records taken into
//!   `refs/hpp/`), [`doctor`]; then [`atlas`] and [`init`]; then [`cli`].

pub mod atlas;
pub mod attest;
pub mod board;
pub mod cli;
pub mod continuity;
pub mod continuity_checkpoint;
pub mod deliberation;
pub mod doctor;
pub mod evals;
pub mod events;
pub mod evidence;
pub mod gates;
pub mod gotcha;
pub mod hooks;
pub mod hop;
pub mod init;
pub mod lanes;
pub mod modules;
pub mod monitors;
pub mod outbound;
pub mod paths;
pub mod process;
pub mod reconcile;
pub mod sign;
pub mod trust;
