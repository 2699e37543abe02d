//! The one integration test binary: every test runs the built `git-hpp` against real temporary
//! repositories and the real `git`.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "test helpers report what they ran"
)]

mod harness;

mod adversary;
mod atlas;
mod attest;
mod beside;
mod board;
mod border;
mod checker;
mod ci_clones;
mod cite;
mod cli;
mod context;
mod decide;
mod deletes;
mod deliberate;
mod deliberate_run;
mod docs;
mod doctor;
mod durability;
mod evals;
mod event;
mod evidence;
mod fail_closed;
mod fetch_reads;
mod findings;
mod formats;
mod gate;
mod gotcha;
mod graph;
mod handoff;
mod help;
mod hop;
mod host_hooks;
mod init;
mod install;
mod intoto;
mod lanes;
mod layers;
mod leaks;
mod limits;
mod loop_gates;
mod machines;
mod maps;
mod modules;
mod mutate;
mod own_repo;
mod policy;
mod process;
mod race;
mod real_hosts;
mod reference;
mod reftable;
mod repos;
mod repr;
mod restore;
mod retrieval;
mod review_guard;
mod route;
mod secrets;
mod server_gate;
mod shapes;
mod sign;
mod skills;
mod snapshot;
mod tamper;
mod trust;
mod trust_log;
mod trust_policy;
mod work;
