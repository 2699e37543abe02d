//! What a shell command writes that a hook can read for certain: the patches it hands to
//! `apply_patch` (Codex applies `apply_patch <<'EOF' … EOF` sent through its shell tool itself,
//! so the hooks see a `Bash` call), and the files it names as output (`> path`, `>> path`,
//! `tee path`). The secret guard and the lane territory guard read a `Bash` call through this.
//!
//! ```
//! let w = hpp_core::policy::shell_writes("echo x > out.txt | tee -a log.txt; cat <<'E' >> $F\nE");
//! assert_eq!(w.files, ["out.txt", "log.txt"]);
//! assert!(w.unread, "$F names no file the hook can read");
//! ```

use super::scan::{SHELLS, ShellCall, program, program_name, shell_call};
use super::shell;

/// The writes of one shell command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellWrites {
    /// The text of each patch handed to `apply_patch` (its here-document, here-string or
    /// argument).
    pub patches: Vec<String>,
    /// Files named as output, as written (relative to the command's directory, or absolute);
    /// `/dev/…` left out.
    pub files: Vec<String>,
    /// Whether an output target cannot be read for certain (a variable, a glob, a
    /// substitution, a directory changed first).
    pub unread: bool,
}

impl ShellWrites {
    /// Tells whether the command writes anything the hook can see, or might.
    pub fn any(&self) -> bool {
        !self.patches.is_empty() || !self.files.is_empty() || self.unread
    }
}

/// Reads the writes of `command`.
pub fn shell_writes(command: &str) -> ShellWrites {
    let mut out = ShellWrites::default();
    let mut moved = false;
    walk(&shell::parse(command, 0), 0, &mut out, &mut moved);
    out
}

