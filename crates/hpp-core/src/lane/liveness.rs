//! Lane liveness (CONCEPTS.md "lane": a lane's authority expires). Pure.
//!
//! The reference's rules: a declared status of `closed`, `dead` or `inactive` makes a lane dead;
//! no heartbeat makes it `unknown`; a heartbeat in the future (or negative) is an error, not
//! liveness; otherwise a heartbeat at most `suspect_after` seconds old is alive, at most
//! `dead_after` old is suspect, older is dead. A dead lane never collides.

use serde::Serialize;

/// The default age (seconds) up to which a heartbeat keeps a lane alive (the reference's
/// registry: 10 minutes).
pub const DEFAULT_SUSPECT_AFTER: i64 = 600;
/// The default age (seconds) up to which a lane is suspect, not yet dead (30 minutes).
pub const DEFAULT_DEAD_AFTER: i64 = 1800;

/// Why liveness could not be judged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The thresholds are not `0 < suspect_after < dead_after`.
    #[error(
        "thresholds must satisfy 0 < suspect-after < dead-after (got {suspect_after} and {dead_after})"
    )]
    Thresholds {
        /// The suspect threshold.
        suspect_after: i64,
        /// The dead threshold.
        dead_after: i64,
    },
    /// A heartbeat lies in the future or before the epoch.
    #[error("lane {lane}: heartbeat_at {heartbeat_at} is in the future of now {now} or negative")]
    Heartbeat {
        /// The lane.
        lane: String,
        /// Its heartbeat.
        heartbeat_at: i64,
        /// The time it was judged at.
        now: i64,
    },
}

/// How alive a lane is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Liveness {
    /// A recent heartbeat.
    Alive,
    /// A heartbeat older than `suspect_after`.
    Suspect,
    /// A heartbeat older than `dead_after`, or the lane is closed.
    Dead,
    /// No heartbeat to judge by.
    Unknown,
}

impl Liveness {
    /// Returns the name used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Alive => "alive",
            Self::Suspect => "suspect",
            Self::Dead => "dead",
            Self::Unknown => "unknown",
        }
    }

    /// Tells whether a lane in this state still holds its claim (everything but dead).
    pub fn holds_claim(self) -> bool {
        self != Self::Dead
    }
}

/// The two ages that turn a lane suspect, then dead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Thresholds {
    /// Seconds after which a lane is suspect.
    pub suspect_after: i64,
    /// Seconds after which a lane is dead.
    pub dead_after: i64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            suspect_after: DEFAULT_SUSPECT_AFTER,
            dead_after: DEFAULT_DEAD_AFTER,
        }
    }
}

impl Thresholds {
    /// Builds thresholds, refusing any that are not `0 < suspect_after < dead_after`.
    pub fn new(suspect_after: i64, dead_after: i64) -> Result<Self, Error> {
        if 0 < suspect_after && suspect_after < dead_after {
            Ok(Self {
                suspect_after,
                dead_after,
            })
        } else {
            Err(Error::Thresholds {
                suspect_after,
                dead_after,
            })
        }
    }
}

/// Judges one lane at `now`: its declared `status` and its last heartbeat.
pub fn liveness(
    lane: &str,
    status: &str,
    heartbeat_at: Option<i64>,
    now: i64,
    thresholds: Thresholds,
) -> Result<Liveness, Error> {
    if matches!(status, "closed" | "dead" | "inactive" | "aborted") {
        return Ok(Liveness::Dead);
    }
    let Some(at) = heartbeat_at else {
        return Ok(Liveness::Unknown);
    };
    if at < 0 || at > now {
        return Err(Error::Heartbeat {
            lane: lane.to_owned(),
            heartbeat_at: at,
            now,
        });
    }
    let age = now - at;
    Ok(if age <= thresholds.suspect_after {
        Liveness::Alive
    } else if age <= thresholds.dead_after {
        Liveness::Suspect
    } else {
        Liveness::Dead
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(now: i64, hb: Option<i64>) -> Result<Liveness, Error> {
        liveness("a", "open", hb, now, Thresholds::new(60, 300).unwrap())
    }

    #[test]
    fn age_decides_alive_suspect_dead() {
        assert_eq!(at(1000, Some(1000)), Ok(Liveness::Alive));
        assert_eq!(at(1000, Some(940)), Ok(Liveness::Alive));
        assert_eq!(at(1000, Some(939)), Ok(Liveness::Suspect));
        assert_eq!(at(1000, Some(700)), Ok(Liveness::Suspect));
        assert_eq!(at(1000, Some(699)), Ok(Liveness::Dead));
        assert_eq!(at(1000, None), Ok(Liveness::Unknown));
    }

    #[test]
    fn a_closed_lane_is_dead_whatever_its_heartbeat() {
        let l = liveness("a", "closed", Some(1000), 1000, Thresholds::default());
        assert_eq!(l, Ok(Liveness::Dead));
        assert!(!Liveness::Dead.holds_claim() && Liveness::Suspect.holds_claim());
    }

    #[test]
    fn control_a_future_heartbeat_and_bad_thresholds_are_errors() {
        assert!(matches!(at(1000, Some(1001)), Err(Error::Heartbeat { .. })));
        assert!(matches!(at(1000, Some(-1)), Err(Error::Heartbeat { .. })));
        assert!(Thresholds::new(0, 10).is_err());
        assert!(Thresholds::new(10, 10).is_err());
        assert!(Thresholds::new(10, 11).is_ok());
    }
}
