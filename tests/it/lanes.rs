//! `git hpp lane`: lanes on real linked worktrees, their collisions, their close, the race
//! between two starts, the territory guard and the lane-kit hook scripts as hosts run them.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use crate::harness::{Run, Sandbox};

const REGISTER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/modules/lane-kit/hooks/lane-register.sh"
);
const GUARD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/modules/lane-kit/hooks/territory-guard.sh"
);

fn start(sandbox: &Sandbox, id: &str, territory: &[&str], extra: &[&str]) -> Run {
    let mut args = vec![
        "lane",
        "start",
        id,
        "--role",
        "maker",
        "--model",
        "claude-sonnet-4",
    ];
    args.push("--territory");
    args.extend_from_slice(territory);
    args.extend_from_slice(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

fn lane_dir(sandbox: &Sandbox, id: &str) -> PathBuf {
    sandbox.path(&format!("work.lanes/{id}"))
}

fn lanes_json(sandbox: &Sandbox) -> Value {
    sandbox.hpp(["lane", "list", "--json"]).json(0)
}

fn with_stdin(cmd: std::process::Command, input: &str) -> Run {
    Run::fed(cmd, input)
}

fn hook(sandbox: &Sandbox, script: &str, args: &[&str], payload: &Value) -> Run {
    let mut cmd = sandbox.command("sh", &sandbox.root);
    cmd.arg(script).args(args);
    with_stdin(cmd, &payload.to_string())
}

fn edit(tool: &str, file: &Path, cwd: &Path) -> Value {
    json!({
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"file_path": file, "content": "x"},
        "cwd": cwd,
    })
}

#[test]
fn a_lane_starts_lists_heartbeats_and_closes_on_a_real_worktree() {
    let sandbox = Sandbox::repo();
    let out = start(&sandbox, "ui", &["src/ui/", "docs\\ui"], &["--json"]).json(0);
    let dir = lane_dir(&sandbox, "ui");
    assert_eq!(out["ref"], "refs/hpp/lanes/ui");
    assert_eq!(out["lane"]["territory"], json!(["docs/ui", "src/ui"]));
    assert_eq!(out["lane"]["branch"], "hpp/lane/ui");
    assert_eq!(out["lane"]["schema"], "hpp.lane/v1");
    assert!(dir.join("README").is_file(), "the worktree is checked out");
    assert_eq!(
        sandbox.git_in(&dir, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "hpp/lane/ui"
    );
    assert_eq!(
        sandbox.git(["status", "--porcelain"]),
        "",
        "the user's tree is untouched"
    );

    let list = lanes_json(&sandbox);
    assert_eq!(list["lanes"][0]["id"], "ui");
    assert_eq!(list["lanes"][0]["liveness"], "alive");
    assert_eq!(list["lanes"][0]["status"], "open");
    assert_eq!(list["suspect_after"], 600);
    let started = list["lanes"][0]["started_at"].as_i64().unwrap();
    let later = (started + 700).to_string();
    let suspect = sandbox
        .hpp(["lane", "list", "--json", "--now", &later])
        .json(0);
    assert_eq!(suspect["lanes"][0]["liveness"], "suspect");
    let dead = (started + 1801).to_string();
    let dead = sandbox
        .hpp(["lane", "list", "--json", "--now", &dead])
        .json(0);
    assert_eq!(dead["lanes"][0]["liveness"], "dead");
    sandbox.git(["config", "hpp.lane.suspectAfter", "10"]);
    sandbox.git(["config", "hpp.lane.deadAfter", "20"]);
    let by_config = (started + 15).to_string();
    let by_config = sandbox
        .hpp(["lane", "list", "--json", "--now", &by_config])
        .json(0);
    assert_eq!(by_config["lanes"][0]["liveness"], "suspect");

    // Without an id, the heartbeat goes to the lane whose worktree holds the cwd.
    let beat = sandbox
        .hpp_in(&dir, &["lane", "heartbeat", "--json"])
        .json(0);
    assert_eq!(
        (beat["lane"]["id"].as_str(), beat["written"].as_bool()),
        (Some("ui"), Some(true))
    );
    let throttled = sandbox
        .hpp_in(
            &dir,
            &["lane", "heartbeat", "--min-interval", "3600", "--json"],
        )
        .json(0);
    assert_eq!(throttled["written"], false);
    let log = sandbox.git(["log", "--format=%s", "refs/hpp/lanes/ui"]);
    assert_eq!(log, "hpp: lane heartbeat ui\nhpp: lane claim ui");

    let closed = sandbox.hpp(["lane", "close", "ui", "--json"]).json(0);
    assert_eq!(closed["worktree_removed"], true);
    assert_eq!(closed["branch_deleted"], true);
    assert!(!dir.exists());
    assert_eq!(sandbox.git(["branch", "--list", "hpp/lane/*"]), "");
    let after = lanes_json(&sandbox);
    assert_eq!(after["lanes"][0]["status"], "closed");
    assert_eq!(after["lanes"][0]["liveness"], "dead");
    let again = sandbox.hpp(["lane", "close", "ui"]).refused();
    assert_eq!(again, "lane ui is closed");
    let reopened = start(&sandbox, "ui", &["src/ui"], &[]);
    reopened.ok();
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/lanes/ui"]),
        "4",
        "a closed lane restarts forward on its own log"
    );
}

#[test]
fn control_a_colliding_exclusive_start_is_refused_before_anything_is_written() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "core", &["src"], &[]).ok();
    let refs = sandbox.hpp_refs();
    let reason = start(&sandbox, "api", &["src/api", "docs"], &[]).refused();
    assert_eq!(
        reason,
        "lane api would collide with alive exclusive lane core on src, src/api"
    );
    assert_eq!(sandbox.hpp_refs(), refs, "nothing was written");
    assert!(!lane_dir(&sandbox, "api").exists());
    assert_eq!(sandbox.git(["branch", "--list", "hpp/lane/api"]), "");
    let same = start(&sandbox, "same", &["src"], &[]).refused();
    assert!(same.contains("lane core on src"), "{same}");
}

