//! Secret-shape detection, used by every refusal that keeps a secret out of a record.
//!
//! Records under `refs/hpp/` are pushed with the repository, so anything secret-shaped that
//! reached one would be published. The detector matches *shapes* (an assignment to a key named
//! like a credential, a PEM header, a vendor token prefix), never words: prose that mentions a
//! secret or a password is not a match. It is the reference harness's `_SECRET_PATTERN` plus the
//! token shapes it checks on evidence command lines.

use std::sync::LazyLock;

use regex::Regex;

/// The reference pattern: credential-named key followed by `:` or `=`, a PEM header, or an
/// `sk-` token.
static SECRET_PATTERN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:api[_-]?key|access[_-]?token|secret|password)\s*[:=]|-----BEGIN [A-Z ]+-----|\bsk-[A-Za-z0-9_-]{8,}",
    )
    .expect("the secret pattern is a valid regex")
});

/// Vendor token shapes: bearer tokens, GitHub tokens, Slack tokens, AWS access key ids.
static TOKEN_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i:\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*)",
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"|\bgithub_pat_[A-Za-z0-9_]{20,}",
        r"|\bxox[abposr]-[A-Za-z0-9-]{10,}",
        r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    ))
    .expect("the token shapes are a valid regex")
});

/// `NAME_TOKEN=value` style environment assignments on a command line.
static ENV_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)=(.*)$",
    )
    .expect("the environment assignment pattern is a valid regex")
});

/// Flags whose value is a credential.
const SECRET_FLAGS: &[&str] = &[
    "--password",
    "--token",
    "--api-key",
    "--secret",
    "--access-token",
    "--client-secret",
    "--private-key",
];

/// Values of an environment-style assignment that are settings, not secrets.
const HARMLESS_VALUES: &[&str] = &["true", "false", "yes", "no", "on", "off"];

/// The header line of a private key block.
const PRIVATE_KEY_HEADER: &str = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----";

/// [`PRIVATE_KEY_HEADER`] alone: where a block [`units`] keeps whole begins.
static KEY_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(PRIVATE_KEY_HEADER).expect("the private key header is a valid regex")
});

/// Shapes that mark a file's contents as a secret: precise enough to check whole files (source
/// that mentions a password does not match; a private key or a live token does).
static FILE_SHAPES: LazyLock<[(&'static str, Regex); 6]> = LazyLock::new(|| {
    let re = |p: &str| Regex::new(p).expect("a file shape is a valid regex");
    [
        ("a private key block", re(PRIVATE_KEY_HEADER)),
        (
            "a GitHub token",
            re(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
        ),
        ("a Slack token", re(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
        ("an AWS access key id", re(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
        (
            "an sk- API key",
            re(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}"),
        ),
        (
            "a credential assignment (NAME_TOKEN=...)",
            re(
                r"(?m)^\s*(?:export\s+)?[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)\s*=\s*[\x22']?([A-Za-z0-9_./+=:@-]{12,})",
            ),
        ),
    ]
});

/// Names the secret shape a file's contents have, if any: the shape, never the value. Binary
/// contents (a NUL byte in the first 8 KiB) are not read.
///
/// ```
/// use hpp_core::secrets::shape_in_file;
/// assert_eq!(shape_in_file(b"GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"), Some("a GitHub token"));
/// assert_eq!(shape_in_file(b"let password = prompt();"), None);
/// ```
pub fn shape_in_file(bytes: &[u8]) -> Option<&'static str> {
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return None;
    }
    let text = String::from_utf8_lossy(bytes);
    FILE_SHAPES
        .iter()
        .find(|(_, shape)| shape.is_match(&text))
        .map(|(name, _)| *name)
}

/// Names the secret shape of the first secret-shaped line of `new` that `old` does not hold,
/// if any: the shape, never the value. A private key block counts as one unit, from its header
/// to its end line, so a different key under the same header is new. A line `old` already
/// holds (anywhere in it) is not new: it is in the history already. `None` for binary
/// contents, as [`shape_in_file`].
///
/// ```
/// use hpp_core::secrets::shape_added;
/// let key = b"aws = AKIAIOSFODNN7EXAMPLE\n";
/// assert_eq!(shape_added(None, key), Some("an AWS access key id"));
/// assert_eq!(shape_added(Some(b"x = 1\n"), b"x = 1\naws = AKIAIOSFODNN7EXAMPLE\n"), Some("an AWS access key id"));
/// assert_eq!(shape_added(Some(key), b"x = 1\naws = AKIAIOSFODNN7EXAMPLE\n"), None);
/// ```
pub fn shape_added(old: Option<&[u8]>, new: &[u8]) -> Option<&'static str> {
    // Most files hold no secret: one whole-file match decides them without splitting lines.
    shape_in_file(new)?;
    let old_text = old
        .filter(|bytes| !bytes.iter().take(8192).any(|b| *b == 0))
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let held: std::collections::HashSet<String> = units(&old_text).collect();
    let new_text = String::from_utf8_lossy(new);
    units(&new_text)
        .filter(|unit| !held.contains(unit))
        .find_map(|unit| {
            FILE_SHAPES
                .iter()
                .find(|(_, shape)| shape.is_match(&unit))
                .map(|(name, _)| *name)
        })
}

/// The units a text is compared by: its lines (without a trailing `\r`), except that a private
/// key block, from its `-----BEGIN ... PRIVATE KEY-----` line to the next `-----END` line, is one.
fn units(text: &str) -> impl Iterator<Item = String> + '_ {
    let header = &*KEY_BLOCK;
    let mut lines = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    std::iter::from_fn(move || {
        let line = lines.next()?;
        if !header.is_match(line) {
            return Some(line.to_owned());
        }
        let mut block = line.to_owned();
        for next in lines.by_ref() {
            block.push('\n');
            block.push_str(next);
            if next.trim_start().starts_with("-----END") {
                break;
            }
        }
        Some(block)
    })
}

/// A name that looks like a secret: names are stored in records that are pushed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what} looks like it carries a secret; records under refs/hpp are pushed with the repository"
)]
pub struct SecretName {
    /// Which name (`--checker`, the loop name, ...).
    pub what: &'static str,
}

