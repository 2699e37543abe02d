//! The gates: git's pre-push and pre-receive input, which updates are protected, and which
//! commits of a protected update must be verified.
//!
//! git runs `hooks/pre-push <remote> <url>` on the client with one line per ref to update on
//! stdin, `<local ref> <local oid> <remote ref> <remote oid>`, and `hooks/pre-receive` on the
//! server with `<old oid> <new oid> <ref>`. An update passes when it deletes a ref, moves records
//! (`refs/hpp/*`, `refs/notes/hpp`), or targets a ref that is not protected; an update of a
//! protected ref (git config `hpp.protect`, ref patterns; default `refs/heads/main` and
//! `refs/heads/master`) passes only if its commits pass `git hpp verify`: the tip, or every
//! commit it brings ([`Scope`], git config `hpp.verify`).

use globset::{Glob, GlobSetBuilder};

/// The protected refs when `hpp.protect` is not set.
pub const DEFAULT_PROTECTED: [&str; 2] = ["refs/heads/main", "refs/heads/master"];

/// One ref update, from pre-push or pre-receive input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The local ref being pushed (on the server, the ref itself).
    pub local_ref: String,
    /// The new commit (all zeros for a deletion).
    pub local_oid: String,
    /// The ref it updates on the remote (on the server, the ref itself).
    pub remote_ref: String,
    /// Where that ref was before (all zeros when it is new).
    pub remote_oid: String,
}

impl Update {
    /// Returns where the ref was before the update, or `None` when it is new.
    pub fn old(&self) -> Option<&str> {
        (!is_zero(&self.remote_oid)).then_some(self.remote_oid.as_str())
    }
}

fn is_zero(oid: &str) -> bool {
    oid.bytes().all(|b| b == b'0')
}

/// Which commits of a protected update must verify (git config `hpp.verify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Only the new tip: what lands on the branch is the tip's tree (the default).
    #[default]
    Tip,
    /// Every commit the update brings that the ref did not have.
    Each,
}

impl Scope {
    /// Reads `hpp.verify` (`tip` or `each`; unset is [`Scope::Tip`]).
    pub fn from_config(value: Option<&str>) -> Result<Self, Error> {
        match value.map(str::trim) {
            None | Some("tip") => Ok(Scope::Tip),
            Some("each") => Ok(Scope::Each),
            Some(other) => Err(Error::BadScope(other.to_owned())),
        }
    }
}

/// Why the gate's input or configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A stdin line is not `<ref> <oid> <ref> <oid>`.
    #[error("unexpected pre-push input line: {0:?}")]
    BadLine(String),
    /// A protect pattern is not a glob.
    #[error("hpp.protect pattern {0:?} is not a valid glob")]
    BadPattern(String),
    /// A pre-receive stdin line is not `<oid> <oid> <ref>`.
    #[error("unexpected pre-receive input line: {0:?}")]
    BadReceiveLine(String),
    /// `hpp.verify` is neither `tip` nor `each`.
    #[error("git config hpp.verify must be tip or each, not {0:?}")]
    BadScope(String),
}

/// Parses git's pre-push stdin; blank lines are skipped.
pub fn parse(input: &str) -> Result<Vec<Update>, Error> {
    input
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [local_ref, local_oid, remote_ref, remote_oid] => Ok(Update {
                    local_ref: local_ref.into(),
                    local_oid: local_oid.into(),
                    remote_ref: remote_ref.into(),
                    remote_oid: remote_oid.into(),
                }),
                _ => Err(Error::BadLine(shown(line))),
            },
        )
        .collect()
}

/// A bad input line as a refusal shows it: at most 120 characters, so a refusal stays one line
/// a person reads whatever was fed in.
fn shown(line: &str) -> String {
    match line.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// Parses git's pre-receive stdin (`<old oid> <new oid> <ref>` per line); blank lines are
/// skipped.
pub fn parse_receive(input: &str) -> Result<Vec<Update>, Error> {
    input
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [old, new, name] => Ok(Update {
                    local_ref: name.into(),
                    local_oid: new.into(),
                    remote_ref: name.into(),
                    remote_oid: old.into(),
                }),
                _ => Err(Error::BadReceiveLine(shown(line))),
            },
        )
        .collect()
}

