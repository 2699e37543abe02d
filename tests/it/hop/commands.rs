//! The published Hop alpha's remaining commands and names, through the built `hop` on real
//! repositories: `checkpoint`, `diff`, `history`, `graph`, `skill print|install`, `init PATH`,
//! and the aliases `submit`, `accept`, `inspect`.

use serde_json::Value;

use super::{Launch, accepted, agent, hop, hop_json, init, propose, show, start, write};
use crate::harness::Sandbox;

/// Returns the ids of a JSON array of states.
fn ids(states: &Value) -> Vec<String> {
    states
        .as_array()
        .expect("an array of states")
        .iter()
        .map(|s| s["id"].as_str().expect("an id").to_owned())
        .collect()
}

/// Returns `(status, path)` of each change of a `hop diff --json`.
fn changes(diff: &Value) -> Vec<(String, String)> {
    diff["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["status"].as_str().expect("a status").to_owned(),
                c["path"].as_str().expect("a path").to_owned(),
            )
        })
        .collect()
}

fn attempt_head(s: &Sandbox, l: &Launch) -> String {
    s.git(["rev-parse", &format!("refs/hpp/hop/attempts/{}", l.attempt)])
}

#[test]
fn checkpoint_captures_the_workspace_as_a_c_state_after_the_attempt_head() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "take notes");
    write(&l.workspace, "notes.txt", "first\n");
    let doc = agent(&s, &l, &["checkpoint", &l.state, "--json"]).json(0);
    let state = &doc["data"]["state"];
    let id = state["id"].as_str().expect("a state id");
    assert!(id.starts_with("C_"), "{doc}");
    assert_eq!(state["kind"], "checkpoint");
    assert_eq!(doc["data"]["after"], l.state.as_str());
    assert_eq!(state["parents"][0]["role"], "run_parent");
    assert_eq!(
        show(&s, &format!("refs/hpp/hop/states/{id}:notes.txt")),
        "first"
    );
    assert_eq!(
        attempt_head(&s, &l),
        s.git(["rev-parse", &format!("refs/hpp/hop/states/{id}")]),
        "the attempt's head moved to the checkpoint"
    );
    // The human form prints the new id first; a second checkpoint follows the first.
    write(&l.workspace, "notes.txt", "second\n");
    let out = hop(&s, &["checkpoint", &l.state]).ok();
    let second = out.lines().next().expect("a first line");
    assert!(second.starts_with("C_") && second != id, "{out}");
    assert!(out.contains(&format!("after {id}")), "{out}");
}

#[test]
fn control_checkpoint_of_an_unknown_state_or_an_accepted_state_is_refused_and_writes_nothing() {
    let s = Sandbox::repo();
    let initial = init(&s);
    start(&s, "a");
    let refs = s.hpp_refs();
    let run = hop(&s, &["checkpoint", "P_00000000000000000000000"]).exit(1);
    assert!(run.stderr.contains("unknown state P_0000"), "{run}");
    assert!(run.stdout.is_empty());
    let doc = hop(&s, &["checkpoint", &initial, "--json"]).json(2);
    assert_eq!(doc["exit_code"], 2);
    assert!(
        doc["error"]
            .as_str()
            .expect("an error")
            .contains("belongs to no attempt"),
        "{doc}"
    );
    let run = hop(&s, &["checkpoint", "not-a-state"]).exit(2);
    assert!(run.stderr.contains("invalid value"), "{run}");
    assert_eq!(s.hpp_refs(), refs, "nothing written");
}

#[test]
fn diff_shows_a_state_against_its_parent_as_name_status_and_a_patch() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "reshape");
    write(&l.workspace, "keep.txt", "one\ntwo\nthree\nfour\nfive\n");
    let cp = agent(&s, &l, &["checkpoint", &l.state, "--json"]).json(0)["data"]["state"]["id"]
        .as_str()
        .expect("a checkpoint")
        .to_owned();
    std::fs::rename(l.workspace.join("keep.txt"), l.workspace.join("moved.txt")).expect("mv");
    write(&l.workspace, "README", "hello, edited\n");
    write(&l.workspace, "new.txt", "new\n");
    let r = propose(&s, &l, &[]);
    let diff = hop_json(&s, &["diff", &r]);
    assert_eq!(diff["against"], "run_parent");
    assert_eq!(diff["from"]["state"], cp.as_str());
    assert_eq!(diff["to"]["state"], r.as_str());
    assert_eq!(
        diff["to"]["summary"], "work",
        "a proposal carries its summary"
    );
    assert_eq!(
        changes(&diff),
        [
            ("M".to_owned(), "README".to_owned()),
            ("R".to_owned(), "moved.txt".to_owned()),
            ("A".to_owned(), "new.txt".to_owned()),
        ]
    );
    let rename = &diff["changes"][1];
    assert_eq!(rename["old_path"], "keep.txt");
    assert_eq!(rename["similarity"], 100);
    let patch = diff["patch"].as_str().expect("a patch");
    assert!(patch.contains("diff --git a/README b/README\n"), "{patch}");
    assert!(patch.contains("+hello, edited\n"), "{patch}");
    // The human form: the list, then the same patch.
    let out = hop(&s, &["diff", &r]).ok();
    assert!(out.contains("\nM\tREADME\n"), "{out}");
    assert!(out.contains("\nR100\tkeep.txt\tmoved.txt\n"), "{out}");
    assert!(out.contains("summary: work\n"), "{out}");
    assert!(out.ends_with(patch), "{out}");
}