#[test]
fn shared_dead_closed_and_disjoint_lanes_do_not_collide() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "core", &["src"], &[]).ok();
    start(&sandbox, "beside", &["srcx", "src-other"], &[]).ok();
    start(&sandbox, "docs", &["src/docs"], &["--shared"]).ok();
    // A lane whose last heartbeat is far in the past is dead and holds nothing.
    start(&sandbox, "old", &["lib"], &["--now", "1000"]).ok();
    start(&sandbox, "new", &["lib/a"], &[]).ok();
    // A closed lane holds nothing either.
    start(&sandbox, "gone", &["tools"], &[]).ok();
    sandbox.hpp(["lane", "close", "gone"]).ok();
    start(&sandbox, "next", &["tools"], &[]).ok();
    let ids: Vec<String> = lanes_json(&sandbox)["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "{}:{}",
                l["id"].as_str().unwrap(),
                l["liveness"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            "beside:alive",
            "core:alive",
            "docs:alive",
            "gone:dead",
            "new:alive",
            "next:alive",
            "old:dead"
        ]
    );
}

#[test]
fn control_nested_territories_collide_only_at_slash_boundaries() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "a", &["src/a"], &[]).ok();
    start(&sandbox, "x", &["srcx"], &[]).ok();
    let nested = start(&sandbox, "b", &["src"], &[]).refused();
    assert!(nested.contains("lane a on src, src/a"), "{nested}");
    let whole = start(&sandbox, "all", &["."], &[]).refused();
    assert!(whole.contains("would collide"), "{whole}");
    start(&sandbox, "c", &["src/ab"], &[]).ok();
}

