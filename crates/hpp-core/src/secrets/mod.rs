//! Secret-shape detection, used by every refusal that keeps a secret out of a record.
//!
//! Records under `refs/hpp/` are pushed with the repository, so anything secret-shaped that
//! reached one would be published. The detector matches *shapes* (an assignment to a key named
//! like a credential, a PEM header, a vendor token prefix), never words: prose that mentions a
//! secret or a password is not a match. It is the reference harness's `_SECRET_PATTERN` plus the
//! token shapes it checks on evidence command lines.
//!
//! A file is read for ours ([`SHAPES`]) and then for a maintained rule set's (`nosecrets-rules`,
//! pinned in `Cargo.toml`; `maintained.rs`); a value that says it is an example or is a
//! placeholder is not a secret in either ([`placeholder`]).

mod maintained;

use std::sync::LazyLock;

pub use maintained::{looks_random, placeholder};

use regex::Regex;
use regex::bytes::Regex as ByteRegex;

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

/// One secret shape: the name a refusal prints (never the value) and the pattern that finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// What the shape is, as a refusal names it ("a Stripe key").
    pub name: &'static str,
    /// The pattern (the `regex` crate's syntax).
    pub pattern: &'static str,
    /// Whether a whole file is read for it too ([`shape_in_file`]), not only the short texts a
    /// record keeps ([`looks_secret`]). A JSON Web Token or a URL with a password is common in
    /// test fixtures and local configuration files (`postgres://postgres:postgres@db`), so those
    /// refuse a record's own text but not a file of the workspace.
    pub in_files: bool,
}

const fn shape(name: &'static str, pattern: &'static str) -> Shape {
    Shape {
        name,
        pattern,
        in_files: true,
    }
}

const fn text_shape(name: &'static str, pattern: &'static str) -> Shape {
    Shape {
        name,
        pattern,
        in_files: false,
    }
}

