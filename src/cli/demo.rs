//! `git hpp demo`: the tour. Runs the real binary and the real git, step by step, in a
//! throwaway directory holding a bare remote, the maker's repository and a reviewer's clone.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::sign;

/// Walk the whole loop in a throwaway repository: evidence, attestation, gates, clone, lanes
///
/// Creates a bare remote and a maker's repository in a temporary directory, serves the remote
/// with `git daemon` on 127.0.0.1 (a real transport; the local path when git daemon cannot
/// start), then runs each step as the command a user would type (this binary as `git hpp ...`,
/// and git): the loop's gates, a refused out-of-order event, evidence from a real command, a
/// signed attestation by a checker who is not the maker, a push of an unverified commit refused
/// by the client's pre-push gate and, with the client's hook skipped, by the server's pre-receive
/// gate, the verified push going through, a fresh clone verifying it, and the checker revoking
/// and restoring the approval. Removes everything (and stops the daemon) at the end unless
/// --keep is given. Needs git on PATH. Exits 0 when every step behaved as the tour expects, 3
/// otherwise.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Keep the throwaway directory and print its path
    #[arg(long)]
    keep: bool,
}

/// Which program a step runs.
#[derive(Clone, Copy)]
enum Prog {
    Hpp,
    Git,
    /// The `hop` binary beside this one.
    Hop,
    /// `sh -c` of the one argument, for steps an agent's shell runs (with `hop` on PATH).
    Sh,
}

/// What a step must exit with.
#[derive(Clone, Copy)]
enum Expect {
    Code(u8),
    Fails,
}

/// One step of the tour.
struct Step {
    dir: &'static str,
    prog: Prog,
    args: &'static [&'static str],
    note: &'static str,
    expect: Expect,
    stdout_to: Option<&'static str>,
}

const fn hpp(args: &'static [&'static str], note: &'static str) -> Step {
    Step {
        dir: "maker",
        prog: Prog::Hpp,
        args,
        note,
        expect: Expect::Code(0),
        stdout_to: None,
    }
}

const fn git(args: &'static [&'static str], note: &'static str) -> Step {
    Step {
        dir: "maker",
        prog: Prog::Git,
        args,
        note,
        expect: Expect::Code(0),
        stdout_to: None,
    }
}

const fn hop(args: &'static [&'static str], note: &'static str) -> Step {
    Step {
        prog: Prog::Hop,
        ..hpp(args, note)
    }
}

const fn sh(script: &'static [&'static str], note: &'static str) -> Step {
    Step {
        prog: Prog::Sh,
        ..hpp(script, note)
    }
}

const fn expect(step: Step, expect: Expect) -> Step {
    Step { expect, ..step }
}

const fn in_dir(step: Step, dir: &'static str) -> Step {
    Step { dir, ..step }
}

const SETUP: &[Step] = &[
    in_dir(
        git(
            &["init", "-q", "--bare", "-b", "main", "remote.git"],
            "A bare remote stands in for the team's server.",
        ),
        ".",
    ),
    in_dir(
        git(
            &["init", "-q", "-b", "main", "maker"],
            "The maker's repository.",
        ),
        ".",
    ),
    git(&["add", "-A"], ""),
    git(
        &["commit", "-q", "-m", "Add the spec and the discount code"],
        "",
    ),
    git(&["remote", "add", "origin", SERVER], ""),
];

/// Stands for the remote's URL in a step: `git://127.0.0.1:<port>/remote.git` while the tour's
/// `git daemon` serves it, else the local path.
const SERVER: &str = "{server}";

