//! Verification in the clones CI systems make (issue 28, item 7): a depth-1 clone, one commit
//! fetched by id into an empty repository (what hosted checkout steps do), `blob:none` and
//! `tree:0` partial clones, a detached HEAD. In each, `git hpp fetch` then `git hpp verify HEAD`
//! passes for an attested head and fails for one nobody attested; a shallow boundary is never
//! taken for the history's root, and a blob the promisor remote holds is fetched, not reported
//! as broken.

use std::path::{Path, PathBuf};

use crate::harness::{Run, Sandbox};
use crate::trust_policy::{keygen, pinned_root, public, with_policy};

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// A project with some history, its head attested at the end of a walked loop, everything pushed to a bare remote that
/// serves partial clones and fetches by id, as hosted forges do.
struct Project {
    sandbox: Sandbox,
    remote: PathBuf,
    /// The attested head.
    head: String,
}

impl Project {
    fn url(&self) -> String {
        format!("file://{}", text(&self.remote))
    }

    /// Runs `git` in `dir`.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.sandbox.git_in(dir, args)
    }

    /// Runs `git hpp fetch` then `git hpp verify HEAD` in `dir`.
    fn fetch_and_verify(&self, dir: &Path) -> Run {
        self.sandbox.hpp_in(dir, &["fetch", "origin"]).ok();
        self.sandbox.hpp_in(dir, &["verify", "HEAD"])
    }

    /// A new empty directory beside the project.
    fn dir(&self, name: &str) -> PathBuf {
        let dir = self.sandbox.path(name);
        std::fs::create_dir_all(&dir).expect("the sandbox is writable");
        dir
    }

    /// Commits a change nobody attested on top of the head, and pushes it; returns its id.
    fn unattested_head(&self) -> String {
        let root = &self.sandbox.root;
        std::fs::write(root.join("late.txt"), "not reviewed\n").expect("the sandbox is writable");
        self.git(root, &["add", "late.txt"]);
        self.git(root, &["commit", "-q", "-m", "unreviewed"]);
        self.git(
            root,
            &["push", "-q", text(&self.remote), "HEAD:refs/heads/late"],
        );
        self.git(root, &["rev-parse", "HEAD"])
    }
}

/// A bare remote beside the project that serves partial clones and fetches by id, as hosted
/// forges do.
fn serving_remote(sandbox: &Sandbox) -> PathBuf {
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    for (key, value) in [
        ("uploadpack.allowFilter", "true"),
        ("uploadpack.allowAnySHA1InWant", "true"),
    ] {
        sandbox.git_in(&remote, &["config", key, value]);
    }
    remote
}

fn project() -> Project {
    let sandbox = Sandbox::repo();
    for (i, body) in ["one", "two", "three"].iter().enumerate() {
        std::fs::create_dir_all(sandbox.root.join("src")).expect("the sandbox is writable");
        std::fs::write(sandbox.root.join(format!("src/f{i}.txt")), body)
            .expect("the sandbox is writable");
        sandbox.git(["add", "-A"]);
        sandbox.git(["commit", "-q", "-m", body]);
    }
    // A walked loop: its events, an evidence bundle and the approval that binds it all travel.
    sandbox.start_work().ok();
    sandbox.walk_steps("main", 1..5);
    let remote = serving_remote(&sandbox);
    sandbox.git(["push", "-q", text(&remote), "main"]);
    sandbox.hpp(["push", text(&remote)]).ok();
    let head = sandbox.git(["rev-parse", "HEAD"]);
    Project {
        sandbox,
        remote,
        head,
    }
}

/// A project under a trust policy whose head carries an approval signed by its checker, pushed
/// with its records to a bare remote as [`project`]'s; returns it and the pinned root.
fn signed_project() -> (Project, String) {
    let p = with_policy();
    p.attest("checker-b", Some(&p.checker)).ok();
    let root = pinned_root(&p);
    let sandbox = p.sandbox;
    let remote = serving_remote(&sandbox);
    sandbox.git(["push", "-q", text(&remote), "main", "refs/hpp/*:refs/hpp/*"]);
    let head = sandbox.git(["rev-parse", "HEAD"]);
    (
        Project {
            sandbox,
            remote,
            head,
        },
        root,
    )
}