#[test]
fn control_bad_ids_territories_and_paths_are_refused() {
    let sandbox = Sandbox::repo();
    let id = start(&sandbox, "a/b", &["src"], &[]).refused();
    assert!(id.contains("invalid lane id"), "{id}");
    let path = start(&sandbox, "up", &["../elsewhere"], &[]).refused();
    assert!(path.contains("invalid territory path"), "{path}");
    let inside = start(&sandbox, "in", &["src"], &["--path", "lanes/in"]).refused();
    assert!(inside.contains("is inside the worktree"), "{inside}");
    // An absolute territory is refused, not read as relative; `.git` is never a territory,
    // nor is a symlink leading out of the worktree.
    let absolute = start(&sandbox, "abs", &["/etc"], &[]).refused();
    assert!(absolute.contains("not an absolute path"), "{absolute}");
    let git = start(&sandbox, "git", &[".git/hooks"], &[]).refused();
    assert!(git.contains("cannot be inside .git"), "{git}");
    std::os::unix::fs::symlink(sandbox.path("elsewhere"), sandbox.root.join("link"))
        .expect("a symlink");
    std::fs::create_dir_all(sandbox.path("elsewhere")).expect("writable");
    let linked = start(&sandbox, "link", &["link/src"], &[]).refused();
    assert!(linked.contains("resolves outside the worktree"), "{linked}");
    std::fs::remove_file(sandbox.root.join("link")).expect("removable");
    let role = sandbox
        .hpp([
            "lane",
            "start",
            "r",
            "--territory",
            "src",
            "--role",
            "Big Boss",
            "--model",
            "m",
        ])
        .refused();
    assert!(role.contains("invalid role"), "{role}");
    let bad = sandbox
        .hpp([
            "lane",
            "list",
            "--suspect-after",
            "100",
            "--dead-after",
            "50",
        ])
        .refused();
    assert!(bad.contains("0 < suspect-after < dead-after"), "{bad}");
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
    let elsewhere = sandbox.path("my-lane");
    start(
        &sandbox,
        "here",
        &["src"],
        &["--path", elsewhere.to_str().unwrap()],
    )
    .ok();
    assert!(elsewhere.join("README").is_file());
}

#[test]
fn control_close_refuses_each_kind_of_unsaved_work_and_names_it() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "w", &["src"], &[]).ok();
    let dir = lane_dir(&sandbox, "w");
    let close = || sandbox.hpp(["lane", "close", "w"]).refused();

    std::fs::write(dir.join("README"), "changed\n").unwrap();
    assert!(close().contains("holds unsaved work: 1 modified (README); nothing was closed"));
    sandbox.git_in(&dir, &["add", "README"]);
    let staged = close();
    assert!(
        staged.contains("1 staged (README)") && !staged.contains("modified"),
        "{staged}"
    );
    sandbox.git_in(&dir, &["reset", "-q", "--hard"]);

    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/new.rs"), "fn main() {}\n").unwrap();
    assert!(close().contains("1 untracked (src/new.rs)"));
    std::fs::remove_dir_all(dir.join("src")).unwrap();

    sandbox.git_in(&dir, &["commit", "-q", "--allow-empty", "-m", "lane work"]);
    let commit = sandbox.git_in(&dir, &["rev-parse", "HEAD"]);
    let unmerged = close();
    assert!(
        unmerged.contains(&format!(
            "1 commit on hpp/lane/w ({}) not on any other branch or ref",
            &commit[..12]
        )),
        "{unmerged}"
    );
    assert_eq!(
        lanes_json(&sandbox)["lanes"][0]["status"],
        "open",
        "nothing was closed"
    );

    // An ignored file is not work: once the commit is merged, the close goes through.
    std::fs::write(sandbox.root.join(".git/info/exclude"), "build/\n").unwrap();
    std::fs::create_dir_all(dir.join("build")).unwrap();
    std::fs::write(dir.join("build/out.o"), "x").unwrap();
    sandbox.git(["merge", "-q", "--ff-only", "hpp/lane/w"]);
    let closed = sandbox.hpp(["lane", "close", "w", "--json"]).json(0);
    assert_eq!(closed["worktree_removed"], true);
    assert!(!dir.exists());
    assert_eq!(
        sandbox.git(["rev-parse", "HEAD"]),
        commit,
        "the work is kept on main"
    );
}

#[test]
fn keep_worktree_closes_the_claim_and_leaves_everything_on_disk() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "k", &["src"], &[]).ok();
    let dir = lane_dir(&sandbox, "k");
    std::fs::write(dir.join("notes.txt"), "draft\n").unwrap();
    let closed = sandbox
        .hpp(["lane", "close", "k", "--keep-worktree", "--json"])
        .json(0);
    assert_eq!(closed["worktree_removed"], false);
    assert!(dir.join("notes.txt").is_file());
    assert_eq!(
        sandbox.git(["branch", "--list", "hpp/lane/k"]),
        "+ hpp/lane/k"
    );
    let reason = sandbox.hpp_in(&dir, &["lane", "heartbeat"]).refused();
    assert!(reason.contains("is in no open lane's worktree"), "{reason}");
}

