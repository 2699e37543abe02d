//! The settings `git -c key=value` hands a command it runs: git passes them in
//! `GIT_CONFIG_PARAMETERS`, which gix does not read (it reads `GIT_CONFIG_COUNT`), so a
//! `git -c hpp.requireSigned=true hpp verify` would otherwise run as if it were never said.
//!
//! The variable is a space-separated list of shell-quoted strings (git's `sq_quote`: the text
//! in single quotes, a `'` or `!` in it written as `'\''` or `'\!'`). Since git 2.31 each
//! setting is `'key'='value'`, or `'key'` alone for a key with no value (true); before, one
//! string `'key=value'`. A list that does not parse is refused, as git refuses it: a setting
//! that cannot be read may be the one that makes a check strict.

/// One setting: the key, and its value (`None`: given with no value, true).
pub type Parameter = (String, Option<String>);

/// Parses `GIT_CONFIG_PARAMETERS`.
///
/// # Errors
///
/// The unparsable text, as a reason.
pub fn parse(text: &str) -> Result<Vec<Parameter>, String> {
    let bogus = || format!("bogus format in GIT_CONFIG_PARAMETERS: {text:?}");
    let mut rest = text.as_bytes();
    let mut out = Vec::new();
    loop {
        rest = rest.trim_ascii_start();
        if rest.is_empty() {
            return Ok(out);
        }
        let key = dequote(&mut rest).ok_or_else(bogus)?;
        if let Some(after) = rest.strip_prefix(b"=") {
            rest = after;
            let value = if rest.first() == Some(&b'\'') {
                dequote(&mut rest).ok_or_else(bogus)?
            } else {
                String::new()
            };
            out.push((key, Some(value)));
        } else {
            // The older form: `'key=value'` in one string, or a key alone.
            out.push(match key.split_once('=') {
                Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
                None => (key, None),
            });
        }
        if !rest.is_empty() && !rest[0].is_ascii_whitespace() {
            return Err(bogus());
        }
    }
}

/// Reads one shell-quoted string from the start of `rest` and advances past it.
fn dequote(rest: &mut &[u8]) -> Option<String> {
    let mut bytes = rest.strip_prefix(b"'")?;
    let mut out = Vec::new();
    loop {
        let end = bytes.iter().position(|&b| b == b'\'')?;
        out.extend_from_slice(&bytes[..end]);
        bytes = &bytes[end + 1..];
        // `'\''` and `'\!'`: a quote or a bang, and the quoting goes on.
        match bytes {
            [b'\\', c @ (b'\'' | b'!'), b'\'', tail @ ..] => {
                out.push(*c);
                bytes = tail;
            }
            _ => break,
        }
    }
    *rest = bytes;
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_git_writes_are_read() {
        assert_eq!(
            parse("'hpp.requireSigned'='true' 'core.x'"),
            Ok(vec![
                ("hpp.requireSigned".into(), Some("true".into())),
                ("core.x".into(), None),
            ])
        );
        assert_eq!(
            parse(" 'hpp.trustRoot=SHA256:a=b' "),
            Ok(vec![("hpp.trustRoot".into(), Some("SHA256:a=b".into()))])
        );
        assert_eq!(
            parse(r"'a.b'='it'\''s'\!''"),
            Ok(vec![("a.b".into(), Some("it's!".into()))])
        );
        assert_eq!(parse(""), Ok(vec![]));
    }

    #[test]
    fn control_text_git_would_refuse_is_refused() {
        for bad in ["hpp.requireSigned=true", "'open", "'a.b'='x'y", "'a.b'x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