/// What the gate must do with one update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Let it through without a check, and why.
    Pass(&'static str),
    /// Verify the pushed commit.
    Verify,
}

/// Decides, for each update, whether it needs verification.
pub fn decide(updates: &[Update], protect: &[String]) -> Result<Vec<Decision>, Error> {
    let patterns: Vec<String> = if protect.is_empty() {
        DEFAULT_PROTECTED.iter().map(|p| (*p).to_owned()).collect()
    } else {
        protect.to_vec()
    };
    let mut builder = GlobSetBuilder::new();
    for pattern in &patterns {
        builder.add(Glob::new(pattern).map_err(|_| Error::BadPattern(pattern.clone()))?);
    }
    let set = builder
        .build()
        .map_err(|_| Error::BadPattern(patterns.join(",")))?;
    Ok(updates
        .iter()
        .map(|u| {
            if is_zero(&u.local_oid) {
                Decision::Pass("deletes a ref")
            } else if u.remote_ref.starts_with("refs/hpp/")
                || u.remote_ref.starts_with("refs/notes/hpp")
            {
                Decision::Pass("moves records")
            } else if !set.is_match(&u.remote_ref) {
                Decision::Pass("is not protected")
            } else {
                Decision::Verify
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZERO: &str = "0000000000000000000000000000000000000000";
    const SHA: &str = "1111111111111111111111111111111111111111";

    fn line(remote: &str, oid: &str) -> Update {
        Update {
            local_ref: "refs/heads/x".into(),
            local_oid: oid.into(),
            remote_ref: remote.into(),
            remote_oid: ZERO.into(),
        }
    }

    #[test]
    fn pre_receive_lines_read_as_updates_of_the_ref_itself() {
        let updates = parse_receive(&format!("{ZERO} {SHA} refs/heads/main\n")).expect("valid");
        assert_eq!(updates[0].remote_ref, "refs/heads/main");
        assert_eq!(updates[0].local_oid, SHA);
        assert_eq!(updates[0].old(), None, "a new ref has no old commit");
        let moved = parse_receive(&format!("{SHA} {SHA} refs/heads/x\n")).expect("valid");
        assert_eq!(moved[0].old(), Some(SHA));
    }

    #[test]
    fn control_a_bad_receive_line_and_a_bad_scope_are_refused() {
        assert!(parse_receive("refs/heads/main\n").is_err());
        assert_eq!(Scope::from_config(None), Ok(Scope::Tip));
        assert_eq!(Scope::from_config(Some("each")), Ok(Scope::Each));
        assert!(Scope::from_config(Some("all")).is_err());
    }

    #[test]
    fn only_protected_updates_are_verified() {
        let updates = [
            line("refs/heads/main", SHA),
            line("refs/heads/topic", SHA),
            line("refs/hpp/loops/main", SHA),
            line("refs/heads/main", ZERO),
        ];
        let d = decide(&updates, &[]).expect("valid");
        assert_eq!(
            d,
            [
                Decision::Verify,
                Decision::Pass("is not protected"),
                Decision::Pass("moves records"),
                Decision::Pass("deletes a ref")
            ]
        );
        let d = decide(
            &[line("refs/heads/release/1.0", SHA)],
            &["refs/heads/release/*".into()],
        )
        .expect("valid");
        assert_eq!(d, [Decision::Verify]);
    }

    #[test]
    fn control_malformed_input_and_patterns_are_refused() {
        assert!(parse("refs/heads/main only-two\n").is_err());
        assert_eq!(
            parse(&format!("\nrefs/heads/main {SHA} refs/heads/main {ZERO}\n"))
                .expect("valid")
                .len(),
            1
        );
        assert!(decide(&[line("refs/heads/main", SHA)], &["refs/heads/[".into()]).is_err());
    }
}
