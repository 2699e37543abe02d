//! The one integration test binary: every test runs the built `git-hpp` against real temporary
//! repositories and the real `git`.

mod harness;

mod attest;
mod cite;
mod cli;
mod context;
mod decide;
mod evals;
mod event;
mod evidence;
mod findings;
mod gate;
mod mutate;
mod policy;
mod process;
mod race;
mod repos;
mod retrieval;
mod route;
mod sign;
mod snapshot;
mod tamper;
mod trust;
mod work;
