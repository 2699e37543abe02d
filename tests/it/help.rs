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
    text.push_str(&help_tree(&mut git_hpp::cli::hop::command()));
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

/// Splits an example's command line as a shell would: words, and 'single-quoted' words.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Parses an example with the tree its binary runs (`git hpp ...` or `hop ...`).
fn parses(line: &str) -> Result<(), String> {
    parses_words(line, &shell_words(line))
}

/// Parses `words` (a command line `line` split as a shell would) with the tree its binary runs.
pub(crate) fn parses_words(line: &str, words: &[String]) -> Result<(), String> {
    let words = words.to_vec();
    let (mut command, argv): (clap::Command, Vec<String>) = match words.as_slice() {
        [git, hpp, rest @ ..] if git == "git" && hpp == "hpp" => (
            git_hpp::cli::command(),
            std::iter::once("git-hpp".to_owned())
                .chain(rest.iter().cloned())
                .collect(),
        ),
        [hop, ..] if hop == "hop" => (git_hpp::cli::hop::command(), words.clone()),
        _ => return Err(format!("{line}: neither `git hpp` nor `hop`")),
    };
    command = command.term_width(WIDTH);
    command
        .try_get_matches_from(argv)
        .map(|_| ())
        .map_err(|e| format!("{line}: {e}"))
}

#[test]
fn every_manual_page_has_examples_and_every_example_parses() {
    // Issue 31, item 5: none of the pages had an EXAMPLES section.
    let pages = git_hpp::cli::manual::pages().expect("the pages render");
    let names: Vec<String> = pages
        .iter()
        .map(|(file, _)| file.trim_end_matches(".1").to_owned())
        .collect();
    let mut missing = Vec::new();
    for (file, text) in &pages {
        let text = String::from_utf8_lossy(text);
        if !text.contains(".SH EXAMPLES") {
            missing.push(file.clone());
        }
    }
    assert!(missing.is_empty(), "pages without EXAMPLES: {missing:?}");
    assert!(names.len() > 100, "every subcommand has a page: {names:?}");
    let mut broken = Vec::new();
    for (page, examples) in git_hpp::cli::examples::EXAMPLES {
        assert!(names.iter().any(|n| n == page), "{page}: no such page");
        for (_, line) in *examples {
            if let Err(e) = parses(line) {
                broken.push(e);
            }
        }
    }
    assert!(
        broken.is_empty(),
        "examples that do not parse:\n{}",
        broken.join("\n")
    );
}

#[test]
fn control_an_example_with_a_flag_no_one_ships_does_not_parse() {
    assert!(parses("git hpp status --loop main --json").is_ok());
    assert!(parses("git hpp status --no-such-flag").is_err());
    assert!(parses("git hpp evnt log").is_err());
    assert!(parses("hop land R_7Q2M4K8XRZ3N5T6V9W2C4B0 --no-such-flag").is_err());
    assert!(parses("cargo test").is_err());
}

#[test]
fn the_read_only_examples_run_in_a_repository() {
    // "Examples are real commands": these pages' examples run as printed in a repository
    // with a loop, and succeed (0) or answer "not yet" (1).
    let sandbox = crate::harness::Sandbox::repo().with_identity();
    sandbox.start_work().ok();
    // The second loop the examples name.
    sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "event",
                "append",
                "--loop",
                "item-2",
                "--type",
                "work_started",
                "--work",
                "ITEM-2",
                "--maker",
                "agent-a",
            ],
        )
        .ok();
    let pages = [
        "git-hpp-status",
        "git-hpp-loops",
        "git-hpp-snapshot",
        "git-hpp-event",
        "git-hpp-event-log",
        "git-hpp-event-verify",
        "git-hpp-evidence",
        "git-hpp-evidence-list",
        "git-hpp-hooks",
        "git-hpp-hooks-status",
        "git-hpp-lane",
        "git-hpp-lane-list",
        "git-hpp-completions",
        "git-hpp-resume",
    ];
    let mut ran = 0;
    for page in pages {
        let examples = git_hpp::cli::examples::of(page).expect("the page has examples");
        for (_, line) in examples {
            let words = shell_words(line);
            let args: Vec<&str> = words[2..].iter().map(String::as_str).collect();
            let run = sandbox.hpp_in(&sandbox.root, &args);
            assert!(run.code == 0 || run.code == 1, "{line}:\n{run}");
            ran += 1;
        }
    }
    assert!(ran >= 20, "{ran} examples ran");
}

