//! The pre-push gate: git's pre-push stdin, which updates are protected, and which pass.
//!
//! git runs `hooks/pre-push <remote> <url>` with one line per ref to update on stdin:
//! `<local ref> <local oid> <remote ref> <remote oid>`. An update passes when it deletes a ref,
//! moves records (`refs/hpp/*`, `refs/notes/hpp`), or targets a ref that is not protected;
//! an update of a protected ref (git config `hpp.protect`, ref patterns; default
//! `refs/heads/main` and `refs/heads/master`) passes only if its tip passes `git hpp verify`.

use globset::{Glob, GlobSetBuilder};

/// The protected refs when `hpp.protect` is not set.
pub const DEFAULT_PROTECTED: [&str; 2] = ["refs/heads/main", "refs/heads/master"];

/// One line of pre-push input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// The local ref being pushed.
    pub local_ref: String,
    /// Its commit (all zeros for a deletion).
    pub local_oid: String,
    /// The ref it updates on the remote.
    pub remote_ref: String,
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
}

/// Parses git's pre-push stdin; blank lines are skipped.
pub fn parse(input: &str) -> Result<Vec<Update>, Error> {
    input
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [local_ref, local_oid, remote_ref, _remote_oid] => Ok(Update {
                    local_ref: local_ref.into(),
                    local_oid: local_oid.into(),
                    remote_ref: remote_ref.into(),
                }),
                _ => Err(Error::BadLine(line.to_owned())),
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
            if u.local_oid.bytes().all(|b| b == b'0') {
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
        }
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
