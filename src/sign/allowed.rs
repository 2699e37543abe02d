//! The allowed-signers file: who may sign hpp records, with which key, in which namespaces and
//! for how long.
//!
//! The format is git's `gpg.ssh.allowedSignersFile`, which is OpenSSH's ALLOWED SIGNERS format
//! (`ssh-keygen(1)`): one entry a line, `principals [options] keytype base64 [comment]`. The
//! rules follow OpenSSH `sshsig.c` and `match.c`, so a file means the same thing to git-hpp as to
//! `ssh-keygen -Y verify` and `git verify-commit`:
//!
//! - blank lines and lines whose first non-blank character is `#` are skipped;
//! - fields are split on whitespace outside double quotes; a quoted principals field
//!   (`"a@x,b@y"`) is unquoted;
//! - principals are a comma-separated pattern list: `*` and `?` globs, `!pattern` negation (a
//!   negated match rejects the line), and at least one positive match is needed;
//! - the second field is the key when it names a key algorithm, otherwise it is the options field
//!   and the key follows it;
//! - options are comma-separated, their names case-insensitive, their values double-quoted:
//!   `cert-authority`, `namespaces="pattern,list"`, `valid-after="YYYYMMDD[HHMM[SS]][Z]"` and
//!   `valid-before="…"`; any other option makes the line malformed.
//!
//! Like `ssh-keygen`, parsing never fails as a whole: a malformed line keeps its problem, and the
//! problem is reported only when that line's principals match the signer being checked. A bad
//! line for one principal never stops another principal's signatures from verifying.
//!
//! This module touches no refs; it reads one file when asked to ([`AllowedSigners::load`]).

use std::fmt;
use std::path::Path;

use ssh_key::public::KeyData;
use ssh_key::{Algorithm, PublicKey};
use time::OffsetDateTime;

use super::Error;

/// The longest sub-pattern OpenSSH's `match_pattern_list` copies (its buffer is 1024 bytes); a
/// longer one makes the whole list fail to match.
const MAX_SUBPATTERN: usize = 1023;

/// Whitespace as OpenSSH splits fields on it.
const WHITESPACE: &[char] = &[' ', '\t', '\r', '\n'];

/// A parsed allowed-signers file.
///
/// Built by [`AllowedSigners::parse`] (never fails) or [`AllowedSigners::load`]; asked with
/// [`AllowedSigners::admit`].
///
/// ```
/// use git_hpp::sign::{AllowedSigners, NAMESPACE, Refusal};
/// use time::macros::datetime;
///
/// let key: ssh_key::PublicKey =
///     "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEb2Btxco3efWi439X2EhZOayWyvUAw3FRhSKgyFsHnB"
///         .parse()
///         .expect("a valid key");
/// let allowed = AllowedSigners::parse(&format!(
///     "# who may sign\nalice@example.com namespaces=\"hpp\" {}\n",
///     key.to_openssh().expect("encodable"),
/// ));
/// let now = datetime!(2025-06-01 12:00 UTC);
/// assert_eq!(allowed.admit("alice@example.com", key.key_data(), NAMESPACE, now), Ok(()));
/// assert_eq!(
///     allowed.admit("bob@example.com", key.key_data(), NAMESPACE, now),
///     Err(Refusal::NoValidSigner),
/// );
/// ```
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    entries: Vec<Entry>,
}

/// One non-blank, non-comment line.
#[derive(Debug, Clone)]
struct Entry {
    /// 1-based line number in the file.
    line: usize,
    /// The principals pattern list, or `None` when not even that could be read.
    principals: Option<String>,
    /// The key and options, or what is wrong with the rest of the line.
    parsed: Result<Parsed, LineProblem>,
}

/// The key and options of a well-formed line.
#[derive(Debug, Clone)]
struct Parsed {
    key: KeyData,
    options: Options,
}

/// The options of one line.
#[derive(Debug, Clone, Default)]
struct Options {
    cert_authority: bool,
    namespaces: Option<String>,
    valid_after: Option<OffsetDateTime>,
    valid_before: Option<OffsetDateTime>,
}

/// What is wrong with a malformed allowed-signers line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProblem {
    /// The principals field has an opening double quote and no closing one.
    UnterminatedPrincipals,
    /// The line has principals and nothing after them.
    MissingKey,
    /// The options field has an unterminated double quote.
    UnterminatedOptions,
    /// The key fields do not parse as an OpenSSH public key.
    InvalidKey,
    /// An option that OpenSSH's allowed-signers format does not define.
    UnknownOption {
        /// The option as written, up to the next comma.
        option: String,
    },
    /// An option value that does not start with a double quote.
    MissingStartQuote {
        /// The option's name.
        option: &'static str,
    },
    /// An option value whose closing double quote is missing.
    MissingEndQuote {
        /// The option's name.
        option: &'static str,
    },
    /// The same option given twice.
    Repeated {
        /// The option's name.
        option: &'static str,
    },
    /// A `valid-after`/`valid-before` value that is not `YYYYMMDD[HHMM[SS]][Z]`, or is a
    /// time before 1970-01-01T00:00:01Z.
    InvalidTime {
        /// The option's name.
        option: &'static str,
        /// The value as written.
        value: String,
    },
    /// `valid-before` is not after `valid-after`.
    BeforeNotAfterAfter,
    /// The options field ends with a comma.
    UnexpectedEndOfOptions,
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnterminatedPrincipals => {
                f.write_str("the principals field has no closing quote")
            }
            Self::MissingKey => f.write_str("the line names principals but no key"),
            Self::UnterminatedOptions => f.write_str("the options field has no closing quote"),
            Self::InvalidKey => f.write_str("the key is not an OpenSSH public key"),
            Self::UnknownOption { option } => write!(f, "unknown option {option:?}"),
            Self::MissingStartQuote { option } => {
                write!(f, "the value of {option} must be in double quotes")
            }
            Self::MissingEndQuote { option } => {
                write!(f, "the value of {option} has no closing quote")
            }
            Self::Repeated { option } => write!(f, "{option} is given more than once"),
            Self::InvalidTime { option, value } => write!(
                f,
                "{option}={value:?} is not a time of the form YYYYMMDD[HHMM[SS]][Z] after 1970"
            ),
            Self::BeforeNotAfterAfter => f.write_str("valid-before is not after valid-after"),
            Self::UnexpectedEndOfOptions => f.write_str("the options end with a comma"),
        }
    }
}