fn spawn(sandbox: &Sandbox, id: &str, territory: &str) -> Child {
    sandbox
        .hpp_command(
            &sandbox.root,
            &[
                "lane",
                "start",
                id,
                "--territory",
                territory,
                "--role",
                "maker",
                "--model",
                "m",
            ],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git-hpp starts")
}

#[test]
fn control_racing_starts_on_colliding_territory_never_both_succeed() {
    for round in 0..3 {
        let sandbox = Sandbox::repo();
        let racers = [
            ("r1", "src"),
            ("r2", "src/a"),
            ("r3", "src/a/b"),
            ("r4", "."),
        ];
        let children: Vec<Child> = racers
            .iter()
            .map(|(id, t)| spawn(&sandbox, id, t))
            .collect();
        let runs: Vec<Run> = children
            .into_iter()
            .map(|c| Run::from_output(&c.wait_with_output().expect("the racer ends")))
            .collect();
        let shown = runs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        let winners = runs.iter().filter(|r| r.code == 0).count();
        assert_eq!(
            winners, 1,
            "round {round}: exactly one racer wins:\n{shown}"
        );
        for loser in runs.into_iter().filter(|r| r.code != 0) {
            let reason = loser.refused();
            assert!(reason.contains("would collide with"), "{reason}");
        }
        let open: Vec<Value> = lanes_json(&sandbox)["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["status"] == "open")
            .cloned()
            .collect();
        assert_eq!(open.len(), 1, "round {round}: one open claim");
        let worktrees = sandbox.git(["worktree", "list", "--porcelain"]);
        assert_eq!(worktrees.matches("worktree ").count(), 2, "{worktrees}");
    }
}

#[test]
fn a_glob_territory_is_refused_at_start_with_the_path_to_use() {
    // Issue 30: `docs/**` was accepted, then the guard denied `docs/inside.md`.
    let sandbox = Sandbox::repo();
    for glob in ["docs/**", "docs/*"] {
        let refused = start(&sandbox, "docs", &[glob], &[]).refused();
        assert!(
            refused.contains("is a path, not a glob (use \"docs\")"),
            "{refused}"
        );
    }
    assert_eq!(
        sandbox.git(["for-each-ref", "refs/hpp/"]),
        "",
        "nothing written"
    );
}

#[test]
fn control_the_directory_a_glob_refusal_names_covers_the_files_under_it() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "docs", &["docs"], &[]).ok();
    let dir = lane_dir(&sandbox, "docs");
    let inside = hook(
        &sandbox,
        GUARD,
        &[],
        &edit("Write", &dir.join("docs/inside.md"), &dir),
    );
    assert_eq!((inside.code, inside.stdout.as_str()), (0, ""), "{inside}");
    let outside = hook(
        &sandbox,
        GUARD,
        &[],
        &edit("Write", &dir.join("src/a.rs"), &dir),
    );
    assert!(outside.stdout.contains("\"deny\""), "{outside}");
}

#[test]
fn the_territory_guard_reads_a_shell_call_that_writes_as_the_edit_it_is() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "ui", &["src/ui"], &[]).ok();
    let dir = lane_dir(&sandbox, "ui");
    let git_guard = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/modules/lane-kit/hooks/git-guard.sh"
    );
    let bash = |command: &str| {
        json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}, "cwd": dir})
    };
    let patch = "*** Begin Patch\n*** Add File: src/api/x.rs\n+fn x() {}\n*** End Patch\n";
    for command in [
        format!("apply_patch <<'EOF'\n{patch}EOF\n"),
        "echo 'fn x() {}' > src/api/x.rs".to_owned(),
        "date | tee src/api/x.rs".to_owned(),
    ] {
        let run = hook(&sandbox, git_guard, &["codex"], &bash(&command));
        assert_eq!(run.code, 2, "{command}: {run}");
        assert!(
            run.stderr
                .contains("lane territory guard: src/api/x.rs is outside lane ui's territory"),
            "{command}: {run}"
        );
    }
    // Inside the territory, and a command that writes nothing, pass silently.
    for command in [
        "echo 'fn y() {}' > src/ui/y.rs".to_owned(),
        format!(
            "apply_patch <<'EOF'\n{}EOF\n",
            patch.replace("src/api", "src/ui")
        ),
        "cargo test 2>&1".to_owned(),
    ] {
        let run = hook(&sandbox, git_guard, &["codex"], &bash(&command));
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{command}: {run}");
    }
}