fn walk(script: &shell::Script, depth: usize, out: &mut ShellWrites, moved: &mut bool) {
    for command in script.pipelines.iter().flat_map(|p| &p.commands) {
        for nested in command.nested() {
            walk(nested, depth + 1, out, moved);
        }
        for target in &command.writes {
            file(out, &target.text, target.dynamic || *moved);
        }
        let words = command.texts();
        let dynamic = command.dynamic();
        let Some(start) = program(&words) else {
            continue;
        };
        let argv = &words[start..];
        let name = program_name(argv[0]);
        match name.as_str() {
            "cd" | "pushd" | "popd" => *moved = true,
            "tee" => {
                let mut options = true;
                for (at, arg) in argv.iter().enumerate().skip(1) {
                    if options && *arg == "--" {
                        options = false;
                    } else if !options || !arg.starts_with('-') {
                        file(out, arg, dynamic[start + at] || *moved);
                    }
                }
            }
            "apply_patch" | "applypatch" => {
                out.patches.extend(command.stdin.iter().cloned());
                out.patches.extend(
                    argv[1..]
                        .iter()
                        .filter(|a| a.contains("*** Begin Patch"))
                        .map(|a| (*a).to_owned()),
                );
            }
            name if SHELLS.contains(&name) && depth < shell::MAX_DEPTH => {
                if let ShellCall::Script(text) = shell_call(&argv[1..]) {
                    walk(&shell::parse(text, depth + 1), depth + 1, out, moved);
                }
                if matches!(shell_call(&argv[1..]), ShellCall::Stdin) {
                    for body in &command.stdin {
                        walk(&shell::parse(body, depth + 1), depth + 1, out, moved);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Programs that only read or print: a call made of these alone, naming no output file, cannot
/// destroy work. Left out on purpose: `tree -o FILE`, `less -o FILE` and `file -C` write a
/// file; `sort -o`, `tee`, `dd` too.
const READ_ONLY: [&str; 36] = [
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "ag", "pwd", "echo",
    "printf", "true", "false", "which", "type", "stat", "du", "df", "date", "whoami", "id",
    "uname", "more", "diff", "cmp", "basename", "dirname", "realpath", "readlink", "test", "[",
    "nl", "cut", "printenv",
];

/// `git` subcommands that only read.
const GIT_READ_ONLY: [&str; 13] = [
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "blame",
    "grep",
    "describe",
    "shortlog",
    "cat-file",
    "rev-list",
];

/// Tells whether `command` can be proved harmless: every program it runs (nested ones too)
/// only reads (`ls`, `cat`, `grep`, `git status`, `find` without an action, …) and it names
/// no output file. What cannot be proved so gets a checkpoint before it runs.
///
/// ```
/// use hpp_core::policy::read_only;
/// assert!(read_only("git status && ls -la | grep src"));
/// assert!(!read_only("cargo test") && !read_only("ls > listing.txt"));
/// ```
pub fn read_only(command: &str) -> bool {
    reads_only(&shell::parse(command, 0), 0)
}

fn reads_only(script: &shell::Script, depth: usize) -> bool {
    script
        .pipelines
        .iter()
        .flat_map(|p| &p.commands)
        .all(|command| {
            if !command.writes.is_empty() || depth >= shell::MAX_DEPTH {
                return false;
            }
            if !command.nested().all(|nested| reads_only(nested, depth + 1)) {
                return false;
            }
            let words = command.texts();
            let Some(start) = program(&words) else {
                return words.is_empty();
            };
            let argv = &words[start..];
            let name = program_name(argv[0]);
            match name.as_str() {
                // `--output=FILE` (log, diff, show) writes a file; `-O`/`--open-files-in-pager`
                // (grep) runs a program.
                "git" => {
                    let sub = argv[1..].iter().find(|a| !a.starts_with('-'));
                    let writes = argv[1..].iter().any(|a| {
                        a.starts_with("--output")
                            || a.starts_with("--open-files-in-pager")
                            || (a.starts_with("-O") && !a.starts_with("--"))
                    });
                    !writes && sub.is_some_and(|sub| GIT_READ_ONLY.contains(sub))
                }
                // `rg --pre COMMAND` runs COMMAND on every file it searches.
                "rg" => !argv[1..].iter().any(|a| a.starts_with("--pre")),
                "find" => !argv[1..].iter().any(|a| {
                    a.starts_with("-exec")
                        || a.starts_with("-ok")
                        || a.starts_with("-fprint")
                        || matches!(*a, "-delete" | "-fls")
                }),
                name if SHELLS.contains(&name) => match shell_call(&argv[1..]) {
                    ShellCall::Script(text) => {
                        reads_only(&shell::parse(text, depth + 1), depth + 1)
                    }
                    _ => false,
                },
                name => READ_ONLY.contains(&name),
            }
        })
}

fn file(out: &mut ShellWrites, path: &str, dynamic: bool) {
    if dynamic {
        out.unread = true;
    } else if !path.starts_with("/dev/") && !path.is_empty() {
        out.files.push(path.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "*** Begin Patch\n*** Add File: deploy.env\n+x=1\n*** End Patch\n";

    #[test]
    fn a_shell_borne_patch_is_read_however_it_is_wrapped() {
        for command in [
            format!("apply_patch <<'EOF'\n{PATCH}EOF\n"),
            format!("bash -lc \"apply_patch <<'EOF'\n{PATCH}EOF\n\""),
            format!("cd sub && apply_patch '{PATCH}'"),
            format!("apply_patch <<< '{PATCH}'"),
        ] {
            let w = shell_writes(&command);
            assert_eq!(w.patches.len(), 1, "{command}");
            assert!(
                w.patches[0].contains("*** Add File: deploy.env"),
                "{command}"
            );
        }
    }

    #[test]
    fn output_redirections_and_tee_name_their_files() {
        let w = shell_writes(
            "printf 'a' > a.txt 2>&1; echo b >> b.txt; ls | tee -a c.txt d.txt >/dev/null",
        );
        assert_eq!(w.files, ["a.txt", "b.txt", "c.txt", "d.txt"]);
        assert!(!w.unread);
        let w = shell_writes("cat <<EOF > notes.md\nhello\nEOF");
        assert_eq!(w.files, ["notes.md"]);
    }

    #[test]
    fn only_calls_that_read_are_proved_harmless() {
        for command in [
            "git status",
            "git log --oneline | head -5",
            "ls -la src && cat src/lib.rs",
            "grep -rn TODO . 2>&1",
            "find . -name '*.rs'",
            "bash -c 'git diff --stat'",
            "echo $(git rev-parse HEAD)",
            "",
        ] {
            assert!(read_only(command), "{command:?}");
        }
        for command in [
            "cargo test",
            "rm notes.txt",
            "git checkout -- .",
            "git -C x clean -fd",
            "ls > listing.txt",
            "cat a | tee b",
            "find . -delete",
            "find . -exec touch {} +",
            "echo $(rm -r src)",
            "bash -c 'make'",
            "sudo rm x",
            "python3 script.py",
            "tree -o notes.md",
            "less -o log.txt README",
            "file -C -m magic",
            "git log --output=src/lib.rs",
            "git diff --output src/lib.rs",
            "git grep -Orm foo",
            "rg --pre ./wipe.sh foo",
        ] {
            assert!(!read_only(command), "{command:?}");
        }
    }

    #[test]
    fn control_reads_and_descriptor_copies_write_nothing() {
        for command in [
            "cat < in.txt",
            "cargo test 2>&1",
            "echo hi >&2",
            "grep -r x .",
        ] {
            assert!(!shell_writes(command).any(), "{command}");
        }
        let w = shell_writes("cd out && echo x > y.txt");
        assert!(
            w.unread && w.files.is_empty(),
            "after cd, y.txt is somewhere else"
        );
    }
}
