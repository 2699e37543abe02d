//! The lane board through the binary: every rule next to its allowed twin, on a real repository
//! with real evidence bundles made by `git hpp evidence run`; best-of-N end to end; racing
//! writers on the one board log.

use std::process::{Child, Stdio};

use serde_json::Value;

use crate::harness::{Run, Sandbox};

const LOG: &str = "refs/hpp/board/log";

/// Runs `git hpp board <args>`.
fn board(sandbox: &Sandbox, args: &[&str]) -> Run {
    let mut argv = vec!["board"];
    argv.extend(args);
    sandbox.hpp_in(&sandbox.root, &argv)
}

/// Asserts a write succeeded and returns the printed event (one JSON line).
#[track_caller]
fn written(run: Run) -> Value {
    let out = run.ok();
    assert_eq!(out.lines().count(), 1, "one line: {out}");
    serde_json::from_str(&out).expect("the event is JSON")
}

/// Asserts a board rule refused (exit 1, nothing on stdout) and returns stderr.
#[track_caller]
fn ruled_out(run: Run) -> String {
    let run = run.exit(1);
    assert!(run.stdout.is_empty(), "nothing on stdout:\n{run}");
    run.stderr
}

/// Runs a passing evidence bundle `id` that writes `out/<id>.txt`; returns its ref.
fn passing_bundle(sandbox: &Sandbox, id: &str) -> String {
    let script = format!("mkdir -p out && printf {id} > out/{id}.txt");
    let glob = format!("out/{id}.txt");
    let record = sandbox
        .hpp([
            "evidence",
            "run",
            "--json",
            "--id",
            id,
            "--artifact",
            &glob,
            "--",
            "sh",
            "-c",
            &script,
        ])
        .json(0);
    record["record_ref"].as_str().expect("a ref").to_owned()
}

/// Runs an evidence bundle `id` whose command fails.
fn failing_bundle(sandbox: &Sandbox, id: &str) {
    let _ = sandbox
        .hpp(["evidence", "run", "--id", id, "--", "sh", "-c", "exit 3"])
        .exit(1);
}

fn claim(sandbox: &Sandbox, item: &str, lane: &str, model: &str) {
    written(board(
        sandbox,
        &["claim", item, "--lane", lane, "--model", model],
    ));
}

fn set(sandbox: &Sandbox, item: &str, state: &str, lane: &str, role: &str, model: &str) -> Run {
    board(
        sandbox,
        &[
            "set", item, state, "--lane", lane, "--role", role, "--model", model,
        ],
    )
}

fn checkpoint(sandbox: &Sandbox, item: &str, lane: &str, model: &str, bundle: &str) -> Run {
    board(
        sandbox,
        &[
            "set",
            item,
            "CHECKPOINT-READY",
            "--lane",
            lane,
            "--role",
            "executor",
            "--model",
            model,
            "--evidence-record",
            bundle,
        ],
    )
}

fn verdict(sandbox: &Sandbox, item: &str, state: &str, lane: &str, model: &str) -> Run {
    board(
        sandbox,
        &[
            "set",
            item,
            state,
            "--lane",
            lane,
            "--role",
            "reviewer",
            "--model",
            model,
            "--verdict-by-lane",
            lane,
            "--verdict-by-model",
            model,
        ],
    )
}

/// Claims, builds and checkpoints `item` for `lane` with a fresh passing bundle.
fn built(sandbox: &Sandbox, item: &str, lane: &str, model: &str) {
    claim(sandbox, item, lane, model);
    written(set(sandbox, item, "BUILDING", lane, "executor", model));
    let bundle = passing_bundle(sandbox, &format!("ev-{}", item.to_lowercase()));
    written(checkpoint(sandbox, item, lane, model, &bundle));
}

fn status(sandbox: &Sandbox, id: &str) -> Vec<Value> {
    let value = board(sandbox, &["status", id]).json(0);
    value.as_array().expect("a list of events").clone()
}

fn last_state(sandbox: &Sandbox, item: &str) -> String {
    status(sandbox, item)
        .last()
        .and_then(|e| e["state"].as_str())
        .expect("the item has events")
        .to_owned()
}

