//! `git hpp gotcha record|list|preamble`: failures and gotchas in refs/hpp/gotchas/.

use crate::harness::Sandbox;

fn record(sandbox: &Sandbox, task: &str, message: &str, at: &str) -> serde_json::Value {
    sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "gotcha",
                "record",
                "--task",
                task,
                "--message",
                message,
                "--at",
                at,
                "--json",
            ],
        )
        .json(0)
}

const TIMEOUT: &str = "error: connection reset by peer while fetching crates";

#[test]
fn the_third_failure_within_24_hours_promotes_a_gotcha() {
    let sandbox = Sandbox::repo();
    let first = record(&sandbox, "cargo build", TIMEOUT, "2026-01-01T00:00:00Z");
    assert_eq!(first["failure"]["family"], "transient");
    assert_eq!(first["failure"]["priority"], 40);
    assert_eq!(first["failure"]["strategy"], "retry");
    assert_eq!(first["promoted"], serde_json::Value::Null);
    record(&sandbox, "cargo build", TIMEOUT, "2026-01-01T05:00:00Z");
    assert_eq!(sandbox.hpp(["gotcha", "preamble"]).ok(), "");
    let third = record(&sandbox, "cargo build", TIMEOUT, "2026-01-01T23:00:00Z");
    assert_eq!(third["promoted"]["occurrences"], 3);
    assert_eq!(third["promoted"]["first_at"], "2026-01-01T00:00:00Z");

    // A fourth failure counts, but promotes nothing new.
    let fourth = record(&sandbox, "cargo build", TIMEOUT, "2026-01-02T01:00:00Z");
    assert_eq!(fourth["promoted"], serde_json::Value::Null);
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/gotchas/promoted"]),
        "1"
    );
    let listed = sandbox.hpp(["gotcha", "list", "--json"]).json(0);
    assert_eq!(listed["gotchas"][0]["occurrences"], 4);
    assert_eq!(listed["gotchas"][0]["last_at"], "2026-01-02T01:00:00Z");

    let preamble = sandbox
        .hpp(["gotcha", "preamble", "--task", "cargo build"])
        .ok();
    assert!(
        preamble
            .contains("1. [transient · 4x · strategy retry] cargo build: error: connection reset"),
        "{preamble}"
    );
    assert_eq!(
        sandbox.hpp(["gotcha", "preamble", "--task", "other"]).ok(),
        ""
    );
}

#[test]
fn failures_spread_beyond_the_window_or_across_families_do_not_promote() {
    let sandbox = Sandbox::repo();
    record(&sandbox, "deploy", TIMEOUT, "2026-01-01T00:00:00Z");
    record(&sandbox, "deploy", TIMEOUT, "2026-01-01T12:00:00Z");
    record(
        &sandbox,
        "deploy",
        "bash: kubectl: command not found",
        "2026-01-01T13:00:00Z",
    );
    let late = record(&sandbox, "deploy", TIMEOUT, "2026-01-02T06:00:00Z");
    assert_eq!(
        late["promoted"],
        serde_json::Value::Null,
        "only two fall within 24 h"
    );
    assert_eq!(sandbox.hpp(["gotcha", "list"]).ok(), "no gotcha recorded\n");
    let failures = sandbox
        .hpp(["gotcha", "list", "--failures", "--json"])
        .json(0);
    assert_eq!(failures["failures"].as_array().map(Vec::len), Some(4));
}

#[test]
fn the_recurrence_rule_is_configurable_in_git_config() {
    let sandbox = Sandbox::repo();
    sandbox.git(["config", "hpp.gotcha.minCount", "2"]);
    sandbox.git(["config", "hpp.gotcha.windowHours", "1"]);
    record(&sandbox, "t", TIMEOUT, "2026-01-01T00:00:00Z");
    assert_eq!(
        record(&sandbox, "t", TIMEOUT, "2026-01-01T02:00:00Z")["promoted"],
        serde_json::Value::Null
    );
    let second = record(&sandbox, "t", TIMEOUT, "2026-01-01T02:30:00Z");
    assert_eq!(second["promoted"]["min_count"], 2);
    assert_eq!(second["promoted"]["window_hours"], 1);
    sandbox.git(["config", "hpp.gotcha.minCount", "many"]);
    sandbox
        .hpp(["gotcha", "record", "--task", "t", "--message", "x"])
        .refused();
}

#[test]
fn secrets_are_redacted_before_anything_is_stored() {
    let sandbox = Sandbox::repo();
    let message = "push failed: https://deploy:s3cr3tPassw0rd@git.example.com/r.git \
                   Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345 password=hunter2";
    let recorded = record(&sandbox, "push", message, "2026-01-01T00:00:00Z");
    let stored = recorded["failure"]["message"].as_str().expect("text");
    for secret in [
        "s3cr3tPassw0rd",
        "abcdefghijklmnopqrstuvwxyz012345",
        "hunter2",
    ] {
        assert!(!stored.contains(secret), "{stored}");
    }
    assert!(
        stored.contains("https://[REDACTED:url-credential:21]@git.example.com"),
        "{stored}"
    );
    assert!(stored.contains("[REDACTED:auth-header:"), "{stored}");
    assert!(stored.contains("[REDACTED:assignment:16]"), "{stored}");
    let everything = sandbox.git(["log", "--all", "-p"]);
    for secret in [
        "s3cr3tPassw0rd",
        "abcdefghijklmnopqrstuvwxyz012345",
        "hunter2",
    ] {
        assert!(!everything.contains(secret), "{secret} reached a record");
    }
}

#[test]
fn control_bad_failures_are_refused_and_nothing_is_written() {
    let sandbox = Sandbox::repo();
    let cases: [&[&str]; 4] = [
        &["gotcha", "record", "--task", "", "--message", "x"],
        &[
            "gotcha",
            "record",
            "--task",
            "api_key=abc123",
            "--message",
            "x",
        ],
        &["gotcha", "record", "--task", "t", "--message", " "],
        &[
            "gotcha",
            "record",
            "--task",
            "t",
            "--message",
            "x",
            "--at",
            "yesterday",
        ],
    ];
    for args in cases {
        sandbox.hpp_in(&sandbox.root, args).refused();
    }
    assert_eq!(sandbox.hpp_refs(), "");
}

#[test]
fn gotchas_pushed_to_a_bare_remote_are_read_from_a_clone() {
    let sandbox = Sandbox::repo();
    for at in [
        "2026-01-01T00:00:00Z",
        "2026-01-01T01:00:00Z",
        "2026-01-01T02:00:00Z",
    ] {
        record(&sandbox, "cargo build", TIMEOUT, at);
    }
    let here = sandbox.hpp(["gotcha", "preamble"]).ok();
    assert!(!here.is_empty());
    let remote = sandbox.path("remote.git");
    let remote_s = remote.to_str().expect("utf-8");
    sandbox.git(["init", "-q", "-b", "main", "--bare", remote_s]);
    sandbox.git(["remote", "add", "origin", remote_s]);
    sandbox.git(["push", "-q", "origin", "main"]);
    sandbox.hpp(["push", "origin"]).ok();
    let clone = sandbox.path("clone");
    sandbox.git(["clone", "-q", remote_s, clone.to_str().expect("utf-8")]);
    sandbox.hpp_in(&clone, &["fetch", "origin"]).ok();
    assert_eq!(sandbox.hpp_in(&clone, &["gotcha", "preamble"]).ok(), here);
}