#[test]
fn diff_compares_two_states_or_the_attempt_base() {
    let s = Sandbox::repo();
    let initial = init(&s);
    let l = start(&s, "add two files");
    write(&l.workspace, "a.txt", "a\n");
    let first = agent(&s, &l, &["checkpoint", &l.state, "--json"]).json(0)["data"]["state"]["id"]
        .as_str()
        .expect("a checkpoint")
        .to_owned();
    let r = propose(&s, &l, &[("b.txt", Some("b\n"))]);
    // Against its parent (the checkpoint), the proposal adds b.txt only.
    assert_eq!(
        changes(&hop_json(&s, &["diff", &r])),
        [("A".to_owned(), "b.txt".to_owned())]
    );
    // Against the attempt's base, both files.
    let base = hop_json(&s, &["diff", "--base", &r]);
    assert_eq!(base["against"], "base");
    assert_eq!(base["from"]["state"], initial.as_str());
    assert_eq!(changes(&base).len(), 2);
    // Two states: from the first to the second.
    let two = hop_json(&s, &["diff", &initial, &first]);
    assert_eq!(two["against"], "state");
    assert_eq!(two["from"]["state"], initial.as_str());
    assert_eq!(two["to"]["state"], first.as_str());
    assert_eq!(changes(&two), [("A".to_owned(), "a.txt".to_owned())]);
    let back = hop_json(&s, &["diff", &first, &initial]);
    assert_eq!(changes(&back), [("D".to_owned(), "a.txt".to_owned())]);
}

#[test]
fn diff_of_the_initial_accepted_state_is_against_the_empty_tree() {
    let s = Sandbox::repo();
    let initial = init(&s);
    let diff = hop_json(&s, &["diff", &initial]);
    assert_eq!(diff["against"], "empty_tree");
    assert_eq!(diff["from"]["state"], Value::Null);
    assert_eq!(changes(&diff), [("A".to_owned(), "README".to_owned())]);
}

#[test]
fn control_diff_of_a_state_that_does_not_exist_is_refused() {
    let s = Sandbox::repo();
    let initial = init(&s);
    let doc = hop(&s, &["diff", "R_00000000000000000000000", "--json"]).json(1);
    assert_eq!(doc["ok"], false);
    assert!(
        doc["error"]
            .as_str()
            .expect("an error")
            .contains("unknown state R_0000"),
        "{doc}"
    );
    let run = hop(&s, &["diff", &initial, "C_00000000000000000000000"]).exit(1);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.starts_with("hop: unknown state C_0000"), "{run}");
    // A malformed id is a usage error; --base with two states too.
    let run = hop(&s, &["diff", "R_1"]).exit(2);
    assert!(run.stderr.contains("invalid value"), "{run}");
    let run = hop(&s, &["diff", "--base", &initial, &initial]).exit(2);
    assert!(run.stderr.contains("cannot be used with"), "{run}");
}

#[test]
fn history_lists_the_accepted_chain_newest_first_with_summaries() {
    let s = Sandbox::repo();
    let initial = init(&s);
    let a = start(&s, "a");
    let ra = propose(&s, &a, &[("a.txt", Some("a\n"))]);
    let landed = hop_json(&s, &["land", &ra]);
    let head = landed["accepted"]["id"].as_str().expect("an accepted id");
    let history = hop_json(&s, &["history"]);
    assert_eq!(history["accepted"], head);
    assert_eq!(ids(&history["states"]), [head, initial.as_str()]);
    assert_eq!(history["states"][1]["summary"], "initial accepted state");
    assert!(history["states"][0]["summary"].is_string(), "{history}");
    let out = hop(&s, &["history"]).ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with(head), "{out}");
    assert!(lines[1].ends_with("initial accepted state"), "{out}");
}

