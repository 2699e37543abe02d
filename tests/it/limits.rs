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