/// Why no allowed-signers entry admitted a signature.
///
/// When several lines name the principal, the most specific reason wins: a line with the right
/// key refused by its options, then a malformed line, then a `cert-authority` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No entry names the principal with this key.
    NoValidSigner,
    /// The entry with the right key restricts `namespaces=` and the namespace is not among them.
    NamespaceNotAllowed {
        /// The entry's line number.
        line: usize,
        /// The signature's namespace.
        namespace: String,
    },
    /// The entry with the right key has a `valid-after` later than the verification time.
    NotYetValid {
        /// The entry's line number.
        line: usize,
        /// The entry's `valid-after`.
        valid_after: OffsetDateTime,
    },
    /// The entry with the right key has a `valid-before` earlier than the verification time.
    Expired {
        /// The entry's line number.
        line: usize,
        /// The entry's `valid-before`.
        valid_before: OffsetDateTime,
    },
    /// A line naming the principal cannot be read.
    Malformed {
        /// The line number.
        line: usize,
        /// What is wrong with it.
        problem: LineProblem,
    },
    /// The only lines naming the principal are `cert-authority` entries, which git-hpp does not
    /// support (it verifies plain-key signatures only).
    CertAuthority {
        /// The entry's line number.
        line: usize,
    },
    /// The entry with the right key does not mark its principal as a person: its
    /// `namespaces=` does not list [`crate::sign::PERSON_NAMESPACE`] by name.
    NotAPerson {
        /// The entry's line number.
        line: usize,
    },
}

impl Refusal {
    /// Orders refusals by how much they tell the user; lower is more specific.
    fn rank(&self) -> u8 {
        match self {
            Self::NamespaceNotAllowed { .. }
            | Self::NotYetValid { .. }
            | Self::Expired { .. }
            | Self::NotAPerson { .. } => 0,
            Self::Malformed { .. } => 1,
            Self::CertAuthority { .. } => 2,
            Self::NoValidSigner => 3,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoValidSigner => f.write_str("the signature names no valid signer"),
            Self::NotAPerson { line } => write!(
                f,
                "the allowed-signers entry on line {line} does not mark its principal as a person (list namespaces=\"{}\" on it)",
                crate::sign::PERSON_NAMESPACE
            ),
            Self::NamespaceNotAllowed { line, namespace } => write!(
                f,
                "the allowed-signers entry on line {line} does not allow namespace {namespace:?}"
            ),
            Self::NotYetValid { line, valid_after } => write!(
                f,
                "the allowed-signers entry on line {line} is not valid until {}",
                Utc(*valid_after)
            ),
            Self::Expired { line, valid_before } => write!(
                f,
                "the allowed-signers entry on line {line} expired at {}",
                Utc(*valid_before)
            ),
            Self::Malformed { line, problem } => {
                write!(
                    f,
                    "line {line} of the allowed-signers file is malformed: {problem}"
                )
            }
            Self::CertAuthority { .. } => f.write_str("cert-authority entries are not supported"),
        }
    }
}

/// Displays a time as `YYYY-MM-DDTHH:MM:SSZ`.
struct Utc(OffsetDateTime);

impl fmt::Display for Utc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hpp_core::timestamp::utc_seconds(self.0))
    }
}

impl AllowedSigners {
    /// Parses an allowed-signers file's text.
    ///
    /// Never fails as a whole: each malformed line keeps its [`LineProblem`], which
    /// [`AllowedSigners::admit`] reports only for a principal that line names, as `ssh-keygen`
    /// does.
    ///
    /// `valid-after`/`valid-before` times without a trailing `Z` (or `UTC`) are read as UTC.
    /// OpenSSH reads them as local time, so on a machine whose zone is not UTC the two can
    /// disagree by the zone's offset; write the `Z` to mean the same thing everywhere.
    pub fn parse(text: &str) -> AllowedSigners {
        let entries = text
            .lines()
            .enumerate()
            .filter_map(|(index, line)| parse_line(index + 1, line))
            .collect();
        AllowedSigners { entries }
    }

