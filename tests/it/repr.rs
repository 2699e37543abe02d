//! A refusal that quotes a bad value quotes it as the reference does: each command below is fed
//! the inputs `hpp` 2.11.1 was fed (`tests/fixtures/python-harness/repr/`, whose README has the
//! commands) and must print what it printed, byte for byte, with the same exit code. No
//! repository needed.

use assert_fs::prelude::*;
use serde_json::Value;

use crate::harness::Sandbox;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/python-harness/repr"
);
const ANSWER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/citations/answer.md");
const REVIEW: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/house-session/review");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("the fixture exists")
}

/// Each input line, as written (a JSON literal).
fn lines(name: &str) -> Vec<String> {
    fixture(name).lines().map(str::to_owned).collect()
}

/// Feeds each input to `command` (which writes the file the command reads and returns its
/// argv) and returns what the recording holds for the run: stderr, then `[exit N]`.
fn replay(inputs: &str, command: impl Fn(&Sandbox, &str) -> Vec<String>) -> String {
    let sandbox = Sandbox::empty();
    let mut printed = String::new();
    for input in lines(inputs) {
        let argv = command(&sandbox, &input);
        let run = sandbox.hpp_in(
            &sandbox.root,
            &argv.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_eq!(
            run.stdout, "",
            "a refusal prints nothing on stdout: {input}"
        );
        printed.push_str(&run.stderr);
        printed.push_str(&format!("[exit {}]\n", run.code));
    }
    printed
}

fn write(sandbox: &Sandbox, name: &str, text: &str) {
    sandbox
        .child(name)
        .write_str(text)
        .expect("the sandbox is writable");
}

fn argv(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Where `git hpp findings check` names the file it refuses, `hpp` does not: the one difference
/// in these lines, put back before comparing.
fn naming(recorded: &str, file: &str) -> String {
    recorded.replace("hpp: ", &format!("hpp: {file}: "))
}

#[test]
fn a_duplicate_context_id_is_quoted_as_hpp_quoted_it() {
    let printed = replay("strings.jsonl", |sandbox, id| {
        write(sandbox, "context.json", &format!("[{id}, {id}]"));
        argv(&[
            "cite",
            "check",
            "--text",
            ANSWER,
            "--context",
            "context.json",
        ])
    });
    assert_eq!(printed, fixture("cite-duplicate-id.stderr"));
}

#[test]
fn a_turns_seat_is_quoted_as_hpp_quoted_it() {
    let turns: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{REVIEW}/turns.json")).expect("the example exists"),
    )
    .expect("JSON");
    let mut turn = turns[0].clone();
    turn.as_object_mut()
        .expect("a turn is an object")
        .remove("seat");
    let head = turn.to_string();
    let head = head.strip_suffix('}').expect("an object ends in }");
    let panel = format!("{REVIEW}/panel.json");
    let printed = replay("values.jsonl", |sandbox, seat| {
        write(sandbox, "turn.json", &format!("{head}, \"seat\": {seat}}}"));
        argv(&["deliberate", "validate", "turn.json", "--panel", &panel])
    });
    assert_eq!(printed, fixture("deliberate-seat.stderr"));
}

#[test]
fn a_findings_lens_and_undefined_keys_are_quoted_as_hpp_quoted_them() {
    let printed = replay("values.jsonl", |sandbox, lens| {
        let document = format!(r#"{{"schema": "hpp.findings/v1", "lens": {lens}}}"#);
        write(sandbox, "lens.json", &document);
        argv(&["findings", "check", "lens.json"])
    });
    assert_eq!(
        printed,
        naming(&fixture("findings-lens.stderr"), "lens.json")
    );
    let printed = replay("keys.jsonl", |sandbox, document| {
        write(sandbox, "keys.json", document);
        argv(&["findings", "check", "keys.json"])
    });
    assert_eq!(
        printed,
        naming(&fixture("findings-keys.stderr"), "keys.json")
    );
}

#[test]
fn a_units_bad_tier_is_shown_as_hpp_showed_it() {
    let printed = replay("values.jsonl", |sandbox, tier| {
        let spec = format!(r#"{{"work": [{{"id": "a", "tier": {tier}, "acceptance": ["ok"]}}]}}"#);
        write(sandbox, "spec.json", &spec);
        argv(&["work", "plan", "spec.json"])
    });
    assert_eq!(printed, fixture("work-tier.stderr"));
}

#[test]
fn control_a_no_break_space_is_escaped_not_printed_raw() {
    // The citation ruler's old rule escaped only Cc characters, so this went out raw.
    let sandbox = Sandbox::empty();
    write(&sandbox, "context.json", r#"["a\u00a0b", "a\u00a0b"]"#);
    let reason = sandbox
        .hpp([
            "cite",
            "check",
            "--text",
            ANSWER,
            "--context",
            "context.json",
        ])
        .refused();
    assert_eq!(reason, r"duplicate context id: 'a\xa0b'");
    assert!(!reason.contains('\u{a0}'), "{reason:?}");
    assert!(
        fixture("cite-duplicate-id.stderr").contains(&format!("hpp: {reason}\n")),
        "the reference printed the same line"
    );
}
