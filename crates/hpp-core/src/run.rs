//! A bounded run of a command, as data: what the runner (`process::run_bounded` in the
//! application) reports, and the timeout rule every ruler applies before asking for a run.
//! Pure: the rulers that read a run take it as a value.

use std::time::Duration;

/// The longest timeout a command may be given, in seconds (one day), as in the reference.
pub const MAX_TIMEOUT_S: f64 = 86400.0;

/// What a command did.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The exit code; `None` when the child was killed by a signal or timed out.
    pub exit_code: Option<i32>,
    /// The signal that ended the child, if one did.
    pub signal: Option<i32>,
    /// Whether the timeout expired and the process group was stopped.
    pub timed_out: bool,
    /// Everything read from stdout.
    pub stdout: Vec<u8>,
    /// Everything read from stderr.
    pub stderr: Vec<u8>,
    /// Time from start until the child was reaped.
    pub duration: Duration,
}

/// Why a command gave no [`Finished`] run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotFinished {
    /// The program was not found, is not executable, or the working directory is unusable.
    CouldNotStart,
    /// The operating system failed while running it (the reason, as a sentence).
    Failed(String),
}

/// The timeout was zero, negative, not finite or longer than [`MAX_TIMEOUT_S`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("timeout must be a positive, finite number of seconds, at most 86400")]
pub struct BadTimeout;

/// Checks a timeout given in seconds and returns it as a [`Duration`].
///
/// A timeout must be finite, greater than zero and at most [`MAX_TIMEOUT_S`].
pub fn valid_timeout(seconds: f64) -> Result<Duration, BadTimeout> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_S {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(BadTimeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenth_of_a_second_and_a_whole_day_are_timeouts() {
        assert_eq!(valid_timeout(0.1), Ok(Duration::from_millis(100)));
        assert_eq!(valid_timeout(MAX_TIMEOUT_S), Ok(Duration::from_secs(86400)));
    }

    #[test]
    fn control_zero_negative_nan_and_more_than_a_day_are_refused() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, MAX_TIMEOUT_S + 1.0] {
            assert_eq!(valid_timeout(bad), Err(BadTimeout), "{bad}");
        }
    }
}