/// What actions/checkout does: one commit fetched by id at depth 1 into an empty repository,
/// checked out detached.
fn checkout_by_id(project: &Project, dir: &Path, sha: &str) {
    project.git(dir, &["init", "-q"]);
    project.git(dir, &["remote", "add", "origin", &project.url()]);
    project.git(
        dir,
        &[
            "fetch",
            "-q",
            "--no-tags",
            "--depth=1",
            "origin",
            &format!("+{sha}:refs/remotes/origin/pr"),
        ],
    );
    project.git(dir, &["checkout", "-q", "--detach", sha]);
}

fn assert_passes(run: Run, head: &str) {
    assert_eq!(run.code, 0, "verify failed:\n{run}");
    assert!(
        run.stdout.contains(&format!("ok   {}", &head[..12])),
        "{run}"
    );
}

#[test]
fn a_depth_one_clone_verifies_its_attested_head() {
    let project = project();
    let clone = project.sandbox.path("shallow");
    project.git(
        &project.sandbox.root,
        &["clone", "-q", "--depth", "1", &project.url(), text(&clone)],
    );
    assert!(
        clone.join(".git/shallow").exists(),
        "the clone is shallow, as CI's is"
    );
    assert_passes(project.fetch_and_verify(&clone), &project.head);
}

#[test]
fn one_commit_fetched_by_id_into_an_empty_repository_verifies() {
    let project = project();
    let dir = project.dir("by-id");
    checkout_by_id(&project, &dir, &project.head);
    assert_passes(project.fetch_and_verify(&dir), &project.head);
}

#[test]
fn a_blob_none_partial_clone_fetches_what_it_reads() {
    let project = project();
    let clone = project.sandbox.path("blobless");
    project.git(
        &project.sandbox.root,
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            &project.url(),
            text(&clone),
        ],
    );
    let run = project.fetch_and_verify(&clone);
    assert!(!run.stdout.contains("holds no readable record"), "{run}");
    assert_passes(run, &project.head);
}

#[test]
fn a_tree_zero_partial_clone_fetches_what_it_reads() {
    let project = project();
    let clone = project.sandbox.path("treeless");
    project.git(
        &project.sandbox.root,
        &[
            "clone",
            "-q",
            "--filter=tree:0",
            &project.url(),
            text(&clone),
        ],
    );
    let run = project.fetch_and_verify(&clone);
    assert!(!run.stdout.contains("holds no readable record"), "{run}");
    assert_passes(run, &project.head);
}

#[test]
fn a_detached_head_verifies() {
    let project = project();
    let clone = project.sandbox.path("detached");
    project.git(
        &project.sandbox.root,
        &["clone", "-q", &project.url(), text(&clone)],
    );
    project.git(&clone, &["checkout", "-q", "--detach", &project.head]);
    assert_passes(project.fetch_and_verify(&clone), &project.head);
}

#[test]
fn a_shallow_boundary_is_never_named_as_the_root() {
    let project = project();
    let clone = project.sandbox.path("shallow");
    project.git(
        &project.sandbox.root,
        &["clone", "-q", "--depth", "1", &project.url(), text(&clone)],
    );
    // Attesting here would name the boundary as the history's root: refused, with why.
    let run = project.sandbox.hpp_in(
        &clone,
        &[
            "attest",
            "create",
            "--spec",
            "README",
            "--maker",
            "agent-a",
            "--checker",
            "checker-c",
            "--session",
            "review:2",
            "--verdict",
            "approved",
        ],
    );
    let stderr = run.refused();
    assert!(stderr.contains("shallow"), "{stderr}");
}

#[test]
fn control_an_unattested_head_fails_in_a_depth_one_checkout() {
    let project = project();
    let late = project.unattested_head();
    let dir = project.dir("by-id");
    checkout_by_id(&project, &dir, &late);
    let run = project.fetch_and_verify(&dir);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stdout.contains("FAIL"), "{run}");
    assert!(run.stdout.contains("no attestation for its tree"), "{run}");
}

