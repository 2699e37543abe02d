//! Hop ids: `A_ P_ C_ R_ F_ X_` for states, `T_` tasks, `AT_` attempts, `EVIDENCE_` checks.
//!
//! An id is its prefix, `_`, and 23 characters of Crockford base32 (no padding) of 14 bytes:
//! 6 bytes of big-endian Unix milliseconds then 8 bytes of entropy, so ids sort by creation
//! time, as in the reference. Ids become ref names, so their alphabet is ref-safe.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::Error;

/// Crockford's base32 alphabet (no I, L, O, U).
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Number of characters after the prefix.
pub const BODY_LEN: usize = 23;

/// Returns the 23-character body of an id made at `millis` with `entropy`.
///
/// ```
/// let body = hpp_core::hop::ids::encode(0, [0; 8]);
/// assert_eq!(body, "00000000000000000000000");
/// ```
pub fn encode(millis: u64, entropy: [u8; 8]) -> String {
    let mut raw = [0u8; 14];
    raw[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
    raw[6..].copy_from_slice(&entropy);
    let mut out = String::with_capacity(BODY_LEN);
    let (mut acc, mut bits) = (0u32, 0u32);
    for byte in raw {
        acc = (acc << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((acc >> bits) & 31) as usize]));
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((acc << (5 - bits)) & 31) as usize]));
    }
    out
}

fn valid_body(body: &str) -> bool {
    body.len() == BODY_LEN && body.bytes().all(|b| ALPHABET.contains(&b))
}

/// The kind of a state, named by its id's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `A_`: a canonical project revision.
    Accepted,
    /// `P_`: an exact instruction and its pre-effect context.
    Prompt,
    /// `C_`: immutable workspace progress.
    Checkpoint,
    /// `R_`: a frozen candidate result.
    Proposal,
    /// `F_`: a durable failed execution or validation state.
    Failed,
    /// `X_`: a durable cancelled state.
    Cancelled,
}

impl Kind {
    /// Every kind, in the protocol's order.
    pub const ALL: [Kind; 6] = [
        Kind::Accepted,
        Kind::Prompt,
        Kind::Checkpoint,
        Kind::Proposal,
        Kind::Failed,
        Kind::Cancelled,
    ];

    /// Returns the id prefix (without `_`).
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Accepted => "A",
            Kind::Prompt => "P",
            Kind::Checkpoint => "C",
            Kind::Proposal => "R",
            Kind::Failed => "F",
            Kind::Cancelled => "X",
        }
    }

    /// Returns the kind's name (`accepted`, `prompt`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Accepted => "accepted",
            Kind::Prompt => "prompt",
            Kind::Checkpoint => "checkpoint",
            Kind::Proposal => "proposal",
            Kind::Failed => "failed",
            Kind::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! simple_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Returns a new id made at `millis` with `entropy`.
            pub fn new(millis: u64, entropy: [u8; 8]) -> Self {
                Self(format!(concat!($prefix, "_{}"), encode(millis, entropy)))
            }

            /// Returns the id as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(text: &str) -> Result<Self, Error> {
                match text.strip_prefix(concat!($prefix, "_")) {
                    Some(body) if valid_body(body) => Ok(Self(text.to_owned())),
                    _ => Err(Error::InvalidId {
                        what: $what,
                        prefix: $prefix,
                        id: text.to_owned(),
                    }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

simple_id!(
    /// A task: the logical grouping of related prompts and attempts (`T_...`).
    TaskId,
    "T",
    "task"
);
simple_id!(
    /// An attempt: one agent approach or run, with its own workspace (`AT_...`).
    AttemptId,
    "AT",
    "attempt"
);
simple_id!(
    /// A recorded check run (`EVIDENCE_...`).
    CheckId,
    "EVIDENCE",
    "check"
);

/// A state id: a kind prefix, `_`, and the time-sortable body.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct StateId(String);

impl StateId {
    /// Returns a new id of `kind` made at `millis` with `entropy`.
    pub fn new(kind: Kind, millis: u64, entropy: [u8; 8]) -> Self {
        Self(format!("{}_{}", kind.prefix(), encode(millis, entropy)))
    }

    /// Returns the kind its prefix names.
    pub fn kind(&self) -> Kind {
        let prefix = self.0.split('_').next().unwrap_or_default();
        Kind::ALL
            .into_iter()
            .find(|k| k.prefix() == prefix)
            .expect("a StateId is only made with a known prefix")
    }

    /// Returns the id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for StateId {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        let ok = text.split_once('_').is_some_and(|(prefix, body)| {
            Kind::ALL.iter().any(|k| k.prefix() == prefix) && valid_body(body)
        });
        if ok {
            Ok(Self(text.to_owned()))
        } else {
            Err(Error::InvalidId {
                what: "state",
                prefix: "A, P, C, R, F or X",
                id: text.to_owned(),
            })
        }
    }
}

impl fmt::Display for StateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_sort_by_time() {
        let early = StateId::new(Kind::Prompt, 1_700_000_000_000, [0xff; 8]);
        let late = StateId::new(Kind::Prompt, 1_700_000_000_001, [0; 8]);
        assert!(early < late);
        assert_eq!(early.as_str().len(), 2 + BODY_LEN);
        assert_eq!(early.as_str().parse::<StateId>().unwrap(), early);
        assert_eq!(early.kind(), Kind::Prompt);
        let attempt = AttemptId::new(5, [1; 8]);
        assert!(attempt.as_str().starts_with("AT_"));
        assert_eq!(attempt.as_str().parse::<AttemptId>().unwrap(), attempt);
    }

    #[test]
    fn every_kind_has_its_prefix() {
        for kind in Kind::ALL {
            let id = StateId::new(kind, 42, [7; 8]);
            assert!(id.as_str().starts_with(&format!("{}_", kind.prefix())));
            assert_eq!(id.kind(), kind);
        }
    }

    #[test]
    fn control_malformed_ids_are_refused() {
        for bad in [
            "",
            "P_",
            "Q_00000000000000000000000",
            "P_0000000000000000000000",
            "P_000000000000000000000000",
            "P_0000000000000000000000I",
            "p_00000000000000000000000",
            "P_0000000000000000000000/",
        ] {
            assert!(bad.parse::<StateId>().is_err(), "{bad:?}");
        }
        assert!("P_00000000000000000000000".parse::<TaskId>().is_err());
        assert!("T_00000000000000000000000".parse::<AttemptId>().is_err());
    }
}