/// Every secret shape, most specific first: the categories the common secret scanners
/// (gitleaks, detect-secrets) look for by default, as precise shapes. A vendor's token is found
/// by its prefix and length; a credential with no prefix of its own only where it is assigned to
/// a key named for it. Not here: entropy alone (a bare random string is not told from a hash).
pub const SHAPES: &[Shape] = &[
    shape("a private key block", PRIVATE_KEY_HEADER),
    shape(
        "an AWS access key id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    ),
    shape(
        "an AWS secret access key",
        r#"(?i)\baws[A-Za-z0-9_.-]{0,20}?(?:secret|key)[A-Za-z0-9_.-]{0,20}[\\"']{0,2}\s*[:=]\s*[\\"']{0,2}[A-Za-z0-9/+]{40}(?:[^A-Za-z0-9/+=]|$)"#,
    ),
    shape(
        "a GitHub token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    ),
    shape(
        "a GitLab token",
        r"\bgl(?:pat|dt|rt|ptt|ft|cbt|imt|soat)-[A-Za-z0-9_-]{20,}",
    ),
    shape("a Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    shape(
        "a Slack webhook URL",
        r"\bhooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
    ),
    shape(
        "a Stripe key",
        r"\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}",
    ),
    shape("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    shape(
        "a Google OAuth client secret",
        r"\bGOCSPX-[A-Za-z0-9_-]{28}",
    ),
    shape("an sk- API key", r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}"),
    shape("a Hugging Face token", r"\bhf_[A-Za-z0-9]{34,}"),
    shape("a Twilio API key", r"\bSK[0-9a-f]{32}\b"),
    shape(
        "a SendGrid API key",
        r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    ),
    shape("a Mailchimp API key", r"\b[0-9a-f]{32}-us[0-9]{1,2}\b"),
    shape("an npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    shape("a PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"),
    shape(
        "a Discord bot token",
        r"\b[MNO][A-Za-z0-9]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}",
    ),
    shape(
        "a Discord webhook URL",
        r"\bdiscord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}",
    ),
    shape("a Telegram bot token", r"\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}"),
    shape("a Square token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}"),
    shape(
        "an Azure storage account key",
        r"(?i)\bAccountKey=[A-Za-z0-9+/]{86}==",
    ),
    shape("a Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    shape("a DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}"),
    shape("a HashiCorp Vault token", r"\bhv[sb]\.[A-Za-z0-9_-]{24,}"),
    shape("a Databricks token", r"\bdapi[a-f0-9]{32}"),
    shape("an Artifactory token", r"\bAKCp[A-Za-z0-9]{69}"),
    shape(
        "an npm registry token (_authToken)",
        r#"(?m)(?:^|[\s"'])(?://[^\s=]*:)?_auth(?:Token)?\s*=\s*["']?[A-Za-z0-9_.+/=-]{16,}"#,
    ),
    shape(
        "an Azure shared access signature",
        r"(?i)[?&]sig=[A-Za-z0-9%+/]{30,}",
    ),
    shape(
        "a PuTTY private key",
        r"\b(?:PuTTY-User-Key-File-[0-9]+:|Private-MAC: [0-9a-f]{40,})",
    ),
    text_shape(
        "a JSON Web Token",
        r"\beyJ[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*",
    ),
    // A placeholder (`${DB_PASSWORD}`, `<password>`, `$PASS`, `****`) is not a password.
    text_shape(
        "a URL with a password",
        r#"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\[\]"'<>{}$]+:[^\s:/@\[\]"'<>{}$*][^\s/@\[\]"'<>{}]*@[A-Za-z0-9]"#,
    ),
    shape(
        "a credential assignment (NAME_TOKEN=...)",
        r#"(?m)(?:^|[\s"'])(?:export\s+)?[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)\s*=\s*[\x22']?([A-Za-z0-9_./+=:@-]{12,})"#,
    ),
];

/// [`SHAPES`], compiled once, with ASCII classes: a secret's shape is ASCII, and Unicode
/// classes made this table most of an `event append`'s instructions (27 million of 34).
static COMPILED: LazyLock<Vec<(Shape, ByteRegex)>> = LazyLock::new(|| {
    SHAPES
        .iter()
        .map(|s| {
            let re = regex::bytes::RegexBuilder::new(s.pattern)
                .unicode(false)
                .build()
                .expect("every secret shape is a valid regex");
            (*s, re)
        })
        .collect()
});

/// Whether one of `shape`'s matches in `text` is no example (`AKIAIOSFODNN7EXAMPLE` is).
fn finds(shape: &ByteRegex, text: &str) -> bool {
    shape.find_iter(text.as_bytes()).any(|m| {
        !m.as_bytes()
            .to_ascii_lowercase()
            .windows(7)
            .any(|w| w == b"example")
    })
}

/// Names the first of [`SHAPES`] that `text` has, if any: the shape, never the value.
///
/// ```
/// use hpp_core::secrets::shape_of;
/// let key = format!("{}{}", "sk_live_", "0123456789abcdefghijklmn");
/// assert_eq!(shape_of(&format!("pay with {key}")), Some("a Stripe key"));
/// assert_eq!(shape_of("0f8fad5b-d9cb-469f-a165-70867728950e"), None);
/// ```
pub fn shape_of(text: &str) -> Option<&'static str> {
    // Ours alone: a record's own short texts (names, event data) are read on every write, and
    // the maintained set's first use (its rules parsed, its keywords built) costs more than the
    // write; files, which a push reads, get both ([`shape_in_text_at`]).
    COMPILED
        .iter()
        .find(|(_, re)| finds(re, text))
        .map(|(s, _)| s.name)
}

/// The first of `shapes` that finds something in `text` that is no example, or else the first
/// rule of the maintained set that does (honouring its paths where `path` is known).
fn first_shape<'a>(
    mut shapes: impl Iterator<Item = &'a (Shape, ByteRegex)>,
    text: &str,
    path: Option<&str>,
) -> Option<&'static str> {
    shapes
        .find(|(_, re)| finds(re, text))
        .map(|(s, _)| s.name)
        .or_else(|| {
            let rules: &'static maintained::RuleSet = &maintained::RULES;
            rules.find(text.as_bytes(), path)
        })
}

/// The shapes of [`SHAPES`] read in whole files.
fn file_shapes() -> impl Iterator<Item = &'static (Shape, ByteRegex)> {
    COMPILED.iter().filter(|(s, _)| s.in_files)
}

