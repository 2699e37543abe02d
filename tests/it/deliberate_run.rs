//! `git hpp deliberate run`: a House Session driven through declared seat commands (small `sh`
//! scripts written beside the repository, so they leave its worktree clean), sealed at
//! refs/hpp/deliberations with each seat's verbatim text; blindness, failures, read-only seats,
//! the stop rules and the judge's failure.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Run, Sandbox, sha256_hex};

const DESIGN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/house-session/design/"
);

/// One seat's (or the judge's) command: it counts its runs, keeps what it read on stdin as
/// `<who>.stdin.<n>.json`, runs `<who>.do.<n>` (shell lines, in the repository) when the test
/// wrote one, exits with `<who>.exit.<n>` when there is one, else prints `<who>.answer.<n>.json`.
const SCRIPT: &str = r#"#!/bin/sh
who="$1"; dir="$2"
n=$(( $(cat "$dir/$who.count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/$who.count"
cat > "$dir/$who.stdin.$n.json"
if [ -f "$dir/$who.do.$n" ]; then . "$dir/$who.do.$n"; fi
if [ -f "$dir/$who.exit.$n" ]; then echo "$who gave up" >&2; exit "$(cat "$dir/$who.exit.$n")"; fi
cat "$dir/$who.answer.$n.json"
"#;

/// A session in a fresh repository: the design example's panel, and seats p1, p2, d and the
/// judge answering from files the test writes.
struct Session {
    sandbox: Sandbox,
    dir: PathBuf,
    panel: PathBuf,
    seats: PathBuf,
}

fn text_of(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} is readable: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

fn write(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).expect("JSON")).expect("writable");
}

/// What seat `who` says in round `round` of the converging design session.
fn said(who: &str, round: u32) -> String {
    format!("{who}, round {round}: what I read decides it.")
}

impl Session {
    /// The design example (max_rounds 3) with `budget.max_rounds` replaced when given.
    fn new(max_rounds: Option<u32>) -> Self {
        let sandbox = Sandbox::repo();
        let dir = sandbox.path("seats");
        std::fs::create_dir_all(&dir).expect("writable");
        let script = dir.join("seat.sh");
        std::fs::write(&script, SCRIPT).expect("writable");
        let mut panel_doc = read(Path::new(&format!("{DESIGN}panel.json")));
        if let Some(rounds) = max_rounds {
            panel_doc["budget"]["max_rounds"] = json!(rounds);
        }
        let panel = sandbox.path("panel.json");
        write(&panel, &panel_doc);
        let argv = |who: &str| json!(["sh", text_of(&script), who, text_of(&dir)]);
        let seats = sandbox.path("seats.json");
        write(
            &seats,
            &json!({
                "schema": "hpp.seats/v1",
                "seats": {"p1": argv("p1"), "p2": argv("p2"), "d": argv("d")},
                "judge": argv("j"),
            }),
        );
        Self {
            sandbox,
            dir,
            panel,
            seats,
        }
    }

    /// Writes what `who` answers on its `n`th run.
    fn answer(&self, who: &str, n: u32, answer: &Value) {
        write(&self.dir.join(format!("{who}.answer.{n}.json")), answer);
    }

    /// Makes `who` exit `code` on its `n`th run.
    fn fail(&self, who: &str, n: u32, code: i32) {
        std::fs::write(self.dir.join(format!("{who}.exit.{n}")), code.to_string())
            .expect("writable");
    }

    /// Makes `who` run `lines` (shell, in the repository) on its `n`th run.
    fn act(&self, who: &str, n: u32, lines: &str) {
        std::fs::write(self.dir.join(format!("{who}.do.{n}")), lines).expect("writable");
    }

    /// How many times `who` ran.
    fn runs(&self, who: &str) -> u32 {
        std::fs::read_to_string(self.dir.join(format!("{who}.count")))
            .map_or(0, |t| t.trim().parse().expect("a count"))
    }

    /// What `who` read on stdin on its `n`th run.
    fn stdin(&self, who: &str, n: u32) -> Value {
        read(&self.dir.join(format!("{who}.stdin.{n}.json")))
    }

    /// The converging design session: round 1 splits (p1 single-log on a fact, p2
    /// log-per-item on a fact, d log-per-item on an opinion), round 2 all log-per-item on
    /// facts; the judge recommends log-per-item.
    fn converging(&self) {
        let turn = |who: &str, round: u32, position: &str, kind: &str, refs: &[&str]| {
            json!({"position": position, "confidence": null,
                   "claims": [{"kind": kind, "refs": refs}], "text": said(who, round)})
        };
        self.answer(
            "p1",
            1,
            &turn("p1", 1, "single-log", "fact", &["one-ref-one-writer"]),
        );
        self.answer(
            "p2",
            1,
            &turn("p2", 1, "log-per-item", "fact", &["cas-contention"]),
        );
        self.answer("d", 1, &turn("d", 1, "log-per-item", "opinion", &[]));
        self.answer(
            "p1",
            2,
            &turn("p1", 2, "log-per-item", "fact", &["race-test"]),
        );
        self.answer(
            "p2",
            2,
            &turn("p2", 2, "log-per-item", "fact", &["cas-contention"]),
        );
        self.answer(
            "d",
            2,
            &turn("d", 2, "log-per-item", "fact", &["race-test"]),
        );
        self.answer("j", 1, &json!({"decision": self.judge_record()}));
    }

    /// The design example's judge record (local-model, log-per-item).
    fn judge_record(&self) -> Value {
        read(Path::new(&format!("{DESIGN}judge.json")))
    }

    /// Runs `git hpp deliberate run` with `extra` flags.
    fn run(&self, extra: &[&str]) -> Run {
        let mut args = vec![
            "deliberate",
            "run",
            "--panel",
            text_of(&self.panel),
            "--seats",
            text_of(&self.seats),
            "--timeout",
            "30",
        ];
        args.extend_from_slice(extra);
        self.sandbox.hpp_in(&self.sandbox.root, &args)
    }

    /// The blob at `path` in `reference`'s tree.
    fn show(&self, reference: &str, path: &str) -> String {
        self.sandbox.git(["show", &format!("{reference}:{path}")])
    }
}

fn ref_of(recorded: &Value) -> String {
    recorded["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("the output names its ref: {recorded}"))
        .to_owned()
}

#[test]
fn a_converging_session_is_sealed_with_each_seats_text_and_verifies_intact() {
    let session = Session::new(None);
    session.converging();
    let recorded = session.run(&["--out", "out/record.json"]).json(0);
    assert_eq!(recorded["status"], "recorded");
    assert_eq!(
        recorded["stop"],
        json!({"decision": "stop", "reason": "grounded-convergence", "round": 2, "escalate": false})
    );
    assert_eq!(recorded["rounds"], 2);
    assert_eq!(recorded["verdict"]["status"], "recommendation");
    assert_eq!(recorded["verdict"]["value"], "log-per-item");
    assert_eq!(recorded["dissent"], json!([]));
    assert_eq!(recorded["decision"]["method"], "panel");
    assert_eq!(recorded["record"], "out/record.json");
    let reference = ref_of(&recorded);
    assert!(
        reference.starts_with("refs/hpp/deliberations/design-board-layout-"),
        "{reference}"
    );

    // Each turn's verbatim text sits beside it, and hashes to the turn's text_sha256.
    let files = session
        .sandbox
        .git(["ls-tree", "-r", "--name-only", &reference]);
    for n in 1..=6 {
        assert!(
            files.lines().any(|f| f == format!("texts/{n}.txt")),
            "{files}"
        );
    }
    let order = [
        ("p1", 1),
        ("p2", 1),
        ("d", 1),
        ("p1", 2),
        ("p2", 2),
        ("d", 2),
    ];
    for (n, (who, round)) in order.iter().enumerate() {
        let turn: Value =
            serde_json::from_str(&session.show(&reference, &format!("turns/{}.json", n + 1)))
                .expect("a turn is JSON");
        assert_eq!(
            (turn["seat"].as_str(), turn["round"].as_u64()),
            (Some(*who), Some(*round as u64))
        );
        let text = session.show(&reference, &format!("texts/{}.txt", n + 1));
        assert_eq!(text, said(who, *round));
        assert_eq!(turn["text_sha256"], sha256_hex(text.as_bytes()));
        assert_eq!(turn["chars"], text.chars().count());
    }

    let intact = session
        .sandbox
        .hpp(["deliberate", "verify", &reference])
        .json(0);
    assert_eq!(intact["status"], "intact");
    assert_eq!(intact["record_sha256"], recorded["record_sha256"]);
    let file = session
        .sandbox
        .hpp(["deliberate", "verify", "out/record.json"])
        .json(0);
    assert_eq!(file["status"], "intact");

    // The judge read the panel, every turn with its text, the tally and the stop.
    assert_eq!(session.runs("j"), 1);
    let judged = session.stdin("j", 1);
    assert_eq!(judged["stop"], recorded["stop"]);
    assert_eq!(judged["tally"].as_array().map(Vec::len), Some(2));
    assert_eq!(judged["turns"].as_array().map(Vec::len), Some(6));
    assert_eq!(judged["turns"][5]["text"], said("d", 2));
    assert_eq!(judged["panel"]["id"], "design-board-layout");
}

#[test]
fn round_one_is_blind_and_round_two_sees_every_turn_of_round_one_and_none_of_its_own() {
    let session = Session::new(None);
    session.converging();
    let recorded = session.run(&[]).json(0);
    let reference = ref_of(&recorded);
    let sealed: Value =
        serde_json::from_str(&session.show(&reference, "record.json")).expect("JSON");
    let turns = sealed["turns"].as_array().expect("turns");
    let round_one: Vec<&Value> = turns.iter().filter(|t| t["round"] == 1).collect();
    for who in ["p1", "p2", "d"] {
        let first = session.stdin(who, 1);
        assert_eq!(first["seat"], who);
        assert_eq!(first["round"], 1);
        assert_eq!(first["seen_turns"], json!([]), "{who} round 1");
        assert_eq!(first["turns"], json!([]), "{who} round 1");
        assert_eq!(first["panel"]["sha256"], sealed["panel"]["sha256"]);

        let second = session.stdin(who, 2);
        assert_eq!(second["round"], 2);
        let seen: Vec<&Value> = round_one.iter().map(|t| &t["sha256"]).collect();
        assert_eq!(second["seen_turns"], json!(seen), "{who} round 2");
        let given: Vec<Value> = second["turns"]
            .as_array()
            .expect("turns")
            .iter()
            .map(|t| json!([t["turn"]["seat"], t["turn"]["round"], t["text"]]))
            .collect();
        assert_eq!(
            given,
            vec![
                json!(["p1", 1, said("p1", 1)]),
                json!(["p2", 1, said("p2", 1)]),
                json!(["d", 1, said("d", 1)]),
            ],
            "{who} round 2 sees round 1 and nothing of round 2"
        );
    }
}

#[test]
fn a_seat_that_fails_is_not_judged_the_verdict_is_blocked_and_no_round_follows() {
    let session = Session::new(None);
    session.converging();
    session.fail("d", 1, 3);
    let run = session.run(&[]);
    assert!(
        run.stderr.contains("seat d") && run.stderr.contains("exited 3"),
        "{run}"
    );
    let recorded = run.json(1);
    assert_eq!(recorded["stop"]["reason"], "not-judged");
    assert_eq!(recorded["stop"]["round"], 1);
    assert_eq!(recorded["verdict"]["status"], "blocked");
    assert_eq!(recorded["verdict"]["reason"], "not judged: d");
    assert_eq!(
        (session.runs("p1"), session.runs("d"), session.runs("j")),
        (1, 1, 0),
        "no round after the stop, and no judge for a session not judged"
    );
    let reference = ref_of(&recorded);
    let intact = session
        .sandbox
        .hpp(["deliberate", "verify", &reference])
        .json(0);
    assert_eq!(intact["status"], "intact");
}

#[test]
fn an_answer_with_a_key_outside_the_contract_leaves_that_seat_not_judged() {
    let session = Session::new(None);
    session.converging();
    session.answer(
        "p2",
        1,
        &json!({"position": "log-per-item", "confidence": null, "claims": [],
                "text": "p2 speaks", "model": "sneaky-model"}),
    );
    let run = session.run(&[]);
    assert!(
        run.stderr.contains("seat p2") && run.stderr.contains("model"),
        "{run}"
    );
    let recorded = run.json(1);
    assert_eq!(recorded["verdict"]["reason"], "not judged: p2");
    assert_eq!(session.runs("j"), 0);
}

#[test]
fn control_a_seat_whose_text_holds_a_secret_is_not_judged_and_the_secret_is_never_kept() {
    let session = Session::new(None);
    session.converging();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    session.answer(
        "p2",
        1,
        &json!({"position": "log-per-item", "confidence": null, "claims": [],
                "text": format!("deploy with GITHUB_TOKEN={token}")}),
    );
    let run = session.run(&[]);
    assert!(
        run.stderr.contains("seat p2") && run.stderr.contains("a GitHub token"),
        "{run}"
    );
    assert!(
        !run.stderr.contains(token) && !run.stdout.contains(token),
        "{run}"
    );
    let recorded = run.json(1);
    assert_eq!(recorded["verdict"]["reason"], "not judged: p2");
    let kept = session.sandbox.git(["log", "-p", "--all", "--format=%H"]);
    assert!(!kept.contains(token), "the secret was kept in a record");
}

#[test]
fn the_session_stops_at_max_rounds_and_the_judge_rules_over_grounded_dissent() {
    let session = Session::new(Some(1));
    session.converging();
    let planned = session
        .sandbox
        .hpp(["deliberate", "plan", text_of(&session.panel)])
        .json(0);
    let steelman = "A single log is one ref to fetch.";
    let would_change = "A race test that loses no events on one log.";
    session.answer(
        "j",
        1,
        &json!({
            "decision": session.judge_record(),
            "rationale": {
                "schema": "hpp.rationale/v1",
                "panel_sha256": planned["panel"]["sha256"],
                "author": "j",
                "steelman": [{"position": "single-log",
                              "text_sha256": sha256_hex(steelman.as_bytes()),
                              "chars": steelman.len()}],
                "would_change_if": [{"text_sha256": sha256_hex(would_change.as_bytes()),
                                     "chars": would_change.len()}],
            },
        }),
    );
    let recorded = session.run(&[]).json(0);
    assert_eq!(
        recorded["stop"],
        json!({"decision": "stop", "reason": "max-rounds", "round": 1, "escalate": true})
    );
    assert_eq!(recorded["rounds"], 1);
    assert_eq!(
        recorded["dissent"],
        json!([{"seat": "p1", "position": "single-log", "grounded": true}])
    );
    assert_eq!(
        (session.runs("p1"), session.runs("p2"), session.runs("d")),
        (1, 1, 1),
        "no round after the stop"
    );
    let reference = ref_of(&recorded);
    assert!(
        session
            .sandbox
            .git(["ls-tree", "--name-only", &reference])
            .lines()
            .any(|f| f == "rationale.json")
    );
}

#[test]
fn a_judge_that_fails_is_sealed_as_an_instrument_failure_and_exits_1() {
    let session = Session::new(None);
    session.converging();
    session.fail("j", 1, 4);
    let run = session.run(&[]);
    assert!(run.stderr.contains("judge exited 4"), "{run}");
    let recorded = run.json(1);
    assert_eq!(recorded["verdict"]["status"], "instrument-failure");
    assert!(
        recorded["verdict"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("judge exited 4")),
        "{recorded}"
    );
    assert_eq!(
        recorded["decision"]["outcome"]["status"],
        "instrument-failure"
    );
    let reference = ref_of(&recorded);
    let judge: Value = serde_json::from_str(&session.show(&reference, "judge.json")).expect("JSON");
    assert_eq!(
        judge["provider"],
        json!({"id": "local", "model_served": "qwen3-32b-q5"})
    );
    assert_eq!(
        session
            .sandbox
            .hpp(["deliberate", "verify", &reference])
            .json(0)["status"],
        "intact"
    );
}

#[test]
fn control_a_judge_record_for_another_state_is_a_judge_failure_not_a_verdict() {
    let session = Session::new(None);
    session.converging();
    let mut record = session.judge_record();
    record["state_sha256"] = json!("0".repeat(64));
    session.answer("j", 1, &json!({"decision": record}));
    let run = session.run(&[]);
    let recorded = run.json(1);
    assert_eq!(recorded["verdict"]["status"], "instrument-failure");
    assert!(
        recorded["verdict"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("different state")),
        "{recorded}"
    );
}

#[test]
fn control_a_seat_that_writes_in_the_workspace_is_refused_and_nothing_is_sealed() {
    let session = Session::new(None);
    session.converging();
    session.act("p2", 1, "echo scratch > scratch.txt\n");
    let reason = session.run(&[]).refused();
    assert!(
        reason.contains("seat p2") && reason.contains("scratch.txt"),
        "{reason}"
    );
    assert_eq!(session.sandbox.hpp_refs(), "", "nothing was sealed");
    assert_eq!(
        session.runs("d"),
        0,
        "the session stops at the seat that wrote"
    );
}

#[test]
fn control_a_seat_that_moves_a_ref_is_refused_and_nothing_is_sealed() {
    let session = Session::new(None);
    session.converging();
    session.act("d", 2, "git branch sneaky\n");
    let reason = session.run(&[]).refused();
    assert!(
        reason.contains("seat d") && reason.contains("refs/heads/sneaky"),
        "{reason}"
    );
    assert_eq!(session.sandbox.hpp_refs(), "");
    assert_eq!(session.runs("j"), 0);
}

#[test]
fn control_a_judge_that_writes_in_the_workspace_is_refused_and_nothing_is_sealed() {
    let session = Session::new(None);
    session.converging();
    session.act("j", 1, "echo verdict > verdict.txt\n");
    let reason = session.run(&[]).refused();
    assert!(
        reason.contains("judge") && reason.contains("verdict.txt"),
        "{reason}"
    );
    assert_eq!(session.sandbox.hpp_refs(), "");
}

#[test]
fn control_a_seats_file_that_misses_a_seat_or_names_a_stranger_is_refused_before_any_seat_runs() {
    let session = Session::new(None);
    session.converging();
    let mut seats = read(&session.seats);
    let d = seats["seats"]["d"].take();
    seats["seats"].as_object_mut().expect("seats").remove("d");
    write(&session.seats, &seats);
    let missing = session.run(&[]).refused();
    assert!(missing.contains("seat d"), "{missing}");

    seats["seats"]["d"] = d.clone();
    seats["seats"]["zz"] = d.clone();
    write(&session.seats, &seats);
    let stranger = session.run(&[]).refused();
    assert!(stranger.contains("zz"), "{stranger}");

    seats["seats"].as_object_mut().expect("seats").remove("zz");
    seats["seats"]["j"] = d;
    write(&session.seats, &seats);
    let judge = session.run(&[]).refused();
    assert!(judge.contains("seat j"), "{judge}");

    assert_eq!(
        session.runs("p1") + session.runs("d") + session.runs("j"),
        0,
        "nothing ran"
    );
    assert_eq!(session.sandbox.hpp_refs(), "");
}

#[test]
fn control_a_seats_file_with_a_nul_in_an_argv_is_refused_before_any_seat_runs() {
    let session = Session::new(None);
    session.converging();
    let mut seats = read(&session.seats);
    // The last seat's argv: were it found only when that seat starts, the others would run.
    seats["seats"]["d"][2] = json!("d\u{0}x");
    write(&session.seats, &seats);
    let reason = session.run(&[]).refused();
    assert!(
        reason.contains("seat d") && reason.contains("NUL"),
        "{reason}"
    );
    assert_eq!(session.runs("p1") + session.runs("p2"), 0, "nothing ran");
    assert_eq!(session.sandbox.hpp_refs(), "");
}

#[test]
fn control_a_kept_text_that_does_not_hash_to_its_turn_breaks_verify() {
    let session = Session::new(None);
    session.converging();
    let reference = ref_of(&session.run(&[]).json(0));
    let sandbox = &session.sandbox;
    let forged = sandbox.path("forged.txt");
    std::fs::write(&forged, "p1 said something else").expect("writable");
    let blob = sandbox.git(["hash-object", "-w", text_of(&forged)]);
    let mktree = |listing: String| {
        let mut git = sandbox.command("git", &sandbox.root);
        git.arg("mktree");
        let run = Run::fed(git, &format!("{listing}\n"));
        run.ok().trim().to_owned()
    };
    let texts: Vec<String> = sandbox
        .git(["ls-tree", &format!("{reference}:texts")])
        .lines()
        .map(|l| {
            if l.ends_with("\t1.txt") {
                format!("100644 blob {blob}\t1.txt")
            } else {
                l.to_owned()
            }
        })
        .collect();
    let texts_tree = mktree(texts.join("\n"));
    let root: Vec<String> = sandbox
        .git(["ls-tree", &reference])
        .lines()
        .map(|l| {
            if l.ends_with("\ttexts") {
                format!("040000 tree {texts_tree}\ttexts")
            } else {
                l.to_owned()
            }
        })
        .collect();
    let tree = mktree(root.join("\n"));
    let commit = sandbox.git(["commit-tree", &tree, "-m", "forged"]);
    let forged_ref = "refs/hpp/deliberations/design-board-layout-forged";
    sandbox.git(["update-ref", forged_ref, &commit]);
    let broken = sandbox.hpp(["deliberate", "verify", forged_ref]).json(2);
    assert_eq!(broken["status"], "broken");
    assert!(
        broken["reason"]
            .as_str()
            .is_some_and(|r| r.contains("texts/1.txt")),
        "{broken}"
    );
    // The sealed original still verifies.
    assert_eq!(
        sandbox.hpp(["deliberate", "verify", &reference]).json(0)["status"],
        "intact"
    );
}

#[test]
fn a_round_no_seat_answered_is_no_round_so_nothing_is_sealed_and_it_exits_1() {
    let session = Session::new(None);
    session.converging();
    for who in ["p1", "p2", "d"] {
        session.fail(who, 1, 5);
    }
    let run = session.run(&[]);
    assert_eq!(
        run.stderr.matches("is not judged in round 1").count(),
        3,
        "{run}"
    );
    let report = run.json(1);
    assert_eq!(report["status"], "not-recorded");
    assert_eq!(report["round"], 1);
    assert_eq!(report["failures"].as_array().map(Vec::len), Some(3));
    assert_eq!(session.sandbox.hpp_refs(), "");
    assert_eq!(session.runs("j"), 0);
}

#[test]
fn control_a_signer_other_than_the_judges_seat_is_refused_before_any_seat_runs() {
    let session = Session::new(None);
    session.converging();
    let key = session.sandbox.path("key");
    let reason = session
        .run(&["--sign-key", text_of(&key), "--signer", "lane-p1"])
        .refused();
    assert!(
        reason.contains("lane-p1") && reason.contains("lane-judge"),
        "{reason}"
    );
    assert_eq!(session.runs("p1"), 0);
    assert_eq!(session.sandbox.hpp_refs(), "");
}

#[test]
fn control_a_seat_that_writes_into_another_worktree_is_refused_and_nothing_is_sealed() {
    let session = Session::new(None);
    session.converging();
    // A lane's worktree, made before the session: the worktree list itself does not change.
    let lane = session.sandbox.path("lane-wt");
    session
        .sandbox
        .git(["worktree", "add", "-q", "-b", "lane", text_of(&lane)]);
    session.act(
        "p2",
        1,
        &format!("echo scratch > '{}/scratch.txt'\n", lane.display()),
    );
    let reason = session.run(&[]).refused();
    assert!(
        reason.contains("seat p2") && reason.contains("other worktrees"),
        "{reason}"
    );
    assert!(reason.contains("lane-wt changed"), "{reason}");
    assert_eq!(session.sandbox.hpp_refs(), "", "nothing was sealed");
    assert_eq!(
        session.runs("d"),
        0,
        "the session stops at the seat that wrote"
    );
}

/// Tells whether process `pid` is gone (or a zombie, dead and waiting to be reaped).
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn a_seats_child_that_left_its_session_does_not_outlive_the_seat() {
    let session = Session::new(None);
    session.converging();
    let pid = session.dir.join("escaped.pid");
    let gate = session.dir.join("gate");
    // The child starts a session of its own (out of the seat's process group), notes its pid,
    // and would write in the workspace once the gate opens: after the seat's fingerprint.
    session.act(
        "p1",
        1,
        &format!(
            "setsid sh -c 'echo $$ > \"{pid}\"; while [ ! -e \"{gate}\" ]; do sleep 0.05; done; echo late > late.txt' </dev/null >/dev/null 2>&1 &\n\
             while [ ! -s '{pid}' ]; do sleep 0.01; done\n",
            pid = pid.display(),
            gate = gate.display()
        ),
    );
    let run = session.run(&[]);
    let escaped = std::fs::read_to_string(&pid)
        .expect("the child noted its pid")
        .trim()
        .to_owned();
    let outlived = !dead(&escaped);
    // Open the gate whatever happened, so a child that survived ends.
    std::fs::write(&gate, "").expect("writable");
    assert!(!outlived, "the seat's child outlived the session:\n{run}");
    run.ok();
}