    /// Reads and parses the allowed-signers file at `path` (see [`AllowedSigners::parse`]).
    ///
    /// Bytes that are not UTF-8 are replaced, which can only make the lines holding them
    /// malformed.
    ///
    /// # Errors
    ///
    /// [`Error::AllowedSignersNotFound`] when the file does not exist, and
    /// [`Error::ReadAllowedSigners`] when it cannot be read.
    pub fn load(path: &Path) -> Result<AllowedSigners, Error> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(Self::parse(&String::from_utf8_lossy(&bytes))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::AllowedSignersNotFound {
                    path: path.to_owned(),
                })
            }
            Err(source) => Err(Error::ReadAllowedSigners {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Returns how many non-blank, non-comment lines the file has, malformed ones included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Tells whether the file has no entries at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The principals each well-formed, non-`cert-authority` line names by exact name (no
    /// pattern, no negation), with its key: who a key found by fingerprint may be
    /// ([`crate::sign::dsse::check_signed`]). Whether the line admits the principal then is
    /// [`Self::admit`]'s to say.
    pub fn named_keys(&self) -> Vec<(String, &KeyData)> {
        let mut out = Vec::new();
        for entry in &self.entries {
            let (Some(principals), Ok(parsed)) = (&entry.principals, &entry.parsed) else {
                continue;
            };
            if parsed.options.cert_authority {
                continue;
            }
            for name in principals.split(',') {
                if !name.is_empty() && !name.contains(['*', '?', '!']) {
                    out.push((name.to_owned(), &parsed.key));
                }
            }
        }
        out
    }

    /// Tells whether some entry admits `key` for `principal`, signing in `namespace`, at time
    /// `at` (what `ssh-keygen -Y verify -I principal -n namespace` checks after the signature
    /// itself).
    ///
    /// An entry admits when its principals match, it is well-formed, it is not a
    /// `cert-authority` entry, its key equals `key`, its `namespaces=` (if any) match
    /// `namespace`, and `valid-after <= at <= valid-before` (compared in whole seconds, as
    /// OpenSSH does).
    ///
    /// # Errors
    ///
    /// The most specific [`Refusal`] among the lines naming `principal`, or
    /// [`Refusal::NoValidSigner`].
    pub fn admit(
        &self,
        principal: &str,
        key: &KeyData,
        namespace: &str,
        at: OffsetDateTime,
    ) -> Result<(), Refusal> {
        self.admit_where(principal, key, namespace, at, false)
    }

    /// Tells whether some entry admits `key` for `principal` as a person: as [`Self::admit`] in
    /// namespace [`crate::sign::PERSON_NAMESPACE`], from an entry whose `namespaces=` lists that
    /// namespace by name. An entry with no `namespaces=` admits every namespace to OpenSSH, but
    /// marks no one as a person here: a person is marked on purpose, never by default.
    ///
    /// # Errors
    ///
    /// As [`Self::admit`], and [`Refusal::NotAPerson`] for an entry that does not list it.
    pub fn admit_person(
        &self,
        principal: &str,
        key: &KeyData,
        at: OffsetDateTime,
    ) -> Result<(), Refusal> {
        self.admit_where(principal, key, crate::sign::PERSON_NAMESPACE, at, true)
    }

    /// As [`Self::admit`], from an entry whose `namespaces=` lists `namespace` by name: a
    /// principal is given such a namespace (a policy's root) on purpose, never by default.
    ///
    /// # Errors
    ///
    /// As [`Self::admit`].
    pub fn admit_named(
        &self,
        principal: &str,
        key: &KeyData,
        namespace: &str,
        at: OffsetDateTime,
    ) -> Result<(), Refusal> {
        self.admit_where(principal, key, namespace, at, true)
    }

    fn admit_where(
        &self,
        principal: &str,
        key: &KeyData,
        namespace: &str,
        at: OffsetDateTime,
        listed_by_name: bool,
    ) -> Result<(), Refusal> {
        let now = at.unix_timestamp();
        let mut best = Refusal::NoValidSigner;
        let mut consider = |refusal: Refusal| {
            if refusal.rank() < best.rank() {
                best = refusal;
            }
        };
        for entry in &self.entries {
            let Some(principals) = &entry.principals else {
                continue;
            };
            if match_pattern_list(principal, principals) != PatternMatch::Positive {
                continue;
            }
            let parsed = match &entry.parsed {
                Ok(parsed) => parsed,
                Err(problem) => {
                    consider(Refusal::Malformed {
                        line: entry.line,
                        problem: problem.clone(),
                    });
                    continue;
                }
            };
            let options = &parsed.options;
            if options.cert_authority {
                consider(Refusal::CertAuthority { line: entry.line });
                continue;
            }
            if parsed.key != *key {
                continue;
            }
            if listed_by_name
                && !options
                    .namespaces
                    .as_deref()
                    .is_some_and(|list| list.split(',').any(|n| n.trim() == namespace))
            {
                consider(if namespace == crate::sign::PERSON_NAMESPACE {
                    Refusal::NotAPerson { line: entry.line }
                } else {
                    Refusal::NamespaceNotAllowed {
                        line: entry.line,
                        namespace: namespace.to_owned(),
                    }
                });
                continue;
            }
            if let Some(namespaces) = &options.namespaces
                && match_pattern_list(namespace, namespaces) != PatternMatch::Positive
            {
                consider(Refusal::NamespaceNotAllowed {
                    line: entry.line,
                    namespace: namespace.to_owned(),
                });
                continue;
            }
            if let Some(valid_after) = options.valid_after
                && now < valid_after.unix_timestamp()
            {
                consider(Refusal::NotYetValid {
                    line: entry.line,
                    valid_after,
                });
                continue;
            }
            if let Some(valid_before) = options.valid_before
                && now > valid_before.unix_timestamp()
            {
                consider(Refusal::Expired {
                    line: entry.line,
                    valid_before,
                });
                continue;
            }
            return Ok(());
        }
        Err(best)
    }
}

/// Parses one line; `None` for blank and comment lines.
fn parse_line(line: usize, text: &str) -> Option<Entry> {
    let text = text.trim_start_matches(WHITESPACE);
    if text.is_empty() || text.starts_with('#') {
        return None;
    }
    let Some((principals, rest)) = split_field(text) else {
        return Some(Entry {
            line,
            principals: None,
            parsed: Err(LineProblem::UnterminatedPrincipals),
        });
    };
    Some(Entry {
        line,
        principals: Some(principals),
        parsed: parse_key_and_options(rest.unwrap_or("")),
    })
}

/// Splits the first field off `s` as OpenSSH's `strdelimw` does: the field ends at whitespace
/// or at a double quote, and a quoted part runs to the next quote (the quotes are dropped).
/// Returns the field and the rest after the following whitespace (`None` when the field ended
/// the line), or `None` for an unterminated quote.
fn split_field(s: &str) -> Option<(String, Option<&str>)> {
    let Some(end) = s.find(|c: char| WHITESPACE.contains(&c) || c == '"') else {
        return Some((s.to_owned(), None));
    };
    if s[end..].starts_with('"') {
        let quoted = &s[end + 1..];
        let close = quoted.find('"')?;
        let field = format!("{}{}", &s[..end], &quoted[..close]);
        let rest = quoted[close + 1..].trim_start_matches(WHITESPACE);
        return Some((field, Some(rest)));
    }
    let rest = s[end..].trim_start_matches(WHITESPACE);
    Some((s[..end].to_owned(), Some(rest)))
}

/// Parses `[options] keytype base64 [comment]`.
fn parse_key_and_options(rest: &str) -> Result<Parsed, LineProblem> {
    if rest.is_empty() {
        return Err(LineProblem::MissingKey);
    }
    let first = rest.split(WHITESPACE).next().unwrap_or(rest);
    let (options, key_text) = if names_algorithm(first) {
        (Options::default(), rest)
    } else {
        let end = end_of_options(rest).ok_or(LineProblem::UnterminatedOptions)?;
        let key_text = rest[end..].trim_start_matches(WHITESPACE);
        if key_text.is_empty() {
            return Err(LineProblem::MissingKey);
        }
        (parse_options(&rest[..end])?, key_text)
    };
    let mut fields = key_text.split(WHITESPACE).filter(|f| !f.is_empty());
    let (Some(algorithm), Some(base64)) = (fields.next(), fields.next()) else {
        return Err(LineProblem::InvalidKey);
    };
    let key = PublicKey::from_openssh(&format!("{algorithm} {base64}"))
        .map_err(|_| LineProblem::InvalidKey)?;
    Ok(Parsed {
        key: key.key_data().clone(),
        options,
    })
}

/// Tells whether `field` names a key algorithm, deciding whether the second field is the key
/// or the options.
///
/// `ssh_key::Algorithm` also accepts any `name@domain` as `Algorithm::Other`, which would take
/// an options field such as `namespaces="a@b"` for a key; those are not counted. OpenSSH decides
/// by trying to read a key there, which no such name yields either.
fn names_algorithm(field: &str) -> bool {
    field
        .parse::<Algorithm>()
        .is_ok_and(|algorithm| !matches!(algorithm, Algorithm::Other(_)))
}

/// Returns where the options field ends (OpenSSH `sshkey_advance_past_options`): at the first
/// whitespace outside double quotes, where `\"` does not toggle quoting. `None` for an
/// unterminated quote.
fn end_of_options(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut quoted = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'"') => i += 1,
            b'"' => quoted = !quoted,
            b' ' | b'\t' | b'\r' | b'\n' if !quoted => return Some(i),
            _ => {}
        }
        i += 1;
    }
    (!quoted).then_some(bytes.len())
}

