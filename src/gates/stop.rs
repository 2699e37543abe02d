//! The end of every Stop gate (ARCHITECTURE §5: a Stop-type hook always ends): how many times in
//! a row one gate has blocked one session's stop, counted in a small file under the git directory
//! (`hpp-cache/stop-blocks/`, never a ref, so never pushed).
//!
//! A host that says a Stop hook already continued the turn (`stop_hook_active`) is let stop by
//! the gate before it counts anything; the cap holds on a host that never says it, or says it
//! wrongly: after [`CAP`] blocks in a row the next stop goes through with a message saying why.

use std::path::PathBuf;

use hpp_core::record::sha256_hex;
use hpp_store::Store;

/// How many consecutive Stop blocks one gate gives one session before it lets the stop through.
pub const CAP: u32 = 3;

/// Where gate `gate` counts the blocks of `session`: named by a hash, since a session id is the
/// host's text.
fn path(store: &Store, gate: &str, session: &str) -> PathBuf {
    store
        .common_dir()
        .join("hpp-cache")
        .join("stop-blocks")
        .join(&sha256_hex(format!("{gate}\n{session}").as_bytes())[..32])
}

/// Returns how many times in a row `gate` has blocked `session`'s stop (0 when never, or when
/// the count cannot be read: a lost count only delays the cap).
pub fn blocks_in_a_row(store: &Store, gate: &str, session: &str) -> u32 {
    std::fs::read_to_string(path(store, gate, session))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Records one more block of `session`'s stop by `gate`.
///
/// # Errors
///
/// The I/O error of creating the directory or writing the count.
pub fn count_block(store: &Store, gate: &str, session: &str) -> std::io::Result<()> {
    let file = path(store, gate, session);
    let n = blocks_in_a_row(store, gate, session).saturating_add(1);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(file, format!("{n}\n"))
}

/// Forgets the count: `gate` let `session` stop.
pub fn reset(store: &Store, gate: &str, session: &str) {
    // Absent already is the same answer; any other failure only delays the next cap.
    let _ = std::fs::remove_file(path(store, gate, session));
}
