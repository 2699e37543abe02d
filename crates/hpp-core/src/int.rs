//! Integers of any size, as the reference's rulers take them: Python's `int` has no bound, so a
//! priority of 10^30 or a clock of 10^20 is an integer there, and here. A JSON number is an
//! integer when it is written as one (`1e30` and `1.0` are floats, as Python's `json` reads
//! them); a command-line value is one when Python's `int()` would read it.

use std::fmt;
use std::str::FromStr;

use num_bigint::BigInt;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// An integer of any size, written back as its decimal digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Int(BigInt);

impl Int {
    /// Reads a JSON integer of any size: a number written without a fraction or an exponent.
    /// `true`, `1.0` and `1e3` are not integers.
    pub fn from_json(value: &Value) -> Option<Self> {
        let Value::Number(n) = value else {
            return None;
        };
        let text = n.to_string();
        let digits = text.strip_prefix('-').unwrap_or(&text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.parse::<BigInt>().ok().map(Self)
    }

    /// Tells whether it is below zero.
    pub fn is_negative(&self) -> bool {
        self.0.sign() == num_bigint::Sign::Minus
    }

    /// Returns it as an `i64` when it fits.
    pub fn to_i64(&self) -> Option<i64> {
        i64::try_from(&self.0).ok()
    }

    /// Returns it as a `u64` when it fits.
    pub fn to_u64(&self) -> Option<u64> {
        u64::try_from(&self.0).ok()
    }

    /// Returns it as a count of items: itself when it fits a `usize`, else `usize::MAX` (no
    /// list is longer, so taking that many takes them all); 0 below zero.
    pub fn to_count(&self) -> usize {
        if self.is_negative() {
            return 0;
        }
        usize::try_from(&self.0).unwrap_or(usize::MAX)
    }

    /// Returns `self / other` as Python's `/` gives it for two `int`s: the exact quotient,
    /// rounded once to the nearest `f64`. Dividing by the divisor's own nearest `f64` would
    /// round twice (`2 / 10**30` would be `1.9999999999999998e-30`, not `2e-30`). Both must be
    /// at least zero and the divisor above it.
    pub fn true_div(&self, other: &Int) -> f64 {
        let (num, den) = (&self.0, &other.0);
        if num.sign() == num_bigint::Sign::NoSign {
            return 0.0;
        }
        // Scale so the integer quotient has 55 or 56 bits: 53 kept, a rounding bit, and one below
        // it that the remainder makes sticky, so the one rounding `u64 as f64` does is exact.
        let shift = 55
            - (i64::try_from(num.bits()).unwrap_or(i64::MAX)
                - i64::try_from(den.bits()).unwrap_or(i64::MAX));
        let (scaled_num, scaled_den) = if shift >= 0 {
            (
                num << usize::try_from(shift).unwrap_or(usize::MAX),
                den.clone(),
            )
        } else {
            (
                num.clone(),
                den << usize::try_from(-shift).unwrap_or(usize::MAX),
            )
        };
        let quotient = &scaled_num / &scaled_den;
        let sticky = (&scaled_num % &scaled_den).sign() != num_bigint::Sign::NoSign;
        let Ok(mut q) = u64::try_from(&quotient) else {
            return f64::INFINITY;
        };
        if sticky {
            q |= 1;
        }
        // A power of two in two halves: each is a normal `f64` when the result is, so each
        // product is exact (below the normal range the second rounds again, as nothing else).
        let exponent = i32::try_from((-shift).clamp(-4000, 4000)).unwrap_or(0);
        let half = exponent / 2;
        (q as f64) * 2f64.powi(half) * 2f64.powi(exponent - half)
    }
}

impl From<i64> for Int {
    fn from(n: i64) -> Self {
        Self(BigInt::from(n))
    }
}

impl From<i32> for Int {
    fn from(n: i32) -> Self {
        Self(BigInt::from(n))
    }
}

impl From<u64> for Int {
    fn from(n: u64) -> Self {
        Self(BigInt::from(n))
    }
}

impl std::ops::Add<&Int> for &Int {
    type Output = Int;
    fn add(self, other: &Int) -> Int {
        Int(&self.0 + &other.0)
    }
}

impl std::ops::Sub<&Int> for &Int {
    type Output = Int;
    fn sub(self, other: &Int) -> Int {
        Int(&self.0 - &other.0)
    }
}

/// Why a command-line value is not an integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid int value: {0:?}")]
pub struct NotAnInt(pub String);

impl FromStr for Int {
    type Err = NotAnInt;