/// How many leading bytes decide whether contents are binary: a NUL among them, as git decides.
pub const BINARY_PROBE: usize = 8192;

/// Tells whether contents that start with `head` are binary (a NUL byte in the first
/// [`BINARY_PROBE`] bytes), and so are not read for secrets.
pub fn is_binary(head: &[u8]) -> bool {
    head.iter().take(BINARY_PROBE).any(|b| *b == 0)
}

/// Names the secret shape a file's contents have, if any: the shape, never the value. Binary
/// contents (a NUL byte in the first 8 KiB) are not read.
///
/// ```
/// use hpp_core::secrets::shape_in_file;
/// assert_eq!(shape_in_file(b"GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"), Some("a GitHub token"));
/// assert_eq!(shape_in_file(b"let password = prompt();"), None);
/// ```
pub fn shape_in_file(bytes: &[u8]) -> Option<&'static str> {
    if is_binary(bytes) {
        return None;
    }
    shape_in_text(bytes)
}

/// Names the secret shape a piece of a text file has, if any, whatever bytes it holds: a file
/// read in pieces ([`piece_end`]) was judged text or binary by its first piece
/// ([`is_binary`]).
pub fn shape_in_text(bytes: &[u8]) -> Option<&'static str> {
    shape_in_text_at(None, bytes)
}

/// [`shape_in_text`] of a file at `path`: the maintained rules that name the files they skip
/// (a private key rule skips `*.pub`) honour it.
pub fn shape_in_text_at(path: Option<&str>, bytes: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(bytes);
    first_shape(file_shapes(), &text, path)
}

/// Names the secret shape of the first secret-shaped line of `new` that `old` does not hold,
/// if any: the shape, never the value. A private key block counts as one unit, from its header
/// to its end line, so a different key under the same header is new. A line `old` already
/// holds (anywhere in it) is not new: it is in the history already. `None` for binary
/// contents, as [`shape_in_file`].
///
/// ```
/// use hpp_core::secrets::shape_added;
/// let key = b"aws = AKIAQ7ZK2M4XW5R3T6PB\n";
/// assert_eq!(shape_added(None, key), Some("an AWS access key id"));
/// assert_eq!(shape_added(Some(b"x = 1\n"), b"x = 1\naws = AKIAQ7ZK2M4XW5R3T6PB\n"), Some("an AWS access key id"));
/// assert_eq!(shape_added(Some(key), b"x = 1\naws = AKIAQ7ZK2M4XW5R3T6PB\n"), None);
/// ```
pub fn shape_added(old: Option<&[u8]>, new: &[u8]) -> Option<&'static str> {
    if is_binary(new) {
        return None;
    }
    // Most files hold no secret: one whole-file match decides them without splitting lines.
    shape_in_text(new)?;
    let held: std::collections::HashSet<String> = old
        .filter(|bytes| !is_binary(bytes))
        .map(shaped_units)
        .unwrap_or_default()
        .into_iter()
        .map(|(unit, _)| unit)
        .collect();
    shaped_units(new)
        .into_iter()
        .find(|(unit, _)| !held.contains(unit))
        .map(|(_, shape)| shape)
}

/// The secret-shaped units of a text (or of a piece of one, [`piece_end`]): its lines, and its
/// private key blocks whole, each with the shape it has, in order. Two files hold the same
/// secret where they hold the same unit; a unit without a shape is never a secret, so comparing
/// these alone is comparing every unit.
pub fn shaped_units(bytes: &[u8]) -> Vec<(String, &'static str)> {
    shaped_units_at(None, bytes)
}

/// [`shaped_units`] of a file at `path` ([`shape_in_text_at`]).
pub fn shaped_units_at(path: Option<&str>, bytes: &[u8]) -> Vec<(String, &'static str)> {
    let text = String::from_utf8_lossy(bytes);
    units(&text)
        .filter_map(|unit| {
            let shape = first_shape(file_shapes(), &unit, path)?;
            Some((unit, shape))
        })
        .collect()
}

