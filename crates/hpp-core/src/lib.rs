//! The House Party Protocol as values: every concept of the vocabulary (shared/seeds/CONCEPTS.md)
//! as data in, data out.
//!
//! Nothing here reads a file, starts a process, asks the clock or talks to git: the application
//! (the `git-hpp` crate) reads and writes, runs commands and takes the time, and hands this crate
//! values; `crates/hpp-store` is the only code that knows git. The compiler keeps it so: this
//! crate depends on neither, nor on gix, nix, ssh-key, clap or indicatif, and its clippy
//! configuration refuses `std::fs`, `std::process`, the environment and the clock.
//!
//! - **Records**: [`record`] (canonical JSON, ids, hashes), [`evidence`] (the evidence bundle),
//!   [`attestation`], [`secrets`] (the secret-shape detector), [`run`] (a finished command),
//!   [`timestamp`] (RFC 3339 in UTC), [`pyrepr`] (Python's `repr` of the values refusals quote),
//!   [`trust`] (the signed policy of who may sign what), [`intoto`] (records as in-toto
//!   statements in DSSE envelopes, for other tools to read).
//! - **The loop**: [`event_loop`] (states, transitions, gates), [`event_log`] (the hash-chained
//!   log), [`gate`] (the pre-push gate's rule), [`manifest`] (the protocol manifest).
//! - **The rulers**: [`policy`], [`workgraph`] (waves), [`coverage`], [`context`], [`citations`],
//!   [`retrieval`], [`decision`], [`findings`], [`routing`], [`evals`] (pass@k), [`mutation`],
//!   [`instrument`] (reading a declared instrument's answer), [`language`] (the source
//!   languages coverage and mutation read).
//! - **Many agents**: [`deliberation`] (House Sessions), [`board`] (the lane board), [`lane`]
//!   (claims, liveness, territory), [`review_guard`] (maker and checker), [`family`] (model
//!   families), [`hop`] (the Hop protocol's states), [`continuity`] (handoffs), [`gotcha`]
//!   (failure memory), [`host`] (the agent hosts' hook input and answers).
//! - **Views**: [`maps`] (lane, agent, monitor and context maps), [`graph`].

pub mod attestation;
pub mod board;
pub mod citations;
pub mod context;
pub mod continuity;
pub mod coverage;
pub mod decision;
pub mod deliberation;
pub mod evals;
pub mod event_log;
pub mod event_loop;
pub mod evidence;
pub mod family;
pub mod findings;
pub mod gate;
pub mod gotcha;
pub mod graph;
pub mod hop;
pub mod host;
pub mod instrument;
pub mod int;
pub mod intoto;
pub mod lane;
pub mod language;
pub mod manifest;
pub mod maps;
pub mod mutation;
pub mod pattern;
pub mod policy;
pub mod pyrepr;
pub mod record;
pub mod retrieval;
pub mod review_guard;
pub mod routing;
pub mod run;
pub mod secrets;
pub mod timestamp;
pub mod trust;
pub mod workgraph;