const STEPS: &[Step] = &[
    in_dir(
        hpp(
            &["hooks", "install", "--server", "--apply"],
            "The server gets the pre-receive gate: an update of main is checked where it lands.",
        ),
        "remote.git",
    ),
    hpp(
        &[
            "trust",
            "init",
            "--root",
            "owner",
            "--key",
            "../owner-key.pub",
            "--sign-key",
            "../owner-key",
            "--apply",
        ],
        "The repository's owner starts its trust policy (refs/hpp/trust): who may sign what, signed by its root.",
    ),
    hpp(
        &[
            "trust",
            "add",
            "maker-a",
            "--key",
            "../maker-key.pub",
            "--role",
            "maker",
            "--sign-key",
            "../owner-key",
            "--apply",
        ],
        "Each principal gets a key and roles; every change is signed by the root.",
    ),
    hpp(
        &[
            "trust",
            "add",
            "checker-b",
            "--key",
            "../checker-key.pub",
            "--role",
            "checker",
            "--sign-key",
            "../owner-key",
            "--apply",
        ],
        "",
    ),
    hpp(
        &[
            "trust",
            "add",
            "reviewer",
            "--key",
            "../person-key.pub",
            "--role",
            "person",
            "--sign-key",
            "../owner-key",
            "--apply",
        ],
        "",
    ),
    hpp(
        &["trust", "show"],
        "From here every reader requires signatures and takes keys and roles from the policy: no flags, no configuration.",
    ),
    hpp(
        &["hooks", "install", "--apply"],
        "Install the pre-push gate: main cannot be pushed unless its tip is verified.",
    ),
    hpp(
        &["status"],
        "A new loop is planned; it is named after the current branch.",
    ),
    expect(
        hpp(
            &["event", "append", "--type", "verified"],
            "Closing a loop that never started is refused before anything is written.",
        ),
        Expect::Code(2),
    ),
    hpp(
        &[
            "event",
            "append",
            "--type",
            "work_started",
            "--work",
            "ITEM-1",
            "--maker",
            "maker-a",
        ],
        "Gate scope: the loop names its work item and its maker, fixed from here on.",
    ),
    expect(
        git(
            &["push", "-q", "origin", "main"],
            "Pushing main now is refused: nobody verified this commit.",
        ),
        Expect::Fails,
    ),
    expect(
        git(
            &["push", "-q", "--no-verify", "origin", "main"],
            "Skipping the client's hook does not help: the server's pre-receive gate refuses it too.",
        ),
        Expect::Fails,
    ),
    hpp(
        &[
            "evidence",
            "run",
            "--id",
            "tests",
            "--artifact",
            "out/report.txt",
            "--record-event",
            "--keep-artifacts",
            "--sign-key",
            "../maker-key",
            "--signer",
            "maker-a",
            "--",
            "sh",
            "-c",
            "mkdir -p out && echo 3 passed > out/report.txt",
        ],
        "Gate fresh-evidence: the criterion command really runs; its bundle is recorded and the loop advances.",
    ),
    expect(
        hpp(
            &["event", "append", "--type", "check_passed"],
            "Gate read-only-checker measures: no checker has approved this tree yet, so it refuses and writes nothing.",
        ),
        Expect::Code(2),
    ),
    hpp(
        &[
            "attest",
            "create",
            "--spec",
            "SPEC.md",
            "--maker",
            "maker-a",
            "--checker",
            "checker-b",
            "--session",
            "review:001",
            "--verdict",
            "approved",
            "--sign-key",
            "../checker-key",
        ],
        "The checker attests the exact snapshot (a git tree) and signs it with an SSH key.",
    ),
    hpp(
        &["event", "append", "--type", "check_passed"],
        "Gate read-only-checker: the approval of this tree by checker-b, who is not the maker, holds.",
    ),
    hpp(
        &[
            "event",
            "append",
            "--type",
            "human_approved",
            "--by",
            "reviewer",
            "--sign-key",
            "../person-key",
        ],
        "Gate human: a person approves, signing with a key the policy gives the person role.",
    ),
    hpp(
        &["event", "append", "--type", "verified"],
        "Gate closure: the evidence, the approval and the person's signature still hold for this tree.",
    ),
    hpp(
        &["verify"],
        "The commit's tree has an approved, signed attestation whose evidence still verifies.",
    ),
    hpp(
        &["push"],
        "Records travel with git: refs/hpp/* and refs/notes/hpp, never forced.",
    ),
    git(
        &["push", "-q", "origin", "main"],
        "Now both gates let main through: the server verified it with the records it holds.",
    ),
    in_dir(
        git(
            &["clone", "-q", "remote.git", "reviewer"],
            "A reviewer starts from a plain clone.",
        ),
        ".",
    ),
    in_dir(
        hpp(
            &["fetch"],
            "The clone trusts the policy's root once, says so, and pins it.",
        ),
        "reviewer",
    ),
    in_dir(
        hpp(
            &["verify"],
            "Verification from the clone needs only the repository: the policy it holds says whose signatures count.",
        ),
        "reviewer",
    ),
    in_dir(
        hpp(
            &["event", "verify"],
            "The loop's chains hold in the clone too, and every gate's records are re-checked, signatures required.",
        ),
        "reviewer",
    ),
    Step {
        dir: "reviewer",
        prog: Prog::Hpp,
        args: &["event", "export"],
        note: "The Python harness's events.jsonl, byte for byte, for a team moving either way.",
        expect: Expect::Code(0),
        stdout_to: Some("events.jsonl"),
    },
    in_dir(
        hpp(
            &["event", "import", "events.jsonl", "--loop", "imported"],
            "",
        ),
        "reviewer",
    ),
    in_dir(hpp(&["loops"], "Every loop in the repository."), "reviewer"),
    expect(
        hpp(
            &[
                "attest",
                "create",
                "--spec",
                "SPEC.md",
                "--maker",
                "maker-a",
                "--checker",
                "checker-b",
                "--session",
                "review:002",
                "--verdict",
                "revise",
                "--sign-key",
                "../checker-key",
            ],
            "The checker changes their mind: a later revise of the same tree by the same checker...",
        ),
        Expect::Code(2),
    ),
    expect(
        hpp(
            &["verify"],
            "...revokes the approval, and verify names the record that revoked it.",
        ),
        Expect::Code(2),
    ),
    expect(
        hpp(
            &["event", "verify"],
            "The loop's read-only-checker gate no longer holds either.",
        ),
        Expect::Code(2),
    ),
    hpp(
        &[
            "attest",
            "create",
            "--spec",
            "SPEC.md",
            "--maker",
            "maker-a",
            "--checker",
            "checker-b",
            "--session",
            "review:003",
            "--verdict",
            "approved",
            "--sign-key",
            "../checker-key",
        ],
        "Once the work holds again, the checker approves it again: the latest verdict stands.",
    ),
    hpp(&["verify"], ""),
    hpp(
        &[
            "lane",
            "start",
            "docs",
            "--territory",
            "docs",
            "--role",
            "maker",
            "--model",
            "claude-sonnet-4",
        ],
        "A lane for a second agent: a linked worktree beside the repository, and a claim on docs/ under refs/hpp/lanes/.",
    ),
    expect(
        hpp(
            &[
                "lane",
                "start",
                "api-docs",
                "--territory",
                "docs/api",
                "--role",
                "maker",
                "--model",
                "gpt-5",
            ],
            "A second exclusive lane inside that territory is refused, naming the first.",
        ),
        Expect::Code(2),
    ),
    hpp(
        &["lane", "list"],
        "The lanes, read from refs: liveness from heartbeats (`git hpp map lane` projects them as a graph).",
    ),
    hpp(
        &[
            "lane",
            "review-guard",
            "--",
            "git",
            "log",
            "--oneline",
            "-1",
        ],
        "A checker's command, proven read-only: git's view of the worktree is the same before and after.",
    ),
    hpp(
        &["lane", "close", "docs"],
        "The lane closes and its worktree goes, because nothing unsaved is in it.",
    ),
    hpp(
        &["doctor"],
        "The manifest, its hooks and modules, and every record in the store, checked.",
    ),
    hop(
        &["init"],
        "Hop, the agent protocol on the same store: its accepted chain starts at main's commit.",
    ),
    sh(
        &[
            "eval \"$(hop start --agent agent-a 'Add a changelog' | sed -n 's/^launch: //p')\" && printf '# Changelog\\n' > CHANGELOG.md && hop check \"$HOP_STATE_ID\" -- test -f CHANGELOG.md && hop propose --summary 'Add a changelog' \"$HOP_STATE_ID\" | tee \"$HOP_ROOT/../proposal.txt\"",
        ],
        "An agent starts an attempt in its own workspace, edits, checks (the check is an evidence bundle) and proposes.",
    ),
    sh(
        &[
            "hop land \"$(sed -n 's/^proposal \\(R_[0-9A-Z]*\\).*/\\1/p' ../proposal.txt)\" --branch main --sign-key ../checker-key --signer checker-b -- test -f CHANGELOG.md",
        ],
        "The checker lands the proposal into the checked-out main: validated on the landed tree (a bundle the checker signs), then main and its files fast-forward.",
    ),
    git(
        &["log", "--format=%h %s", "-2"],
        "main gained only the landed commit, on top of the user's own.",
    ),
    hpp(
        &["evidence", "verify", "hop-land"],
        "The landing's validation is an evidence bundle like any other.",
    ),
];

