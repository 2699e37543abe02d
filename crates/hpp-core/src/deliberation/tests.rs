//! Unit tests of the House Session rules: one case per refusal, each beside an accepted twin,
//! the stop rules in order, and the seal.

use serde::Serialize;
use serde_json::{Value, json};

use super::*;

const PANEL: &str = include_str!("../../../../examples/house-session/review/panel.json");
const TURNS: &str = include_str!("../../../../examples/house-session/review/turns.json");
const JUDGE: &str = include_str!("../../../../examples/house-session/review/judge.json");
const RATIONALE: &str = include_str!("../../../../examples/house-session/review/rationale.json");
const DESIGN_PANEL: &str = include_str!("../../../../examples/house-session/design/panel.json");
const DESIGN_TURNS: &str = include_str!("../../../../examples/house-session/design/turns.json");
const DESIGN_JUDGE: &str = include_str!("../../../../examples/house-session/design/judge.json");
const HEX: &str = "1111111111111111111111111111111111111111111111111111111111111111";

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn panel() -> Value {
    parse(PANEL)
}

fn turns() -> Value {
    parse(TURNS)
}

fn judge() -> Value {
    parse(JUDGE)
}

fn rationale() -> Value {
    parse(RATIONALE)
}

/// A typed value as the JSON it serialises to.
fn value(typed: impl Serialize) -> Value {
    serde_json::to_value(typed).unwrap()
}

fn typed_record() -> Record {
    build_record(&panel(), &turns(), Some(&judge()), Some(&rationale())).unwrap()
}

fn record() -> Value {
    value(typed_record())
}

fn normalised() -> Panel {
    normalise_panel(&panel()).unwrap()
}

/// A copy of `value` with `edit` applied.
fn edited(value: &Value, edit: impl FnOnce(&mut Value)) -> Value {
    let mut copy = value.clone();
    edit(&mut copy);
    copy
}

#[test]
fn the_review_example_stops_at_max_rounds_with_the_judges_verdict_and_seat_c_kept_as_dissent() {
    let record = record();
    assert_eq!(
        record["stop"],
        json!({"decision": "stop", "reason": "max-rounds", "round": 2, "escalate": true})
    );
    assert_eq!(
        record["verdict"],
        json!({"status": "recommendation", "value": "high", "reason": "judge"})
    );
    assert_eq!(
        record["dissent"],
        json!([{"seat": "c", "position": "low", "grounded": true}])
    );
    assert_eq!(record["tally"][1]["moved"], json!(["b"]));
    assert_eq!(record["tally"][1]["flips_without_new_evidence"], json!([]));
    assert_eq!(record["evidence_gate"], "resolved");
    assert_eq!(record["judge_independence"], "full");
    assert!(record["human_decision"].is_null());
    assert!(verify_record(&record).is_intact());
    assert!(record_exit_is_ok(&record));
}

