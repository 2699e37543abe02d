//! The pre-push gate, through the real `git push`: installing it (plan, `--apply`,
//! `core.hooksPath`, chaining an existing hook), telling whether it is wired, and which pushes
//! it refuses (an unverified protected tip) and lets through (an attested tip, another branch,
//! a deletion, records).

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::{BIN, Run, Sandbox};

/// The directory of the built binary, so the hook's `git hpp` finds `git-hpp`.
fn bin_dir() -> PathBuf {
    Path::new(BIN)
        .parent()
        .expect("the binary lives in a directory")
        .to_path_buf()
}

/// The test's PATH with the binary's directory first.
fn path_with_bin() -> OsString {
    let mut dirs = vec![bin_dir()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).expect("PATH entries have no separator in them")
}

/// The test's PATH without any directory that holds a `git-hpp`.
fn path_without_bin() -> OsString {
    let dirs = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("git-hpp").exists() && *d != bin_dir())
        .collect::<Vec<_>>();
    std::env::join_paths(dirs).expect("PATH entries have no separator in them")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .expect("the sandbox is writable");
}

/// A repository on `main` (with `out/` ignored and a committed SPEC.md) whose `origin` is a
/// bare remote that already has this `main`; every command runs with the binary on PATH.
struct Gate {
    sandbox: Sandbox,
    remote: PathBuf,
}

