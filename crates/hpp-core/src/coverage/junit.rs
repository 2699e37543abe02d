//! The JUnit XML reader: every `testcase` of a pytest or nextest report with its outcome,
//! refusing what cannot be read truthfully (another encoding, a DOCTYPE or ENTITY declaration,
//! XML that is not well-formed, a root that is not a test suite).

use std::sync::LazyLock;

use quick_xml::events::Event;
use regex::Regex;

use super::{CaseOutcome, Error, TestCase};

static XML_DECLARATIONS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<!\s*(?:DOCTYPE|ENTITY)").expect("the declaration pattern compiles")
});
static DECLARED_ENCODING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']"#)
        .expect("the encoding pattern compiles")
});

/// Reads every `testcase` of a JUnit XML report, in document order, with its outcome: `failed`
/// (a `failure` child), `error`, `skipped`, or `passed` when it has none of them.
///
/// Refused: bytes that are not UTF-8 or hold a NUL, another declared encoding, any DOCTYPE or
/// ENTITY declaration, XML that is not well-formed, a root other than `testsuites` or
/// `testsuite`, and a `testcase` without a name.
pub fn read_junit(bytes: &[u8]) -> Result<Vec<TestCase>, Error> {
    let text = std::str::from_utf8(bytes).map_err(|_| Error::JunitNotUtf8)?;
    if text.contains('\0') {
        return Err(Error::JunitNotUtf8);
    }
    if XML_DECLARATIONS.is_match(text) {
        return Err(Error::JunitDeclaration);
    }
    let head: String = text.chars().take(400).collect();
    if let Some(declared) = DECLARED_ENCODING.captures(&head).and_then(|c| c.get(1)) {
        let encoding = declared.as_str().trim().to_lowercase().replace('_', "-");
        if encoding != "utf-8" && encoding != "utf8" {
            return Err(Error::JunitEncoding(declared.as_str().to_owned()));
        }
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let xml = |reason: &dyn std::fmt::Display| Error::JunitXml(reason.to_string());
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_comments = true;
    // The open elements, each with the index of its case when it is a `testcase`.
    let mut open: Vec<(String, Option<usize>)> = Vec::new();
    let mut cases: Vec<TestCase> = Vec::new();
    let mut root_closed = false;
    let mut seen_root = false;
    loop {
        let event = reader.read_event().map_err(|e| xml(&e))?;
        match event {
            Event::Start(ref element) | Event::Empty(ref element) => {
                if root_closed {
                    return Err(xml(&"junk after document element"));
                }
                let tag = element.name().as_ref().to_owned();
                if !seen_root {
                    seen_root = true;
                    if tag != "testsuites" && tag != "testsuite" {
                        return Err(Error::JunitRoot(tag));
                    }
                }
                if let Some((_, Some(parent))) = open.last() {
                    let outcome = match tag.as_str() {
                        "failure" => Some(CaseOutcome::Failed),
                        "error" => Some(CaseOutcome::Error),
                        "skipped" => Some(CaseOutcome::Skipped),
                        _ => None,
                    };
                    let case = &mut cases[*parent];
                    // failure outranks error, error outranks skipped, whatever their order.
                    if let Some(outcome) = outcome
                        && (case.outcome == CaseOutcome::Passed || outcome < case.outcome)
                    {
                        case.outcome = outcome;
                    }
                }
                let mut case_index = None;
                if tag == "testcase" {
                    let mut classname = String::new();
                    let mut name = String::new();
                    for attribute in element.attributes() {
                        let attribute = attribute.map_err(|e| xml(&e))?;
                        let value = attribute
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .map_err(|e| xml(&e))?;
                        match attribute.key.as_ref() {
                            "name" => name = value.into_owned(),
                            "classname" => classname = value.into_owned(),
                            _ => {}
                        }
                    }
                    if name.is_empty() {
                        return Err(Error::JunitNameless);
                    }
                    cases.push(TestCase {
                        classname,
                        name,
                        outcome: CaseOutcome::Passed,
                    });
                    case_index = Some(cases.len() - 1);
                }
                if matches!(event, Event::Start(_)) {
                    open.push((tag, case_index));
                } else if open.is_empty() {
                    root_closed = true;
                }
            }
            Event::End(_) => {
                open.pop();
                if open.is_empty() {
                    root_closed = true;
                }
            }
            Event::Text(ref content) => {
                let outside = open.is_empty();
                if outside && !content.as_ref().trim().is_empty() {
                    return Err(xml(&"text outside the document element"));
                }
            }
            Event::CData(_) if open.is_empty() => {
                return Err(xml(&"text outside the document element"));
            }
            Event::GeneralRef(ref reference) => {
                if open.is_empty() {
                    return Err(xml(&"text outside the document element"));
                }
                let known = if reference.is_char_ref() {
                    reference.resolve_char_ref().map_err(|e| xml(&e))?.is_some()
                } else {
                    quick_xml::escape::resolve_predefined_entity(reference).is_some()
                };
                if !known {
                    return Err(xml(&format!("undefined entity &{};", &**reference)));
                }
            }
            Event::DocType(_) => return Err(Error::JunitDeclaration),
            Event::Eof => break,
            Event::CData(_) | Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
        }
    }
    if !seen_root {
        return Err(xml(&"no element found"));
    }
    if let Some((tag, _)) = open.last() {
        return Err(xml(&format!("unclosed element <{tag}>")));
    }
    Ok(cases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn junit_outcomes_come_from_child_tags() {
        let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="s">
  <testcase classname="m" name="a &amp; b"/>
  <testcase classname="m" name="f"><system-out>x</system-out><failure message="no"/></testcase>
  <testcase classname="m" name="e"><error/></testcase>
  <testcase classname="m" name="s"><skipped/></testcase>
</testsuite></testsuites>"#;
        let cases = read_junit(xml).expect("reads");
        let outcomes: Vec<(&str, CaseOutcome)> =
            cases.iter().map(|c| (c.name.as_str(), c.outcome)).collect();
        assert_eq!(
            outcomes,
            [
                ("a & b", CaseOutcome::Passed),
                ("f", CaseOutcome::Failed),
                ("e", CaseOutcome::Error),
                ("s", CaseOutcome::Skipped)
            ]
        );
    }

    #[test]
    fn control_hostile_or_broken_reports_are_refused() {
        let refusals: [(&[u8], &str); 8] = [
            (
                b"<!DOCTYPE x [<!ENTITY a \"b\">]><testsuite/>",
                "a JUnit report with a DOCTYPE or ENTITY declaration is refused",
            ),
            (
                b"<testsuite>\xff</testsuite>",
                "a JUnit report must be UTF-8",
            ),
            (
                b"<?xml version='1.0' encoding='latin-1'?><testsuite/>",
                "a JUnit report must be UTF-8, this one declares 'latin-1'",
            ),
            (
                b"<report/>",
                "not a JUnit report: the root element is <report>",
            ),
            (
                b"<testsuite><testcase/></testsuite>",
                "a JUnit testcase has no name",
            ),
            (
                b"<testsuite><testcase name='a'></testsuite>",
                "the JUnit report is not valid XML",
            ),
            (
                b"<testsuite/><testsuite/>",
                "the JUnit report is not valid XML",
            ),
            (
                b"<testsuite>&bogus;</testsuite>",
                "the JUnit report is not valid XML",
            ),
        ];
        for (bytes, message) in refusals {
            let error = read_junit(bytes).expect_err("refused").to_string();
            assert!(error.starts_with(message), "{error}");
        }
    }

    proptest! {
        #[test]
        fn no_report_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = read_junit(&bytes);
        }

        #[test]
        fn no_xml_shaped_report_panics(text in "[<>/a-z =\"'&;!?\\[\\]-]{0,120}") {
            let _ = read_junit(format!("<testsuite>{text}</testsuite>").as_bytes());
        }
    }
}