#[test]
fn every_panel_rule_refuses_with_its_sentence_and_the_untouched_panel_is_valid() {
    assert!(normalise_panel(&panel()).is_ok(), "the accepted twin");
    let cases: Vec<(Value, &str)> = vec![
        (json!([]), "a panel must be an object"),
        (
            edited(&panel(), |p| p["schema"] = json!("hpp.panel/v2")),
            "schema must be hpp.panel/v1",
        ),
        (
            edited(&panel(), |p| p["id"] = json!(" ")),
            "panel id must be non-empty text",
        ),
        (
            edited(&panel(), |p| p["session_type"] = json!("chat")),
            "session_type must be one of plan, review, release-gate, incident, design",
        ),
        (
            edited(&panel(), |p| p["question"]["options"] = json!(["low"])),
            "question: a choice question needs 2 to 255 options",
        ),
        (
            edited(&panel(), |p| p["state_sha256"] = json!("abc")),
            "state_sha256 must be a 64-character lowercase sha256",
        ),
        (
            edited(&panel(), |p| p["seats"] = json!([])),
            "a panel needs seats",
        ),
        (
            edited(&panel(), |p| p["seats"][0] = json!("a")),
            "every seat must be an object",
        ),
        (
            edited(&panel(), |p| p["seats"][0]["role"] = json!("chair")),
            "seat a: role must be one of proponent, dissent, examiner, judge",
        ),
        (
            edited(&panel(), |p| {
                p["seats"][1]["model_served"] = json!("gpt-latest")
            }),
            "seat b: model_served 'gpt-latest' is a moving alias; name the pinned version",
        ),
        (
            edited(&panel(), |p| p["seats"][0]["provider"] = json!("")),
            "seat a: provider must be non-empty text",
        ),
        (
            edited(&panel(), |p| p["seats"][0]["family"] = json!(null)),
            "seat a: family must be non-empty text",
        ),
        (
            edited(&panel(), |p| p["seats"][0]["lane"] = json!(7)),
            "seat a: lane must be non-empty text",
        ),
        (
            edited(&panel(), |p| p["seats"][1]["id"] = json!("a")),
            "seat ids must be unique",
        ),
        (
            edited(&panel(), |p| p["seats"][1]["id"] = json!("")),
            "seat id must be non-empty text",
        ),
        (
            edited(&panel(), |p| {
                p["seats"][1]
                    .as_object_mut()
                    .unwrap()
                    .remove("model_served");
            }),
            "seat b: model_served must be non-empty text",
        ),
        (
            edited(&panel(), |p| p["question"] = json!("risk?")),
            "question: question must be an object",
        ),
        (
            edited(&panel(), |p| p["session_type"] = json!("plan")),
            "a plan session needs at least 2 proponent seat(s), found 0",
        ),
        (
            edited(&panel(), |p| p["session_type"] = json!("incident")),
            "a incident session needs at least 2 proponent seat(s), found 0",
        ),
        (
            edited(&panel(), |p| {
                p["seats"][1]["model_served"] = p["seats"][0]["model_served"].clone();
            }),
            "the same model 'claude-opus-4-1-20250805' is declared under two families ('claude' and 'gpt'); one pinned model is one family",
        ),
        (
            edited(&panel(), |p| p["seats"][3]["role"] = json!("examiner")),
            "a panel needs exactly one judge seat, found 0",
        ),
        (
            edited(&panel(), |p| p["seats"][0]["role"] = json!("judge")),
            "a panel needs exactly one judge seat, found 2",
        ),
        (
            edited(&panel(), |p| p["seats"][1]["lane"] = json!("lane-a")),
            "every participant answers from its own lane; two seats share one",
        ),
        (
            edited(&panel(), |p| p["seats"][3]["lane"] = json!("lane-c")),
            "the judge sits outside the participants: its lane is a participant's lane",
        ),
        (
            edited(&panel(), |p| {
                for i in 0..3 {
                    p["seats"][i]["family"] = json!("claude");
                    p["seats"][i]["model_served"] = json!(format!("claude-{i}"));
                }
            }),
            "the participants must come from at least two model families; one family arguing with itself is ceremony, not diversity",
        ),
        (
            edited(&panel(), |p| p["seats"][1]["role"] = json!("proponent")),
            "a review session needs at least 2 examiner seat(s), found 1",
        ),
        (
            edited(&panel(), |p| p["seats"][2]["role"] = json!("examiner")),
            "a review session needs at least 1 dissent seat(s), found 0",
        ),
        (
            edited(&panel(), |p| p["session_type"] = json!("design")),
            "a design session needs one proponent per option (3), found 0",
        ),
        (
            edited(&panel(), |p| p["budget"] = json!(null)),
            "a panel declares its budget: max_rounds and max_chars",
        ),
        (
            edited(&panel(), |p| p["budget"]["max_rounds"] = json!(11)),
            "budget.max_rounds must be a whole number from 1 to 10",
        ),
        (
            edited(&panel(), |p| p["budget"]["max_rounds"] = json!(2.0)),
            "budget.max_rounds must be a whole number from 1 to 10",
        ),
        (
            edited(&panel(), |p| p["budget"]["max_chars"] = json!(0)),
            "budget.max_chars must be a positive whole number of characters",
        ),
        (
            edited(&panel(), |p| p["evidence"]["extra"] = json!(1)),
            "evidence must be an object with ids and, optionally, sources",
        ),
        (
            edited(&panel(), |p| p["evidence"]["ids"] = json!(["a", "a"])),
            "evidence.ids must be a non-empty list of unique, non-empty ids",
        ),
        (
            edited(&panel(), |p| p["evidence"]["ids"] = json!([" a"])),
            "evidence.ids must be a non-empty list of unique, non-empty ids",
        ),
        (
            edited(&panel(), |p| p["evidence"]["sources"] = json!({})),
            "evidence.sources must be a list",
        ),
        (
            edited(&panel(), |p| {
                p["evidence"]["sources"][0]["kind"] = json!("web")
            }),
            "evidence.sources: each source is {kind: context or evidence-record, sha256, id?}",
        ),
        (
            edited(&panel(), |p| {
                p["evidence"]["sources"][0]["sha256"] = json!("x")
            }),
            "evidence.sources sha256 must be a 64-character lowercase sha256",
        ),
        (
            edited(&panel(), |p| p["sha256"] = json!(HEX)),
            "panel sha256 does not match its content; the panel was edited after hashing",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(
            normalise_panel(&input).unwrap_err().to_string(),
            message,
            "{input}"
        );
    }
}

#[test]
fn a_release_gate_needs_one_examiner_and_one_dissent() {
    let gate = edited(&panel(), |p| p["session_type"] = json!("release-gate"));
    assert!(normalise_panel(&gate).is_ok(), "the accepted twin");
    let no_dissent = edited(&gate, |p| p["seats"][2]["role"] = json!("examiner"));
    assert_eq!(
        normalise_panel(&no_dissent).unwrap_err().to_string(),
        "a release-gate session needs at least 1 dissent seat(s), found 0"
    );
}

#[test]
fn an_incident_session_allows_at_most_two_rounds() {
    let mut incident = edited(&panel(), |p| {
        p["session_type"] = json!("incident");
        p["seats"][0]["role"] = json!("proponent");
        p["seats"][1]["role"] = json!("proponent");
    });
    assert!(normalise_panel(&incident).is_ok(), "two rounds are allowed");
    incident["budget"]["max_rounds"] = json!(3);
    assert_eq!(
        normalise_panel(&incident).unwrap_err().to_string(),
        "an incident session allows at most 2 rounds (one reply)"
    );
}

#[test]
fn the_normalised_panel_names_its_judge_families_and_independence() {
    let p = value(normalised());
    assert_eq!(p["judge"], "j");
    assert_eq!(p["families"], json!(["claude", "gemini", "gpt"]));
    assert_eq!(p["judge_independence"], "full");
    let partial = edited(&panel(), |p| p["seats"][3]["family"] = json!("gpt"));
    assert_eq!(
        value(normalise_panel(&partial).unwrap())["judge_independence"],
        "partial"
    );
    let carried = edited(&panel(), |q| q["sha256"] = p["sha256"].clone());
    assert!(
        normalise_panel(&carried).is_ok(),
        "a panel carrying its own hash is valid"
    );
}

fn turn(index: usize) -> Value {
    turns()[index].clone()
}

#[test]
fn every_turn_rule_refuses_with_its_sentence_and_the_untouched_turn_is_valid() {
    let p = normalised();
    assert!(normalise_turn(&turn(0), &p).is_ok(), "the accepted twin");
    let cases: Vec<(Value, &str)> = vec![
        (json!("turn"), "a turn must be an object"),
        (
            edited(&turn(0), |t| t["schema"] = json!("hpp.turn/v2")),
            "turn schema must be hpp.turn/v1",
        ),
        (
            edited(&turn(0), |t| t["panel_sha256"] = json!(HEX)),
            "the turn belongs to a different panel (panel_sha256 does not match)",
        ),
        (
            edited(&turn(0), |t| t["seat"] = json!("j")),
            "seat 'j' is not a participant of this panel (the judge takes no turns)",
        ),
        (
            edited(&turn(0), |t| t["round"] = json!(3)),
            "turn round must be from 1 to 2",
        ),
        (
            edited(&turn(0), |t| t["round"] = json!(true)),
            "turn round must be from 1 to 2",
        ),
        (
            edited(&turn(0), |t| t["position"] = json!("extreme")),
            "position 'extreme' is neither an option nor 'abstain'",
        ),
        (
            edited(&turn(0), |t| t["confidence"] = json!(1.5)),
            "confidence must be a number between 0 and 1, or null",
        ),
        (
            edited(&turn(0), |t| t["claims"] = json!({})),
            "claims must be a list",
        ),
        (
            edited(&turn(0), |t| t["claims"][0]["kind"] = json!("rumour")),
            "claim kind must be one of fact, inference, opinion",
        ),
        (
            edited(&turn(0), |t| t["claims"][0]["refs"] = json!(["x", "x"])),
            "claim refs must be a list of unique, non-empty ids",
        ),
        (
            edited(&turn(0), |t| t["text_sha256"] = json!("abc")),
            "text_sha256 must be a 64-character lowercase sha256",
        ),
        (
            edited(&turn(0), |t| t["chars"] = json!(-1)),
            "chars must be the length of the verbatim text, a whole number >= 0",
        ),
        (
            edited(&turn(0), |t| t["seen_turns"] = json!(["nope"])),
            "seen_turns must list the hashes of the turns this seat had read",
        ),
        (
            edited(&turn(0), |t| t["seen_turns"] = json!([HEX])),
            "the first round is blind: a round-1 turn cannot have seen other turns",
        ),
        (
            edited(&turn(0), |t| t["sha256"] = json!(HEX)),
            "turn sha256 does not match its content; the turn was edited after hashing",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(
            normalise_turn(&input, &p).unwrap_err().to_string(),
            message,
            "{input}"
        );
    }
}

#[test]
fn every_session_rule_refuses_with_its_sentence() {
    let round_one: Vec<Value> = turns().as_array().unwrap()[..3].to_vec();
    assert!(
        tally(&panel(), &json!(round_one)).is_ok(),
        "the accepted twin"
    );
    let twice = {
        let mut t = round_one.clone();
        t.push(edited(&t[0], |x| x["chars"] = json!(1)));
        json!(t)
    };
    let stranger = edited(&turns(), |t| t[3]["seen_turns"][0] = json!(HEX));
    let same_round = {
        let t = turns();
        let seen = json!(normalise_turn(&t[4], &normalised()).unwrap().sha256);
        edited(&t, |x| x[3]["seen_turns"] = json!([seen]))
    };
    let gap = json!(
        turns().as_array().unwrap()[3..]
            .iter()
            .map(|t| edited(t, |x| x["seen_turns"] = json!([])))
            .collect::<Vec<_>>()
    );
    let cases: Vec<(Value, String)> = vec![
        (json!({}), "turns must be a list".into()),
        (twice, "seat a spoke twice in round 1".into()),
        (
            stranger,
            "seat a (round 2) lists a seen turn that is not in this session".into(),
        ),
        (
            same_round,
            "seat a (round 2) can only have seen turns of an earlier round".into(),
        ),
        (gap, "rounds must run without gaps from 1; found [2]".into()),
    ];
    for (input, message) in cases {
        assert_eq!(tally(&panel(), &input).unwrap_err().to_string(), message);
    }
}

/// A round-1 turn by `seat` on `position`, grounded on `refs` through a fact.
fn blind(p: &Panel, seat: &str, position: &str, refs: &[&str]) -> Value {
    json!({"schema": TURN_SCHEMA, "panel_sha256": p.sha256, "seat": seat, "round": 1,
        "position": position, "confidence": null,
        "claims": [{"kind": "fact", "refs": refs}], "text_sha256": HEX, "chars": 10,
        "seen_turns": []})
}

#[test]
fn the_stop_rules_hold_in_their_fixed_order() {
    let p = normalised();
    let stop = |turns: Value, panel: &Value| value(decide_stop(panel, &turns).unwrap());
    assert_eq!(stop(json!([]), &panel())["reason"], "no-turns-yet");
    let split = json!([
        blind(&p, "a", "high", &["diff-cache"]),
        blind(&p, "b", "low", &["diff-cache"]),
        blind(&p, "c", "low", &["bench-latency"])
    ]);
    assert_eq!(
        stop(split.clone(), &panel()),
        json!({"decision": "continue", "next_round": 2, "reason": "not-converged", "escalate": false})
    );
    // not-judged wins over everything: a seat without a turn.
    let missing = json!([
        blind(&p, "a", "high", &["diff-cache"]),
        blind(&p, "b", "high", &["diff-cache"])
    ]);
    assert_eq!(stop(missing, &panel())["reason"], "not-judged");
    let all_high = json!([
        blind(&p, "a", "high", &["diff-cache"]),
        blind(&p, "b", "high", &["diff-cache"]),
        blind(&p, "c", "high", &["bench-latency"])
    ]);
    assert_eq!(
        stop(all_high.clone(), &panel())["reason"],
        "grounded-convergence"
    );
    // Convergence before the budget, the budget before the rounds.
    let tight = edited(&panel(), |q| q["budget"]["max_chars"] = json!(30));
    let tight_p = normalise_panel(&tight).unwrap();
    let rebased = |turns: &Value| {
        json!(
            turns
                .as_array()
                .unwrap()
                .iter()
                .map(|t| edited(t, |x| x["panel_sha256"] = json!(tight_p.sha256)))
                .collect::<Vec<_>>()
        )
    };
    assert_eq!(
        stop(rebased(&all_high), &tight)["reason"],
        "grounded-convergence"
    );
    assert_eq!(
        stop(rebased(&split), &tight),
        json!({"decision": "stop", "reason": "paused-budget", "round": 1, "escalate": true})
    );
    // Round 2 with the same refs and nobody moving: no new evidence.
    let hashes: Vec<Value> = split
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!(normalise_turn(t, &p).unwrap().sha256))
        .collect();
    let again = split
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            edited(t, |x| {
                x["round"] = json!(2);
                x["seen_turns"] = json!(hashes);
            })
        })
        .collect::<Vec<_>>();
    let mut both = split.as_array().unwrap().clone();
    both.extend(again);
    assert_eq!(stop(json!(both), &panel())["reason"], "no-new-evidence");
    assert_eq!(record()["stop"]["reason"], "max-rounds");
}