#[test]
fn help_ends_with_the_examples_when_piped_and_is_the_manual_page_at_a_terminal() {
    // Issue 31, item 5: `git hpp <sub> --help` was not the page. Piped, it is clap's text,
    // which ends with the examples; at a terminal it is the page, as `git commit --help` is.
    let sandbox = crate::harness::Sandbox::repo();
    let piped = sandbox
        .hpp_in(&sandbox.root, &["event", "append", "--help"])
        .ok();
    assert!(piped.contains("Examples:\n"), "{piped}");
    assert!(piped.contains("git hpp event append --type work_started"));
    let short = sandbox
        .hpp_in(&sandbox.root, &["event", "append", "-h"])
        .ok();
    assert!(!short.contains("Examples:"), "-h is the summary: {short}");
    let has = |program: &str, arg: &str| {
        std::process::Command::new(program)
            .arg(arg)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("man", "--version") || !has("script", "--version") {
        eprintln!("SKIPPED the terminal half: man(1) or script(1) is not installed");
        return;
    }
    // script(1) gives the command a terminal; the binary finds its pages beside itself.
    let line = format!("'{}' event append --help", crate::harness::BIN);
    let out = sandbox
        .command("script", &sandbox.root)
        .args(["-qec", &line, "/dev/null"])
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .env("TERM", "dumb")
        .output()
        .expect("script runs");
    // man at a terminal emboldens by overstriking (`N\bN`): read the letters.
    let raw = String::from_utf8_lossy(&out.stdout);
    let mut text = String::new();
    for c in raw.chars() {
        if c == '\u{8}' {
            text.pop();
        } else {
            text.push(c);
        }
    }
    assert!(
        out.status.success(),
        "{}",
        crate::harness::Run::from_output(&out)
    );
    assert!(text.contains("git-hpp-event-append(1)"), "{text}");
    assert!(text.contains("EXAMPLES"), "{text}");
    // hop's commands too (their pages sit beside the binaries, put there by git-hpp).
    let hop = std::path::Path::new(crate::harness::BIN).with_file_name("hop");
    let out = sandbox
        .command("script", &sandbox.root)
        .args([
            "-qec",
            &format!("'{}' land --help", hop.display()),
            "/dev/null",
        ])
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("TERM", "dumb")
        .output()
        .expect("script runs");
    let raw = String::from_utf8_lossy(&out.stdout).replace('\u{8}', "");
    assert!(raw.contains("hop-land(1)"), "{raw}");
}

#[test]
fn git_hpp_help_opens_the_page_after_any_first_command_of_a_fresh_install() {
    // Issue 31, item 5: `git hpp --help` before the tour said "No manual entry for git-hpp".
    // git runs `man git-hpp` itself, before git-hpp starts, so the very first call cannot be
    // answered by the binary; any `git hpp` command puts the pages beside the binary, where
    // man looks (bin/../share/man, from PATH), as `cargo install` leaves it.
    let has_man = std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_man {
        eprintln!("SKIPPED: man(1) is not installed");
        return;
    }
    let sandbox = crate::harness::Sandbox::repo();
    let prefix = sandbox.path("prefix");
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).expect("writable");
    let installed = bin.join("git-hpp");
    if std::fs::hard_link(crate::harness::BIN, &installed).is_err() {
        std::fs::copy(crate::harness::BIN, &installed).expect("the binary copies");
    }
    // Only the system's directories besides: a git-hpp installed on this machine, with its
    // pages, must not answer for the fresh one.
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let help = |sandbox: &crate::harness::Sandbox| {
        let out = sandbox
            .command("git", &sandbox.root)
            .args(["hpp", "--help"])
            .env("PATH", &path)
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .expect("git runs");
        crate::harness::Run::from_output(&out)
    };
    let before = help(&sandbox);
    assert_ne!(before.code, 0, "no page yet: {before}");
    let first = sandbox
        .command("git", &sandbox.root)
        .args(["hpp", "-h"])
        .env("PATH", &path)
        .output()
        .expect("git runs");
    assert!(first.status.success());
    assert!(
        prefix
            .join("share/man/man1/git-hpp-event-append.1")
            .is_file()
    );
    let after = help(&sandbox);
    assert_eq!(after.code, 0, "{after}");
    assert!(after.stdout.contains("git-hpp(1)"), "{after}");
    assert!(after.stdout.contains("EXAMPLES"), "{after}");
}

/// Runs bash with git's own completion and ours loaded, completing `line` as if <TAB> were
/// pressed at its end; returns the candidates, or `None` when git's completion script is not on
/// this machine.
fn complete_in_bash(
    sandbox: &crate::harness::Sandbox,
    script: &str,
    line: &str,
) -> Option<Vec<String>> {
    let git_completion = [
        "/usr/share/bash-completion/completions/git",
        "/usr/share/git/completion/git-completion.bash",
        "/usr/share/git-core/contrib/completion/git-completion.bash",
        "/etc/bash_completion.d/git",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).is_file())?;
    let ours = sandbox.path("git-hpp.bash");
    std::fs::write(&ours, script).expect("writable");
    let driver = format!(
        r#"source '{git_completion}'
source '{}'
COMP_LINE="$1"; COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<<"$1"
[[ "$1" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${{#COMP_WORDS[@]}}-1))
COMPREPLY=()
__git_wrap__git_main
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        ours.display()
    );
    let out = sandbox
        .command("bash", &sandbox.root)
        .args(["--norc", "--noprofile", "-c", &driver, "complete", line])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        crate::harness::Run::from_output(&out)
    );
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim_end().to_owned())
            .filter(|l| !l.is_empty())
            .collect(),
    )
}

