//! A Rust source for the mutant generator's unit tests (it is tokenized, never compiled here).

/// Clamps `value` into `low..=high`; "a < b" in this string and `x > y` in this comment stay.
pub fn clamp(value: i64, low: i64, high: i64) -> i64 {
    if value < low {
        low
    } else if value > high && high >= low {
        high
    } else {
        value
    }
}

/// Returns the midpoint of a non-empty `Vec<i64>`, or `None`.
pub fn midpoint(values: &[i64]) -> Option<i64> {
    let found: Vec<i64> = values.iter().copied().collect::<Vec<_>>();
    if found.is_empty() == true {
        return None;
    }
    Some((found[0] + found[found.len() - 1]) / 2)
}