/// Parses the options field (OpenSSH `sshsigopt_parse`).
fn parse_options(mut s: &str) -> Result<Options, LineProblem> {
    let mut options = Options::default();
    while !s.is_empty() {
        if let Some(rest) = strip_prefix_ignore_case(s, "cert-authority") {
            options.cert_authority = true;
            s = rest;
        } else if let Some(rest) = strip_option(s, "namespaces") {
            if options.namespaces.is_some() {
                return Err(LineProblem::Repeated {
                    option: "namespaces",
                });
            }
            let (value, rest) = dequote(rest, "namespaces")?;
            options.namespaces = Some(value);
            s = rest;
        } else if let Some(rest) = strip_option(s, "valid-after") {
            if options.valid_after.is_some() {
                return Err(LineProblem::Repeated {
                    option: "valid-after",
                });
            }
            let (value, rest) = dequote(rest, "valid-after")?;
            options.valid_after = Some(parse_time(&value).ok_or(LineProblem::InvalidTime {
                option: "valid-after",
                value,
            })?);
            s = rest;
        } else if let Some(rest) = strip_option(s, "valid-before") {
            if options.valid_before.is_some() {
                return Err(LineProblem::Repeated {
                    option: "valid-before",
                });
            }
            let (value, rest) = dequote(rest, "valid-before")?;
            options.valid_before = Some(parse_time(&value).ok_or(LineProblem::InvalidTime {
                option: "valid-before",
                value,
            })?);
            s = rest;
        }
        if s.is_empty() {
            break;
        }
        // Anything but a comma here is an option this format does not define (or text glued
        // to a known one, such as `cert-authorityX`).
        let Some(rest) = s.strip_prefix(',') else {
            let option = s.split(',').next().unwrap_or(s).to_owned();
            return Err(LineProblem::UnknownOption { option });
        };
        if rest.is_empty() {
            return Err(LineProblem::UnexpectedEndOfOptions);
        }
        s = rest;
    }
    if let (Some(after), Some(before)) = (options.valid_after, options.valid_before)
        && before <= after
    {
        return Err(LineProblem::BeforeNotAfterAfter);
    }
    Ok(options)
}