    /// Reads what Python's `int()` reads in base 10: surrounding whitespace, a sign, digits with
    /// single underscores between them (`1_000`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let refuse = || NotAnInt(s.to_owned());
        let trimmed = s.trim();
        let (negative, digits) = match trimmed.as_bytes().first() {
            Some(b'-') => (true, &trimmed[1..]),
            Some(b'+') => (false, &trimmed[1..]),
            _ => (false, trimmed),
        };
        if digits.is_empty()
            || digits.starts_with('_')
            || digits.ends_with('_')
            || digits.contains("__")
            || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        {
            return Err(refuse());
        }
        let magnitude: BigInt = digits.replace('_', "").parse().map_err(|_| refuse())?;
        Ok(Self(if negative { -magnitude } else { magnitude }))
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for Int {
    /// As a JSON number with every digit (`serde_json`'s arbitrary precision).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let number =
            serde_json::Number::from_str(&self.0.to_string()).map_err(serde::ser::Error::custom)?;
        number.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn int(text: &str) -> Int {
        text.parse().expect("an integer")
    }

    #[test]
    fn a_true_division_is_rounded_once_as_python_rounds_it() {
        // Each right-hand side is what CPython 3.11 prints for the same `a / b`.
        let cases = [
            ("2", "1000000000000000000000000000000", 2e-30),
            ("1", "3", 1.0 / 3.0),
            ("2", "4", 0.5),
            ("7", "9223372036854775808", 7.589415207398531e-19),
            ("1", "18446744073709551617", 5.421010862427522e-20),
            ("10", "3", 3.3333333333333335),
            ("0", "5", 0.0),
        ];
        for (a, b, python) in cases {
            assert_eq!(int(a).true_div(&int(b)), python, "{a} / {b}");
        }
        let tiny = int("1").true_div(&int(&format!("1{}", "0".repeat(320))));
        assert_eq!(tiny, 1e-320, "below the normal range");
    }

    #[test]
    fn control_dividing_by_the_divisors_own_f64_rounds_twice() {
        let k = int("1000000000000000000000000000000");
        let twice = 2.0 / k.to_string().parse::<f64>().expect("a float");
        assert_ne!(twice, int("2").true_div(&k));
        assert_eq!(twice, 1.9999999999999998e-30);
    }

    #[test]
    fn json_integers_of_any_size_are_read_and_written_back_whole() {
        let big: Value = serde_json::from_str("1000000000000000000000000000000").unwrap();
        let int = Int::from_json(&big).unwrap();
        assert_eq!(
            serde_json::to_string(&int).unwrap(),
            "1000000000000000000000000000000"
        );
        let minus_zero: Value = serde_json::from_str("-0").unwrap();
        assert_eq!(
            serde_json::to_string(&Int::from_json(&minus_zero).unwrap()).unwrap(),
            "0"
        );
        assert!(Int::from_json(&json!(-3)).unwrap() < Int::from(0_i64));
    }

    #[test]
    fn control_floats_and_non_numbers_are_not_integers() {
        for text in ["1e30", "1.0", "1E5", "true", "\"5\"", "null"] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(Int::from_json(&value), None, "{text}");
        }
        for arg in ["1e20", "1.5", "", "-", "1__0", "_1", "1_", "0x10"] {
            assert!(arg.parse::<Int>().is_err(), "{arg}");
        }
        assert_eq!(" +1_000 ".parse::<Int>().unwrap(), Int::from(1000_i64));
        assert_eq!("-5".parse::<Int>().unwrap(), Int::from(-5_i64));
    }
}