#[test]
fn control_a_shallow_clone_that_cannot_fetch_the_roots_says_what_was_not_checked() {
    let project = project();
    // A server that serves no commit by id that is not a ref's tip (protocol v0 without
    // allowAnySHA1InWant): the roots cannot be fetched by id.
    project.git(
        &project.remote,
        &["config", "uploadpack.allowAnySHA1InWant", "false"],
    );
    let clone = project.sandbox.path("shallow");
    project.git(
        &project.sandbox.root,
        &["clone", "-q", "--depth", "1", &project.url(), text(&clone)],
    );
    project.git(&clone, &["config", "protocol.version", "0"]);
    // Taking records in does not need the history's roots (the loop's gates are read with
    // the roots left to `verify`), so every record comes in; verify then says what it could
    // not check.
    let fetched = project.sandbox.hpp_in(&clone, &["fetch", "origin"]).ok();
    assert!(
        fetched.contains("updated refs/hpp/attestations/"),
        "{fetched}"
    );
    assert!(fetched.contains("updated refs/hpp/loops/"), "{fetched}");
    // Then the remote is gone (moved, offline): the history's commits cannot be fetched either.
    project.git(
        &clone,
        &[
            "remote",
            "set-url",
            "origin",
            text(&project.sandbox.path("gone.git")),
        ],
    );
    // Nothing learnt before is kept: the fetch above read the loop's gates, which learnt the
    // history's roots from the remote while it was there.
    std::fs::remove_file(clone.join(".git/hpp-cache/roots")).expect("the roots were learnt");
    let run = project.sandbox.hpp_in(&clone, &["verify", "HEAD"]);
    assert_eq!(run.code, 2, "not a pass: {run}");
    assert!(
        run.stdout.contains("not checked: this clone is shallow"),
        "{run}"
    );
    let boundary = project.git(&clone, &["rev-parse", "HEAD"]);
    assert!(
        !run.stdout
            .contains(&format!("rooted at {}", &boundary[..12])),
        "the boundary is not named as the root: {run}"
    );
    assert!(!run.stdout.contains("holds no readable record"), "{run}");
    assert!(run.stdout.contains("fix: deepen this clone"), "{run}");
}

/// A shallow clone of `project` whose records are in and whose learnt roots are forgotten,
/// pointed at a remote that accepts connections and never answers (a git:// listener on
/// 127.0.0.1 that reads and sleeps); returns the clone and the listener's port.
fn shallow_against_a_silent_remote(project: &Project) -> (PathBuf, std::net::TcpListener) {
    let clone = project.sandbox.path("shallow-silent");
    project.git(
        &project.sandbox.root,
        &["clone", "-q", "--depth", "1", &project.url(), text(&clone)],
    );
    project.sandbox.hpp_in(&clone, &["fetch", "origin"]).ok();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
    let port = listener.local_addr().expect("bound").port();
    let url = format!("git://127.0.0.1:{port}/project.git");
    project.git(&clone, &["remote", "set-url", "origin", &url]);
    let _ = std::fs::remove_file(clone.join(".git/hpp-cache/roots"));
    (clone, listener)
}