#[test]
fn turns_after_the_round_where_a_rule_held_are_refused() {
    let p = normalised();
    let mut all_high = vec![
        blind(&p, "a", "high", &["diff-cache"]),
        blind(&p, "b", "high", &["diff-cache"]),
        blind(&p, "c", "high", &["bench-latency"]),
    ];
    assert!(tally(&panel(), &json!(all_high)).is_ok());
    all_high.push(edited(&all_high[0], |x| x["round"] = json!(2)));
    assert_eq!(
        tally(&panel(), &json!(all_high)).unwrap_err().to_string(),
        "the session stopped at round 1 (grounded-convergence); turns of later rounds are not part of it"
    );
}

#[test]
fn a_fact_grounds_only_through_a_declared_id_and_the_rest_is_unsupported() {
    let p = normalised();
    let turns = json!([
        blind(&p, "a", "high", &["nowhere"]),
        blind(&p, "b", "high", &["diff-cache"]),
        blind(&p, "c", "low", &["diff-cache"])
    ]);
    let rounds = value(tally(&panel(), &turns).unwrap());
    assert_eq!(
        rounds[0]["votes"]["high"],
        json!({"grounded": 1, "ungrounded": 1})
    );
    assert_eq!(
        rounds[0]["unsupported"],
        json!([{"seat": "a", "refs": ["nowhere"]}])
    );
    let undeclared = edited(&panel(), |q| {
        q.as_object_mut().unwrap().remove("evidence");
    });
    let up = normalise_panel(&undeclared).unwrap();
    let turns = json!([
        blind(&up, "a", "high", &["nowhere"]),
        blind(&up, "b", "high", &["x"]),
        blind(&up, "c", "low", &["y"])
    ]);
    let rounds = value(tally(&undeclared, &turns).unwrap());
    assert_eq!(
        rounds[0]["votes"]["high"],
        json!({"grounded": 2, "ungrounded": 0})
    );
    assert!(rounds[0].get("unsupported").is_none());
}

