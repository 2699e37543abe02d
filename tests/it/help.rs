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
    let mut text = help_tree(&mut git_hpp::cli::Cli::command());
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