#[test]
fn graph_shows_every_state_with_its_kind_and_parent_roles() {
    let s = Sandbox::repo();
    let initial = init(&s);
    let l = start(&s, "first line of the prompt\nsecond line");
    let r = propose(&s, &l, &[("a.txt", Some("a\n"))]);
    hop(&s, &["land", &r]).ok();
    let graph = hop_json(&s, &["graph"]);
    let states = graph["states"].as_array().expect("states");
    let kinds: Vec<&str> = states
        .iter()
        .map(|n| n["kind"].as_str().expect("a kind"))
        .collect();
    assert_eq!(kinds, ["accepted", "prompt", "proposal", "accepted"]);
    assert_eq!(states[0]["id"], initial.as_str());
    assert_eq!(states[1]["label"], "first line of the prompt");
    assert_eq!(
        states[2]["label"], "work",
        "a proposal is labelled by its summary"
    );
    let roles: Vec<&str> = states[3]["parents"]
        .as_array()
        .expect("parents")
        .iter()
        .map(|p| p["role"].as_str().expect("a role"))
        .collect();
    assert_eq!(roles, ["canonical_parent", "proposal_parent"]);
    assert_eq!(graph["accepted"], states[3]["id"]);
    let text = hop(&s, &["graph"]).ok();
    assert!(
        text.contains(&format!(
            "prompt     {}  run_parent={initial} canonical_anchor={initial}  first line of the prompt",
            l.state
        )),
        "{text}"
    );
    assert!(text.contains("(accepted head)"), "{text}");
    let mermaid = hop(&s, &["graph", "--format", "mermaid"]).ok();
    assert!(mermaid.starts_with("flowchart TD\n"), "{mermaid}");
    assert!(
        mermaid.contains(&format!("    {r} -->|proposal_parent| A_")),
        "{mermaid}"
    );
    assert!(
        mermaid.contains(&format!("    {initial} -->|run_parent| {}\n", l.state)),
        "{mermaid}"
    );
    let doc = hop_json(&s, &["graph", "--format", "mermaid"]);
    assert_eq!(doc["mermaid"], mermaid.as_str());
    let run = hop(&s, &["graph", "--format", "dot"]).exit(2);
    assert!(run.stderr.contains("invalid value 'dot'"), "{run}");
}

#[test]
fn control_history_before_init_exits_1_and_graph_is_empty() {
    let s = Sandbox::repo();
    let run = hop(&s, &["history"]).exit(1);
    assert!(run.stderr.contains("hop is not initialised"), "{run}");
    let graph = hop_json(&s, &["graph"]);
    assert_eq!(graph["states"].as_array().map(Vec::len), Some(0));
    assert_eq!(graph["accepted"], Value::Null);
}

#[test]
fn skill_print_needs_no_repository_and_carries_the_skill_front_matter() {
    let s = Sandbox::empty();
    let text = hop(&s, &["skill", "print"]).ok();
    assert!(text.starts_with("---\nname: hop\ndescription: '"), "{text}");
    let front = text.split("\n---\n").next().expect("front matter");
    assert_eq!(front.lines().count(), 3, "{front}");
    for needle in [
        "| `P_` | prompt |",
        "| `HOP_WORKSPACE` |",
        "| `hop checkpoint <STATE>` |",
        "| `hop propose [--summary <TEXT>] <STATE>` |",
        "(also `hop submit`)",
        "| 22 |",
        "## Recovery",
    ] {
        assert!(text.contains(needle), "{needle} in:\n{text}");
    }
    let doc = hop(&s, &["skill", "print", "--json"]).json(0);
    assert_eq!(doc["data"]["skill"], text.as_str());
}

#[test]
fn skill_install_writes_where_claude_code_and_codex_look() {
    let s = Sandbox::repo();
    let text = hop(&s, &["skill", "print"]).ok();
    let doc = hop_json(&s, &["skill", "install"]);
    let files = doc["files"].as_array().expect("files");
    let hosts: Vec<&str> = files
        .iter()
        .map(|f| f["host"].as_str().expect("a host"))
        .collect();
    assert_eq!(hosts, ["claude-code", "codex"]);
    assert!(files.iter().all(|f| f["action"] == "created"), "{doc}");
    for rel in [".claude/skills/hop/SKILL.md", ".agents/skills/hop/SKILL.md"] {
        assert_eq!(
            std::fs::read_to_string(s.root.join(rel)).expect("installed"),
            text,
            "{rel}"
        );
    }
    // From a subdirectory too, the root is the repository's; the same text is left alone.
    std::fs::create_dir_all(s.root.join("sub")).expect("mkdir");
    let again = s
        .hop_in(&s.root.join("sub"), &["skill", "install", "--json"])
        .json(0);
    assert!(
        again["data"]["files"]
            .as_array()
            .expect("files")
            .iter()
            .all(|f| f["action"] == "unchanged"),
        "{again}"
    );
    assert!(!s.root.join("sub/.claude").exists());
}

