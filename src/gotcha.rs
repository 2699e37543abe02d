//! The gotcha memory in the store (CONCEPTS.md "gotcha"): failures appended to
//! `refs/hpp/gotchas/failures`, and a failure that recurs promoted once to
//! `refs/hpp/gotchas/promoted`. The rules (families, redaction, recurrence) are
//! [`hpp_core::gotcha`]; this reads and writes the two logs.

use hpp_core::gotcha::{self, Failure, Gotcha, Recurrence};
use hpp_core::record::canonical_json;
use hpp_store::retry::{self, Attempt};
use hpp_store::{self as store, CommitId, NewRecord, Store, refs};

/// Why reading or writing the gotcha memory failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A record or a setting broke a gotcha rule.
    #[error(transparent)]
    Rule(#[from] gotcha::Error),
    /// A `hpp.gotcha.*` setting is not a whole number.
    #[error("git config {key} must be a whole number, not {text:?}")]
    Setting {
        /// The key.
        key: &'static str,
        /// Its value.
        text: String,
    },
    /// The promoted log kept moving; the failure itself is recorded.
    #[error(
        "refs/hpp/gotchas/promoted kept moving under other writers; the failure is recorded, run it again to promote"
    )]
    Contended,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// What recording a failure did.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The failure's commit on the failures log.
    pub commit: CommitId,
    /// The gotcha it promoted, if it was the recurrence that crossed the rule.
    pub promoted: Option<Gotcha>,
}

/// The recurrence rule: git config `hpp.gotcha.minCount` and `hpp.gotcha.windowHours`, or the
/// defaults.
pub fn recurrence(store: &Store) -> Result<Recurrence, Error> {
    let number = |key: &'static str, default: i64| -> Result<i64, Error> {
        match store.config_string(key) {
            None => Ok(default),
            Some(text) => text
                .trim()
                .parse()
                .map_err(|_| Error::Setting { key, text }),
        }
    };
    let min = number(
        "hpp.gotcha.minCount",
        i64::try_from(gotcha::DEFAULT_MIN_COUNT).expect("3 fits"),
    )?;
    let window = number("hpp.gotcha.windowHours", gotcha::DEFAULT_WINDOW_HOURS)?;
    Ok(Recurrence::new(usize::try_from(min).unwrap_or(0), window)?)
}

/// Reads every recorded failure, oldest first.
pub fn failures(store: &Store) -> Result<Vec<Failure>, Error> {
    store
        .read_log(refs::GOTCHA_FAILURES, gotcha::FAILURE_FILE)?
        .entries
        .iter()
        .map(|(_, b)| gotcha::parse_failure(b).map_err(Error::from))
        .collect()
}

/// Reads every promoted gotcha, oldest first, with the tip of their log.
pub fn gotchas(store: &Store) -> Result<(Option<CommitId>, Vec<Gotcha>), Error> {
    let log = store.read_log(refs::GOTCHA_PROMOTED, gotcha::GOTCHA_FILE)?;
    let gotchas = log
        .entries
        .iter()
        .map(|(_, b)| gotcha::parse_gotcha(b).map_err(Error::from))
        .collect::<Result<_, _>>()?;
    Ok((log.tip, gotchas))
}

fn bytes(value: &impl serde::Serialize) -> Vec<u8> {
    canonical_json(&serde_json::to_value(value).expect("records serialise"))
}

/// Stores a failure and promotes it when it recurs (by the store's retry rule against the
/// promoted log, so two writers never promote the same gotcha twice).
pub fn record(store: &Store, failure: &Failure) -> Result<Recorded, Error> {
    let rule = recurrence(store)?;
    let message = format!(
        "hpp gotcha failure {} ({})\n",
        failure.task_key,
        failure.family.name()
    );
    let failure_bytes = bytes(failure);
    let commit = store.append_retrying(
        refs::GOTCHA_FAILURES,
        &NewRecord {
            file: gotcha::FAILURE_FILE,
            bytes: &failure_bytes,
            message: &message,
        },
    )?;
    let promoted = retry::retry(|_| {
        let failures = failures(store)?;
        let (tip, gotchas) = gotchas(store)?;
        let Some(promoted) = gotcha::promote(&failures, &gotchas, failure, rule) else {
            return Ok(Attempt::Done(None));
        };
        let message = format!(
            "hpp gotcha {} ({})\n",
            promoted.task_key,
            promoted.family.name()
        );
        let gotcha_bytes = bytes(&promoted);
        let record = NewRecord {
            file: gotcha::GOTCHA_FILE,
            bytes: &gotcha_bytes,
            message: &message,
        };
        let written = Attempt::of(store.append(refs::GOTCHA_PROMOTED, tip.as_ref(), &record))?;
        Ok::<_, Error>(written.map(|_| Some(promoted)))
    })?;
    match promoted {
        Some(promoted) => Ok(Recorded { commit, promoted }),
        None => Err(Error::Contended),
    }
}

/// How much of the end of a host's transcript the hook reads: the call it answers was just
/// recorded, so it is near the end, and a long session's transcript is never read whole.
const TRANSCRIPT_TAIL: u64 = 1 << 20;

/// Returns the exit code the Codex transcript at `path` records for tool call `call_id`, read
/// from the last [`TRANSCRIPT_TAIL`] bytes (a line cut at the start of that window is skipped).
/// `None` when the file cannot be read or records no code for the call: Codex may not have
/// written it yet, and then the call counts as not failed, as before.
pub fn codex_exit_code(path: &std::path::Path, call_id: &str) -> Option<i64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(TRANSCRIPT_TAIL);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::new();
    file.take(TRANSCRIPT_TAIL).read_to_end(&mut tail).ok()?;
    let whole_lines = if start > 0 {
        let cut = tail
            .iter()
            .position(|b| *b == b'\n')
            .map_or(tail.len(), |i| i + 1);
        &tail[cut..]
    } else {
        &tail[..]
    };
    hpp_core::host::codex_exit_code(whole_lines, call_id)
}