/// Runs the tour.
pub fn cmd_demo(_ctx: &Ctx, args: &DemoArgs) -> Result<Outcome, CliError> {
    let exe =
        std::env::current_exe().map_err(|e| CliError::internal("finding this program", &e))?;
    let dir = tempfile::Builder::new()
        .prefix("hpp-demo-")
        .tempdir()
        .map_err(|e| CliError::internal("creating a temporary directory", &e))?;
    let root = dir.path().to_path_buf();
    let mut out = String::from("git hpp demo: the whole loop, in a throwaway directory\n");
    let daemon = Daemon::start(&root);
    let server = match &daemon {
        Some(d) => format!("git://127.0.0.1:{}/remote.git", d.port),
        None => "../remote.git".to_owned(),
    };
    match &daemon {
        Some(_) => out.push_str(&format!(
            "\n# The remote is served by `git daemon` on 127.0.0.1: pushes cross a real transport.\n$ git daemon --listen=127.0.0.1 --enable=receive-pack --export-all --base-path=. .   # {server}\n"
        )),
        None => out.push_str(
            "\n# git daemon could not start here: the tour pushes to the remote by its path.\n",
        ),
    }
    let mut failed = None;
    let mut run_all = |steps: &[Step], out: &mut String| -> Result<(), CliError> {
        for step in steps {
            let (transcript, code) = run_step(&exe, &root, step, &server)?;
            if !step.note.is_empty() {
                out.push_str(&format!("\n# {}\n", step.note));
            }
            out.push_str(&transcript);
            let ok = match step.expect {
                Expect::Code(c) => code == c,
                Expect::Fails => code != 0,
            };
            if !ok && failed.is_none() {
                failed = Some(format!(
                    "step `{}` exited {code}, which the tour did not expect",
                    shown(step, &server)
                ));
            }
        }
        Ok(())
    };
    run_all(&SETUP[..2], &mut out)?;
    write_files(&root.join("maker"))?;
    out.push_str("$ printf ... > SPEC.md discount.py .gitignore   # the work: a spec, its code, out/ ignored\n");
    run_all(&SETUP[2..], &mut out)?;
    for (file, whose) in [
        ("owner-key", "the owner's (the policy's root)"),
        ("maker-key", "the maker's"),
        ("checker-key", "the checker's"),
        ("person-key", "the person's"),
    ] {
        let public = sign::generate_key(&root.join(file))
            .map_err(|e| CliError::internal(&format!("generating {whose} key"), &e))?;
        std::fs::write(root.join(format!("{file}.pub")), format!("{public}\n"))
            .map_err(|e| CliError::internal(&format!("writing {whose} public key"), &e))?;
    }
    out.push_str("\n# Throwaway SSH keys for the owner, the maker, the checker and a person.\n");
    out.push_str("$ for who in owner maker checker person; do ssh-keygen -q -t ed25519 -N '' -f $who-key; done\n");
    run_all(STEPS, &mut out)?;
    drop(daemon);
    if args.keep {
        let kept = dir.keep();
        out.push_str(&format!("\nkept everything under {}\n", kept.display()));
    } else {
        out.push_str("\nremoved the throwaway directory.\n");
    }
    // `git hpp --help` is git's `git help hpp`, which opens the manual page: the first tour
    // places it beside the binary, where man finds it through PATH.
    if super::manual::installed() {
        out.push_str("Next: `git hpp --help` (the manual), `git hpp status` in your repository.\n");
    } else {
        match super::manual::install_default() {
            Ok((dir, pages)) => out.push_str(&format!(
                "installed the manual ({pages} pages) in {}.\nNext: `git hpp --help` (the manual), `git hpp status` in your repository.\n",
                dir.display()
            )),
            Err(e) => out.push_str(&format!(
                "the manual could not be installed beside this binary ({}): run `git hpp install-man DIR` with DIR on MANPATH; `git hpp help` works meanwhile.\n",
                e.message
            )),
        }
    }
    let mut outcome = Outcome::raw(out.into_bytes());
    if let Some(why) = failed {
        outcome = outcome.warn(why);
        outcome.exit = Exit::Fault;
    }
    Ok(outcome)
}

