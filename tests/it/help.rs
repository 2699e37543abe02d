//! The command-line contract: the whole `--help` tree of both binaries, compared with the
//! committed snapshot `tests/it/snapshots/help.txt`, so a changed flag, default or help line
//! shows in review. After an intended change, regenerate it with
//! `HPP_UPDATE_SNAPSHOTS=1 cargo test --test it help`.

use std::path::PathBuf;

use clap::CommandFactory;

/// The width help is rendered at, whatever the terminal.
const WIDTH: usize = 100;

/// Renders `--help` of `command` and every subcommand below it, depth first, each under a
/// `=== <path>` heading.
fn help_tree(command: &mut clap::Command) -> String {
    fn walk(command: &mut clap::Command, path: &str, out: &mut String) {
        command.build();
        out.push_str(&format!("=== {path}\n"));
        out.push_str(&command.render_long_help().to_string());
        let names: Vec<String> = command
            .get_subcommands()
            .map(|s| s.get_name().to_owned())
            .filter(|name| name != "help")
            .collect();
        for name in names {
            let sub = command
                .find_subcommand_mut(&name)
                .expect("a listed subcommand exists");
            walk(sub, &format!("{path} {name}"), out);
        }
    }
    let mut out = String::new();
    let name = command.get_name().to_owned();
    let mut command = command.clone().term_width(WIDTH).max_term_width(WIDTH);
    walk(&mut command, &name, &mut out);
    out
}

fn both_binaries() -> String {
    let mut text = help_tree(&mut git_hpp::cli::command());
    text.push_str(&help_tree(&mut git_hpp::cli::hop::HopCli::command()));
    text
}

fn snapshot() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/snapshots/help.txt")
}

#[test]
fn the_help_of_every_command_matches_the_snapshot() {
    let now = both_binaries();
    if std::env::var_os("HPP_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(snapshot(), &now).expect("the snapshot is writable");
    }
    let kept = std::fs::read_to_string(snapshot()).expect("the snapshot is committed");
    if now != kept {
        let first = now
            .lines()
            .zip(kept.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| now.lines().count().min(kept.lines().count()));
        panic!(
            "the --help tree changed at line {}:\n  now:  {:?}\n  kept: {:?}\nregenerate with HPP_UPDATE_SNAPSHOTS=1 if intended",
            first + 1,
            now.lines().nth(first),
            kept.lines().nth(first)
        );
    }
}

#[test]
fn control_a_changed_flag_changes_the_tree() {
    let mut changed = git_hpp::cli::Cli::command().mut_subcommand("status", |s| {
        s.arg(
            clap::Arg::new("probe")
                .long("probe")
                .help("A flag no one ships"),
        )
    });
    let now = help_tree(&mut changed);
    assert!(
        now.contains("--probe"),
        "the tree renders every subcommand's flags"
    );
    let kept = std::fs::read_to_string(snapshot()).expect("the snapshot is committed");
    assert!(!kept.contains("--probe"));
}

#[test]
fn the_tree_lists_every_top_level_command() {
    let text = both_binaries();
    for path in [
        "=== git-hpp event append",
        "=== git-hpp board select",
        "=== hop land",
    ] {
        assert!(text.contains(path), "{path} is in the tree");
    }
}

#[test]
fn install_man_writes_pages_that_man_renders_and_git_help_opens() {
    let sandbox = crate::harness::Sandbox::repo();
    let dir = sandbox.path("man");
    let out = sandbox
        .hpp_in(
            &sandbox.root,
            &["install-man", dir.to_str().expect("UTF-8"), "--json"],
        )
        .json(0);
    let man1 = dir.join("man1");
    assert_eq!(out["dir"], man1.to_str().expect("UTF-8"));
    for page in [
        "git-hpp.1",
        "git-hpp-event-append.1",
        "git-hpp-fetch.1",
        "hop.1",
    ] {
        let text = std::fs::read_to_string(man1.join(page)).expect("the page is written");
        assert!(text.starts_with(".ie \\n(.g .ds Aq"), "{page} is roff");
    }
    let main = std::fs::read_to_string(man1.join("git-hpp.1")).expect("written");
    assert!(
        main.contains("event append") || main.contains("git\\-hpp\\-event"),
        "{main}"
    );
    // With the pages on MANPATH, `git hpp --help` (git's `git help hpp`) opens ours. Needs
    // man(1); a machine without it is told so instead of failing the test.
    let has_man = std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_man {
        eprintln!("man(1) is not installed: the page itself was checked, not its display");
        return;
    }
    let help = sandbox
        .command("git", &sandbox.root)
        .args(["hpp", "--help"])
        .env("MANPATH", &dir)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("git runs");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.status.success(),
        "{}",
        crate::harness::Run::from_output(&help)
    );
    assert!(text.contains("git-hpp"), "{text}");
    assert!(text.contains("House Party Protocol"), "{text}");
}

#[test]
fn control_without_the_pages_git_help_finds_no_manual() {
    let has_man = std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_man {
        eprintln!("man(1) is not installed: nothing to show");
        return;
    }
    let sandbox = crate::harness::Sandbox::repo();
    let empty = sandbox.path("no-man");
    std::fs::create_dir_all(&empty).expect("writable");
    let help = sandbox
        .command("git", &sandbox.root)
        .args(["hpp", "--help"])
        .env("MANPATH", &empty)
        .env("MANPAGER", "cat")
        .output()
        .expect("git runs");
    assert!(!help.status.success(), "no page, no manual");
}

#[test]
fn completions_are_generated_for_each_shell_and_name_the_commands() {
    let sandbox = crate::harness::Sandbox::repo();
    for (shell, marker) in [
        ("bash", "-o default git-hpp"),
        ("zsh", "#compdef git-hpp"),
        ("fish", "complete -c git-hpp"),
    ] {
        let script = sandbox.hpp_in(&sandbox.root, &["completions", shell]).ok();
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("reconcile"),
            "{shell} completes subcommands"
        );
    }
    let hop = sandbox
        .hpp_in(&sandbox.root, &["completions", "bash", "--hop"])
        .ok();
    assert!(hop.contains("-o default hop"), "{hop}");
    let refused = sandbox.hpp_in(&sandbox.root, &["completions", "tcsh"]);
    assert_eq!(refused.code, 3, "{refused}");
    assert!(refused.stdout.is_empty());
}

#[test]
fn quiet_silences_success_chatter_but_not_json_or_refusals() {
    let sandbox = crate::harness::Sandbox::repo();
    let loud = sandbox.hpp_in(&sandbox.root, &["snapshot"]).ok();
    assert!(!loud.is_empty());
    assert_eq!(sandbox.hpp_in(&sandbox.root, &["-q", "snapshot"]).ok(), "");
    let json = sandbox
        .hpp_in(&sandbox.root, &["status", "-q", "--json"])
        .ok();
    assert!(json.starts_with('{'), "{json}");
    let refused = sandbox
        .hpp_in(&sandbox.root, &["-q", "event", "append", "--type", "bogus"])
        .exit(2);
    assert!(refused.stderr.contains("invalid transition"), "{refused}");
}