/// Where the first piece of `bytes` may end when a file is read in pieces: just after its last
/// line end that no private key block spans (a block whose header is in the piece and its end
/// line not), so every unit ([`shaped_units`]) of the piece is whole. 0 when there is no such
/// line end: the caller reads on, or cuts where it must.
///
/// ```
/// use hpp_core::secrets::piece_end;
/// assert_eq!(piece_end(b"a\nb\nc"), 4);
/// assert_eq!(piece_end(b"a\n-----BEGIN RSA PRIVATE KEY-----\nMII"), 2);
/// assert_eq!(piece_end(b"no line end"), 0);
/// ```
pub fn piece_end(bytes: &[u8]) -> usize {
    let Some(last) = bytes.iter().rposition(|b| *b == b'\n') else {
        return 0;
    };
    let end = last + 1;
    // The last key block header in the piece, if its end line is not after it.
    let text = String::from_utf8_lossy(&bytes[..end]);
    let mut open: Option<usize> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end_matches(['\n', '\r']);
        if KEY_BLOCK.is_match(trimmed) {
            open = Some(at);
        } else if trimmed.trim_start().starts_with("-----END") {
            open = None;
        }
        at += line.len();
    }
    match open {
        // The piece ends before the block's header; the text is the bytes up to there, as
        // from_utf8_lossy kept them byte for byte on valid UTF-8. On bytes it replaced, the
        // offsets differ: cut at the last line end then.
        Some(header) if text.len() == end => header,
        _ => end,
    }
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
    SECRET_PATTERN.is_match(text) || TOKEN_SHAPES.is_match(text) || shape_of(text).is_some()
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

    /// `n` characters cycling through `alphabet`: filler for a fake credential, so no test
    /// holds a real one (or a string a scanner of this repository would take for one).
    fn fill(alphabet: &str, n: usize) -> String {
        alphabet.chars().cycle().take(n).collect()
    }

    /// A fake private key block, as a file holds it.
    fn key_block(body: &str) -> String {
        format!(
            "-----BEGIN {} PRIVATE KEY-----\n{body}\n{body}\n-----END {} PRIVATE KEY-----\n",
            "OPENSSH", "OPENSSH"
        )
    }

    #[test]
    fn a_piece_never_ends_inside_a_key_block_and_its_units_are_those_of_the_whole() {
        let text = format!("a = 1\n{}b = 2\nc = 3", key_block(&fill(ALNUM, 40)));
        let bytes = text.as_bytes();
        let header = text.find("-----BEGIN").expect("the block is there");
        let inside = text.find("-----END").expect("the block ends");
        // A piece cut anywhere inside the block ends before its header.
        for cut in header + 1..=inside {
            assert_eq!(piece_end(&bytes[..cut]), header, "cut at {cut}");
        }
        // Read in pieces as a reader does, every unit comes out whole and in order.
        let mut units = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let window = &rest[..rest.len().min(header + 8)];
            let end = match piece_end(window) {
                0 if window.len() == rest.len() => rest.len(),
                0 => piece_end(rest).max(rest.len().min(1)),
                end => end,
            };
            units.extend(shaped_units(&rest[..end]));
            rest = &rest[end..];
        }
        assert_eq!(units, shaped_units(bytes));
        assert_eq!(units.len(), 1, "the key block, whole: {units:?}");
    }

    #[test]
    fn control_a_piece_cut_at_any_line_end_would_split_the_block() {
        let text = format!("a = 1\n{}", key_block(&fill(ALNUM, 40)));
        let first_line_in_block = text.find("-----BEGIN").expect("there") + 1;
        let cut =
            text[first_line_in_block..].find('\n').expect("a line end") + first_line_in_block + 1;
        // Cut after the header line, the header alone is still a secret shape, but not the
        // unit the whole file holds: comparing such units would miss a changed key.
        let split = shaped_units(&text.as_bytes()[..cut]);
        assert_ne!(split, shaped_units(text.as_bytes()));
    }

    #[test]
    fn shaped_units_compare_as_every_unit_does() {
        let token = format!("GITHUB_TOKEN=ghp_{}", fill(ALNUM, 36));
        let old = format!("x = 1\n{token}\n");
        let new = format!("x = 2\n{token}\ny = 3\n");
        assert_eq!(shape_added(Some(old.as_bytes()), new.as_bytes()), None);
        let other = format!("GITHUB_TOKEN=ghp_{}", fill(HEX, 36));
        let brought = format!("{new}{other}\n");
        assert_eq!(
            shape_added(Some(old.as_bytes()), brought.as_bytes()),
            Some("a GitHub token")
        );
        assert!(is_binary(b"abc\0def"));
        assert!(!is_binary(text_of(BINARY_PROBE + 10).as_bytes()));
    }

    fn text_of(n: usize) -> String {
        "x".repeat(n)
    }

    const ALNUM: &str = "aB3dE5gH7jK9mN1pQ";
    const HEX: &str = "0a1b2c3d4e5f6789";
    const B64URL: &str = "aB3_dE5-gH7jK9mN1pQ";

    /// One fake example of every shape in [`SHAPES`], each built from a prefix and filler.
    fn examples() -> Vec<(&'static str, String)> {
        vec![
            (
                "a private key block",
                format!("-----BEGIN {} PRIVATE KEY-----", "RSA"),
            ),
            (
                "an AWS access key id",
                format!("AKIA{}", "Q7ZK2M4XW5R3T6PB"),
            ),
            (
                "an AWS secret access key",
                format!(
                    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}",
                    "Q2vT9kLm4Z"
                ),
            ),
            (
                "an AWS secret access key",
                format!(
                    "{{\"AWS_SECRET_KEY\":\"wJalrXUtnFEMI/K7MDENG/bPxRfiCY{}\"}}",
                    "Q2vT9kLm4Z"
                ),
            ),
            ("a GitHub token", format!("gh{}_{}", "p", fill(ALNUM, 36))),
            (
                "a GitHub token",
                format!("github_{}_{}", "pat", fill(ALNUM, 40)),
            ),
            ("a GitLab token", format!("gl{}-{}", "pat", fill(ALNUM, 20))),
            (
                "a Slack token",
                format!("xox{}-{}", "b", fill("1234567890-", 24)),
            ),
            (
                "a Slack webhook URL",
                format!(
                    "https://hooks.slack.com/{}/T0000/B0000/{}",
                    "services",
                    fill(ALNUM, 24)
                ),
            ),
            ("a Stripe key", format!("sk_{}_{}", "live", fill(ALNUM, 24))),
            ("a Stripe key", format!("rk_{}_{}", "test", fill(ALNUM, 24))),
            (
                "a Google API key",
                format!("AI{}{}", "za", fill(B64URL, 35)),
            ),
            (
                "a Google OAuth client secret",
                format!("GOCSPX-{}", fill(B64URL, 28)),
            ),
            (
                "an sk- API key",
                format!("sk-{}-{}", "ant", fill(ALNUM, 40)),
            ),
            ("a Hugging Face token", format!("hf_{}", fill(ALNUM, 34))),
            ("a Twilio API key", format!("S{}{}", "K", fill(HEX, 32))),
            (
                "a SendGrid API key",
                format!("S{}.{}.{}", "G", fill(B64URL, 22), fill(B64URL, 43)),
            ),
            ("a Mailchimp API key", format!("{}-us{}", fill(HEX, 32), 14)),
            ("an npm token", format!("np{}_{}", "m", fill(ALNUM, 36))),
            (
                "a PyPI token",
                format!("pypi-{}{}", "AgEIcHlwaS5vcmc", fill(B64URL, 60)),
            ),
            (
                "a Discord bot token",
                format!(
                    "M{}.{}.{}",
                    fill(ALNUM, 23),
                    fill(B64URL, 6),
                    fill(B64URL, 27)
                ),
            ),
            (
                "a Discord webhook URL",
                format!(
                    "https://discord.com/api/{}/123456789012/{}",
                    "webhooks",
                    fill(B64URL, 60)
                ),
            ),
            (
                "a Telegram bot token",
                format!("123456789:A{}{}", "A", fill(B64URL, 33)),
            ),
            (
                "a Square token",
                format!("sq0{}-{}", "atp", fill(B64URL, 22)),
            ),
            (
                "an Azure storage account key",
                format!(
                    "DefaultEndpointsProtocol=https;Account{}={}==",
                    "Key",
                    fill(ALNUM, 86)
                ),
            ),
            ("a Shopify token", format!("shp{}_{}", "at", fill(HEX, 32))),
            (
                "a DigitalOcean token",
                format!("do{}_v1_{}", "p", fill(HEX, 64)),
            ),
            (
                "a HashiCorp Vault token",
                format!("hv{}.{}", "s", fill(B64URL, 90)),
            ),
            ("a Databricks token", format!("da{}{}", "pi", fill(HEX, 32))),
            (
                "an Artifactory token",
                format!("AK{}{}", "Cp", fill(ALNUM, 69)),
            ),
            (
                "an npm registry token (_authToken)",
                format!("//registry.npmjs.org/:_auth{}={}", "Token", fill(HEX, 36)),
            ),
            (
                "an Azure shared access signature",
                format!(
                    "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&{}={}%3D",
                    "sig",
                    fill(ALNUM, 43)
                ),
            ),
            (
                "a PuTTY private key",
                format!("PuTTY-User-Key-{}-3: ssh-ed25519", "File"),
            ),
            (
                "a JSON Web Token",
                format!(
                    "{}.{}.{}",
                    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
                    "eyJzdWIiOiIxMjM0NTY3ODkwIn0",
                    fill(B64URL, 43)
                ),
            ),
            (
                "a URL with a password",
                format!("https://admin:{}@db.example.com:5432/app", "pass"),
            ),
            (
                "a URL with a password",
                format!(
                    "{{\"dsn\":\"postgres://app:{}@localhost/app\"}}",
                    "s3cr%40t"
                ),
            ),
            (
                "a credential assignment (NAME_TOKEN=...)",
                format!("export DEPLOY_{}={}", "TOKEN", fill(ALNUM, 20)),
            ),
        ]
    }

    #[test]
    fn every_shape_finds_its_example_and_is_named_by_it() {
        for (name, example) in examples() {
            assert_eq!(shape_of(&example), Some(name), "{example}");
            assert!(looks_secret(&example), "{example}");
            // As a value in event data: canonical JSON escapes nothing these shapes hold.
            let data = serde_json::json!({ "note": example }).to_string();
            assert!(looks_secret(&data), "{data}");
        }
    }

    #[test]
    fn every_shape_has_an_example() {
        let examples = examples();
        for shape in SHAPES {
            assert!(
                examples.iter().any(|(name, _)| *name == shape.name),
                "no example of {}",
                shape.name
            );
        }
    }

    #[test]
    fn the_shapes_common_in_fixtures_refuse_texts_but_not_files() {
        for (name, example) in examples() {
            let in_files = SHAPES
                .iter()
                .find(|s| s.name == name)
                .expect("a shape")
                .in_files;
            assert_eq!(
                shape_in_file(example.as_bytes()).is_some(),
                in_files,
                "{name}: {example}"
            );
        }
    }

    /// Texts that hold long random-looking runs but no credential: none may be flagged.
    fn ordinary() -> Vec<String> {
        vec![
            // UUIDs and hashes.
            "0f8fad5b-d9cb-469f-a165-70867728950e".into(),
            "{\"id\":\"7c9e6679-7425-40de-944b-e07fc1f90ae7\",\"run\":3}".into(),
            "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".into(),
            "md5 d41d8cd98f00b204e9800998ecf8427e".into(),
            "tree=9c2a1f8e3b7d4c6a0e5f1b2d3c4a5e6f7a8b9c0d parent=1a2b3c4d5e6f".into(),
            // Base64 of ordinary text, and a base64 blob.
            "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==".into(),
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
                .into(),
            // Test fixtures and identifiers.
            "fixture-user-01 test_fixture_ok tests/fixtures/make_repo.sh".into(),
            "risk_test_matrix_0123456789 desk_live_view task_list_items".into(),
            "{\"max_tokens\":4096,\"token_count\":12345678,\"password_policy\":\"strict\"}".into(),
            "AKIA is a prefix; SKU-1234; SG.example; hf_hub".into(),
            // URLs and remotes without a password, or with a placeholder.
            "https://example.com/path?x=1&y=2#frag".into(),
            "git@github.com:org/repo.git ssh://git@host:22/repo.git".into(),
            "postgres://app@localhost:5432/app http://localhost:8080/a@b".into(),
            "postgres://app:${DB_PASSWORD}@db/app mysql://root:<password>@db/x".into(),
            "redis://:$REDIS_PASS@cache:6379 https://user:****@host/".into(),
            "http://[::1]:8080/ http://[::1".into(),
            // Versions, dates, paths.
            "v1.2.3-rc.1+build.42 2026-08-01T12:00:00Z /usr/lib/x86_64-linux-gnu".into(),
            "event ev-000123 at 1700000000:AB".into(),
            "java.util.concurrent.ConcurrentHashMap.computeIfAbsent".into(),
        ]
    }

    #[test]
    fn control_ordinary_texts_with_ids_hashes_and_base64_are_not_secrets() {
        for text in ordinary() {
            assert_eq!(shape_of(&text), None, "{text}");
            assert!(!looks_secret(&text), "{text}");
            assert_eq!(shape_in_file(text.as_bytes()), None, "{text}");
        }
    }

    /// Lines of workspace files that hold example keys, placeholders, template expressions and
    /// identifiers where a credential would go: a file may hold them and still be pushed.
    pub(crate) const FALSE_POSITIVES: &[&str] = &[
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "password = \"${PASSWORD}\"",
        "password: \"{{ .Values.db.password }}\"",
        "api_key: <your-api-key>",
        "api_key = \"your_api_key_here_1234\"",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
        "let secret = compute_the_secret_value_here();",
        "api_key = load_api_key_from_environment()",
        "client_secret = os.environ[\"CLIENT_SECRET\"]",
        "GITHUB_TOKEN=$GITHUB_TOKEN",
        "request_id = 0f8fad5b-d9cb-469f-a165-70867728950e",
        "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
        "checksum = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"",
        "password = \"********\"",
        "secret: xxxxxxxxxxxxxxxxxxxxxxxx",
    ];

    #[test]
    fn the_false_positive_corpus_is_no_secret_in_a_file() {
        for line in FALSE_POSITIVES {
            let text = format!("{line}\n");
            assert_eq!(shape_in_file(text.as_bytes()), None, "{line}");
            assert_eq!(
                shape_in_text_at(Some("config/app.yaml"), text.as_bytes()),
                None,
                "{line}"
            );
        }
    }

    #[test]
    fn control_the_same_lines_with_real_looking_values_are_secrets() {
        for line in [
            format!("aws_access_key_id = AKIA{}", "Q7ZK2M4XW5R3T6PB"),
            format!("password = \"{}\"", "Zq3v9Lk2Xw8Rt5Pm1Nb7"),
            format!("api_key = \"{}\"", "Zq3v9Lk2Xw8Rt5Pm1Nb7"),
            format!(
                "//registry.npmjs.org/:_authToken={}",
                "Zq3v9Lk2Xw8Rt5Pm1Nb7"
            ),
            format!("client_secret = {}", "Zq3v9Lk2Xw8Rt5Pm1Nb7"),
        ] {
            let text = format!("{line}\n");
            assert!(shape_in_file(text.as_bytes()).is_some(), "{line}");
        }
    }

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
        let cases: [(&[u8], &str); 6] = [
            (
                b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n",
                "a private key block",
            ),
            (b"TOKEN=xoxb-1234567890-abcdefghij\n", "a Slack token"),
            (b"aws = AKIAQ7ZK2M4XW5R3T6PB\n", "an AWS access key id"),
            (
                b"export STRIPE_API_KEY=rk_live_0123456789abcdef\n",
                "a Stripe key",
            ),
            (
                b"OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789AB\n",
                "an sk- API key",
            ),
            (
                b"export DEPLOY_TOKEN=abcdefghijklmnop\n",
                "a credential assignment (NAME_TOKEN=...)",
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
        let aws = "aws = AKIAQ7ZK2M4XW5R3T6PB";
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
            "AKIAQ7ZK2M4XW5R3T6PB",
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