fn write_files(repo: &Path) -> Result<(), CliError> {
    let files = [
        (
            "SPEC.md",
            "# Discount\n\nOrders of 100 or more get 10% off. Acceptance: `tests` passes and writes out/report.txt.\n",
        ),
        (
            "discount.py",
            "def discount(total):\n    return total * 0.9 if total >= 100 else total\n",
        ),
        (".gitignore", "out/\n"),
    ];
    for (name, text) in files {
        std::fs::write(repo.join(name), text)
            .map_err(|e| CliError::internal("writing the tour's files", &e))?;
    }
    Ok(())
}

/// The step's arguments, with [`SERVER`] replaced by the remote's URL.
fn args<'a>(step: &'a Step, server: &'a str) -> Vec<&'a str> {
    step.args
        .iter()
        .map(|a| if *a == SERVER { server } else { a })
        .collect()
}

fn shown(step: &Step, server: &str) -> String {
    let words: Vec<String> = args(step, server).iter().map(|a| shell_quote(a)).collect();
    let prog = match step.prog {
        Prog::Hpp => "git hpp",
        Prog::Git => "git",
        Prog::Hop => "hop",
        Prog::Sh => return args(step, server).join(" "),
    };
    format!("{prog} {}", words.join(" "))
}

fn run_step(exe: &Path, root: &Path, step: &Step, server: &str) -> Result<(String, u8), CliError> {
    let cwd: PathBuf = root.join(step.dir);
    let mut text = String::new();
    if step.dir != "maker" {
        text.push_str(&format!(
            "({}) ",
            if step.dir == "." { "top" } else { step.dir }
        ));
    }
    text.push_str(&format!("$ {}", shown(step, server)));
    if let Some(file) = step.stdout_to {
        text.push_str(&format!(" > {file}"));
    }
    text.push('\n');
    let mut cmd = match step.prog {
        Prog::Hpp => Command::new(exe),
        Prog::Hop => Command::new(exe.with_file_name("hop")),
        Prog::Sh => {
            let mut c = Command::new("sh");
            c.arg("-c");
            c
        }
        Prog::Git => {
            let mut c = Command::new("git");
            // The tour's own commits need an author; the harness itself never does.
            c.env("GIT_AUTHOR_NAME", "maker-a")
                .env("GIT_AUTHOR_EMAIL", "maker-a@example.com");
            c.env("GIT_COMMITTER_NAME", "maker-a")
                .env("GIT_COMMITTER_EMAIL", "maker-a@example.com");
            c
        }
    };
    // The pre-push hook calls `git hpp`: make sure it finds this binary first.
    let path = tour_path()?;
    let output = cmd
        .args(args(step, server))
        .current_dir(&cwd)
        .env("PATH", path)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .map_err(|e| {
            CliError::refused(format!(
                "the tour could not run `{}`: {e}",
                shown(step, server)
            ))
        })?;
    let code = output
        .status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(u8::MAX);
    match step.stdout_to {
        Some(file) => {
            std::fs::write(cwd.join(file), &output.stdout)
                .map_err(|e| CliError::internal("writing the export", &e))?;
            let lines = output.stdout.iter().filter(|b| **b == b'\n').count();
            text.push_str(&format!("({} bytes, {lines} lines)\n", output.stdout.len()));
        }
        None => text.push_str(&String::from_utf8_lossy(&output.stdout)),
    }
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    if code != 0 {
        text.push_str(&format!("[exit {code}]\n"));
    }
    Ok((text, code))
}