#[test]
fn every_judge_rule_refuses_with_its_sentence() {
    let build = |judge: Option<Value>| {
        build_record(&panel(), &turns(), judge.as_ref(), Some(&rationale()))
            .unwrap_err()
            .to_string()
    };
    let cases: Vec<(Option<Value>, &str)> = vec![
        (
            None,
            "a verdict needs the judge's decision record (hpp.decision/v1)",
        ),
        (
            Some(edited(&judge(), |j| j["authority"] = json!("binding"))),
            "judge record: authority must be 'advisory': a decision record never grants or approves anything",
        ),
        (
            Some(edited(&judge(), |j| {
                j["question"]["instructions"] = json!("other")
            })),
            "the judge answered a different question than the panel's",
        ),
        (
            Some(edited(&judge(), |j| j["state_sha256"] = json!(HEX))),
            "the judge judged a different state than the panel's",
        ),
        (
            Some(edited(&judge(), |j| {
                j["method"] = json!("human");
                j["outcome"]["confidence"] = json!(null);
            })),
            "the judge seat pins a model, so the judge record must come from it (method local-model or external-model), not 'human'",
        ),
        (
            Some(edited(&judge(), |j| {
                j["provider"]["id"] = json!("elsewhere")
            })),
            "the judge record names provider 'elsewhere', not the judge seat's 'local'",
        ),
        (
            Some(edited(&judge(), |j| {
                j["provider"]["model_served"] = json!("llama-3.1-8b")
            })),
            "the judge record was served by 'llama-3.1-8b', not by the judge seat's pinned model 'llama-3.3-70b-q4'",
        ),
    ];
    for (judge, message) in cases {
        assert_eq!(build(judge), message);
    }
}