#[test]
fn a_remote_that_never_answers_is_given_its_time_and_then_refused() {
    let project = project();
    let (clone, listener) = shallow_against_a_silent_remote(&project);
    // Accept and hold every connection, answering nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    project.git(&clone, &["config", "hpp.fetchTimeout", "2"]);
    let started = std::time::Instant::now();
    let run = project.sandbox.hpp_in(&clone, &["verify", "HEAD"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the reader waited past the timeout: {:?}",
        started.elapsed()
    );
    assert_eq!(run.code, 2, "not a pass: {run}");
    assert!(
        run.stdout
            .contains("no answer within 2 s (git config hpp.fetchTimeout)"),
        "{run}"
    );
    assert!(
        run.stdout.contains("not checked: this clone is shallow"),
        "{run}"
    );
}

#[test]
fn control_a_fetch_timeout_that_cannot_be_read_is_refused() {
    let project = project();
    let (clone, _listener) = shallow_against_a_silent_remote(&project);
    project.git(&clone, &["config", "hpp.fetchTimeout", "soon"]);
    let run = project.sandbox.hpp_in(&clone, &["verify", "HEAD"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("hpp.fetchTimeout is \"soon\""),
        "{run}"
    );
}

/// The commands an example CI file runs that call git-hpp (`run: git hpp ...` in a workflow,
/// `- git hpp ...` in a GitLab script), in order; the install step is left to the harness,
/// whose binary is already on `PATH`. Read from the file, so the test breaks if it drifts.
fn hpp_steps(example: &str) -> (String, Vec<String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/ci")
        .join(example);
    let file = std::fs::read_to_string(&path).expect("the example is in the repository");
    let steps: Vec<String> = file
        .lines()
        .map(str::trim)
        .filter_map(|line| {
            line.strip_prefix("run:")
                .or_else(|| line.strip_prefix("- "))
                .map(str::trim)
        })
        .filter(|command| command.starts_with("git hpp "))
        .map(str::to_owned)
        .collect();
    assert!(
        steps
            .first()
            .is_some_and(|s| s.starts_with("git hpp trust pin"))
            && steps.iter().any(|s| s.starts_with("git hpp fetch"))
            && steps
                .iter()
                .any(|s| s.starts_with("git hpp verify --require-signed")),
        "{example} pins the root first, fetches the records and verifies, signatures required: {steps:?}"
    );
    assert!(
        file.contains("cargo install --locked --git"),
        "{example} installs git-hpp"
    );
    (file, steps)
}

/// Runs each step through `sh` in `dir`, as the CI system's shell would, with `HPP_TRUST_ROOT`
/// set to `root` (unset for `None`); returns the first step that fails, or the last one.
fn run_steps(project: &Project, dir: &Path, steps: &[String], root: Option<&str>) -> Run {
    let mut last = None;
    for step in steps {
        let mut cmd = project.sandbox.command("sh", dir);
        cmd.args(["-c", step]);
        match root {
            Some(root) => cmd.env("HPP_TRUST_ROOT", root),
            None => cmd.env_remove("HPP_TRUST_ROOT"),
        };
        let run = Run::from_output(&cmd.output().expect("sh runs"));
        if run.code != 0 {
            return run;
        }
        last = Some(run);
    }
    last.expect("at least one step")
}

/// actions/checkout@v4 as the example configures it (`ref:` the pull request's head): one
/// commit fetched by id at depth 1 into an empty repository, checked out detached.
fn github_checkout(project: &Project, dir: &Path, sha: &str) {
    project.git(dir, &["init", "-q"]);
    project.git(dir, &["remote", "add", "origin", &project.url()]);
    project.git(dir, &["config", "--local", "gc.auto", "0"]);
    project.git(
        dir,
        &[
            "-c",
            "protocol.version=2",
            "fetch",
            "-q",
            "--no-tags",
            "--prune",
            "--no-recurse-submodules",
            "--depth=1",
            "origin",
            &format!("+{sha}:refs/remotes/pull/1/merge"),
        ],
    );
    project.git(dir, &["checkout", "-q", "--force", sha]);
}

/// The GitLab runner's default (`GIT_STRATEGY: fetch`, `GIT_DEPTH` from the example): an empty
/// repository, the branches fetched at that depth, the head checked out detached.
fn gitlab_checkout(project: &Project, dir: &Path, sha: &str, depth: &str) {
    project.git(dir, &["init", "-q"]);
    project.git(dir, &["remote", "add", "origin", &project.url()]);
    project.git(
        dir,
        &[
            "fetch",
            "-q",
            "origin",
            "--prune",
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
            "--depth",
            depth,
        ],
    );
    project.git(dir, &["checkout", "-f", "-q", sha]);
}

/// The `GIT_DEPTH` the GitLab example sets.
fn gitlab_depth(file: &str) -> String {
    file.lines()
        .find_map(|l| l.trim().strip_prefix("GIT_DEPTH:"))
        .map(|v| v.trim().trim_matches('"').to_owned())
        .expect("the example sets GIT_DEPTH")
}

#[test]
fn the_github_actions_example_verifies_an_attested_pull_request_head() {
    let (file, steps) = hpp_steps("github-actions.yml");
    assert!(
        file.contains("ref: ${{ github.event.pull_request.head.sha }}"),
        "the example checks out the head, not GitHub's merge commit"
    );
    let (project, root) = signed_project();
    let dir = project.dir("gha");
    github_checkout(&project, &dir, &project.head);
    assert!(dir.join(".git/shallow").exists());
    let run = run_steps(&project, &dir, &steps, Some(&root));
    assert!(
        run.stdout.contains("signature verified (checker-b)"),
        "{run}"
    );
    assert_passes(run, &project.head);
}

#[test]
fn the_gitlab_ci_example_verifies_an_attested_merge_request_head() {
    let (file, steps) = hpp_steps("gitlab-ci.yml");
    let depth = gitlab_depth(&file);
    // More commits than the depth, so the runner's clone is really cut.
    let (project, pin) = signed_project();
    let dir = project.dir("gitlab");
    let extra: usize = depth.parse().expect("GIT_DEPTH is a number");
    let root = &project.sandbox.root;
    for i in 0..=extra {
        project.git(
            root,
            &["commit", "-q", "--allow-empty", "-m", &format!("e{i}")],
        );
    }
    // Same tree as the attested head: its attestation applies (an attestation is keyed by tree).
    project.git(root, &["push", "-q", text(&project.remote), "main"]);
    let head = project.git(root, &["rev-parse", "HEAD"]);
    gitlab_checkout(&project, &dir, &head, &depth);
    assert!(dir.join(".git/shallow").exists());
    assert_passes(run_steps(&project, &dir, &steps, Some(&pin)), &head);
}

#[test]
fn control_the_ci_examples_fail_an_unattested_head() {
    let (project, root) = signed_project();
    let late = project.unattested_head();
    let (_, steps) = hpp_steps("github-actions.yml");
    let dir = project.dir("gha");
    github_checkout(&project, &dir, &late);
    let run = run_steps(&project, &dir, &steps, Some(&root));
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stdout.contains("no attestation for its tree"), "{run}");

    let (file, steps) = hpp_steps("gitlab-ci.yml");
    let dir = project.dir("gitlab");
    gitlab_checkout(&project, &dir, &late, &gitlab_depth(&file));
    let run = run_steps(&project, &dir, &steps, Some(&root));
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stdout.contains("no attestation for its tree"), "{run}");
}