#[test]
fn the_guard_allows_inside_the_territory_and_denies_outside_it_as_claude_code_reads_it() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "ui", &["src/ui"], &["--shared"]).ok();
    start(&sandbox, "core", &["src/ui/core"], &[]).ok();
    let dir = lane_dir(&sandbox, "ui");

    let inside = hook(
        &sandbox,
        GUARD,
        &[],
        &edit("Write", &dir.join("src/ui/a.rs"), &dir),
    );
    assert_eq!((inside.code, inside.stdout.as_str()), (0, ""), "{inside}");

    let outside = hook(
        &sandbox,
        GUARD,
        &[],
        &edit("Edit", &dir.join("srcx/b.rs"), &dir),
    );
    assert_eq!(outside.code, 0, "{outside}");
    let out: Value = serde_json::from_str(&outside.stdout).expect("the denial is JSON");
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecisionReason"],
        "lane territory guard: srcx/b.rs is outside lane ui's territory (src/ui)"
    );

    let taken = hook(
        &sandbox,
        GUARD,
        &[],
        &edit("MultiEdit", Path::new("src/ui/core/m.rs"), &dir),
    );
    let taken: Value = serde_json::from_str(&taken.stdout).expect("the denial is JSON");
    assert!(
        taken["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("inside the territory of alive exclusive lane core (src/ui/core)")
    );

    let main = hook(
        &sandbox,
        GUARD,
        &[],
        &edit("Write", &sandbox.root.join("src/ui/a.rs"), &dir),
    );
    assert!(
        main.stdout.contains("\"deny\""),
        "the main worktree is off limits:\n{main}"
    );

    let codex = hook(
        &sandbox,
        GUARD,
        &["codex"],
        &json!({
            "tool_name": "apply_patch",
            "tool_input": {"command": "*** Begin Patch\n*** Add File: docs/x.md\n+hi\n*** End Patch\n"},
            "cwd": dir,
        }),
    );
    assert_eq!(codex.code, 2, "{codex}");
    assert!(
        codex
            .stderr
            .contains("docs/x.md is outside lane ui's territory"),
        "{codex}"
    );
}

#[test]
fn control_the_guard_is_silent_outside_a_lane_and_for_other_tools() {
    let sandbox = Sandbox::repo();
    let none = hook(
        &sandbox,
        GUARD,
        &[],
        &edit("Write", &sandbox.root.join("x"), &sandbox.root),
    );
    assert_eq!((none.code, none.stdout.as_str()), (0, ""), "{none}");
    start(&sandbox, "ui", &["src/ui"], &[]).ok();
    let dir = lane_dir(&sandbox, "ui");
    let read = hook(
        &sandbox,
        GUARD,
        &[],
        &json!({
            "tool_name": "Read", "tool_input": {"file_path": dir.join("README")}, "cwd": dir,
        }),
    );
    assert_eq!((read.code, read.stdout.as_str()), (0, ""), "{read}");
    let garbage = with_stdin(
        sandbox.hpp_command(&dir, &["lane", "guard", "--host", "claude-code"]),
        "not json",
    );
    assert!(
        garbage
            .refused()
            .contains("hook payload on stdin is not JSON")
    );
}