/// Strips `prefix` from `s`, ignoring ASCII case.
fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Strips `name=` from `s`, ignoring the name's case (OpenSSH `opt_match`).
fn strip_option<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    strip_prefix_ignore_case(s, name)?.strip_prefix('=')
}

/// Reads a double-quoted value where `\"` stands for `"` (OpenSSH `opt_dequote`); returns it
/// and the text after the closing quote.
fn dequote<'a>(s: &'a str, option: &'static str) -> Result<(String, &'a str), LineProblem> {
    let body = s
        .strip_prefix('"')
        .ok_or(LineProblem::MissingStartQuote { option })?;
    let mut value = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((value, &body[i + 1..])),
            '\\' if body[i + 1..].starts_with('"') => {
                chars.next();
                value.push('"');
            }
            c => value.push(c),
        }
    }
    Err(LineProblem::MissingEndQuote { option })
}

/// Parses `YYYYMMDD[HHMM[SS]]` with an optional trailing `Z` or `UTC` (any case), as OpenSSH
/// `parse_absolute_time` does. Times without the suffix are read as UTC (OpenSSH: local time).
/// Returns `None` for any other shape, an impossible date or time, or a time not after the
/// epoch (OpenSSH treats 0 as "no limit" and refuses it).
fn parse_time(value: &str) -> Option<OffsetDateTime> {
    let digits = if value.len() > 1 && value.ends_with(['Z', 'z']) {
        &value[..value.len() - 1]
    } else if value.len() > 3
        && value
            .get(value.len() - 3..)
            .is_some_and(|s| s.eq_ignore_ascii_case("UTC"))
    {
        &value[..value.len() - 3]
    } else {
        value
    };
    if !matches!(digits.len(), 8 | 12 | 14) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        digits.get(range).map_or(Some(0), |s| s.parse().ok())
    };
    let year = i32::try_from(number(0..4)?).ok()?;
    let month = time::Month::try_from(u8::try_from(number(4..6)?).ok()?).ok()?;
    let day = u8::try_from(number(6..8)?).ok()?;
    let hour = u8::try_from(number(8..10)?).ok()?;
    let minute = u8::try_from(number(10..12)?).ok()?;
    let second = u8::try_from(number(12..14)?).ok()?;
    let date = time::Date::from_calendar_date(year, month, day).ok()?;
    let clock = time::Time::from_hms(hour, minute, second).ok()?;
    let t = time::PrimitiveDateTime::new(date, clock).assume_utc();
    (t.unix_timestamp() > 0).then_some(t)
}

/// The outcome of OpenSSH `match_pattern_list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatternMatch {
    /// A `!pattern` matched: the list rejects the string.
    Negated,
    /// No pattern matched.
    None,
    /// A positive pattern matched and no negated one did.
    Positive,
}

/// Matches `s` against a comma-separated list of `*`/`?` patterns where `!pattern` negates,
/// case-sensitively (OpenSSH `match_pattern_list` with `dolower = 0`).
fn match_pattern_list(s: &str, list: &str) -> PatternMatch {
    let mut positive = false;
    let mut rest = list;
    while !rest.is_empty() {
        let (negated, body) = match rest.strip_prefix('!') {
            Some(body) => (true, body),
            None => (false, rest),
        };
        let (pattern, next) = match body.split_once(',') {
            Some((pattern, next)) => (pattern, next),
            None => (body, ""),
        };
        if pattern.len() >= MAX_SUBPATTERN {
            return PatternMatch::None;
        }
        if match_pattern(s.as_bytes(), pattern.as_bytes()) {
            if negated {
                return PatternMatch::Negated;
            }
            positive = true;
        }
        rest = next;
    }
    if positive {
        PatternMatch::Positive
    } else {
        PatternMatch::None
    }
}