/// Refuses a name (an id, an actor, a model) whose text has the shape of a secret.
///
/// ```
/// use hpp_core::secrets::check_name;
/// assert!(check_name("--checker", "checker-b").is_ok());
/// assert!(check_name("--checker", "ghp_0123456789abcdefghijABCDEFGHIJ").is_err());
/// ```
pub fn check_name(what: &'static str, value: &str) -> Result<(), SecretName> {
    if looks_secret(value) {
        Err(SecretName { what })
    } else {
        Ok(())
    }
}

/// Tells whether `text` has the shape of a secret.
///
/// ```
/// use hpp_core::secrets::looks_secret;
/// assert!(looks_secret("password = hunter2"));
/// assert!(!looks_secret("our secret sauce is that no password is involved"));
/// ```
pub fn looks_secret(text: &str) -> bool {
    SECRET_PATTERN.is_match(text) || TOKEN_SHAPES.is_match(text)
}

/// Tells whether a command line (an argv) carries a secret: any argument of a secret shape, a
/// credential flag with a value (`--token X` or `--token=X`), or a `NAME_TOKEN=value` assignment
/// whose value is not a number or a boolean word.
pub fn command_line_carries_secret<S: AsRef<str>>(argv: &[S]) -> bool {
    let args: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    if looks_secret(&args.join(" ")) {
        return true;
    }
    args.iter().enumerate().any(|(i, arg)| {
        let lower = arg.to_ascii_lowercase();
        let flag_with_value = SECRET_FLAGS.iter().any(|flag| {
            lower
                .strip_prefix(flag)
                .is_some_and(|rest| rest.starts_with('=') && rest.len() > 1)
                || (lower == *flag && args.get(i + 1).is_some_and(|next| !next.is_empty()))
        });
        flag_with_value
            || ENV_ASSIGNMENT.captures(arg).is_some_and(|caps| {
                let value = caps.get(1).map_or("", |m| m.as_str());
                !value.is_empty()
                    && value.parse::<f64>().is_err()
                    && !HARMLESS_VALUES.contains(&value.to_ascii_lowercase().as_str())
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_shapes_match() {
        for text in [
            "api_key=abc",
            "API-KEY: abc",
            "access_token = x",
            "password:x",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "use sk-abcdefgh1234 here",
        ] {
            assert!(looks_secret(text), "{text}");
        }
    }

    #[test]
    fn file_shapes_name_the_shape_of_a_secret_file() {
        let cases: [(&[u8], &str); 5] = [
            (
                b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n",
                "a private key block",
            ),
            (b"TOKEN=xoxb-1234567890-abcdefghij\n", "a Slack token"),
            (b"aws = AKIAIOSFODNN7EXAMPLE\n", "an AWS access key id"),
            (
                b"export STRIPE_API_KEY=rk_live_0123456789abcdef\n",
                "a credential assignment (NAME_TOKEN=...)",
            ),
            (
                b"OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789AB\n",
                "an sk- API key",
            ),
        ];
        for (bytes, shape) in cases {
            assert_eq!(shape_in_file(bytes), Some(shape));
        }
    }

    #[test]
    fn control_source_that_mentions_secrets_is_not_a_secret_file() {
        for text in [
            "let password = read_password();\n",
            "assert!(looks_secret(\"password = hunter2\"));\n",
            "MAX_TOKEN=1024\n",
            "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}\n",
            "-----BEGIN PUBLIC KEY-----\n",
        ] {
            assert_eq!(shape_in_file(text.as_bytes()), None, "{text}");
        }
        assert_eq!(shape_in_file(b"\0-----BEGIN RSA PRIVATE KEY-----"), None);
    }

    #[test]
    fn a_secret_line_is_new_unless_the_old_contents_hold_it() {
        let aws = "aws = AKIAIOSFODNN7EXAMPLE";
        let old = format!("region = eu\n{aws}\n");
        let moved = format!("{aws}\nregion = eu\nretries = 3\n");
        assert_eq!(shape_added(Some(old.as_bytes()), moved.as_bytes()), None);
        let other = "aws = AKIAIOSFODNN7EXAMPLF";
        let replaced = format!("region = eu\n{other}\n");
        assert_eq!(
            shape_added(Some(old.as_bytes()), replaced.as_bytes()),
            Some("an AWS access key id")
        );
        assert_eq!(
            shape_added(Some(b"\0binary"), aws.as_bytes()),
            Some("an AWS access key id"),
            "binary old contents hold no line"
        );
        assert_eq!(
            shape_added(None, b"\0-----BEGIN RSA PRIVATE KEY-----"),
            None
        );
    }

    #[test]
    fn control_a_different_key_under_the_same_header_is_new() {
        let key = |body: &str| {
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\r\n{body}\r\n-----END OPENSSH PRIVATE KEY-----\r\nafter\n"
            )
        };
        let old = key("b3BlbnNzaC1rZXktdjEAAAA");
        assert_eq!(shape_added(Some(old.as_bytes()), old.as_bytes()), None);
        assert_eq!(
            shape_added(
                Some(old.as_bytes()),
                key("AAAAC3NzaC1lZDI1NTE5AAAA").as_bytes()
            ),
            Some("a private key block")
        );
        assert_eq!(
            units("a\n-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----\nb")
                .collect::<Vec<_>>(),
            [
                "a",
                "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
                "b"
            ]
        );
    }

    #[test]
    fn vendor_token_shapes_match() {
        for text in [
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
            "ghp_0123456789abcdefghijABCDEFGHIJ",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "xoxb-1234567890-abcdef",
            "AKIAIOSFODNN7EXAMPLE",
        ] {
            assert!(looks_secret(text), "{text}");
        }
    }

    #[test]
    fn control_prose_about_secrets_is_not_a_secret() {
        for text in [
            "our secret sauce is that no password is involved",
            "rotate the api key every month",
            "the token bucket refills",
            "skip the sk- prefix",
            "AKIA is a prefix",
        ] {
            assert!(!looks_secret(text), "{text}");
        }
    }

    #[test]
    fn command_lines_with_credentials_are_caught() {
        assert!(command_line_carries_secret(&["curl", "--token", "abc"]));
        assert!(command_line_carries_secret(&["curl", "--api-key=abc"]));
        assert!(command_line_carries_secret(&[
            "env",
            "GITHUB_TOKEN=abc123",
            "make"
        ]));
        assert!(command_line_carries_secret(&["deploy", "--password", "x"]));
    }

    #[test]
    fn control_harmless_command_lines_pass() {
        assert!(!command_line_carries_secret(&[
            "cargo",
            "test",
            "--",
            "--nocapture"
        ]));
        assert!(!command_line_carries_secret(&[
            "env",
            "USE_TOKEN=1",
            "make"
        ]));
        assert!(!command_line_carries_secret(&[
            "env",
            "NPM_TOKEN=false",
            "make"
        ]));
        assert!(!command_line_carries_secret(&["grep", "password", "docs/"]));
        assert!(!command_line_carries_secret(&["tool", "--token"]));
    }
}