#[test]
fn the_register_hook_tells_the_agent_its_lane_and_heartbeats_throttled() {
    let sandbox = Sandbox::repo();
    let nothing = hook(
        &sandbox,
        REGISTER,
        &["claude-code"],
        &json!({
            "hook_event_name": "SessionStart", "cwd": sandbox.root,
        }),
    );
    assert_eq!(
        (nothing.code, nothing.stdout.as_str()),
        (0, ""),
        "{nothing}"
    );

    start(&sandbox, "ui", &["src/ui"], &[]).ok();
    let dir = lane_dir(&sandbox, "ui");
    let session = hook(
        &sandbox,
        REGISTER,
        &["claude-code"],
        &json!({
            "hook_event_name": "SessionStart", "source": "startup", "cwd": dir,
        }),
    );
    assert_eq!(session.code, 0, "{session}");
    let out: Value = serde_json::from_str(&session.stdout).expect("the context is JSON");
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = out["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.contains("You work in lane ui"), "{context}");
    assert!(context.contains("exclusive territory: src/ui"), "{context}");
    let beats = || sandbox.git(["rev-list", "--count", "refs/hpp/lanes/ui"]);
    assert_eq!(beats(), "2");

    let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": dir});
    let tool = hook(&sandbox, REGISTER, &["claude-code"], &post);
    assert_eq!((tool.code, tool.stdout.as_str()), (0, ""), "{tool}");
    assert_eq!(
        beats(),
        "2",
        "a heartbeat younger than a minute is not repeated"
    );
}

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lanes/");

fn example_hook(sandbox: &Sandbox, cwd: &Path, script: &str, example: &str) -> Run {
    let payload =
        std::fs::read_to_string(format!("{EXAMPLES}{example}")).expect("the example exists");
    let mut cmd = sandbox.command("sh", cwd);
    cmd.arg(script);
    with_stdin(cmd, &payload)
}

#[test]
fn the_example_payloads_give_their_documented_answers_inside_a_lane() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "ui", &["src/ui"], &[]).ok();
    let dir = lane_dir(&sandbox, "ui");
    // Without a cwd in the payload, the hook's own directory picks the lane.
    let inside = example_hook(&sandbox, &dir, GUARD, "pretooluse-edit-inside.json");
    assert_eq!((inside.code, inside.stdout.as_str()), (0, ""), "{inside}");
    let outside = example_hook(&sandbox, &dir, GUARD, "pretooluse-write-outside.json");
    let out: Value = serde_json::from_str(&outside.stdout).expect("the denial is JSON");
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecisionReason"],
        "lane territory guard: docs/guide.md is outside lane ui's territory (src/ui)"
    );
    let session = example_hook(&sandbox, &dir, REGISTER, "session-start.json");
    assert!(session.stdout.contains("You work in lane ui"), "{session}");
    // In the user's own worktree there is no lane, so the same payloads pass silently.
    let main = example_hook(
        &sandbox,
        &sandbox.root,
        GUARD,
        "pretooluse-write-outside.json",
    );
    assert_eq!((main.code, main.stdout.as_str()), (0, ""), "{main}");
}

#[test]
fn a_lane_closes_from_inside_its_own_worktree_and_the_close_is_recorded() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "me", &["src"], &[]).ok();
    let dir = lane_dir(&sandbox, "me");
    let closed = sandbox
        .hpp_in(&dir, &["lane", "close", "me", "--json"])
        .json(0);
    assert_eq!(closed["worktree_removed"], true);
    assert!(!dir.exists());
    assert_eq!(lanes_json(&sandbox)["lanes"][0]["status"], "closed");
}

#[test]
fn control_a_heartbeat_in_the_future_of_now_is_refused_not_judged() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "f", &["src"], &[]).ok();
    let reason = sandbox.hpp(["lane", "list", "--now", "5"]).refused();
    assert!(reason.starts_with("lane f: heartbeat_at "), "{reason}");
    assert!(
        reason.ends_with("is in the future of now 5 or negative"),
        "{reason}"
    );
}

fn bash_call(command: &str, cwd: &Path) -> Value {
    json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": cwd,
    })
}

fn guard_bash(sandbox: &Sandbox, dir: &Path, host: &str, command: &str) -> Run {
    with_stdin(
        sandbox.hpp_command(dir, &["lane", "guard", "--host", host]),
        &bash_call(command, dir).to_string(),
    )
}

