//! git-hpp: the House Party Protocol harness, git-native.
//!
//! Every record the harness keeps is a git object reachable from a ref under `refs/hpp/`, so
//! records travel with `git push`/`git fetch` and a reviewer verifies them from a plain clone.
//!
//! Layers, and the direction of their dependencies:
//! - pure concept modules ([`event_loop`], [`event_log`], [`manifest`], [`secrets`], [`record`])
//!   take values and return values: no files, no processes, no git, no printing;
//! - [`store`] is the only module that talks to git (through gix);
//! - workflows ([`events`]) combine the two;
//! - [`cli`] is the only layer that prints, and the only one that decides exit codes.

pub mod atlas;
pub mod attest;
pub mod board;
pub mod citations;
pub mod cli;
pub mod context;
pub mod continuity;
pub mod coverage;
pub mod decision;
pub mod deliberation;
pub mod doctor;
pub mod evals;
pub mod event_log;
pub mod event_loop;
pub mod events;
pub mod evidence;
pub mod family;
pub mod findings;
pub mod gate;
pub mod gotcha;
pub mod graph;
pub mod hooks;
pub mod hop;
pub mod init;
pub mod instrument;
pub mod lanes;
pub mod manifest;
pub mod maps;
pub mod modules;
pub mod mutation;
pub mod policy;
pub mod process;
pub mod record;
pub mod retrieval;
pub mod review_guard;
pub mod routing;
pub mod run;
pub mod secrets;
pub mod sign;
pub mod workgraph;
