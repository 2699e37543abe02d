//! The one retry rule for compare-and-swap writers.
//!
//! A writer reads a ref's tip, builds the next record against it, and moves the ref only if it
//! still points where it read ([`Store::append`](crate::Store::append)). When another writer got
//! there first the write is lost, not wrong: the writer reads the new tip, decides again against
//! it (so no rule is checked against a stale log) and tries again. Every log and record writer
//! goes through [`retry`], so they all give up after the same number of attempts and wait the
//! same bounded, jittered time between them.

use std::time::Duration;

use crate::Error;

/// How many times a writer tries against a moving tip before giving up.
pub const ATTEMPTS: usize = 64;

/// What one attempt did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt<T> {
    /// It wrote (or found nothing to write): the value to return.
    Done(T),
    /// Another writer moved the ref first: read again and retry.
    Lost,
}

/// Runs `attempt` (given its number, from 1) until it is [`Attempt::Done`], waiting a little
/// longer after each lost one. Returns `Ok(None)` when all [`ATTEMPTS`] were lost, so the caller
/// can say which log kept moving; an error ends the retries at once.
pub fn retry<T, E>(
    mut attempt: impl FnMut(usize) -> Result<Attempt<T>, E>,
) -> Result<Option<T>, E> {
    for n in 1..=ATTEMPTS {
        match attempt(n)? {
            Attempt::Done(value) => return Ok(Some(value)),
            Attempt::Lost => backoff(n),
        }
    }
    Ok(None)
}

impl<T> Attempt<T> {
    /// Reads the result of one compare-and-swap: a lost race ([`Error::Moved`], [`Error::Busy`])
    /// is [`Attempt::Lost`], success is done, any other failure stays an error.
    pub fn of(result: Result<T, Error>) -> Result<Self, Error> {
        match result {
            Ok(value) => Ok(Attempt::Done(value)),
            Err(Error::Moved { .. } | Error::Busy { .. }) => Ok(Attempt::Lost),
            Err(other) => Err(other),
        }
    }

    /// Maps the value of a done attempt.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Attempt<U> {
        match self {
            Attempt::Done(value) => Attempt::Done(f(value)),
            Attempt::Lost => Attempt::Lost,
        }
    }
}

/// Waits before attempt `n + 1`: longer each time up to a bound (about 2 ms), jittered by
/// process and clock so racing writers spread out instead of colliding again in step.
fn backoff(n: usize) {
    let jitter = u64::from(std::process::id() % 13) * 37
        + u64::from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_micros() % 997),
        );
    let step = u64::try_from(n.min(10)).unwrap_or(10);
    std::thread::sleep(Duration::from_micros(200 * step + jitter));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_attempt_is_tried_again_and_the_winner_returned() {
        let mut seen = Vec::new();
        let out: Result<Option<usize>, ()> = retry(|n| {
            seen.push(n);
            Ok(if n < 3 {
                Attempt::Lost
            } else {
                Attempt::Done(n)
            })
        });
        assert_eq!(out, Ok(Some(3)));
        assert_eq!(seen, [1, 2, 3]);
    }

    #[test]
    fn control_an_error_stops_at_once_and_endless_losses_give_up() {
        let mut tries = 0;
        let out: Result<Option<()>, &str> = retry(|_| {
            tries += 1;
            Err("refused")
        });
        assert_eq!((out, tries), (Err("refused"), 1));
        let lost: Result<Option<()>, ()> = retry(|_| Ok(Attempt::Lost));
        assert_eq!(lost, Ok(None));
    }

    #[test]
    fn only_a_lost_race_counts_as_lost() {
        let moved = Error::Moved {
            name: "refs/hpp/x".into(),
            expected: None,
            actual: None,
        };
        assert_eq!(Attempt::<()>::of(Err(moved)).ok(), Some(Attempt::Lost));
        let other = Error::Symbolic {
            name: "refs/hpp/x".into(),
        };
        assert!(Attempt::<()>::of(Err(other)).is_err());
    }
}