#[test]
fn the_ci_examples_fail_with_one_line_naming_the_variable_when_the_root_is_unset() {
    let (project, _root) = signed_project();
    for (example, dir) in [("github-actions.yml", "gha"), ("gitlab-ci.yml", "gitlab")] {
        let (_, steps) = hpp_steps(example);
        let dir = project.dir(dir);
        github_checkout(&project, &dir, &project.head);
        let run = run_steps(&project, &dir, &steps, None);
        assert_ne!(run.code, 0, "{example}: {run}");
        assert!(run.stdout.is_empty(), "{example}: {run}");
        assert_eq!(run.stderr.lines().count(), 1, "{example}: {run}");
        assert!(run.stderr.contains("HPP_TRUST_ROOT"), "{example}: {run}");
        assert!(
            !dir.join(".git/refs/hpp").exists()
                && project
                    .git(&dir, &["for-each-ref", "refs/hpp/"])
                    .trim()
                    .is_empty(),
            "{example}: nothing was fetched"
        );
    }
}

/// The ways a forge with no server gate lets anyone with push access undo the policy.
#[derive(Debug, Clone, Copy)]
enum Attack {
    /// refs/hpp/trust deleted.
    Deleted,
    /// refs/hpp/trust replaced by a policy rooted at another key.
    Replaced,
    /// The policy before a revocation committed again on top of it.
    Replayed,
}