/// Matches `s` against one glob where `*` is any run of bytes and `?` is one byte.
fn match_pattern(s: &[u8], pattern: &[u8]) -> bool {
    let (mut si, mut pi) = (0, 0);
    // Where the last `*` was in the pattern and how much of `s` it has taken so far.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match pattern.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&p) if p == b'?' || p == s[si] => {
                si += 1;
                pi += 1;
            }
            _ => match star {
                Some((star_pi, star_si)) => {
                    pi = star_pi + 1;
                    si = star_si + 1;
                    star = Some((star_pi, star_si + 1));
                }
                None => return false,
            },
        }
    }
    pattern[pi..].iter().all(|&p| p == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::PrivateKey;
    use ssh_key::private::Ed25519Keypair;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2025-06-01 12:00 UTC);

    fn key(seed: u8) -> PrivateKey {
        PrivateKey::from(Ed25519Keypair::from_seed(&[seed; 32]))
    }

    fn openssh(seed: u8) -> String {
        key(seed)
            .public_key()
            .to_openssh()
            .expect("an ed25519 key encodes")
    }

    fn data(seed: u8) -> KeyData {
        key(seed).public_key().key_data().clone()
    }

    fn admit(text: &str, principal: &str, seed: u8) -> Result<(), Refusal> {
        AllowedSigners::parse(text).admit(principal, &data(seed), "hpp", NOW)
    }

    fn admit_at(text: &str, at: OffsetDateTime) -> Result<(), Refusal> {
        AllowedSigners::parse(text).admit("alice", &data(1), "hpp", at)
    }

    #[test]
    fn control_a_key_not_listed_is_refused() {
        let text = format!("alice {}\n", openssh(1));
        assert_eq!(admit(&text, "alice", 2), Err(Refusal::NoValidSigner));
        assert_eq!(admit(&text, "bob", 1), Err(Refusal::NoValidSigner));
        assert_eq!(admit(&text, "alice", 1), Ok(()));
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let text = format!(
            "\n# a comment\n   \n\t# indented comment\nalice {}\n",
            openssh(1)
        );
        let allowed = AllowedSigners::parse(&text);
        assert_eq!(allowed.len(), 1);
        assert_eq!(allowed.admit("alice", &data(1), "hpp", NOW), Ok(()));
        assert!(AllowedSigners::parse("# only\n\n").is_empty());
    }

    #[test]
    fn a_quoted_principal_list_admits_each_principal() {
        let text = format!("\"alice@x,bob@y\" {} comment here\n", openssh(1));
        assert_eq!(admit(&text, "alice@x", 1), Ok(()));
        assert_eq!(admit(&text, "bob@y", 1), Ok(()));
        assert_eq!(admit(&text, "carol@z", 1), Err(Refusal::NoValidSigner));
    }

    #[test]
    fn an_unterminated_principal_quote_matches_no_one() {
        let text = format!("\"alice,bob {}\n", openssh(1));
        assert_eq!(admit(&text, "alice", 1), Err(Refusal::NoValidSigner));
        let allowed = AllowedSigners::parse(&text);
        assert_eq!(allowed.len(), 1);
    }

    #[test]
    fn wildcards_match_like_openssh() {
        let text = format!("*@example.com,bo? {}\n", openssh(1));
        assert_eq!(admit(&text, "alice@example.com", 1), Ok(()));
        assert_eq!(admit(&text, "bob", 1), Ok(()));
        assert_eq!(admit(&text, "bobby", 1), Err(Refusal::NoValidSigner));
        assert_eq!(
            admit(&text, "alice@example.org", 1),
            Err(Refusal::NoValidSigner)
        );
        assert!(match_pattern(b"abc", b"a*c"));
        assert!(match_pattern(b"ac", b"a*c"));
        assert!(match_pattern(b"abcbc", b"*bc"));
        assert!(!match_pattern(b"abcb", b"*bc"));
        assert!(match_pattern(b"", b"*"));
        assert!(!match_pattern(b"", b"?"));
    }

    #[test]
    fn a_negated_principal_rejects_even_with_a_positive_match() {
        let text = format!("*@example.com,!mallory@example.com {}\n", openssh(1));
        assert_eq!(admit(&text, "alice@example.com", 1), Ok(()));
        assert_eq!(
            admit(&text, "mallory@example.com", 1),
            Err(Refusal::NoValidSigner)
        );
        assert_eq!(
            match_pattern_list("mallory", "!mallory"),
            PatternMatch::Negated
        );
        // A negation alone admits no one: a positive match is needed.
        assert_eq!(match_pattern_list("alice", "!mallory"), PatternMatch::None);
    }

    #[test]
    fn principals_match_case_sensitively() {
        let text = format!("Alice {}\n", openssh(1));
        assert_eq!(admit(&text, "alice", 1), Err(Refusal::NoValidSigner));
    }

    #[test]
    fn namespaces_restrict_the_entry() {
        let git_only = format!("alice namespaces=\"git\" {}\n", openssh(1));
        assert_eq!(
            admit(&git_only, "alice", 1),
            Err(Refusal::NamespaceNotAllowed {
                line: 1,
                namespace: "hpp".into()
            })
        );
        let both = format!("alice NAMESPACES=\"git,h?p\" {}\n", openssh(1));
        assert_eq!(admit(&both, "alice", 1), Ok(()));
        let negated = format!("alice namespaces=\"*,!hpp\" {}\n", openssh(1));
        assert!(matches!(
            admit(&negated, "alice", 1),
            Err(Refusal::NamespaceNotAllowed { .. })
        ));
    }

    #[test]
    fn a_person_is_marked_by_listing_the_person_namespace_by_name() {
        let person = |text: &str| AllowedSigners::parse(text).admit_person("alice", &data(1), NOW);
        assert_eq!(
            person(&format!(
                "alice namespaces=\"hpp,hpp-human\" {}\n",
                openssh(1)
            )),
            Ok(())
        );
        // A pattern admits the namespace to OpenSSH but does not mark a person on purpose.
        assert_eq!(
            person(&format!("alice namespaces=\"hpp*\" {}\n", openssh(1))),
            Err(Refusal::NotAPerson { line: 1 })
        );
    }

    #[test]
    fn control_an_entry_without_the_person_namespace_is_not_a_person() {
        let text = format!("alice {}\n", openssh(1));
        assert_eq!(admit(&text, "alice", 1), Ok(()));
        let refused = AllowedSigners::parse(&text).admit_person("alice", &data(1), NOW);
        assert_eq!(refused, Err(Refusal::NotAPerson { line: 1 }));
        assert!(
            refused
                .unwrap_err()
                .to_string()
                .contains("namespaces=\"hpp-human\"")
        );
    }

    #[test]
    fn namespace_refusal_comes_only_from_the_matching_key() {
        // Another key's restriction says nothing about this signature.
        let text = format!("alice namespaces=\"git\" {}\n", openssh(2));
        assert_eq!(admit(&text, "alice", 1), Err(Refusal::NoValidSigner));
    }

    #[test]
    fn a_later_good_line_wins_over_an_earlier_refused_one() {
        let text = format!(
            "alice namespaces=\"git\" {}\nalice {}\n",
            openssh(1),
            openssh(1)
        );
        assert_eq!(admit(&text, "alice", 1), Ok(()));
    }

    #[test]
    fn valid_after_is_inclusive() {
        let text = format!("alice valid-after=\"20250601120000Z\" {}\n", openssh(1));
        assert_eq!(admit_at(&text, datetime!(2025-06-01 12:00:00 UTC)), Ok(()));
        assert_eq!(
            admit_at(&text, datetime!(2025-06-01 11:59:59 UTC)),
            Err(Refusal::NotYetValid {
                line: 1,
                valid_after: datetime!(2025-06-01 12:00:00 UTC)
            })
        );
        // Fractions of a second do not count, as OpenSSH compares whole seconds.
        assert_eq!(
            admit_at(&text, datetime!(2025-06-01 11:59:59.9 UTC)),
            Err(Refusal::NotYetValid {
                line: 1,
                valid_after: datetime!(2025-06-01 12:00:00 UTC)
            })
        );
    }

    #[test]
    fn valid_before_is_inclusive() {
        let text = format!("alice valid-before=\"202506011200\" {}\n", openssh(1));
        assert_eq!(
            admit_at(&text, datetime!(2025-06-01 12:00:00.5 UTC)),
            Ok(())
        );
        let refused = admit_at(&text, datetime!(2025-06-01 12:00:01 UTC));
        assert_eq!(
            refused,
            Err(Refusal::Expired {
                line: 1,
                valid_before: datetime!(2025-06-01 12:00 UTC)
            })
        );
        assert_eq!(
            refused.expect_err("expired").to_string(),
            "the allowed-signers entry on line 1 expired at 2025-06-01T12:00:00Z"
        );
    }

    #[test]
    fn a_window_admits_only_inside_it() {
        let text = format!(
            "alice valid-after=\"20200101\",valid-before=\"20210101Z\" {}\n",
            openssh(1)
        );
        assert_eq!(admit_at(&text, datetime!(2020-06-01 0:00 UTC)), Ok(()));
        assert!(matches!(
            admit_at(&text, datetime!(2019-12-31 23:59:59 UTC)),
            Err(Refusal::NotYetValid { .. })
        ));
        assert!(matches!(
            admit_at(&text, datetime!(2021-01-01 0:00:01 UTC)),
            Err(Refusal::Expired { .. })
        ));
    }

    #[test]
    fn times_parse_like_openssh() {
        assert_eq!(parse_time("20200101"), Some(datetime!(2020-01-01 0:00 UTC)));
        assert_eq!(
            parse_time("20200101z"),
            Some(datetime!(2020-01-01 0:00 UTC))
        );
        assert_eq!(
            parse_time("202001011234UTC"),
            Some(datetime!(2020-01-01 12:34 UTC))
        );
        assert_eq!(
            parse_time("20200101123456Z"),
            Some(datetime!(2020-01-01 12:34:56 UTC))
        );
        for bad in [
            "",
            "Z",
            "2020010",
            "2020-01-01",
            "202001011",
            "20201301",
            "20200230",
            "20200101246000",
            "19700101Z",
            "1970010100000Z",
            "+0200101",
        ] {
            assert_eq!(parse_time(bad), None, "{bad:?} must not parse");
        }
    }

    #[test]
    fn option_values_must_be_quoted() {
        let text = format!("alice valid-after=20200101 {}\n", openssh(1));
        assert_eq!(
            admit(&text, "alice", 1),
            Err(Refusal::Malformed {
                line: 1,
                problem: LineProblem::MissingStartQuote {
                    option: "valid-after"
                }
            })
        );
    }

    #[test]
    fn malformed_options_are_reported_for_their_principal() {
        let cases = [
            (
                "namespaces=\"hpp\",namespaces=\"git\"",
                LineProblem::Repeated {
                    option: "namespaces",
                },
            ),
            ("namespaces=\"hpp", LineProblem::UnterminatedOptions),
            ("namespaces=\"hpp\",", LineProblem::UnexpectedEndOfOptions),
            (
                "cert-authorityX",
                LineProblem::UnknownOption { option: "X".into() },
            ),
            (
                "valid-before=\"2020\"",
                LineProblem::InvalidTime {
                    option: "valid-before",
                    value: "2020".into(),
                },
            ),
            (
                "valid-after=\"20210101\",valid-before=\"20200101\"",
                LineProblem::BeforeNotAfterAfter,
            ),
            (
                "valid-after=\"20200101\",valid-before=\"20200101\"",
                LineProblem::BeforeNotAfterAfter,
            ),
        ];
        for (options, problem) in cases {
            let text = format!("alice {options} {}\n", openssh(1));
            assert_eq!(
                admit(&text, "alice", 1),
                Err(Refusal::Malformed { line: 1, problem }),
                "options {options}"
            );
        }
    }

    #[test]
    fn an_unknown_option_hurts_only_its_own_principal() {
        let text = format!(
            "mallory no-touch-required {}\nalice {}\nbob no-touch-required {}\n",
            openssh(2),
            openssh(1),
            openssh(3)
        );
        assert_eq!(admit(&text, "alice", 1), Ok(()));
        let refused = admit(&text, "bob", 3).expect_err("bob's line is malformed");
        assert_eq!(
            refused,
            Refusal::Malformed {
                line: 3,
                problem: LineProblem::UnknownOption {
                    option: "no-touch-required".into()
                }
            }
        );
        assert_eq!(
            refused.to_string(),
            "line 3 of the allowed-signers file is malformed: unknown option \"no-touch-required\""
        );
    }

    #[test]
    fn a_malformed_line_does_not_hide_a_good_one_for_the_same_principal() {
        let text = format!("alice bogus {}\nalice {}\n", openssh(1), openssh(1));
        assert_eq!(admit(&text, "alice", 1), Ok(()));
    }

    #[test]
    fn missing_or_broken_keys_make_the_line_malformed() {
        let cases = [
            ("alice", LineProblem::MissingKey),
            ("alice namespaces=\"hpp\"", LineProblem::MissingKey),
            ("alice ssh-ed25519", LineProblem::InvalidKey),
            ("alice ssh-ed25519 AAAAnotbase64!!", LineProblem::InvalidKey),
            (
                "alice namespaces=\"hpp\" ssh-ed25519 AAAA",
                LineProblem::InvalidKey,
            ),
        ];
        for (line, problem) in cases {
            assert_eq!(
                admit(line, "alice", 1),
                Err(Refusal::Malformed { line: 1, problem }),
                "line {line}"
            );
        }
    }

    #[test]
    fn an_option_value_with_an_at_sign_is_not_taken_for_a_key() {
        let text = format!("alice namespaces=\"hpp@example\" {}\n", openssh(1));
        assert!(matches!(
            admit(&text, "alice", 1),
            Err(Refusal::NamespaceNotAllowed { .. })
        ));
        let quoted = format!("alice namespaces=\"a\\\"b,hpp\" {}\n", openssh(1));
        assert_eq!(admit(&quoted, "alice", 1), Ok(()));
    }

    #[test]
    fn cert_authority_entries_are_refused() {
        let text = format!("alice cert-authority {}\n", openssh(1));
        let refused = admit(&text, "alice", 1).expect_err("cert-authority is unsupported");
        assert_eq!(refused, Refusal::CertAuthority { line: 1 });
        assert_eq!(
            refused.to_string(),
            "cert-authority entries are not supported"
        );
        let upper = format!("alice CERT-AUTHORITY,namespaces=\"hpp\" {}\n", openssh(1));
        assert_eq!(
            admit(&upper, "alice", 2),
            Err(Refusal::CertAuthority { line: 1 })
        );
    }

    #[test]
    fn the_most_specific_refusal_wins() {
        let text = format!(
            "alice cert-authority {}\nalice bogus {}\nalice valid-before=\"20200101Z\" {}\n",
            openssh(9),
            openssh(9),
            openssh(1)
        );
        assert!(matches!(
            admit(&text, "alice", 1),
            Err(Refusal::Expired { line: 3, .. })
        ));
        assert!(matches!(
            admit(&text, "alice", 2),
            Err(Refusal::Malformed { line: 2, .. })
        ));
    }

    #[test]
    fn tabs_and_extra_spaces_separate_fields() {
        let key = openssh(1);
        let (algorithm, base64) = key.split_once(' ').expect("two fields");
        let text =
            format!("  alice\t namespaces=\"hpp\"\t{algorithm}   {base64}  trailing comment\r\n");
        assert_eq!(admit(&text, "alice", 1), Ok(()));
    }

    #[test]
    fn load_names_a_missing_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("allowed_signers");
        let err = AllowedSigners::load(&path).expect_err("the file is missing");
        assert_eq!(
            err.to_string(),
            format!("allowed signers file not found: {}", path.display())
        );
        std::fs::write(&path, format!("alice {}\n", openssh(1))).expect("writable");
        let allowed = AllowedSigners::load(&path).expect("the file exists");
        assert_eq!(allowed.admit("alice", &data(1), "hpp", NOW), Ok(()));
    }
}