#[test]
fn control_a_transition_outside_the_table_is_refused_and_nothing_is_written() {
    let sandbox = Sandbox::repo();
    let err = ruled_out(set(
        &sandbox, "A", "BUILDING", "lane-a", "executor", "gpt-5",
    ));
    assert!(
        err.contains("invalid transition for A: None -> BUILDING"),
        "{err}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "nothing under refs/hpp");
    claim(&sandbox, "A", "lane-a", "gpt-5");
    let tip = sandbox.git(["rev-parse", LOG]);
    let err = ruled_out(set(&sandbox, "A", "MERGED", "lane-a", "executor", "gpt-5"));
    assert!(err.contains("CLAIMED -> MERGED"), "{err}");
    assert_eq!(sandbox.git(["rev-parse", LOG]), tip, "the log did not move");
}

#[test]
fn checkpoint_ready_needs_a_bundle_that_verifies_now() {
    let sandbox = Sandbox::repo();
    claim(&sandbox, "A", "lane-a", "gpt-5");
    written(set(
        &sandbox, "A", "BUILDING", "lane-a", "executor", "gpt-5",
    ));
    // Only a note: refused by the rule.
    let err = ruled_out(board(
        &sandbox,
        &[
            "set",
            "A",
            "CHECKPOINT-READY",
            "--lane",
            "lane-a",
            "--role",
            "executor",
            "--model",
            "gpt-5",
            "--evidence",
            "tests pass",
        ],
    ));
    assert!(err.contains("needs --evidence-record"), "{err}");
    // A bundle that does not exist: refused input.
    let reason = checkpoint(&sandbox, "A", "lane-a", "gpt-5", "nope").refused();
    assert_eq!(reason, "no evidence bundle named nope");
    // A bundle whose run failed.
    failing_bundle(&sandbox, "ev-fail");
    let err = ruled_out(checkpoint(&sandbox, "A", "lane-a", "gpt-5", "ev-fail"));
    assert!(err.contains("does not verify (not-evidence)"), "{err}");
    // A bundle that passed, but whose artifact changed since.
    let bundle = passing_bundle(&sandbox, "ev-a");
    std::fs::write(sandbox.root.join("out/ev-a.txt"), "edited").expect("writable");
    let err = ruled_out(checkpoint(&sandbox, "A", "lane-a", "gpt-5", &bundle));
    assert!(err.contains("changed since the run"), "{err}");
    // Another lane than the owner, with a good bundle.
    let bundle = passing_bundle(&sandbox, "ev-a");
    let err = ruled_out(checkpoint(&sandbox, "A", "lane-x", "gpt-5", &bundle));
    assert!(err.contains("only the owner of A (lane lane-a)"), "{err}");
    // The twin: the owner, a bundle that verifies.
    let event = written(checkpoint(&sandbox, "A", "lane-a", "gpt-5", "ev-a"));
    assert_eq!(event["state"], "CHECKPOINT-READY");
    assert_eq!(event["evidence_record"]["ref"], bundle.as_str());
    assert_eq!(event["evidence_record"]["id"], "ev-a");
    assert!(
        event["ts"].as_str().is_some_and(|ts| ts.ends_with('Z')),
        "{event}"
    );
}

#[test]
fn a_verdict_comes_from_a_lane_that_built_nothing_with_a_model_of_another_family() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    written(set(
        &sandbox,
        "A",
        "UNDER-REVIEW",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    let err = ruled_out(verdict(
        &sandbox,
        "A",
        "VERIFIED",
        "lane-a",
        "claude-opus-4",
    ));
    assert!(
        err.contains("reviewer lane lane-a claimed or built A"),
        "{err}"
    );
    let err = ruled_out(verdict(&sandbox, "A", "VERIFIED", "rev", "openai/o3"));
    assert!(
        err.contains("is of family gpt, like a builder of A"),
        "{err}"
    );
    let err = ruled_out(verdict(&sandbox, "A", "NEEDS-FIX", "rev", "auto"));
    assert!(err.contains("names no model family"), "{err}");
    let err = ruled_out(set(
        &sandbox,
        "A",
        "VERIFIED",
        "rev",
        "reviewer",
        "claude-opus-4",
    ));
    assert!(
        err.contains("needs both --verdict-by-lane and --verdict-by-model"),
        "{err}"
    );
    let err = ruled_out(set(
        &sandbox,
        "A",
        "DEFERRED",
        "rev",
        "reviewer",
        "claude-opus-4",
    ));
    assert!(err.contains("only with --checker-unavailable"), "{err}");
    let event = written(verdict(&sandbox, "A", "VERIFIED", "rev", "claude-opus-4"));
    assert_eq!(event["verdict_by"]["lane"], "rev");
    assert_eq!(event["verdict_by"]["model"], "claude-opus-4");
}

#[test]
fn a_red_item_merges_only_with_a_person_s_approval_and_the_tag_is_sticky() {
    let sandbox = Sandbox::repo();
    written(board(
        &sandbox,
        &[
            "claim", "A", "--lane", "lane-a", "--model", "gpt-5", "--tag", "red",
        ],
    ));
    written(set(
        &sandbox, "A", "BUILDING", "lane-a", "executor", "gpt-5",
    ));
    let bundle = passing_bundle(&sandbox, "ev-red");
    written(checkpoint(&sandbox, "A", "lane-a", "gpt-5", &bundle));
    written(set(
        &sandbox,
        "A",
        "UNDER-REVIEW",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    written(verdict(&sandbox, "A", "VERIFIED", "rev", "gemini-2.5-pro"));
    let err = ruled_out(set(&sandbox, "A", "MERGED", "lane-a", "executor", "gpt-5"));
    assert!(err.contains("A is tagged red"), "{err}");
    written(board(
        &sandbox,
        &["approve", "A", "--reason", "read the diff"],
    ));
    let event = written(set(&sandbox, "A", "MERGED", "lane-a", "executor", "gpt-5"));
    assert_eq!(event["state"], "MERGED");
    let err = ruled_out(set(
        &sandbox, "A", "BUILDING", "lane-a", "executor", "gpt-5",
    ));
    assert!(err.contains("A is MERGED, a final state"), "{err}");
}

#[test]
fn approve_refuses_an_item_that_is_not_red() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    written(set(
        &sandbox,
        "A",
        "UNDER-REVIEW",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    written(verdict(&sandbox, "A", "VERIFIED", "rev", "claude-opus-4"));
    let err = ruled_out(board(&sandbox, &["approve", "A"]));
    assert!(err.contains("A is not tagged red"), "{err}");
    written(set(&sandbox, "A", "MERGED", "lane-a", "executor", "gpt-5"));
}

#[test]
fn a_fix_goes_back_to_building_only_through_the_queued_lane() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    written(board(
        &sandbox,
        &[
            "start-review",
            "A",
            "--target-lane",
            "rev",
            "--target-model",
            "claude-opus-4",
            "--lane",
            "coord",
            "--model",
            "gpt-5",
        ],
    ));
    written(verdict(&sandbox, "A", "NEEDS-FIX", "rev", "claude-opus-4"));
    let err = ruled_out(set(
        &sandbox,
        "A",
        "FIX-QUEUED",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    assert!(err.contains("only by `git hpp board release-fix`"), "{err}");
    let event = written(board(
        &sandbox,
        &[
            "release-fix",
            "A",
            "--target-lane",
            "lane-f",
            "--lane",
            "coord",
            "--model",
            "gpt-5",
        ],
    ));
    assert_eq!(event["state"], "FIX-QUEUED");
    assert_eq!(event["target_lane"], "lane-f");
    let err = ruled_out(set(
        &sandbox, "A", "BUILDING", "lane-a", "executor", "gpt-5",
    ));
    assert!(err.contains("A is queued for lane lane-f"), "{err}");
    written(set(
        &sandbox, "A", "BUILDING", "lane-f", "executor", "gpt-5",
    ));
}

#[test]
fn start_review_refuses_a_lane_that_built_the_item() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    let args = |lane| {
        vec![
            "start-review",
            "A",
            "--target-lane",
            lane,
            "--lane",
            "coord",
            "--model",
            "gpt-5",
        ]
    };
    let err = ruled_out(board(&sandbox, &args("lane-a")));
    assert!(err.contains("lane lane-a claimed or built A"), "{err}");
    written(board(&sandbox, &args("rev")));
}

#[test]
fn best_of_two_a_third_family_selects_the_loser_is_final_and_the_winner_merges() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    claim(&sandbox, "B", "lane-b", "gemini-2.5-pro");
    let compete = [
        "compete", "--task", "T1", "--items", "A,B", "--lane", "coord", "--model", "gpt-5",
    ];
    let declared = written(board(&sandbox, &compete));
    assert_eq!(declared["kind"], "competition");
    assert_eq!(declared["state"], "DECLARED");
    // A builder of one candidate may not build its rival.
    let err = ruled_out(set(
        &sandbox, "B", "BUILDING", "lane-a", "executor", "gpt-5",
    ));
    assert!(err.contains("lane lane-a built A, a rival of B"), "{err}");
    written(set(
        &sandbox,
        "B",
        "BUILDING",
        "lane-b",
        "executor",
        "gemini-2.5-pro",
    ));
    let select = |winner: &str, lane: &str, model: &str| {
        board(
            &sandbox,
            &[
                "select",
                "--task",
                "T1",
                "--winner",
                winner,
                "--lane",
                lane,
                "--model",
                model,
                "--reason",
                "smaller diff",
            ],
        )
    };
    // B is not checkpointed yet.
    let err = ruled_out(select("A", "rev", "claude-opus-4"));
    assert!(err.contains("candidate B is BUILDING"), "{err}");
    let bundle = passing_bundle(&sandbox, "ev-b");
    written(checkpoint(
        &sandbox,
        "B",
        "lane-b",
        "gemini-2.5-pro",
        &bundle,
    ));
    // A checker of a builder's family or lane may not select.
    let err = ruled_out(select("A", "rev", "gemini-3-flash"));
    assert!(err.contains("is of family gemini"), "{err}");
    let err = ruled_out(select("A", "lane-b", "claude-opus-4"));
    assert!(err.contains("lane lane-b built candidate B"), "{err}");
    // The third family selects.
    let selected = written(select("A", "rev", "claude-opus-4"));
    assert_eq!(selected["state"], "SELECTED");
    assert_eq!(selected["winner"], "A");
    assert_eq!(selected["not_selected"], serde_json::json!(["B"]));
    assert_eq!(
        selected["compared"]["B"]["evidence_record"]["ref"],
        bundle.as_str()
    );
    assert_eq!(last_state(&sandbox, "B"), "NOT-SELECTED");
    // SELECTED and NOT-SELECTED landed in one commit.
    let head: Value = serde_json::from_str(&sandbox.git(["show", &format!("{LOG}:events.json")]))
        .expect("events.json is JSON");
    assert_eq!(head["schema"], "hpp.board/v1");
    assert_eq!(head["events"].as_array().map(Vec::len), Some(2), "{head}");
    // The loser never moves again; the competition is decided.
    for state in ["BUILDING", "CHECKPOINT-READY", "UNDER-REVIEW", "CLAIMED"] {
        let err = ruled_out(set(
            &sandbox,
            "B",
            state,
            "lane-b",
            "executor",
            "gemini-2.5-pro",
        ));
        assert!(err.contains("B is NOT-SELECTED, a final state"), "{err}");
    }
    let err = ruled_out(select("B", "rev", "claude-opus-4"));
    assert!(err.contains("competition T1 is already decided"), "{err}");
    // The winner: reviewed, verified, merged.
    written(set(
        &sandbox,
        "A",
        "UNDER-REVIEW",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    written(verdict(&sandbox, "A", "VERIFIED", "rev", "claude-opus-4"));
    written(board(
        &sandbox,
        &[
            "set", "A", "MERGED", "--lane", "lane-a", "--role", "executor", "--model", "gpt-5",
            "--branch", "lane-a",
        ],
    ));
    assert_eq!(last_state(&sandbox, "A"), "MERGED");
    let competition = status(&sandbox, "T1");
    assert_eq!(competition.len(), 2, "DECLARED then SELECTED");
    let markdown = board(&sandbox, &["render"]).ok();
    assert!(markdown.contains("## A\n"), "{markdown}");
    assert!(markdown.contains("State: **MERGED**"), "{markdown}");
    assert!(markdown.contains("State: **NOT-SELECTED**"), "{markdown}");
    assert!(markdown.contains("## COMPETITIONS"), "{markdown}");
    assert!(
        markdown.contains("| T1 | SELECTED | A, B | A | B |"),
        "{markdown}"
    );
}

#[test]
fn a_candidate_cannot_merge_before_its_competition_is_decided() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    built(&sandbox, "B", "lane-b", "gemini-2.5-pro");
    written(board(
        &sandbox,
        &[
            "compete", "--task", "T", "--items", "A,B", "--lane", "coord", "--model", "gpt-5",
        ],
    ));
    written(set(
        &sandbox,
        "A",
        "UNDER-REVIEW",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    written(verdict(&sandbox, "A", "VERIFIED", "rev", "claude-opus-4"));
    let err = ruled_out(set(&sandbox, "A", "MERGED", "lane-a", "executor", "gpt-5"));
    assert!(err.contains("competition T, which is not decided"), "{err}");
    written(board(
        &sandbox,
        &[
            "select",
            "--task",
            "T",
            "--winner",
            "A",
            "--lane",
            "rev",
            "--model",
            "claude-opus-4",
        ],
    ));
    written(set(&sandbox, "A", "MERGED", "lane-a", "executor", "gpt-5"));
}

#[test]
fn checker_unavailable_records_deferred_and_never_a_winner() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    built(&sandbox, "B", "lane-b", "gemini-2.5-pro");
    written(board(
        &sandbox,
        &[
            "compete", "--task", "T", "--items", "A,B", "--lane", "coord", "--model", "gpt-5",
        ],
    ));
    let deferred = written(board(
        &sandbox,
        &[
            "select",
            "--task",
            "T",
            "--checker-unavailable",
            "--lane",
            "coord",
            "--model",
            "gpt-5",
        ],
    ));
    assert_eq!(deferred["state"], "DEFERRED");
    assert_eq!(deferred["checker_unavailable"], true);
    assert!(deferred.get("winner").is_none(), "{deferred}");
    assert_eq!(last_state(&sandbox, "A"), "CHECKPOINT-READY");
    assert_eq!(last_state(&sandbox, "B"), "CHECKPOINT-READY");
    // A winner and --checker-unavailable together is a usage error.
    let _ = board(
        &sandbox,
        &[
            "select",
            "--task",
            "T",
            "--winner",
            "A",
            "--checker-unavailable",
            "--lane",
            "rev",
            "--model",
            "claude-opus-4",
        ],
    )
    .exit(3);
    // The competition stays open for a checker that comes later.
    written(board(
        &sandbox,
        &[
            "select",
            "--task",
            "T",
            "--winner",
            "B",
            "--lane",
            "rev",
            "--model",
            "claude-opus-4",
        ],
    ));
    assert_eq!(last_state(&sandbox, "A"), "NOT-SELECTED");
}

#[test]
fn withdraw_needs_a_reason_and_the_withdrawn_item_is_final() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    built(&sandbox, "B", "lane-b", "gemini-2.5-pro");
    written(board(
        &sandbox,
        &[
            "compete", "--task", "T", "--items", "A,B", "--lane", "coord", "--model", "gpt-5",
        ],
    ));
    let withdraw = |lane: &str, reason: &str| {
        board(
            &sandbox,
            &[
                "withdraw", "--task", "T", "--item", "B", "--lane", lane, "--model", "gpt-5",
                "--reason", reason,
            ],
        )
    };
    let err = ruled_out(withdraw("coord", ""));
    assert!(err.contains("withdraw needs --reason"), "{err}");
    let err = ruled_out(withdraw("lane-a", "stale"));
    assert!(err.contains("lane lane-a built A, a rival of B"), "{err}");
    let event = written(withdraw("coord", "stale"));
    assert_eq!(event["state"], "WITHDRAWN");
    assert_eq!(event["remaining"], serde_json::json!(["A"]));
    assert_eq!(last_state(&sandbox, "B"), "WITHDRAWN");
    let err = ruled_out(set(
        &sandbox,
        "B",
        "UNDER-REVIEW",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    assert!(err.contains("B is WITHDRAWN, a final state"), "{err}");
}

#[test]
fn compete_refuses_candidates_that_share_a_builder_lane() {
    let sandbox = Sandbox::repo();
    claim(&sandbox, "A", "lane-a", "gpt-5");
    claim(&sandbox, "C", "lane-a", "gpt-5");
    claim(&sandbox, "B", "lane-b", "gemini-2.5-pro");
    let compete = |items: &str| {
        board(
            &sandbox,
            &[
                "compete", "--task", "T", "--items", items, "--lane", "coord", "--model", "gpt-5",
            ],
        )
    };
    let err = ruled_out(compete("A,C"));
    assert!(err.contains("share builder lane lane-a"), "{err}");
    let err = ruled_out(compete("A,A"));
    assert!(err.contains("at least two distinct items"), "{err}");
    written(compete("A,B"));
}

#[test]
fn input_the_board_cannot_take_is_refused_with_exit_2_and_usage_errors_exit_3() {
    let sandbox = Sandbox::repo();
    let reason = board(
        &sandbox,
        &["claim", "a b", "--lane", "lane-a", "--model", "gpt-5"],
    )
    .refused();
    assert!(reason.starts_with("invalid item"), "{reason}");
    let reason = set(&sandbox, "A", "DONE", "lane-a", "executor", "gpt-5").refused();
    assert!(reason.contains("unknown board state"), "{reason}");
    let _ = board(&sandbox, &["claim", "A", "--lane", "lane-a"]).exit(3);
    let _ = board(
        &sandbox,
        &["select", "--task", "T", "--lane", "r", "--model", "m"],
    )
    .exit(3);
    assert_eq!(sandbox.hpp_refs(), "", "nothing written");
}

fn spawn(sandbox: &Sandbox, args: &[&str]) -> Child {
    let mut argv = vec!["board"];
    argv.extend(args);
    sandbox
        .hpp_command(&sandbox.root, &argv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("git-hpp starts")
}

fn wait_all(children: Vec<Child>) -> Vec<Run> {
    children
        .into_iter()
        .map(|c| Run::from_output(&c.wait_with_output().expect("the child finishes")))
        .collect()
}

#[test]
fn concurrent_writers_lose_no_event_and_let_no_invalid_transition_in() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    built(&sandbox, "B", "lane-b", "gemini-2.5-pro");
    written(board(
        &sandbox,
        &[
            "compete", "--task", "T", "--items", "A,B", "--lane", "coord", "--model", "gpt-5",
        ],
    ));
    let before = board(&sandbox, &["status"]).json(0);
    let before = before.as_array().map_or(0, Vec::len);
    // Eight claims of distinct items and six selectors racing for one competition, at once.
    let items: Vec<String> = (0..8).map(|i| format!("item-{i}")).collect();
    let lanes: Vec<String> = (0..8).map(|i| format!("lane-{i}")).collect();
    let mut children: Vec<Child> = items
        .iter()
        .zip(&lanes)
        .map(|(item, lane)| {
            spawn(
                &sandbox,
                &["claim", item, "--lane", lane, "--model", "gpt-5"],
            )
        })
        .collect();
    let selectors = ["A", "B", "A", "B", "A", "B"];
    let first_selector = children.len();
    for (i, winner) in selectors.iter().enumerate() {
        let lane = format!("rev-{i}");
        children.push(spawn(
            &sandbox,
            &[
                "select",
                "--task",
                "T",
                "--winner",
                winner,
                "--lane",
                &lane,
                "--model",
                "claude-opus-4",
            ],
        ));
    }
    let runs = wait_all(children);
    let report = runs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    for run in &runs[..first_selector] {
        assert_eq!(run.code, 0, "every claim lands:\n{report}");
    }
    let winners: Vec<&Run> = runs[first_selector..]
        .iter()
        .filter(|r| r.code == 0)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one selector wins:\n{report}");
    for loser in runs[first_selector..].iter().filter(|r| r.code != 0) {
        assert_eq!(loser.code, 1, "{report}");
        assert!(
            loser.stderr.contains("competition T is already decided"),
            "{report}"
        );
    }
    let after = board(&sandbox, &["status"]).json(0);
    let events = after.as_array().expect("a list");
    // 8 claims + SELECTED + one NOT-SELECTED.
    assert_eq!(events.len(), before + 10, "{after}");
    for item in &items {
        assert_eq!(last_state(&sandbox, item), "CLAIMED");
    }
    let selected = events.iter().filter(|e| e["state"] == "SELECTED").count();
    assert_eq!(selected, 1);
    // The log is one first-parent chain: one commit per successful write.
    let commits = sandbox.git(["rev-list", "--count", "--first-parent", LOG]);
    let writes = 3 * 2 + 1 + 8 + 1;
    assert_eq!(commits, writes.to_string());
}

#[test]
fn status_of_an_unknown_id_is_an_empty_list_and_render_of_an_empty_board_says_so() {
    let sandbox = Sandbox::repo();
    assert_eq!(
        board(&sandbox, &["status", "nothing"]).json(0),
        serde_json::json!([])
    );
    let markdown = board(&sandbox, &["render"]).ok();
    assert!(markdown.contains("No items on the board."), "{markdown}");
    assert!(
        markdown.contains("## COMPETITIONS\n\nNo competitions."),
        "{markdown}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "reading writes nothing");
}

#[test]
fn every_command_the_skills_name_is_a_real_verb_with_its_flags() {
    let sandbox = Sandbox::empty();
    for skill in ["hpp-board/SKILL.md", "hpp-best-of-n/SKILL.md"] {
        let path = format!(
            "{}/modules/lane-kit/skills/{skill}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect("the skill exists");
        let mut seen = 0;
        for command in text.split('`').filter(|s| s.starts_with("git hpp board ")) {
            let words: Vec<&str> = command.split_whitespace().collect();
            let verb = words[3];
            let help = sandbox
                .hpp_in(&sandbox.root, &["board", verb, "--help"])
                .ok();
            for flag in words.iter().filter(|w| w.starts_with("--")) {
                assert!(help.contains(flag), "{skill}: `{command}`: {flag} unknown");
            }
            seen += 1;
        }
        assert!(seen >= 5, "{skill} names the board's commands");
    }
}

#[test]
fn control_a_board_commit_written_by_hand_that_skips_a_state_is_refused_on_read() {
    let sandbox = Sandbox::repo();
    claim(&sandbox, "A", "lane-a", "gpt-5");
    // Append, with plain git, a write that jumps A from CLAIMED to VERIFIED.
    let forged = r#"{"events":[{"item_id":"A","lane_id":"x","model":"m","role":"reviewer","state":"VERIFIED","ts":"2026-01-01T00:00:00Z"}],"schema":"hpp.board/v1"}"#;
    let dir = sandbox.path("forged");
    std::fs::create_dir_all(&dir).expect("writable");
    std::fs::write(dir.join("events.json"), forged).expect("writable");
    let blob = sandbox.git([
        "hash-object",
        "-w",
        dir.join("events.json").to_str().expect("utf-8"),
    ]);
    let tree = {
        let entry = format!("100644 blob {blob}\tevents.json\n");
        let mut child = sandbox
            .command("git", &sandbox.root)
            .args(["mktree"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("git runs");
        std::io::Write::write_all(&mut child.stdin.take().expect("piped"), entry.as_bytes())
            .expect("git reads");
        let out = child.wait_with_output().expect("git finishes");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    };
    let commit = sandbox.git(["commit-tree", &tree, "-p", LOG, "-m", "forged"]);
    sandbox.git(["update-ref", LOG, &commit]);
    let reason = board(&sandbox, &["status"]).refused();
    assert!(
        reason.contains("invalid event (#2): A: CLAIMED -> VERIFIED"),
        "{reason}"
    );
    // Nothing is decided against a board that does not validate.
    board(
        &sandbox,
        &["claim", "B", "--lane", "lane-b", "--model", "gpt-5"],
    )
    .refused();
    assert_eq!(sandbox.git(["rev-parse", LOG]), commit);
}

#[test]
fn racing_verdicts_on_one_item_let_exactly_one_land() {
    let sandbox = Sandbox::repo();
    built(&sandbox, "A", "lane-a", "gpt-5");
    written(set(
        &sandbox,
        "A",
        "UNDER-REVIEW",
        "coord",
        "coordinator",
        "gpt-5",
    ));
    let children: Vec<Child> = (0..6)
        .map(|i| {
            let state = if i % 2 == 0 { "VERIFIED" } else { "NEEDS-FIX" };
            let lane = format!("rev-{i}");
            spawn(
                &sandbox,
                &[
                    "set",
                    "A",
                    state,
                    "--lane",
                    &lane,
                    "--role",
                    "reviewer",
                    "--model",
                    "claude-opus-4",
                    "--verdict-by-lane",
                    &lane,
                    "--verdict-by-model",
                    "claude-opus-4",
                ],
            )
        })
        .collect();
    let runs = wait_all(children);
    let report = runs
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        runs.iter().filter(|r| r.code == 0).count(),
        1,
        "one verdict lands:\n{report}"
    );
    for loser in runs.iter().filter(|r| r.code != 0) {
        assert_eq!(loser.code, 1, "{report}");
        assert!(
            loser.stderr.contains("invalid transition for A"),
            "{report}"
        );
    }
    // Reading validates the whole log: no second verdict slipped in.
    let events = status(&sandbox, "A");
    let verdicts = events
        .iter()
        .filter(|e| e["state"] == "VERIFIED" || e["state"] == "NEEDS-FIX")
        .count();
    assert_eq!(verdicts, 1);
}

#[test]
fn the_best_of_n_example_runs_to_a_merged_winner_and_a_final_loser() {
    let sandbox = Sandbox::repo();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/board/best-of-n.sh");
    let out = sandbox
        .command("sh", &sandbox.root)
        .arg(script)
        .output()
        .expect("sh runs");
    let run = Run::from_output(&out);
    let markdown = run.ok();
    assert!(
        markdown.contains("| T1 | SELECTED | A, B | A | B |  |"),
        "{markdown}"
    );
    assert!(markdown.contains("## A\n\nState: **MERGED**"), "{markdown}");
    assert!(
        markdown.contains("## B\n\nState: **NOT-SELECTED**"),
        "{markdown}"
    );
}

/// The House Session examples.
const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/house-session/");

/// Seals the design example (options `log-per-item` and `single-log`, judge `lane-judge` on
/// qwen3-32b-q5) with the judge decision `judge` (default: the example's recommendation);
/// returns the record's ref.
fn seal_design(sandbox: &Sandbox, judge: Option<&str>) -> String {
    let panel = format!("{SESSIONS}design/panel.json");
    let turns = format!("{SESSIONS}design/turns.json");
    let example_judge = format!("{SESSIONS}design/judge.json");
    let judge = judge.unwrap_or(&example_judge);
    let recorded = sandbox
        .hpp([
            "deliberate",
            "record",
            "--panel",
            &panel,
            "--turns",
            &turns,
            "--judge",
            judge,
        ])
        .json(0);
    recorded["ref"].as_str().expect("a ref").to_owned()
}

/// Builds and checkpoints each `(item, lane, model)` and declares competition T over them.
fn design_competition(sandbox: &Sandbox, builders: &[(&str, &str, &str)]) {
    for (item, lane, model) in builders {
        built(sandbox, item, lane, model);
    }
    let items: Vec<&str> = builders.iter().map(|(item, _, _)| *item).collect();
    let items = items.join(",");
    written(board(
        sandbox,
        &[
            "compete", "--task", "T", "--items", &items, "--lane", "coord", "--model", "gpt-5",
        ],
    ));
}

fn select_by(sandbox: &Sandbox, record: &str, extra: &[&str]) -> Run {
    let mut args = vec!["select", "--task", "T", "--deliberation", record];
    args.extend_from_slice(extra);
    board(sandbox, &args)
}

#[test]
fn a_design_session_over_the_remaining_candidates_selects_and_its_judge_is_the_reviewer() {
    let sandbox = Sandbox::repo();
    design_competition(
        &sandbox,
        &[
            ("log-per-item", "lane-a", "gpt-5"),
            ("single-log", "lane-b", "gemini-2.5-pro"),
            ("extra", "lane-c", "claude-sonnet-4"),
        ],
    );
    let session = seal_design(&sandbox, None);
    // Three candidates remain; the session weighed two.
    let tip = sandbox.git(["rev-parse", LOG]);
    let err = ruled_out(select_by(&sandbox, &session, &[]));
    assert!(
        err.contains(
            "the deliberation weighed log-per-item, single-log, but the remaining candidates of T are extra, log-per-item, single-log"
        ),
        "{err}"
    );
    assert_eq!(sandbox.git(["rev-parse", LOG]), tip, "nothing written");
    written(board(
        &sandbox,
        &[
            "withdraw",
            "--task",
            "T",
            "--item",
            "extra",
            "--lane",
            "coord",
            "--model",
            "gpt-5",
            "--reason",
            "out of scope",
        ],
    ));
    let id = session.trim_start_matches("refs/hpp/deliberations/");
    let selected = written(select_by(
        &sandbox,
        id,
        &["--reason", "the panel converged"],
    ));
    assert_eq!(selected["state"], "SELECTED");
    assert_eq!(selected["winner"], "log-per-item");
    assert_eq!(selected["not_selected"], serde_json::json!(["single-log"]));
    assert_eq!(
        selected["verdict_by"],
        serde_json::json!({"lane": "lane-judge", "model": "qwen3-32b-q5"})
    );
    assert_eq!(selected["lane_id"], "lane-judge");
    assert_eq!(selected["deliberation"]["ref"], session.as_str());
    assert_eq!(selected["deliberation"]["id"], id);
    assert_eq!(last_state(&sandbox, "single-log"), "NOT-SELECTED");
    let rendered = board(&sandbox, &["render"]).ok();
    assert!(
        rendered.contains(&format!("lane-judge (qwen3-32b-q5) by House Session {id}")),
        "{rendered}"
    );
}

#[test]
fn control_select_by_deliberation_refuses_forbidden_flags_a_review_an_abstention_an_edited_file_and_a_builders_family()
 {
    let sandbox = Sandbox::repo();
    design_competition(
        &sandbox,
        &[
            ("log-per-item", "lane-a", "gpt-5"),
            ("single-log", "lane-b", "qwen3-coder-30b"),
        ],
    );
    let session = seal_design(&sandbox, None);
    let tip = sandbox.git(["rev-parse", LOG]);
    for extra in [
        &["--winner", "log-per-item"][..],
        &["--lane", "lane-x"],
        &["--model", "claude-opus-4"],
        &["--checker-unavailable"],
    ] {
        let reason = select_by(&sandbox, &session, extra).refused();
        assert!(
            reason.contains(&format!("{} cannot be given with --deliberation", extra[0])),
            "{reason}"
        );
    }
    // A review session, sealed to a file.
    let review = |name: &str| format!("{SESSIONS}review/{name}.json");
    let file = sandbox.root.join("review-record.json");
    sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "deliberate",
                "record",
                "--panel",
                &review("panel"),
                "--turns",
                &review("turns"),
                "--judge",
                &review("judge"),
                "--rationale",
                &review("rationale"),
                "--out",
                "review-record.json",
            ],
        )
        .json(0);
    let reason = select_by(&sandbox, "review-record.json", &[]).refused();
    assert!(
        reason.contains("the deliberation is a review session: select takes a design session"),
        "{reason}"
    );
    // The same file with its verdict edited no longer verifies.
    let mut edited: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("written")).expect("JSON");
    edited["verdict"]["value"] = "low".into();
    std::fs::write(&file, edited.to_string()).expect("writable");
    let reason = select_by(&sandbox, "review-record.json", &[]).refused();
    assert!(
        reason.contains("the deliberation record does not verify: record_sha256 does not match"),
        "{reason}"
    );
    // A judge that abstains recommends nothing.
    let mut judge: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{SESSIONS}design/judge.json")).expect("example"),
    )
    .expect("JSON");
    judge["outcome"] =
        serde_json::json!({"status": "abstention", "value": null, "confidence": null});
    let judge_path = sandbox.root.join("abstaining-judge.json");
    std::fs::write(&judge_path, judge.to_string()).expect("writable");
    let abstained = seal_design(&sandbox, judge_path.to_str());
    let reason = select_by(&sandbox, &abstained, &[]).refused();
    assert!(
        reason.contains("the deliberation's verdict is abstention, not a recommendation"),
        "{reason}"
    );
    // single-log was built on a qwen model: the judge (qwen3-32b-q5) may not select.
    let err = ruled_out(select_by(&sandbox, &session, &[]));
    assert!(err.contains("is of family qwen"), "{err}");
    assert_eq!(sandbox.git(["rev-parse", LOG]), tip, "nothing written");
}