#[test]
fn every_rationale_rule_refuses_with_its_sentence() {
    let build = |rationale: Option<Value>| {
        build_record(&panel(), &turns(), Some(&judge()), rationale.as_ref())
            .unwrap_err()
            .to_string()
    };
    let r = rationale();
    let cases: Vec<(Option<Value>, &str)> = vec![
        (
            None,
            "a verdict over grounded dissent needs the judge seat's rationale: a steelman of each dissenting position (low) and would_change_if",
        ),
        (
            Some(edited(&r, |x| x["schema"] = json!("hpp.rationale/v2"))),
            "a rationale is an hpp.rationale/v1 object: panel_sha256, author, steelman, would_change_if",
        ),
        (
            Some(edited(&r, |x| x["note"] = json!("x"))),
            "a rationale is an hpp.rationale/v1 object: panel_sha256, author, steelman, would_change_if",
        ),
        (
            Some(edited(&r, |x| x["panel_sha256"] = json!(HEX))),
            "the rationale belongs to another panel (panel_sha256 does not match)",
        ),
        (
            Some(edited(&r, |x| x["author"] = json!("c"))),
            "the rationale is written by the judge seat (j), not by 'c'",
        ),
        (
            Some(edited(&r, |x| x["steelman"] = json!({}))),
            "rationale steelman must be a list",
        ),
        (
            Some(edited(&r, |x| x["steelman"][0]["text"] = json!("x"))),
            "rationale steelman: each entry holds the hash and length of its verbatim text",
        ),
        (
            Some(edited(&r, |x| x["steelman"][0]["chars"] = json!(0))),
            "rationale steelman: chars must be the length of a non-empty verbatim text",
        ),
        (
            Some(edited(&r, |x| x["steelman"][0]["text_sha256"] = json!("x"))),
            "rationale steelman text_sha256 must be a 64-character lowercase sha256",
        ),
        (
            Some(edited(&r, |x| {
                x["steelman"][0]["position"] = json!("medium")
            })),
            "the steelman must argue exactly the dissenting positions (low), once each; got ['medium']",
        ),
        (
            Some(edited(&r, |x| {
                x["would_change_if"][0]["position"] = json!("low")
            })),
            "rationale would_change_if: an entry names a condition, not a position",
        ),
        (
            Some(edited(&r, |x| x["would_change_if"] = json!([]))),
            "a verdict over grounded dissent must say what would change it (would_change_if)",
        ),
    ];
    for (rationale, message) in cases {
        assert_eq!(build(rationale), message);
    }
}

#[test]
fn no_rationale_is_needed_when_no_grounded_dissent_stands() {
    let design = value(
        build_record(
            &parse(DESIGN_PANEL),
            &parse(DESIGN_TURNS),
            Some(&parse(DESIGN_JUDGE)),
            None,
        )
        .unwrap(),
    );
    assert_eq!(design["stop"]["reason"], "grounded-convergence");
    assert_eq!(design["verdict"]["value"], "log-per-item");
    assert_eq!(design["dissent"], json!([]));
    assert!(design["rationale"].is_null());
    assert_eq!(design["evidence_gate"], "not-declared");
    // One flip in round 2 cited a new ref, so it is not a flip without new evidence.
    assert_eq!(design["metrics"]["flips_without_new_evidence"], 0);
    assert!(verify_record(&design).is_intact());
}

#[test]
fn a_session_that_has_not_stopped_cannot_be_sealed() {
    let round_one: Vec<Value> = turns().as_array().unwrap()[..3].to_vec();
    assert_eq!(
        build_record(&panel(), &json!(round_one), Some(&judge()), None)
            .unwrap_err()
            .to_string(),
        "the session has not stopped (next round 2); run it or stop it first"
    );
}

#[test]
fn a_seat_that_did_not_answer_blocks_the_verdict_without_a_judge() {
    let two = json!(turns().as_array().unwrap()[..2].to_vec());
    let typed = build_record(&panel(), &two, None, None).unwrap();
    let record = value(&typed);
    assert_eq!(
        record["verdict"],
        json!({"status": "blocked", "value": null, "reason": "not judged: c"})
    );
    assert!(!record_exit_is_ok(&record));
    assert_eq!(
        value(as_decision(&typed))["outcome"]["error"],
        "panel blocked: not judged: c"
    );
    assert!(verify_record(&record).is_intact());
}

#[test]
fn editing_any_sealed_field_breaks_the_record_and_human_decision_does_not() {
    let record = record();
    let keys: Vec<String> = record.as_object().unwrap().keys().cloned().collect();
    for key in keys.iter().filter(|k| *k != "human_decision") {
        let copy = edited(&record, |r| r[key.as_str()] = json!("edited"));
        assert!(
            !verify_record(&copy).is_intact(),
            "editing {key} must break the seal"
        );
    }
    let human = edited(
        &record,
        |r| {
            r["human_decision"] = json!({"value": "medium", "by": "release manager", "note": "shipping behind a flag"})
        },
    );
    assert!(verify_record(&human).is_intact());
    let bad = edited(&record, |r| {
        r["human_decision"] = json!({"value": "extreme", "by": "x"})
    });
    assert_eq!(
        verify_record(&bad),
        Verification::Broken {
            status: "broken",
            reason:
                "human_decision must be null or {value: an option, by: who decided, note?: text}"
                    .into()
        }
    );
}