#[test]
fn the_git_guard_asks_about_a_sweeping_git_call_while_another_lane_is_alive() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "ui", &["src/ui/"], &[]).ok();
    start(&sandbox, "api", &["src/api/"], &[]).ok();
    let dir = lane_dir(&sandbox, "ui");
    let asked = guard_bash(
        &sandbox,
        &dir,
        "claude-code",
        "git add -A && git commit -m wip",
    );
    assert_eq!(asked.code, 0, "{asked}");
    let answer: Value = serde_json::from_str(&asked.stdout).expect("a JSON answer");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "ask",
        "{answer}"
    );
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .expect("a reason");
    assert!(
        reason.contains("git add -A") && reason.contains("api"),
        "{reason}"
    );
    // Named files pass; Codex cannot ask, so it refuses; `block` refuses on every host.
    let named = guard_bash(&sandbox, &dir, "claude-code", "git add src/ui/a.rs");
    assert_eq!((named.code, named.stdout.as_str()), (0, ""), "{named}");
    let codex = guard_bash(&sandbox, &dir, "codex", "git reset --hard");
    assert!(codex.stdout.contains("deny") || codex.code == 2, "{codex}");
    sandbox.git(["config", "hpp.lane.gitGuard", "block"]);
    let blocked = guard_bash(&sandbox, &dir, "claude-code", "git stash");
    let answer: Value = serde_json::from_str(&blocked.stdout).expect("a JSON answer");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{answer}"
    );
}

#[test]
fn control_with_no_other_lane_alive_the_git_guard_stays_silent() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "ui", &["src/ui/"], &[]).ok();
    let dir = lane_dir(&sandbox, "ui");
    let alone = guard_bash(&sandbox, &dir, "claude-code", "git add -A");
    assert_eq!((alone.code, alone.stdout.as_str()), (0, ""), "{alone}");
    start(&sandbox, "api", &["src/api/"], &[]).ok();
    sandbox.hpp(["lane", "close", "api"]).ok();
    let closed = guard_bash(&sandbox, &dir, "claude-code", "git add -A");
    assert_eq!(
        (closed.code, closed.stdout.as_str()),
        (0, ""),
        "a closed lane is over: {closed}"
    );
}

#[test]
fn a_person_starts_a_lane_without_role_or_model_and_a_closed_lane_leaves_the_map() {
    let sandbox = Sandbox::repo();
    let started = sandbox
        .hpp(["lane", "start", "notes", "--territory", "notes/", "--json"])
        .json(0);
    assert_eq!(
        (&started["lane"]["role"], &started["lane"]["model"]),
        (&json!("maker"), &json!("human"))
    );
    let lane_ids = |map: &Value| -> Vec<String> {
        map["liveness"]
            .as_object()
            .expect("liveness by lane")
            .keys()
            .cloned()
            .collect()
    };
    let open = sandbox.hpp(["map", "lane"]).json(0);
    assert_eq!(lane_ids(&open), ["notes"]);
    sandbox.hpp(["lane", "close", "notes"]).ok();
    let closed = sandbox.hpp(["map", "lane"]).json(0);
    assert!(
        lane_ids(&closed).is_empty(),
        "a closed lane is over: {closed}"
    );
    let listed = sandbox.hpp(["lane", "list"]).ok();
    assert!(listed.starts_with("notes · closed ·"), "{listed}");
}

#[test]
fn control_a_closed_lane_in_a_source_file_is_still_projected_as_dead() {
    // The map of a SOURCE shows what the source declares; only the lanes read from refs drop
    // the closed ones.
    let sandbox = Sandbox::empty();
    let source = sandbox.path("lanes.json");
    std::fs::write(
        &source,
        json!([{"id": "gone", "territory": ["docs"], "status": "closed", "heartbeat_at": 10}])
            .to_string(),
    )
    .expect("writable");
    let map = sandbox
        .hpp([
            "map",
            "lane",
            source.to_str().expect("UTF-8"),
            "--now",
            "20",
        ])
        .json(0);
    assert_eq!(map["liveness"]["gone"], "dead", "{map}");
}

/// Claude Code's PreToolUse for a Write, as it sends it: session, transcript, cwd, tool and its
/// input.
fn claude_write(file: &Path, cwd: &Path) -> Value {
    json!({
        "session_id": "8f0c2b9e-4c1d-4a57-9b1e-2f6a0d3c7e11",
        "transcript_path": "/home/u/.claude/projects/work/8f0c2b9e.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "pub fn m() {}\n"},
        "tool_use_id": "toolu_01",
    })
}