/// The tour's `git daemon`: it serves the throwaway directory on 127.0.0.1 with pushes enabled,
/// and is stopped, with the `git-daemon` it runs, when dropped.
struct Daemon {
    server: crate::process::Server,
    port: u16,
}

impl Daemon {
    /// Starts it, or returns `None` when git daemon cannot start here.
    fn start(root: &Path) -> Option<Daemon> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .ok()?
            .port();
        let server = crate::process::Server::spawn(
            Command::new("git")
                .args([
                    "daemon",
                    "--reuseaddr",
                    "--listen=127.0.0.1",
                    "--export-all",
                    "--enable=receive-pack",
                    "--informative-errors",
                ])
                .arg(format!("--port={port}"))
                .arg(format!("--base-path={}", root.display()))
                .arg(root)
                .current_dir(root)
                .env("PATH", tour_path().ok()?)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null()),
        )
        .ok()?;
        let mut daemon = Daemon { server, port };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(daemon);
            }
            if daemon.server.has_exited() {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        None
    }
}

/// `PATH` with this binary's directory first, so hooks that call `git hpp` run this one.
fn tour_path() -> Result<std::ffi::OsString, CliError> {
    let exe =
        std::env::current_exe().map_err(|e| CliError::internal("finding this program", &e))?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = exe.parent().map(Path::to_path_buf).into_iter().collect();
    dirs.extend(std::env::split_paths(&path));
    std::env::join_paths(dirs).map_err(|e| CliError::internal("building PATH for the tour", &e))
}

fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
    {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}