/// A signed project whose remote's policy was then attacked; returns it and the pinned root.
fn attacked(attack: Attack) -> (Project, String) {
    let (project, root) = signed_project();
    let remote = &project.remote;
    let sandbox = &project.sandbox;
    match attack {
        Attack::Deleted => {
            sandbox.git_in(remote, &["update-ref", "-d", "refs/hpp/trust"]);
        }
        Attack::Replaced => {
            let other = project.dir("other");
            sandbox.git_in(&other, &["init", "-q"]);
            let key = keygen(sandbox, "other-root");
            sandbox
                .hpp_in(
                    &other,
                    &[
                        "trust",
                        "init",
                        "--root",
                        "root",
                        "--key",
                        &public(&key),
                        "--sign-key",
                        text(&key),
                        "--apply",
                    ],
                )
                .ok();
            sandbox.git_in(
                &other,
                &["push", "-q", "--force", text(remote), "refs/hpp/trust"],
            );
        }
        Attack::Replayed => {
            let root_key = sandbox.path("root");
            sandbox
                .hpp([
                    "trust",
                    "remove",
                    "maker-m",
                    "--sign-key",
                    text(&root_key),
                    "--apply",
                ])
                .ok();
            sandbox.git(["push", "-q", text(remote), "refs/hpp/trust"]);
            let tree = sandbox.git_in(remote, &["rev-parse", "refs/hpp/trust~1^{tree}"]);
            let commit = sandbox.git_in(
                remote,
                &[
                    "commit-tree",
                    tree.trim(),
                    "-p",
                    "refs/hpp/trust",
                    "-m",
                    "hpp trust: add maker-m",
                ],
            );
            sandbox.git_in(remote, &["update-ref", "refs/hpp/trust", commit.trim()]);
        }
    }
    (project, root)
}

#[test]
fn the_ci_examples_fail_when_the_remotes_policy_was_deleted_replaced_or_replayed() {
    for attack in [Attack::Deleted, Attack::Replaced, Attack::Replayed] {
        let (project, root) = attacked(attack);
        for (example, dir) in [("github-actions.yml", "gha"), ("gitlab-ci.yml", "gitlab")] {
            let (_, steps) = hpp_steps(example);
            let dir = project.dir(dir);
            github_checkout(&project, &dir, &project.head);
            let run = run_steps(&project, &dir, &steps, Some(&root));
            assert_ne!(run.code, 0, "{attack:?} {example}: {run}");
            assert!(
                !run.stdout.contains("signature verified"),
                "{attack:?} {example}: {run}"
            );
        }
    }
}

#[test]
fn a_range_that_runs_past_the_shallow_boundary_is_refused_not_cut_short() {
    let project = project();
    let root = &project.sandbox.root;
    // Five commits on a branch, each with the attested tree: the whole range verifies where
    // it is all here.
    project.git(root, &["checkout", "-q", "-b", "feature"]);
    for i in 0..5 {
        project.git(
            root,
            &["commit", "-q", "--allow-empty", "-m", &format!("f{i}")],
        );
    }
    project.git(root, &["push", "-q", text(&project.remote), "feature"]);
    let head = project.git(root, &["rev-parse", "HEAD"]);

    let cut = project.dir("cut");
    gitlab_checkout(&project, &cut, &head, "2");
    project.sandbox.hpp_in(&cut, &["fetch", "origin"]).ok();
    let stderr = project
        .sandbox
        .hpp_in(&cut, &["verify", "origin/main..HEAD"])
        .refused();
    assert!(
        stderr.contains("runs past the shallow boundary"),
        "{stderr}"
    );

    // The same range in a clone deep enough to reach its base: every commit listed and passing.
    let deep = project.dir("deep");
    gitlab_checkout(&project, &deep, &head, "10");
    project.sandbox.hpp_in(&deep, &["fetch", "origin"]).ok();
    let run = project
        .sandbox
        .hpp_in(&deep, &["verify", "origin/main..HEAD"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout.matches("ok   ").count(), 5, "{run}");
}