#[test]
fn a_session_in_no_lane_is_asked_before_it_edits_a_live_exclusive_lane_territory() {
    // Issue 30, item 4: such an edit used to go through silently.
    let sandbox = Sandbox::repo();
    start(&sandbox, "core", &["src/core"], &[]).ok();
    let main = &sandbox.root;
    let file = main.join("src/core/m.rs");
    let asked = hook(&sandbox, GUARD, &[], &claude_write(&file, main));
    assert_eq!(asked.code, 0, "{asked}");
    let answer: Value = serde_json::from_str(&asked.stdout).expect("a JSON answer");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "ask",
        "{answer}"
    );
    let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .expect("a reason");
    assert!(
        reason.starts_with(
            "lane territory guard: src/core/m.rs is inside the territory of alive exclusive lane core (src/core) and this session is in no lane"
        ),
        "{reason}"
    );
    // The lane's own worktree, edited from outside it, is the same territory.
    let theirs = hook(
        &sandbox,
        GUARD,
        &[],
        &claude_write(&lane_dir(&sandbox, "core").join("src/core/m.rs"), main),
    );
    assert!(theirs.stdout.contains("\"ask\""), "{theirs}");
    // Codex cannot ask: it denies, as the policy hook does for MANUAL.
    let codex = hook(
        &sandbox,
        GUARD,
        &["codex"],
        &json!({
            "session_id": "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", "cwd": main,
            "hook_event_name": "PreToolUse", "tool_name": "apply_patch", "tool_use_id": "call_1",
            "tool_input": {"command": "*** Begin Patch\n*** Update File: src/core/m.rs\n@@\n-a\n+b\n*** End Patch\n"},
        }),
    );
    let answer: Value = serde_json::from_str(&codex.stdout).expect("a JSON answer");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("exclusive lane core") && r.contains("cannot ask")),
        "{answer}"
    );
    // hpp.lane.outsideEdits: deny refuses, allow lets it through, anything else is refused.
    sandbox.git(["config", "hpp.lane.outsideEdits", "deny"]);
    let denied = hook(&sandbox, GUARD, &[], &claude_write(&file, main));
    let answer: Value = serde_json::from_str(&denied.stdout).expect("a JSON answer");
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    sandbox.git(["config", "hpp.lane.outsideEdits", "allow"]);
    let allowed = hook(&sandbox, GUARD, &[], &claude_write(&file, main));
    assert_eq!(
        (allowed.code, allowed.stdout.as_str()),
        (0, ""),
        "{allowed}"
    );
    sandbox.git(["config", "hpp.lane.outsideEdits", "sometimes"]);
    let bad = with_stdin(
        sandbox.hpp_command(main, &["lane", "guard", "--host", "claude-code"]),
        &claude_write(&file, main).to_string(),
    );
    assert_eq!(
        bad.refused(),
        "hpp.lane.outsideEdits is `sometimes`: expected ask, deny or allow"
    );
}

#[test]
fn control_outside_every_territory_or_inside_its_own_lane_an_edit_is_silent() {
    let sandbox = Sandbox::repo();
    start(&sandbox, "core", &["src/core"], &[]).ok();
    start(&sandbox, "docs", &["docs"], &["--shared"]).ok();
    let main = &sandbox.root;
    for rel in ["src/corex.rs", "src/ui/a.rs", "docs/guide.md", "README"] {
        let run = hook(&sandbox, GUARD, &[], &claude_write(&main.join(rel), main));
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{rel}: {run}");
    }
    let dir = lane_dir(&sandbox, "core");
    let own = hook(
        &sandbox,
        GUARD,
        &[],
        &claude_write(&dir.join("src/core/m.rs"), &dir),
    );
    assert_eq!((own.code, own.stdout.as_str()), (0, ""), "{own}");
    // Once the lane is closed its territory is free again.
    sandbox.hpp(["lane", "close", "core"]).ok();
    let free = hook(
        &sandbox,
        GUARD,
        &[],
        &claude_write(&main.join("src/core/m.rs"), main),
    );
    assert_eq!((free.code, free.stdout.as_str()), (0, ""), "{free}");
}
