//! The caps on what a command reads whole, and the one capped reader: a file larger than its cap
//! is refused before it is read, and a read stops at the cap should the file grow meanwhile.

use std::io::Read;
use std::path::Path;

use super::exit::CliError;

/// The cap on a JSON document read whole (a suite, a map source, a record, a manifest): 2 MiB.
/// A document of many tiny objects takes about 30 times its size once parsed, so the cap keeps
/// a command under about 70 MiB whatever it is fed.
pub const JSON_FILE_CAP: u64 = 2 << 20;
/// The cap on an agent host's hook input on stdin (one JSON object): 4 MiB.
pub const HOOK_INPUT_CAP: u64 = 4 << 20;
/// The cap on git's pre-push and pre-receive input on stdin (one line per ref): 1 MiB.
pub const PUSH_INPUT_CAP: u64 = 1 << 20;
/// The cap on an event log to import (read line by line after): 64 MiB.
pub const EVENT_LOG_CAP: u64 = 64 << 20;

/// A byte count as the caps are written: `4 MiB`, `512 bytes`.
pub fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads a file whole, refusing one larger than `cap` before reading it (and stopping at the
/// cap should it grow meanwhile). `what` names it in the refusal.
pub fn read_capped(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, CliError> {
    let shown = path.display();
    let too_big = || {
        CliError::refused(format!(
            "{what} {shown} is larger than {}, its cap: refused before reading it whole",
            size(cap)
        ))
    };
    let file = std::fs::File::open(path)
        .map_err(|e| CliError::refused(format!("cannot read {what} {shown}: {e}")))?;
    if file.metadata().is_ok_and(|m| m.len() > cap) {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::refused(format!("cannot read {what} {shown}: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(bytes)
}