fn reseal(record: &Value) -> Value {
    let mut copy = record.clone();
    let map = copy.as_object_mut().unwrap();
    map.remove("record_sha256");
    map.remove("human_decision");
    let sha = hash(&Value::Object(map.clone()));
    copy["record_sha256"] = json!(sha);
    copy["human_decision"] = Value::Null;
    copy
}

#[test]
fn control_a_resealed_record_with_its_verdict_edited_does_not_re_derive() {
    let forged = reseal(&edited(&record(), |r| r["verdict"]["value"] = json!("low")));
    assert_eq!(
        verify_record(&forged),
        Verification::Broken {
            status: "broken",
            reason: "the record does not re-derive from its own turns and judge: 'verdict' differs"
                .into()
        }
    );
    let extra = reseal(&edited(&record(), |r| r["comment"] = json!("x")));
    assert_eq!(
        verify_record(&extra),
        Verification::Broken {
            status: "broken",
            reason: "the record carries fields the contract does not define: ['comment']".into()
        }
    );
    let plain = edited(&record(), |r| r["verdict"]["value"] = json!("low"));
    assert_eq!(
        verify_record(&plain),
        Verification::Broken {
            status: "broken",
            reason: "record_sha256 does not match: the record was edited after it was sealed"
                .into()
        }
    );
}

#[test]
fn a_v1_record_verifies_under_v1_rules() {
    let design = value(
        build_record(
            &parse(DESIGN_PANEL),
            &parse(DESIGN_TURNS),
            Some(&parse(DESIGN_JUDGE)),
            None,
        )
        .unwrap(),
    );
    let mut v1 = design.clone();
    let map = v1.as_object_mut().unwrap();
    map.remove("evidence_gate");
    map.remove("rationale");
    map.insert("schema".into(), json!(SCHEMA_V1));
    let v1 = reseal(&v1);
    assert_eq!(
        verify_record(&v1),
        Verification::Intact {
            status: "intact",
            schema: SCHEMA_V1.into(),
            record_sha256: v1["record_sha256"].as_str().unwrap().into(),
            verdict: v1["verdict"].clone(),
            stop: v1["stop"].clone(),
        }
    );
    let with_rationale = reseal(&edited(&v1, |r| r["rationale"] = json!({})));
    assert_eq!(
        verify_record(&with_rationale),
        Verification::Broken {
            status: "broken",
            reason:
                "the record does not re-derive: a hpp.deliberation/v1 record carries no rationale"
                    .into()
        }
    );
    let mut evidence_v1 = record();
    let map = evidence_v1.as_object_mut().unwrap();
    map.remove("evidence_gate");
    map.remove("rationale");
    map.insert("schema".into(), json!(SCHEMA_V1));
    assert_eq!(
        verify_record(&reseal(&evidence_v1)),
        Verification::Broken { status: "broken", reason: "the record does not re-derive: a hpp.deliberation/v1 record predates the evidence gate; a panel with evidence is v2".into() }
    );
    // A v2 record relabelled v1 carries keys v1 does not define; a v1 record with evidence is v2.
    let relabelled = reseal(&edited(&record(), |r| r["schema"] = json!(SCHEMA_V1)));
    assert!(!verify_record(&relabelled).is_intact());
}

#[test]
fn a_consumer_gets_the_verdict_only_from_a_judge_outside_the_makers_family() {
    let plan_like = typed_record();
    let (plan, review) = (SessionType::Plan, SessionType::Review);
    let any = Grounding::Any;
    assert_eq!(
        panel_verdict(&plan_like, plan, &["low", "medium", "high"], "gpt", any)
            .unwrap_err()
            .to_string(),
        "a plan session is needed here, this record is a review session"
    );
    let ok = panel_verdict(&plan_like, review, &["low", "medium", "high"], "gpt", any).unwrap();
    assert_eq!(
        (
            ok.status.as_str(),
            ok.value.as_deref(),
            ok.judge_family.as_str()
        ),
        ("recommendation", Some("high"), "llama")
    );
    for maker in ["llama", "LLAMA", "meta/llama-3.1-405b"] {
        assert_eq!(
            panel_verdict(&plan_like, review, &["low", "medium", "high"], maker, any)
                .unwrap_err()
                .to_string(),
            "the judge is of the same family as the maker (llama); a panel cannot be judged by the family it is checking",
            "{maker}"
        );
    }
    assert_eq!(
        panel_verdict(
            &plan_like,
            review,
            &["approved", "revise", "blocked"],
            "gpt",
            any
        )
        .unwrap_err()
        .to_string(),
        "the panel's options ['high', 'low', 'medium'] are not all among ['approved', 'blocked', 'revise']"
    );
    assert_eq!(
        panel_verdict(&plan_like, review, &["low", "medium", "high"], " ", any)
            .unwrap_err()
            .to_string(),
        "name the maker's model family: a judge of that family is refused"
    );
    assert_eq!(
        panel_verdict(
            &plan_like,
            review,
            &["low", "medium", "high"],
            "gpt",
            Grounding::EvidenceRecordsOnly
        )
        .unwrap_err()
        .to_string(),
        "a release gate counts only evidence bundles: the panel must declare its evidence from hpp.evidence/v1 records (deliberate plan --evidence)"
    );
    let broken = edited(&record(), |r| r["verdict"]["value"] = json!("low"));
    assert!(
        Record::from_sealed(&broken)
            .unwrap_err()
            .to_string()
            .starts_with("the deliberation record does not verify: ")
    );
}

