//! The one integration test binary: every test runs the built `git-hpp` against real temporary
//! repositories and the real `git`.

mod harness;

mod cli;
mod event;
mod process;
mod race;
mod repos;
mod sign;
mod tamper;
