//! The one integration test binary: every test runs the built `git-hpp` against real temporary
//! repositories and the real `git`.

mod harness;

mod attest;
mod cli;
mod event;
mod evidence;
mod gate;
mod process;
mod race;
mod repos;
mod sign;
mod snapshot;
mod tamper;
mod trust;