#[test]
fn the_panel_as_one_decision_validates_as_a_panel_decision() {
    let decision = value(as_decision(&typed_record()));
    let validated = crate::decision::validate(&decision).unwrap();
    assert_eq!(validated.method, crate::decision::Method::Panel);
    assert_eq!(
        crate::decision::effective(&validated).value.as_deref(),
        Some("high")
    );
    assert_eq!(decision["raw_response_sha256"], record()["record_sha256"]);
}

#[test]
fn a_sealed_record_reads_back_to_the_same_bytes() {
    let record = record();
    let bytes = crate::record::canonical_json(&record);
    let again: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(crate::record::canonical_json(&again), bytes);
    assert!(verify_record(&again).is_intact());
}

#[test]
fn the_record_id_is_the_panel_id_and_the_start_of_the_seal() {
    let record = record();
    let sha = record["record_sha256"].as_str().unwrap();
    assert_eq!(
        record_id(&record),
        format!("review-cache-eviction-{}", &sha[..12])
    );
    let odd = edited(&record, |r| {
        r["panel"]["id"] = json!("review cache/eviction")
    });
    assert_eq!(record_id(&odd), format!("session-{}", &sha[..12]));
}

#[test]
fn evidence_added_to_a_panel_is_sorted_deduplicated_and_keeps_declared_sources() {
    let source = json!({"kind": "evidence-record", "id": "unit", "sha256": HEX});
    let updated = panel::with_evidence(
        &panel(),
        &["unit".into(), "diff-cache".into()],
        std::slice::from_ref(&source),
    )
    .unwrap();
    let p = value(normalise_panel(&updated).unwrap());
    assert_eq!(
        p["evidence"]["ids"],
        json!(["bench-latency", "diff-cache", "incident-0412", "unit"])
    );
    assert_eq!(p["evidence"]["sources"].as_array().unwrap().len(), 2);
    let tampered = edited(&panel(), |q| q["sha256"] = json!(HEX));
    assert_eq!(
        panel::with_evidence(&tampered, &[], &[])
            .unwrap_err()
            .to_string(),
        "panel sha256 does not match its content; the panel was edited after hashing"
    );
}

#[test]
fn the_verdict_status_is_read_as_an_enum_from_built_records() {
    assert_eq!(
        VerdictStatus::of(&record()),
        Some(VerdictStatus::Recommendation)
    );
    let two = json!(turns().as_array().unwrap()[..2].to_vec());
    let blocked = value(build_record(&panel(), &two, None, None).unwrap());
    assert_eq!(VerdictStatus::of(&blocked), Some(VerdictStatus::Blocked));
    for status in [
        VerdictStatus::Recommendation,
        VerdictStatus::Abstention,
        VerdictStatus::InstrumentFailure,
        VerdictStatus::Blocked,
    ] {
        let spelt = serde_json::to_value(status).unwrap();
        assert_eq!(
            VerdictStatus::of(&json!({"verdict": {"status": spelt}})),
            Some(status)
        );
    }
}

#[test]
fn control_a_verdict_status_outside_the_four_is_none_and_never_exits_0() {
    for verdict in [
        json!({"status": "Recommendation"}),
        json!({"status": "approved"}),
        json!({"status": 1}),
        json!({}),
        Value::Null,
    ] {
        let record = json!({"verdict": verdict});
        assert_eq!(VerdictStatus::of(&record), None, "{record}");
        assert!(!record_exit_is_ok(&record), "{record}");
    }
}

/// The `record.json` blobs that refs kept when deliberation records were still untyped
/// (`tests/fixtures/deliberation-sealed/README.md` says how they were made).
const SEALED: [(&str, &[u8]); 8] = [
    (
        "review",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/review.json"),
    ),
    (
        "design",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/design.json"),
    ),
    (
        "not-judged",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/not-judged.json"),
    ),
    (
        "release-gate",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/release-gate.json"),
    ),
    (
        "judge-failed",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/judge-failed.json"),
    ),
    (
        "abstained",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/abstained.json"),
    ),
    (
        "v1",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/v1.json"),
    ),
    (
        "decided",
        include_bytes!("../../../../tests/fixtures/deliberation-sealed/decided.json"),
    ),
];

fn sealed(name: &str) -> Record {
    let (_, bytes) = SEALED.iter().find(|(n, _)| *n == name).unwrap();
    serde_json::from_slice(bytes).unwrap()
}

#[test]
fn records_sealed_before_the_records_were_typed_verify_and_serialise_to_the_same_bytes() {
    for (name, bytes) in SEALED {
        let document: Value = serde_json::from_slice(bytes).unwrap();
        assert!(verify_record(&document).is_intact(), "{name}");
        let typed = Record::from_sealed(&document).unwrap();
        assert_eq!(
            String::from_utf8(crate::record::canonical_record(&typed)).unwrap(),
            std::str::from_utf8(bytes).unwrap(),
            "{name} re-serialises byte for byte"
        );
        assert_eq!(
            hash_without(&typed, &["record_sha256", "human_decision"]),
            typed.record_sha256,
            "{name}: the typed record seals to the same record_sha256"
        );
        let read: Record = serde_json::from_slice(bytes).unwrap();
        assert_eq!(read, typed, "{name}: deserialising verifies the same way");
    }
}

