//! Timestamps as the records write them: RFC 3339 in UTC (`time`'s well-known format), to the
//! second (`2026-01-02T03:04:05Z`) or as given, and the compact form ids carry
//! (`20260102T030405Z`). The time is always an argument: the core reads no clock.
//!
//! ```
//! use hpp_core::timestamp;
//! let t = time::macros::datetime!(2026-01-02 03:04:05.678 +01:00);
//! assert_eq!(timestamp::utc_seconds(t), "2026-01-02T02:04:05Z");
//! assert_eq!(timestamp::compact(t), "20260102T020405Z");
//! assert_eq!(timestamp::parse("2026-01-02T02:04:05Z"), Some(t.replace_nanosecond(0).unwrap()));
//! ```

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// Returns `t` in UTC to the second, as RFC 3339 (`2026-01-02T03:04:05Z`).
pub fn utc_seconds(t: OffsetDateTime) -> String {
    rfc3339(
        t.replace_nanosecond(0)
            .expect("zero nanoseconds is a valid time"),
    )
}

/// Returns `t` in UTC as RFC 3339 with whatever fraction of a second it has.
pub fn rfc3339(t: OffsetDateTime) -> String {
    let utc = t.to_offset(UtcOffset::UTC);
    utc.format(&Rfc3339).unwrap_or_else(|_| {
        // RFC 3339 has four-digit years; a time outside them is still written, as numbers.
        format!("{}", utc.unix_timestamp())
    })
}

/// Returns `t` in UTC to the second without separators (`20260102T030405Z`), as record ids
/// carry it: it sorts as the time does and is a valid ref component.
pub fn compact(t: OffsetDateTime) -> String {
    utc_seconds(t).replace(['-', ':'], "")
}

/// Returns Unix seconds as [`utc_seconds`] writes them, or the number itself when out of range.
pub fn unix_utc(seconds: i64) -> String {
    match OffsetDateTime::from_unix_timestamp(seconds) {
        Ok(t) => utc_seconds(t),
        Err(_) => seconds.to_string(),
    }
}

/// Parses an RFC 3339 time (any offset); `None` when it is not one.
pub fn parse(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &Rfc3339).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn utc_to_the_second_drops_the_fraction_and_the_offset() {
        let t = datetime!(2026-12-31 23:59:59.999 -02:00);
        assert_eq!(utc_seconds(t), "2027-01-01T01:59:59Z");
        assert_eq!(compact(t), "20270101T015959Z");
        assert_eq!(rfc3339(t), "2027-01-01T01:59:59.999Z");
    }

    #[test]
    fn unix_seconds_read_as_utc() {
        assert_eq!(unix_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(unix_utc(1_764_700_000), "2025-12-02T18:26:40Z");
    }

    #[test]
    fn control_what_is_not_a_time_is_not_read_as_one() {
        assert_eq!(unix_utc(i64::MAX), i64::MAX.to_string());
        for text in [
            "",
            "2026-01-02",
            "2026-01-02 03:04:05",
            "yesterday",
            "2026-13-01T00:00:00Z",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }
}
