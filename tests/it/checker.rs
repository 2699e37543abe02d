//! `git hpp checker route`: detection of agent CLIs on PATH, with plain executable scripts
//! placed in a temporary directory that is the whole PATH.

use std::path::Path;

use serde_json::Value;

use crate::harness::{Run, Sandbox};

/// A sandbox (no repository: routing needs none) whose PATH is a directory holding `clis`.
fn with_clis(clis: &[&str]) -> Sandbox {
    let mut sandbox = Sandbox::empty();
    let bin = sandbox.path("fake-bin");
    std::fs::create_dir_all(&bin).expect("writable");
    for cli in clis {
        write_script(&bin.join(cli), true);
    }
    sandbox
        .env
        .insert("PATH".into(), bin.to_string_lossy().into_owned());
    sandbox
}

fn write_script(path: &Path, executable: bool) {
    std::fs::write(path, "#!/bin/sh\nexit 0\n").expect("writable");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
}

fn route(sandbox: &Sandbox, args: &[&str]) -> Run {
    let mut argv = vec!["checker", "route", "--json"];
    argv.extend(args);
    sandbox.hpp_in(&sandbox.root, &argv)
}

#[test]
fn the_first_preferred_provider_other_than_the_maker_is_the_checker() {
    let sandbox = with_clis(&["claude", "codex", "gemini"]);
    let out = route(&sandbox, &["--maker", "claude"]).json(0);
    assert_eq!(out["status"], "ok");
    assert_eq!(out["maker"], "claude");
    assert_eq!(out["checker"], "codex");
    assert_eq!(out["command"], "codex");
    assert_eq!(
        out["available"],
        serde_json::json!(["codex", "gemini", "claude"])
    );
    assert!(out["note"].as_str().is_some_and(|n| !n.is_empty()));
    let out = route(&sandbox, &["--maker", "codex"]).json(0);
    assert_eq!(out["checker"], "gemini");
    let out = route(&sandbox, &["--maker", "codex", "--prefer", "claude,gemini"]).json(0);
    assert_eq!(out["checker"], "claude");
}

#[test]
fn cursor_is_found_under_any_of_its_command_names() {
    let sandbox = with_clis(&["cursor-agent"]);
    let out = route(&sandbox, &["--maker", "claude"]).json(0);
    assert_eq!(out["checker"], "cursor");
    assert_eq!(out["command"], "cursor-agent");
    let sandbox = with_clis(&["agent"]);
    assert_eq!(
        route(&sandbox, &["--maker", "gemini"]).json(0)["command"],
        "agent"
    );
}

#[test]
fn control_only_the_maker_s_own_cli_finds_no_checker() {
    let sandbox = with_clis(&["claude"]);
    let out = route(&sandbox, &["--maker", "claude"]).json(1);
    assert_eq!(out["status"], "warn");
    assert_eq!(out["checker"], Value::Null);
    assert_eq!(out["available"], serde_json::json!(["claude"]));
    let out = route(&sandbox, &["--maker", "claude", "--require"]).json(2);
    assert_eq!(out["status"], "warn");
}

#[test]
fn a_file_that_is_not_executable_is_not_a_cli() {
    let sandbox = with_clis(&["claude"]);
    let bin = sandbox.path("fake-bin");
    write_script(&bin.join("codex"), false);
    route(&sandbox, &["--maker", "claude"]).json(1);
    write_script(&bin.join("codex"), true);
    route(&sandbox, &["--maker", "claude"]).json(0);
}

#[test]
fn an_unknown_provider_is_a_usage_error() {
    let sandbox = with_clis(&["codex"]);
    let run = route(&sandbox, &["--maker", "grok"]).exit(3);
    assert!(run.stderr.contains("unknown provider \"grok\""), "{run}");
    let run = route(&sandbox, &["--prefer", "codex,copilot"]).exit(3);
    assert!(run.stderr.contains("unknown provider \"copilot\""), "{run}");
}

#[test]
fn without_json_it_prints_one_line() {
    let sandbox = with_clis(&["gemini"]);
    let out = sandbox
        .hpp_in(&sandbox.root, &["checker", "route", "--maker", "claude"])
        .ok();
    assert_eq!(out, "checker: gemini (gemini) for maker claude\n");
}