#[test]
fn git_hpp_tab_completes_through_gits_own_bash_completion() {
    // Issue 31, item 5: `git hpp ev<TAB>` completed nothing: git's completion calls
    // `_git_hpp`, which nobody defined.
    let sandbox = crate::harness::Sandbox::repo();
    let script = sandbox.hpp_in(&sandbox.root, &["completions", "bash"]).ok();
    let Some(words) = complete_in_bash(&sandbox, &script, "git hpp ev") else {
        eprintln!("SKIPPED: git's bash completion script is not installed here");
        return;
    };
    assert!(words.contains(&"event".to_owned()), "{words:?}");
    assert!(words.contains(&"evidence".to_owned()), "{words:?}");
    let nested = complete_in_bash(&sandbox, &script, "git hpp event ap").expect("found before");
    assert_eq!(nested, ["append"]);
    let flag =
        complete_in_bash(&sandbox, &script, "git hpp event append --ty").expect("found before");
    assert_eq!(flag, ["--type"]);
    let direct = complete_in_bash(&sandbox, &script, "git -C . hpp sta").expect("found before");
    assert!(direct.contains(&"status".to_owned()), "{direct:?}");
}

#[test]
fn a_subcommand_beside_a_directory_of_its_name_completes_as_a_subcommand() {
    // Issue 58: `git hpp bench<TAB>` gave `benchmark/` where a `benchmark/` directory exists.
    let sandbox = crate::harness::Sandbox::repo();
    std::fs::create_dir_all(sandbox.root.join("benchmark")).expect("writable");
    std::fs::create_dir_all(sandbox.root.join("benchdata")).expect("writable");
    let script = sandbox.hpp_in(&sandbox.root, &["completions", "bash"]).ok();
    let Some(words) = complete_in_bash(&sandbox, &script, "git hpp benchm") else {
        eprintln!("SKIPPED: git's bash completion script is not installed here");
        return;
    };
    assert_eq!(words, ["benchmark"], "no slash after a subcommand");
    // Control: a directory that is no subcommand still gets its slash, where the glue decides.
    let start = script
        .find("subcommands=\"")
        .expect("the glue lists the subcommands")
        + "subcommands=\"".len();
    let end = script[start..].find('"').expect("a quoted list") + start;
    let without = format!("{} benchdata {}", &script[..start], &script[end..]);
    let words = complete_in_bash(&sandbox, &without, "git hpp benchm").expect("found before");
    assert_eq!(
        words,
        ["benchmark/"],
        "the check this test relies on can fail"
    );
}

#[test]
fn control_without_git_hpp_function_git_completes_no_subcommand_of_hpp() {
    let sandbox = crate::harness::Sandbox::repo();
    let script = sandbox.hpp_in(&sandbox.root, &["completions", "bash"]).ok();
    let cut = script
        .find("_git_hpp()")
        .expect("the script defines _git_hpp");
    let Some(words) = complete_in_bash(&sandbox, &script[..cut], "git hpp ev") else {
        eprintln!("SKIPPED: git's bash completion script is not installed here");
        return;
    };
    assert!(!words.contains(&"event".to_owned()), "{words:?}");
}

/// What fish completes for `line` with `script` loaded as `conf.d` loads it, the first word of
/// each candidate; `None` when fish is not installed.
fn complete_in_fish(
    sandbox: &crate::harness::Sandbox,
    script: &str,
    line: &str,
) -> Option<Vec<String>> {
    let file = sandbox.path("git-hpp.fish");
    std::fs::write(&file, script).expect("writable");
    let run = sandbox
        .command("fish", &sandbox.root)
        .args(["--no-config", "-c"])
        .arg(format!("source '{}'; complete -C '{line}'", file.display()))
        .output()
        .ok()?;
    if !run.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&run.stdout)
            .lines()
            .filter_map(|l| l.split('\t').next().map(ToOwned::to_owned))
            .collect(),
    )
}

#[test]
fn git_hpp_tab_completes_through_fish_git_completion() {
    let sandbox = crate::harness::Sandbox::repo();
    let script = sandbox.hpp_in(&sandbox.root, &["completions", "fish"]).ok();
    let Some(words) = complete_in_fish(&sandbox, &script, "git hpp ev") else {
        eprintln!("SKIPPED: fish is not installed here");
        return;
    };
    assert!(words.contains(&"event".to_owned()), "{words:?}");
    assert!(words.contains(&"evidence".to_owned()), "{words:?}");
    let nested = complete_in_fish(&sandbox, &script, "git hpp event ap").expect("found before");
    assert_eq!(nested, ["append"]);
}

#[test]
fn control_without_the_fish_rule_git_hpp_completes_no_subcommand() {
    let sandbox = crate::harness::Sandbox::repo();
    let script = sandbox.hpp_in(&sandbox.root, &["completions", "fish"]).ok();
    let cut = script
        .find("# `git hpp <TAB>`")
        .expect("the script has the git rule");
    let Some(words) = complete_in_fish(&sandbox, &script[..cut], "git hpp ev") else {
        eprintln!("SKIPPED: fish is not installed here");
        return;
    };
    assert!(!words.contains(&"event".to_owned()), "{words:?}");
}