#[test]
fn control_skill_install_over_a_different_file_without_force_exits_1_and_writes_nothing() {
    let s = Sandbox::repo();
    let mine = s.root.join(".claude/skills/hop/SKILL.md");
    std::fs::create_dir_all(mine.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&mine, "my own hop notes\n").expect("write");
    let run = hop(&s, &["skill", "install"]).exit(1);
    assert!(run.stdout.is_empty(), "{run}");
    let first = run.stderr.lines().next().expect("a reason");
    assert!(
        first.starts_with("hop: ") && first.contains("already exists and differs"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(&mine).expect("read"),
        "my own hop notes\n",
        "the file is untouched"
    );
    assert!(
        !s.root.join(".agents").exists(),
        "nothing else was written either"
    );
    let doc = hop(&s, &["skill", "install", "--force", "--json"]).json(0);
    assert_eq!(doc["data"]["files"][0]["action"], "replaced");
    assert_eq!(doc["data"]["files"][1]["action"], "created");
    let text = hop(&s, &["skill", "print"]).ok();
    assert_eq!(std::fs::read_to_string(&mine).expect("read"), text);
}

#[test]
fn skill_install_outside_a_repository_needs_path() {
    let s = Sandbox::empty();
    let run = hop(&s, &["skill", "install"]).exit(1);
    assert!(run.stderr.contains("--path"), "{run}");
    let dir = s.path("skills-home");
    let doc = hop(
        &s,
        &[
            "skill",
            "install",
            "--path",
            dir.to_str().expect("utf-8"),
            "--json",
        ],
    )
    .json(0);
    assert_eq!(doc["data"]["root"], dir.to_str().expect("utf-8"));
    assert!(dir.join(".claude/skills/hop/SKILL.md").is_file());
    assert!(dir.join(".agents/skills/hop/SKILL.md").is_file());
}

#[test]
fn init_path_initialises_another_repository() {
    let s = Sandbox::repo();
    let outside = s.path("elsewhere");
    std::fs::create_dir_all(&outside).expect("mkdir");
    // Run from a directory that is not a repository, naming the repository.
    let doc = s
        .hop_in(
            &outside,
            &["init", s.root.to_str().expect("utf-8"), "--json"],
        )
        .json(0);
    assert_eq!(doc["data"]["created"], true);
    let root = std::fs::canonicalize(&s.root).expect("canonical");
    assert_eq!(doc["data"]["root"], root.to_str().expect("utf-8"));
    assert_eq!(
        doc["data"]["accepted"]["commit"].as_str(),
        Some(accepted(&s).as_str())
    );
    // A relative PATH is read from the working directory; a second init reports the head.
    let again = s.hop_in(&outside, &["init", "../work", "--json"]).json(0);
    assert_eq!(again["data"]["created"], false);
}

#[test]
fn control_init_path_outside_any_repository_exits_1_and_creates_nothing() {
    let s = Sandbox::repo();
    let plain = s.path("plain");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let run = hop(&s, &["init", plain.to_str().expect("utf-8")]).exit(1);
    assert!(run.stderr.contains("not a git repository"), "{run}");
    assert!(!plain.join(".git").exists());
    let run = hop(&s, &["init", "no/such/dir"]).exit(1);
    assert!(run.stderr.contains("no such directory"), "{run}");
    assert_eq!(
        s.hpp_refs(),
        "",
        "the current repository was not initialised either"
    );
}

#[test]
fn submit_accept_and_inspect_are_propose_land_and_state() {
    let s = Sandbox::repo();
    init(&s);
    let l = start(&s, "alias run");
    write(&l.workspace, "a.txt", "a\n");
    let doc = agent(
        &s,
        &l,
        &["submit", "--summary", "via submit", &l.state, "--json"],
    )
    .json(0);
    let r = doc["data"]["state"]["id"].as_str().expect("a proposal");
    assert!(r.starts_with("R_"), "{doc}");
    let inspected = hop_json(&s, &["inspect", r]);
    assert_eq!(inspected["kind"], "proposal");
    assert_eq!(inspected["summary"], "via submit");
    assert_eq!(inspected, hop_json(&s, &["state", r]));
    let landed = hop_json(&s, &["accept", r]);
    assert_eq!(landed["outcome"], "landed");
    assert_eq!(show(&s, "refs/hpp/hop/accepted:a.txt"), "a");
    let help = hop(&s, &["--help"]).ok();
    for alias in ["submit", "accept", "inspect"] {
        assert!(help.contains(alias), "{alias} is a visible alias:\n{help}");
    }
}