fn setup() -> Gate {
    let mut sandbox = Sandbox::repo();
    sandbox.env.insert(
        "PATH".into(),
        path_with_bin().into_string().expect("PATH is UTF-8 here"),
    );
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    sandbox.git(["remote", "add", "origin", text(&remote)]);
    std::fs::write(sandbox.root.join(".gitignore"), "out/\n").expect("the sandbox is writable");
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nThe tool greets.\n")
        .expect("the sandbox is writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    sandbox.git(["push", "-q", "origin", "main"]);
    Gate { sandbox, remote }
}

impl Gate {
    fn hooks_dir(&self) -> PathBuf {
        self.sandbox.root.join(".git/hooks")
    }

    /// Runs `git push <args>` without asserting success.
    fn push(&self, args: &[&str]) -> Run {
        let out = self
            .sandbox
            .command("git", &self.sandbox.root)
            .arg("push")
            .args(args)
            .output()
            .expect("git push runs");
        Run::from_output(&out)
    }

    /// The remote's value of `name`, or "" when it has none.
    fn remote_ref(&self, name: &str) -> String {
        let line = self.sandbox.git(["ls-remote", text(&self.remote), name]);
        line.split('\t').next().unwrap_or_default().to_owned()
    }

    fn head(&self) -> String {
        self.sandbox.git(["rev-parse", "HEAD"])
    }

    /// Commits a change to README.
    fn commit(&self, content: &str) {
        std::fs::write(self.sandbox.root.join("README"), content).expect("writable");
        self.sandbox.git(["commit", "-q", "-a", "-m", content]);
    }

    /// Records an approved, unsigned attestation of the (clean) worktree, i.e. HEAD's tree.
    fn attest(&self) {
        assert!(self.sandbox.git(["status", "--porcelain"]).is_empty());
        let args = crate::harness::attest_args("review:001", "approved");
        self.sandbox.hpp_in(&self.sandbox.root, &args).ok();
    }

    fn install(&self) {
        self.sandbox.hpp(["hooks", "install", "--apply"]).ok();
    }

    /// Writes someone else's pre-push hook that appends a line to `marker` and exits `code`.
    fn foreign_hook(&self, marker: &Path, code: i32) -> String {
        let script = format!(
            "#!/bin/sh\necho \"$1 $(cat | wc -l)\" >> '{}'\necho 'foreign hook ran' >&2\nexit {code}\n",
            marker.display()
        );
        let hook = self.hooks_dir().join("pre-push");
        std::fs::write(&hook, &script).expect("writable");
        set_mode(&hook, 0o755);
        script
    }
}

fn marker_lines(marker: &Path) -> usize {
    std::fs::read_to_string(marker)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[track_caller]
fn assert_push_refused(run: &Run) {
    assert_ne!(run.code, 0, "the push went through:\n{run}");
    assert!(run.stderr.contains("hpp: push to origin refused"), "{run}");
    assert!(
        run.stderr.lines().any(|l| l.starts_with("hint: ")),
        "a refusal says how to fix it:\n{run}"
    );
}

#[test]
fn hooks_install_plans_without_writing_then_apply_installs_an_executable_gate() {
    let gate = setup();
    let hook = gate.hooks_dir().join("pre-push");
    let plan = gate.sandbox.hpp(["hooks", "install"]).ok();
    assert!(plan.contains("plan only"), "{plan}");
    assert!(plan.contains(text(&hook)), "{plan}");
    assert!(!hook.exists(), "a plan writes nothing");

    let applied = gate
        .sandbox
        .hpp(["hooks", "install", "--apply", "--json"])
        .json(0);
    assert_eq!(applied["applied"], true);
    assert_eq!(applied["existing"], "none");
    let script = std::fs::read_to_string(&hook).expect("the hook was written");
    assert!(script.contains("git-hpp: pre-push gate"), "{script}");
    assert!(script.contains("git hpp hook pre-push"), "{script}");
    let mode = std::fs::metadata(&hook)
        .expect("exists")
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "the hook is executable: {mode:o}");

    let again = gate.sandbox.hpp(["hooks", "install", "--json"]).json(0);
    assert_eq!(again["existing"], "current");
    assert_eq!(again["steps"], serde_json::json!([]));
}

#[test]
fn hooks_install_writes_where_core_hooks_path_points_and_git_runs_it_there() {
    let gate = setup();
    gate.sandbox.git(["config", "core.hooksPath", "githooks"]);
    let plan = gate.sandbox.hpp(["hooks", "install", "--json"]).json(0);
    let hook = gate.sandbox.root.join("githooks/pre-push");
    assert_eq!(plan["hook"], text(&hook));
    gate.install();
    assert!(hook.is_file());
    assert!(!gate.hooks_dir().join("pre-push").exists());
    gate.sandbox.hpp(["hooks", "status"]).ok();

    gate.commit("unverified\n");
    let before = gate.remote_ref("refs/heads/main");
    assert_push_refused(&gate.push(&["origin", "main"]));
    assert_eq!(gate.remote_ref("refs/heads/main"), before);
}

#[test]
fn hooks_status_exits_1_unless_the_hook_is_present_executable_and_can_reach_git_hpp() {
    let gate = setup();
    let missing = gate.sandbox.hpp(["hooks", "status", "--json"]).json(1);
    assert_eq!(missing["wired"], false);
    assert_eq!(missing["existing"], "none");

    gate.install();
    let wired = gate.sandbox.hpp(["hooks", "status", "--json"]).json(0);
    assert_eq!(wired["wired"], true);
    assert_eq!(wired["problems"], serde_json::json!([]));

    let hook = gate.hooks_dir().join("pre-push");
    set_mode(&hook, 0o644);
    let silent = gate.sandbox.hpp(["hooks", "status", "--json"]).json(1);
    assert_eq!(silent["executable"], false);
    assert!(
        silent["problems"][0]
            .as_str()
            .unwrap_or_default()
            .contains("not executable"),
        "{silent}"
    );
    set_mode(&hook, 0o755);
    gate.sandbox.hpp(["hooks", "status"]).ok();

    let out = gate
        .sandbox
        .hpp_command(&gate.sandbox.root, &["hooks", "status", "--json"])
        .env("PATH", path_without_bin())
        .output()
        .expect("git-hpp runs");
    let unreachable = Run::from_output(&out).json(1);
    assert_eq!(unreachable["git_hpp_on_path"], false);
    assert_eq!(unreachable["wired"], false);
}

#[test]
fn control_an_unverified_main_is_refused_and_an_attested_one_goes_through() {
    let gate = setup();
    gate.install();
    gate.commit("new work\n");
    let before = gate.remote_ref("refs/heads/main");
    assert!(!before.is_empty());

    let refused = gate.push(&["origin", "main"]);
    assert_push_refused(&refused);
    assert!(
        refused.stderr.contains(&gate.head()[..12]),
        "the refusal names the commit:\n{refused}"
    );
    assert!(
        refused.stderr.contains("git hpp attest create"),
        "the hint is the command that fixes it:\n{refused}"
    );
    assert_eq!(
        gate.remote_ref("refs/heads/main"),
        before,
        "the remote is unchanged"
    );

    gate.attest();
    let pushed = gate.push(&["origin", "main"]);
    assert_eq!(pushed.code, 0, "{pushed}");
    assert_eq!(gate.remote_ref("refs/heads/main"), gate.head());
}

#[test]
fn a_non_protected_branch_a_deletion_and_records_pass_the_gate() {
    let gate = setup();
    gate.install();
    gate.commit("unverified\n");
    gate.sandbox.start_work().ok();

    let topic = gate.push(&["origin", "HEAD:refs/heads/topic"]);
    assert_eq!(topic.code, 0, "{topic}");
    assert_eq!(gate.remote_ref("refs/heads/topic"), gate.head());

    let records = gate.push(&["origin", "refs/hpp/*:refs/hpp/*"]);
    assert_eq!(records.code, 0, "{records}");
    assert_eq!(
        gate.remote_ref("refs/hpp/loops/main"),
        gate.sandbox.git(["rev-parse", "refs/hpp/loops/main"])
    );

    assert!(!gate.remote_ref("refs/heads/main").is_empty());
    // A bare remote refuses to delete its HEAD branch by default; let it, to reach the gate.
    gate.sandbox.git([
        "--git-dir",
        text(&gate.remote),
        "config",
        "receive.denyDeleteCurrent",
        "ignore",
    ]);
    let deleted = gate.push(&["origin", ":refs/heads/main"]);
    assert_eq!(deleted.code, 0, "{deleted}");
    assert_eq!(gate.remote_ref("refs/heads/main"), "");

    // The control: the same unverified commit to main is refused.
    assert_push_refused(&gate.push(&["origin", "main"]));
    assert_eq!(gate.remote_ref("refs/heads/main"), "");
}

#[test]
fn hpp_protect_replaces_the_default_protected_refs() {
    let gate = setup();
    gate.install();
    gate.commit("unverified\n");
    gate.sandbox
        .git(["config", "--add", "hpp.protect", "refs/heads/release/*"]);

    let release = gate.push(&["origin", "HEAD:refs/heads/release/1.0"]);
    assert_push_refused(&release);
    assert!(
        release.stderr.contains("refs/heads/release/1.0"),
        "{release}"
    );
    assert_eq!(gate.remote_ref("refs/heads/release/1.0"), "");

    let main = gate.push(&["origin", "main"]);
    assert_eq!(main.code, 0, "main is no longer protected:\n{main}");
    assert_eq!(gate.remote_ref("refs/heads/main"), gate.head());

    gate.attest();
    let release = gate.push(&["origin", "HEAD:refs/heads/release/1.0"]);
    assert_eq!(release.code, 0, "{release}");
}

#[test]
fn hpp_protect_given_through_git_c_counts_as_the_config_files_do() {
    // Issue 52: `git -c` hands its settings over in GIT_CONFIG_PARAMETERS, which the gate reads.
    let gate = setup();
    gate.install();
    gate.commit("unverified\n");
    let out = gate
        .sandbox
        .command("git", &gate.sandbox.root)
        .args(["-c", "hpp.protect=refs/heads/release/*", "push", "origin"])
        .arg("HEAD:refs/heads/release/1.0")
        .output()
        .expect("git push runs");
    let release = Run::from_output(&out);
    assert_push_refused(&release);
    assert_eq!(gate.remote_ref("refs/heads/release/1.0"), "");
}

#[test]
fn control_without_git_c_the_same_release_branch_is_not_protected() {
    let gate = setup();
    gate.install();
    gate.commit("unverified\n");
    let release = gate.push(&["origin", "HEAD:refs/heads/release/1.0"]);
    assert_eq!(release.code, 0, "{release}");
}

#[test]
fn require_signed_refuses_an_unsigned_attestation() {
    let gate = setup();
    gate.install();
    gate.commit("attested but unsigned\n");
    gate.attest();
    gate.sandbox.git(["config", "hpp.requireSigned", "true"]);
    let before = gate.remote_ref("refs/heads/main");
    let refused = gate.push(&["origin", "main"]);
    assert_push_refused(&refused);
    assert!(refused.stderr.contains("signature"), "{refused}");
    assert_eq!(gate.remote_ref("refs/heads/main"), before);

    gate.sandbox.git(["config", "hpp.requireSigned", "false"]);
    let pushed = gate.push(&["origin", "main"]);
    assert_eq!(pushed.code, 0, "{pushed}");
}

#[test]
fn an_existing_hook_is_chained_and_still_runs_on_every_push() {
    let gate = setup();
    let marker = gate.sandbox.path("marker");
    let script = gate.foreign_hook(&marker, 0);
    let plan = gate.sandbox.hpp(["hooks", "install", "--json"]).json(0);
    assert_eq!(plan["existing"], "other");
    assert_eq!(
        std::fs::read_to_string(gate.hooks_dir().join("pre-push")).expect("still there"),
        script,
        "a plan moves nothing"
    );
    gate.install();
    let chained = gate.hooks_dir().join("pre-push.hpp-chained");
    assert_eq!(
        std::fs::read_to_string(&chained).expect("the old hook is kept"),
        script
    );
    let status = gate.sandbox.hpp(["hooks", "status", "--json"]).json(0);
    assert_eq!(status["chained"], true);

    gate.commit("unverified\n");
    let topic = gate.push(&["origin", "HEAD:refs/heads/topic"]);
    assert_eq!(topic.code, 0, "{topic}");
    assert_eq!(marker_lines(&marker), 1);
    let recorded = std::fs::read_to_string(&marker).expect("the hook wrote it");
    assert_eq!(
        recorded.trim(),
        "origin 1",
        "the chained hook got the remote name and the ref line"
    );

    assert_push_refused(&gate.push(&["origin", "main"]));
    assert_eq!(
        marker_lines(&marker),
        2,
        "it runs first, even when the gate refuses"
    );
    gate.attest();
    let main = gate.push(&["origin", "main"]);
    assert_eq!(main.code, 0, "{main}");
    assert_eq!(marker_lines(&marker), 3);
}

#[test]
fn a_chained_hook_that_fails_blocks_even_a_verified_push() {
    let gate = setup();
    let marker = gate.sandbox.path("marker");
    gate.foreign_hook(&marker, 1);
    gate.install();
    gate.commit("verified\n");
    gate.attest();
    let before = gate.remote_ref("refs/heads/main");
    let blocked = gate.push(&["origin", "main"]);
    assert_ne!(blocked.code, 0, "{blocked}");
    assert!(blocked.stderr.contains("foreign hook ran"), "{blocked}");
    assert!(
        !blocked.stderr.contains("hpp: push to origin refused"),
        "the gate itself had nothing against it:\n{blocked}"
    );
    assert_eq!(gate.remote_ref("refs/heads/main"), before);
    assert_eq!(marker_lines(&marker), 1);
}

#[test]
fn installing_over_another_hook_when_a_chained_one_exists_is_refused() {
    let gate = setup();
    let marker = gate.sandbox.path("marker");
    let kept = gate.hooks_dir().join("pre-push.hpp-chained");
    std::fs::write(&kept, "#!/bin/sh\nexit 0\n").expect("writable");
    let script = gate.foreign_hook(&marker, 0);
    let reason = gate.sandbox.hpp(["hooks", "install", "--apply"]).refused();
    assert!(reason.contains("already exists"), "{reason}");
    assert_eq!(
        std::fs::read_to_string(gate.hooks_dir().join("pre-push")).expect("untouched"),
        script
    );
    assert_eq!(
        std::fs::read_to_string(&kept).expect("untouched"),
        "#!/bin/sh\nexit 0\n"
    );
}
