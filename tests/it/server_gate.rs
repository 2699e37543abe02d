//! The server's gate: `git hpp hooks install --server` puts a pre-receive hook in the repository
//! others push to, and a push over a real transport (`git daemon` on 127.0.0.1) of a protected
//! ref is refused unless its commits verify with the records already there or pushed with it.
//! A client's `--no-verify` does not get around it.

use std::path::{Path, PathBuf};

use crate::harness::{GitDaemon, Run, Sandbox};

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// A bare `server.git` under `srv/` holding `main` (one commit, pushed before the gate), its
/// pre-receive gate installed, served by `git daemon`; the maker's repository pushes to it over
/// `git://`.
struct Server {
    sandbox: Sandbox,
    bare: PathBuf,
    /// Kept for its lifetime: dropping it stops the daemon.
    _daemon: GitDaemon,
}

fn server() -> Server {
    let sandbox = Sandbox::repo();
    let base = sandbox.path("srv");
    std::fs::create_dir_all(&base).expect("writable");
    let bare = base.join("server.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&bare)]);
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nIt works.\n").expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    sandbox.git(["push", "-q", text(&bare), "main"]);
    let plan = sandbox
        .hpp_in(&bare, &["hooks", "install", "--server"])
        .ok();
    assert!(plan.contains("pre-receive"), "{plan}");
    assert!(
        !bare.join("hooks/pre-receive").exists(),
        "the plan writes nothing"
    );
    sandbox
        .hpp_in(&bare, &["hooks", "install", "--server", "--apply"])
        .ok();
    sandbox.hpp_in(&bare, &["hooks", "status", "--server"]).ok();
    let daemon = GitDaemon::start(&sandbox, &base);
    sandbox.git(["remote", "add", "origin", &daemon.url("server.git")]);
    Server {
        sandbox,
        bare,
        _daemon: daemon,
    }
}

impl Server {
    fn work(&self, message: &str) {
        std::fs::write(self.sandbox.root.join("work.txt"), message).expect("writable");
        self.sandbox.git(["add", "-A"]);
        self.sandbox.git(["commit", "-q", "-m", message]);
    }

    fn attest(&self) {
        let args = crate::harness::attest_args("review:001", "approved");
        self.sandbox.hpp_in(&self.sandbox.root, &args).ok();
    }

    /// `git push` from the maker with `args`, the client's own hooks skipped.
    fn push(&self, args: &[&str]) -> Run {
        let mut all = vec!["push", "--no-verify", "origin"];
        all.extend_from_slice(args);
        let out = self
            .sandbox
            .command("git", &self.sandbox.root)
            .args(&all)
            .output()
            .expect("git push runs");
        Run::from_output(&out)
    }

    fn server_main(&self) -> String {
        self.sandbox.git_in(&self.bare, &["rev-parse", "main"])
    }
}

#[test]
fn an_unverified_push_of_main_is_refused_by_the_server_over_git_daemon() {
    let server = server();
    let before = server.server_main();
    server.work("unreviewed change\n");
    let run = server.push(&["main"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("pre-receive"), "{run}");
    assert!(run.stderr.contains("never verified"), "{run}");
    assert!(run.stderr.contains("no attestation for its tree"), "{run}");
    assert_eq!(server.server_main(), before, "main did not move");
}

#[test]
fn control_an_atomic_push_of_the_records_and_main_is_accepted() {
    let server = server();
    server.work("reviewed change\n");
    server.attest();
    let run = server.push(&["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        server.server_main(),
        server.sandbox.git(["rev-parse", "main"]),
        "main moved"
    );
    // The server verifies it with what it holds, in a bare repository.
    let report = server
        .sandbox
        .hpp_in(&server.bare, &["verify", "main", "--json"])
        .json(0);
    assert_eq!(report["status"], "valid");
}

#[test]
fn an_unprotected_branch_and_records_alone_pass_the_server() {
    let server = server();
    server.work("a topic\n");
    let run = server.push(&["main:refs/heads/topic"]);
    assert_eq!(run.code, 0, "{run}");
    server.attest();
    let run = server.push(&["refs/hpp/*:refs/hpp/*"]);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn with_hpp_verify_each_every_commit_the_push_brings_must_verify() {
    let server = server();
    server.work("first, never attested\n");
    server.work("second, attested\n");
    server.attest();
    server
        .sandbox
        .git_in(&server.bare, &["config", "hpp.verify", "each"]);
    let run = server.push(&["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("first") || run.stderr.contains("never verified"),
        "{run}"
    );

    // The default, tip, lets the same push through: what lands is the tip's tree.
    server
        .sandbox
        .git_in(&server.bare, &["config", "hpp.verify", "tip"]);
    let run = server.push(&["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_eq!(run.code, 0, "{run}");
}

#[test]
fn control_a_bad_hpp_verify_value_refuses_the_push_saying_why() {
    let server = server();
    server.work("reviewed change\n");
    server.attest();
    server
        .sandbox
        .git_in(&server.bare, &["config", "hpp.verify", "sometimes"]);
    let run = server.push(&["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_ne!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("hpp.verify must be tip or each"),
        "{run}"
    );
}

impl Server {
    /// The server's `refs/hpp/` as `<id> <ref>` lines.
    fn server_records(&self) -> String {
        self.sandbox.git_in(
            &self.bare,
            &[
                "for-each-ref",
                "--format=%(objectname) %(refname)",
                "refs/hpp/",
            ],
        )
    }

    /// The maker's first ref under `prefix`.
    fn first(&self, prefix: &str) -> String {
        self.sandbox
            .git(["for-each-ref", "--format=%(refname)", prefix])
            .lines()
            .next()
            .expect("a record")
            .to_owned()
    }

    /// A child of `parent` whose `file` says `content`, written in the maker's repository.
    fn edited_child(&self, parent: &str, file: &str, content: &str) -> String {
        let blob = self.sandbox.git_fed_in(
            &self.sandbox.root,
            &["hash-object", "-w", "--stdin"],
            content,
        );
        let listing: String = self
            .sandbox
            .git_in(&self.sandbox.root, &["ls-tree", parent])
            .lines()
            .map(|line| {
                if line.ends_with(&format!("\t{file}")) {
                    format!("100644 blob {blob}\t{file}\n")
                } else {
                    format!("{line}\n")
                }
            })
            .collect();
        let tree = self
            .sandbox
            .git_fed_in(&self.sandbox.root, &["mktree"], &listing);
        self.sandbox.git_in(
            &self.sandbox.root,
            &["commit-tree", &tree, "-p", parent, "-m", "edited"],
        )
    }

    /// Asserts the push of `args` is refused by the server's gate saying `rule`, with the
    /// server's records as they were.
    fn refused(&self, args: &[&str], rule: &str) {
        let before = self.server_records();
        let run = self.push(args);
        assert_ne!(run.code, 0, "{args:?}: {run}");
        assert!(run.stderr.contains("pre-receive"), "{args:?}: {run}");
        assert!(run.stderr.contains(rule), "{args:?}: {run}");
        assert_eq!(self.server_records(), before, "{args:?}: nothing moved");
    }
}

/// A server holding the maker's walked loop, an attestation of main and an evidence bundle.
fn server_with_records() -> Server {
    let server = server();
    server.sandbox.start_work().ok();
    server.sandbox.walk_steps("main", 1..3);
    let run = server.push(&["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_eq!(run.code, 0, "{run}");
    server
}

#[test]
fn the_server_never_lets_a_record_be_deleted_rewritten_or_edited() {
    let server = server_with_records();
    let attestation = server.first("refs/hpp/attestations/");
    server.refused(&[&format!(":{attestation}")], "records are never deleted");
    // A loop rewritten: its tip moved back to its first event, forced.
    let loop_ref = "refs/hpp/loops/main";
    let first = server
        .sandbox
        .git(["rev-list", "--max-parents=0", loop_ref]);
    server.refused(
        &[&format!("+{}:{loop_ref}", first.trim())],
        "moves forward only",
    );
    // An evidence bundle fast-forwarded to an edited child.
    let evidence = server.first("refs/hpp/evidence/");
    let record = server
        .sandbox
        .git(["show", &format!("{evidence}:record.json")]);
    let child = server.edited_child(
        &evidence,
        "record.json",
        &record.replace("passed", "failed"),
    );
    server.refused(&[&format!("{child}:{evidence}")], "written once");
    // A blob where a record belongs.
    let blob = server.sandbox.git_fed_in(
        &server.sandbox.root,
        &["hash-object", "-w", "--stdin"],
        "not a record",
    );
    let tree = attestation
        .trim_start_matches("refs/hpp/attestations/")
        .split('/')
        .next()
        .expect("a tree")
        .to_owned();
    server.refused(
        &[&format!("{blob}:refs/hpp/attestations/{tree}/planted")],
        "only record commits",
    );
    // A loop fast-forwarded to a child with an event that does not read.
    let child = server.edited_child(loop_ref, "event.json", "{\"not\":\"an event\"}");
    server.refused(&[&format!("{child}:{loop_ref}")], "does not verify");
}

#[test]
fn control_an_honest_push_of_new_records_and_events_passes_the_server() {
    let server = server_with_records();
    server.sandbox.walk_steps("main", 3..4);
    server.work("reviewed change\n");
    server.attest();
    let before = server.server_records();
    let run = server.push(&["--atomic", "main", "refs/hpp/*:refs/hpp/*"]);
    assert_eq!(run.code, 0, "{run}");
    assert_ne!(server.server_records(), before, "the records moved forward");
    assert_eq!(
        server
            .sandbox
            .git_in(&server.bare, &["rev-parse", "refs/hpp/loops/main"]),
        server.sandbox.git(["rev-parse", "refs/hpp/loops/main"])
    );
}

#[test]
fn the_server_refuses_a_namespace_outside_the_ref_layout_naming_the_rule() {
    let server = server_with_records();
    let loop_tip = server.sandbox.git(["rev-parse", "refs/hpp/loops/main"]);
    for name in [
        "refs/hpp/whatever/x",
        "refs/hpp/loops",
        "refs/hpp/hop/elsewhere/y",
    ] {
        server.refused(
            &[&format!("{}:{name}", loop_tip.trim())],
            "in no namespace of the ref layout (rule: known namespaces only",
        );
    }
    // Control: the same commit under a namespace of the layout is read as that kind (a loop's
    // history under another loop's name reads, and is taken).
    let run = server.push(&[&format!("{}:refs/hpp/loops/copy", loop_tip.trim())]);
    assert_eq!(run.code, 0, "{run}");
}
