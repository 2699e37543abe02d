//! The `hop` command tree (seeds/HOP-PROTOCOL.md): parse, dispatch, print, exit with hop's own
//! exit table (0, 1 error, 2 usage, 20 overlap, 21 head moved, 22 check failed).

use std::ffi::OsString;
use std::process::ExitCode;

/// Runs `hop` with `argv` (the program name first) and returns the exit code.
pub fn run<I, T>(argv: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let _argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    ExitCode::from(2)
}
