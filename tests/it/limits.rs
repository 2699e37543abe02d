//! Bounded input: every input read whole has a documented cap, refused (exit 2) before it is
//! read whole, so memory stays bounded whatever a command is fed.

use crate::harness::{Run, Sandbox};

/// A JSON array of `n` tiny objects, the shape that costs the most memory per byte once parsed.
fn tiny_objects(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id":"n{i}","x":1}}"#))
        .collect();
    format!("[{}]", items.join(","))
}

/// Runs `git-hpp args` with its data segment (heap) limited to 100 MiB.
fn within_100_mib(sandbox: &Sandbox, args: &str) -> Run {
    let script = format!("ulimit -d 102400 && exec git-hpp {args}");
    let out = sandbox
        .command("sh", &sandbox.root)
        .args(["-c", &script])
        .output()
        .expect("sh runs");
    Run::from_output(&out)
}

#[test]
fn a_ten_megabyte_json_document_is_refused_within_100_mib() {
    let sandbox = Sandbox::repo();
    let big = sandbox.path("big.json");
    std::fs::write(&big, tiny_objects(600_000)).expect("writable");
    assert!(std::fs::metadata(&big).expect("written").len() > 10_000_000);
    let run = within_100_mib(&sandbox, &format!("map lane '{}'", big.display()));
    let reason = run.refused();
    assert!(
        reason.contains("is larger than 2 MiB, its cap: refused before reading it whole"),
        "{reason}"
    );
}

#[test]
fn control_a_document_under_the_cap_is_parsed_within_100_mib() {
    let sandbox = Sandbox::repo();
    let file = sandbox.path("under.json");
    std::fs::write(&file, tiny_objects(70_000)).expect("writable");
    assert!(std::fs::metadata(&file).expect("written").len() < 2 << 20);
    // Parsed whole and judged on its content: the first lane has no territory.
    let reason = within_100_mib(&sandbox, &format!("map lane '{}'", file.display())).refused();
    assert!(
        reason.contains("lane n0 needs non-empty territory"),
        "{reason}"
    );
}

#[test]
fn endless_hook_input_is_refused_at_its_cap() {
    let sandbox = Sandbox::repo();
    let script = "head -c 100000000 /dev/zero | git-hpp policy hook --host claude-code";
    let out = sandbox
        .command("sh", &sandbox.root)
        .args(["-c", &format!("ulimit -d 102400 && {script}")])
        .output()
        .expect("sh runs");
    let reason = Run::from_output(&out).refused();
    assert!(
        reason.contains("the hook input on stdin is larger than 4 MiB"),
        "{reason}"
    );
}

#[test]
fn control_a_bad_push_line_is_shown_cut_to_one_readable_line() {
    let sandbox = Sandbox::repo();
    let line = "x ".repeat(5_000);
    let out = sandbox
        .command("sh", &sandbox.root)
        .args([
            "-c",
            &format!("printf '%s\\n' '{line}' | git-hpp hook pre-push origin url"),
        ])
        .output()
        .expect("sh runs");
    let reason = Run::from_output(&out).refused();
    assert!(
        reason.starts_with("unexpected pre-push input line: "),
        "{reason}"
    );
    assert!(reason.chars().count() < 200, "{} characters", reason.len());
}

#[test]
fn a_ten_megabyte_citation_context_is_refused_within_100_mib() {
    let sandbox = Sandbox::repo();
    let text = sandbox.path("text.md");
    std::fs::write(&text, "The tool greets [ID:n0].\n").expect("writable");
    let big = sandbox.path("context.json");
    std::fs::write(&big, tiny_objects(600_000)).expect("writable");
    assert!(std::fs::metadata(&big).expect("written").len() > 10_000_000);
    let args = format!(
        "cite check --text '{}' --context '{}'",
        text.display(),
        big.display()
    );
    let reason = within_100_mib(&sandbox, &args).refused();
    assert!(
        reason.contains("context file")
            && reason.contains("is larger than 2 MiB, its cap: refused before reading it whole"),
        "{reason}"
    );
    // Under the cap, the same context is read and judged.
    let small = sandbox.path("small.json");
    std::fs::write(&small, r#"[{"id":"n0","text":"The tool greets."}]"#).expect("writable");
    let args = format!(
        "cite check --text '{}' --context '{}'",
        text.display(),
        small.display()
    );
    let run = within_100_mib(&sandbox, &args);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("hpp.citation-check/v1"), "{run}");
}

/// A hash-chained tick log of `n` events, each holding an array of `items` ones in its data:
/// the shape of event that costs the most memory per byte once parsed.
fn heavy_ticks(n: usize, items: usize) -> String {
    let ones = vec!["1"; items].join(",");
    let mut prev = crate::harness::sha256_hex(b"");
    let mut log = String::new();
    for seq in 1..=n {
        let line = format!(
            r#"{{"data":{{"xs":[{ones}]}},"id":"event:{seq}","prev_sha256":"{prev}","seq":{seq},"type":"tick"}}"#
        );
        prev = crate::harness::sha256_hex(line.as_bytes());
        log.push_str(&line);
        log.push('\n');
    }
    log
}

/// Runs `event import` of `log` into loop `heavy` on the tick manifest, within 100 MiB.
fn import_within_100_mib(sandbox: &Sandbox, log: &str) -> Run {
    let manifest = sandbox.path("ticks.json");
    std::fs::write(&manifest, crate::harness::TICKS).expect("writable");
    let file = sandbox.path("heavy.jsonl");
    std::fs::write(&file, log).expect("writable");
    let args = format!(
        "--manifest '{}' event import '{}' --loop heavy",
        manifest.display(),
        file.display()
    );
    within_100_mib(sandbox, &args)
}

#[test]
fn control_an_event_line_over_two_mebibytes_is_refused_before_it_is_parsed() {
    let sandbox = Sandbox::repo();
    let log = heavy_ticks(1, 5_000_000);
    assert!(log.len() > 10_000_000);
    let reason = import_within_100_mib(&sandbox, &log).refused();
    assert!(
        reason.contains("line 1 is") && reason.contains("an event is at most 2 MiB"),
        "{reason}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
}

#[test]
fn an_event_line_just_under_the_cap_imports() {
    let sandbox = Sandbox::repo();
    let log = heavy_ticks(1, 1_000_000);
    assert!(
        log.len() > 2_000_000 && log.len() < 2 << 20,
        "{}",
        log.len()
    );
    let manifest = sandbox.path("ticks.json");
    std::fs::write(&manifest, crate::harness::TICKS).expect("writable");
    let file = sandbox.path("heavy.jsonl");
    std::fs::write(&file, log).expect("writable");
    sandbox
        .hpp([
            "--manifest",
            manifest.to_str().expect("UTF-8"),
            "event",
            "import",
            file.to_str().expect("UTF-8"),
            "--loop",
            "heavy",
        ])
        .ok();
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/loops/heavy"]),
        "1"
    );
}