#[test]
fn the_sealed_fixtures_read_back_as_their_types() {
    let review = sealed("review");
    assert_eq!(review.panel.session_type, SessionType::Review);
    assert_eq!(review.stop.reason, StopReason::MaxRounds);
    assert!(review.stop.escalate);
    assert_eq!(review.evidence_gate(), Some(EvidenceGate::Resolved));
    let steelman = &review.rationale().unwrap().steelman;
    assert_eq!(steelman[0].position, "low");
    assert_eq!(review.human_decision, None);

    let gate = sealed("release-gate");
    assert_eq!(gate.panel.session_type, SessionType::ReleaseGate);
    assert_eq!(
        gate.turns[3].confidence,
        Some(1.0),
        "a seat's 1 is kept as 1.0"
    );
    assert_eq!(gate.metrics.ungrounded_share, Some(0.0));
    let verdict = panel_verdict(
        &gate,
        SessionType::ReleaseGate,
        &["approved", "revise", "blocked"],
        "gpt",
        Grounding::EvidenceRecordsOnly,
    )
    .unwrap();
    assert_eq!(verdict.status, VerdictStatus::Recommendation);
    assert_eq!(verdict.value.as_deref(), Some("approved"));

    let failed = sealed("judge-failed");
    assert_eq!(failed.verdict.status, VerdictStatus::InstrumentFailure);
    assert!(
        failed
            .verdict
            .error
            .as_deref()
            .unwrap()
            .starts_with("judge output is not JSON")
    );
    assert!(!failed.verdict.status.reached_judge());
    assert!(sealed("abstained").verdict.status.reached_judge());

    let blocked = sealed("not-judged");
    assert_eq!(blocked.judge, None);
    assert_eq!(blocked.verdict.reason, "not judged: c");

    let v1 = sealed("v1");
    assert_eq!(v1.schema, record::Schema::V1);
    assert_eq!(v1.rationale(), None);

    let decided = sealed("decided");
    let human = decided.human_decision.unwrap();
    assert_eq!(
        (human.value.as_str(), human.by.as_str()),
        ("medium", "release manager")
    );
    assert_eq!(human.extra["ticket"], "OPS-12", "a key of its own is kept");
    assert_eq!(
        decided.record_sha256, review.record_sha256,
        "the decision is outside the seal"
    );
}

#[test]
fn a_record_that_spells_no_human_decision_reads_back_without_one() {
    let mut document = record();
    document.as_object_mut().unwrap().remove("human_decision");
    let typed = Record::from_sealed(&document).unwrap();
    assert_eq!(
        crate::record::canonical_record(&typed),
        crate::record::canonical_json(&document)
    );
}

#[test]
fn a_typed_record_built_now_is_the_record_the_untyped_code_sealed() {
    let (_, bytes) = SEALED[0];
    assert_eq!(crate::record::canonical_record(&typed_record()), bytes);
}

#[test]
fn control_a_sealed_fixture_with_one_value_edited_does_not_read_back() {
    let (_, bytes) = SEALED[3];
    let edited = String::from_utf8(bytes.to_vec())
        .unwrap()
        .replace("\"confidence\":0.35", "\"confidence\":0.36");
    assert_ne!(edited.as_bytes(), bytes, "the edit took");
    let error = serde_json::from_str::<Record>(&edited)
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "the deliberation record does not verify: record_sha256 does not match: the record was edited after it was sealed"
    );
}

#[test]
fn session_types_are_spelt_as_the_reference_spells_them() {
    let spelt: Vec<Value> = SessionType::ALL.iter().map(value).collect();
    assert_eq!(
        spelt,
        [
            json!("plan"),
            json!("review"),
            json!("release-gate"),
            json!("incident"),
            json!("design")
        ]
    );
    for session_type in SessionType::ALL {
        assert_eq!(session_type.as_str().parse(), Ok(session_type));
        assert_eq!(session_type.to_string(), session_type.as_str());
        assert_eq!(
            serde_json::from_value::<SessionType>(value(session_type)).unwrap(),
            session_type
        );
    }
}

#[test]
fn control_an_unknown_session_type_is_refused_with_the_reference_sentence() {
    for unknown in ["chat", "Review", "release_gate", "releasegate", ""] {
        assert_eq!(
            unknown.parse::<SessionType>().unwrap_err().to_string(),
            "session_type must be one of plan, review, release-gate, incident, design",
            "{unknown:?}"
        );
    }
    let chat = edited(&panel(), |p| p["session_type"] = json!("chat"));
    assert_eq!(normalise_panel(&chat), Err(Error::SessionType));
    assert!(serde_json::from_value::<Panel>(chat).is_err());
    assert!(serde_json::from_value::<SessionType>(json!("release_gate")).is_err());
}

#[test]
fn a_stop_is_spelt_with_its_decision_whichever_way_it_went() {
    let going = value(Stop::Continue {
        next_round: 2,
        reason: session::ContinueReason::NotConverged,
    });
    assert_eq!(
        going,
        json!({"decision": "continue", "next_round": 2, "reason": "not-converged", "escalate": false})
    );
    let stopped = value(Stop::Stop(Stopped {
        reason: StopReason::PausedBudget,
        round: 3,
        escalate: true,
    }));
    assert_eq!(
        stopped,
        json!({"decision": "stop", "reason": "paused-budget", "round": 3, "escalate": true})
    );
}

#[test]
fn a_panel_deserialises_only_by_normalising() {
    let read: Panel = serde_json::from_value(panel()).unwrap();
    assert_eq!(read, normalised());
    assert_eq!(value(&read), value(normalised()));
    let again: Panel = serde_json::from_value(value(&read)).unwrap();
    assert_eq!(again, read, "a normalised panel normalises to itself");
}
