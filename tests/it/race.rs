//! Concurrent writers: compare-and-swap loses nothing and lets exactly one racer win a gate.

use std::process::Child;

use crate::harness::{Run, Sandbox};

fn wait_all(children: Vec<Child>) -> Vec<Run> {
    children
        .into_iter()
        .map(|c| Run::from_output(&c.wait_with_output().expect("the child finishes")))
        .collect()
}

fn spawn(sandbox: &Sandbox, args: &[&str]) -> Child {
    sandbox.spawn_hpp(args)
}

#[test]
fn control_eight_racers_on_one_new_loop_exactly_one_wins() {
    let sandbox = Sandbox::repo();
    let children: Vec<Child> = (0..8)
        .map(|_| {
            spawn(
                &sandbox,
                &[
                    "event",
                    "append",
                    "--type",
                    "work_started",
                    "--loop",
                    "race",
                    "--work",
                    "ITEM-1",
                    "--maker",
                    "agent-a",
                ],
            )
        })
        .collect();
    let runs = wait_all(children);
    let winners = runs.iter().filter(|r| r.code == 0).count();
    assert_eq!(
        winners,
        1,
        "exactly one racer wins:\n{}",
        runs.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
    for loser in runs.into_iter().filter(|r| r.code != 0) {
        let reason = loser.refused();
        assert_eq!(
            reason,
            "invalid transition at event 2: active --work_started--> ?"
        );
    }
    let report = sandbox
        .hpp(["event", "verify", "--loop", "race", "--json"])
        .json(0);
    assert_eq!(
        (report["status"].as_str(), report["events"].as_u64()),
        (Some("intact"), Some(1))
    );
}

#[test]
fn eight_racers_on_an_active_loop_record_evidence_once() {
    let sandbox = Sandbox::repo();
    sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--loop",
            "gate",
            "--work",
            "ITEM-1",
            "--maker",
            "agent-a",
        ])
        .ok();
    // One real bundle on this tree, which every racer names.
    sandbox.ignore_outputs();
    sandbox
        .hpp([
            "evidence",
            "run",
            "--id",
            "unit",
            "--artifact",
            "hpp-out/unit.txt",
            "--",
            "sh",
            "-c",
            "mkdir -p hpp-out && echo ok > hpp-out/unit.txt",
        ])
        .ok();
    let children: Vec<Child> = (0..8)
        .map(|_| {
            spawn(
                &sandbox,
                &[
                    "event",
                    "append",
                    "--type",
                    "evidence_recorded",
                    "--loop",
                    "gate",
                    "--evidence",
                    "unit",
                ],
            )
        })
        .collect();
    let runs = wait_all(children);
    assert_eq!(runs.iter().filter(|r| r.code == 0).count(), 1);
    assert!(
        runs.iter()
            .filter(|r| r.code != 0)
            .all(|r| r.code == 2 && r.stderr.contains("evidenced --evidence_recorded--> ?"))
    );
    let status = sandbox.hpp(["status", "--loop", "gate", "--json"]).json(0);
    assert_eq!(
        (status["state"].as_str(), status["event_count"].as_u64()),
        (Some("evidenced"), Some(2))
    );
}

#[test]
fn eight_writers_times_a_hundred_new_loops_lose_nothing() {
    let sandbox = Sandbox::repo();
    let script = "for i in $(seq 1 100); do \"$0\" event append --type work_started --work W --maker agent-a --loop \"w$1-$i\" >/dev/null || exit 1; done";
    let children: Vec<Child> = (0..8)
        .map(|w| {
            let mut sh = sandbox.command("sh", &sandbox.root);
            sh.args(["-c", script, crate::harness::BIN, &w.to_string()]);
            sh.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("sh starts")
        })
        .collect();
    for run in wait_all(children) {
        run.ok();
    }
    let loops = sandbox.hpp(["loops", "--json"]).json(0);
    let rows = loops["loops"].as_array().expect("a list");
    assert_eq!(rows.len(), 800, "every loop is present");
    assert!(
        rows.iter()
            .all(|r| r["chain"] == "intact" && r["event_count"] == 1 && r["state"] == "active")
    );
    assert_eq!(
        sandbox
            .git([
                "for-each-ref",
                "--count=1000",
                "--format=x",
                "refs/hpp/loops/"
            ])
            .lines()
            .count(),
        800
    );
}

#[test]
fn eight_concurrent_attestations_each_keep_their_record_and_their_note_line() {
    let sandbox = Sandbox::repo();
    let checkers: Vec<String> = (0..8).map(|i| format!("checker-{i}")).collect();
    let children: Vec<Child> = checkers
        .iter()
        .map(|checker| {
            spawn(
                &sandbox,
                &[
                    "attest",
                    "create",
                    "--spec",
                    "README",
                    "--maker",
                    "maker-a",
                    "--checker",
                    checker,
                    "--session",
                    "review:race",
                    "--verdict",
                    "approved",
                ],
            )
        })
        .collect();
    for run in wait_all(children) {
        run.ok();
    }
    let records = sandbox.git([
        "for-each-ref",
        "--format=%(refname)",
        "refs/hpp/attestations/",
    ]);
    assert_eq!(records.lines().count(), 8, "{records}");
    // The notes mirror lost no line to the race on refs/notes/hpp.
    let note = sandbox.git(["notes", "--ref=hpp", "show", "HEAD"]);
    for checker in &checkers {
        assert!(
            note.contains(&format!("by {checker} ")),
            "{checker}: {note}"
        );
    }
    assert_eq!(note.lines().count(), 8, "{note}");
}

#[test]
fn sixteen_writers_across_every_record_kind_lose_nothing_and_exit_0_or_2() {
    let sandbox = Sandbox::repo();
    // Two of each kind of writer, all at once: loops, attestations, evidence, the gotcha
    // memory, handoffs, the board (two racers claiming the same item among them), lanes.
    let mut jobs: Vec<Vec<String>> = Vec::new();
    for i in 0..2 {
        let n = i.to_string();
        jobs.push(
            [
                "event",
                "append",
                "--type",
                "work_started",
                "--work",
                "W",
                "--maker",
                "agent-a",
                "--loop",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([format!("race-{n}")])
            .collect(),
        );
        jobs.push(
            [
                "attest",
                "create",
                "--spec",
                "README",
                "--maker",
                "maker-a",
                "--session",
                "review:race",
                "--verdict",
                "approved",
                "--checker",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([format!("checker-{n}")])
            .collect(),
        );
        jobs.push(
            ["evidence", "run", "--id"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain([format!("unit-{n}"), "--".into(), "true".into()])
                .collect(),
        );
        jobs.push(
            ["gotcha", "record", "--task", "build", "--message"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain([format!("linker failed {n}")])
                .collect(),
        );
        jobs.push(
            ["handoff", "write", "--summary"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain([format!("handoff {n}"), "--loop".into(), "main".into()])
                .collect(),
        );
        jobs.push(
            ["board", "claim", "--model", "gpt-5", "--lane"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain([format!("lane-{n}"), format!("ITEM-{n}")])
                .collect(),
        );
        jobs.push(
            ["board", "claim", "SHARED", "--model", "gpt-5", "--lane"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain([format!("lane-s{n}")])
                .collect(),
        );
    }
    for lane in ["docs", "api"] {
        jobs.push(
            [
                "lane",
                "start",
                lane,
                "--role",
                "maker",
                "--model",
                "gpt-5",
                "--territory",
                lane,
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        );
    }
    assert_eq!(jobs.len(), 16);
    let children: Vec<Child> = jobs
        .iter()
        .map(|job| {
            let args: Vec<&str> = job.iter().map(String::as_str).collect();
            spawn(&sandbox, &args)
        })
        .collect();
    let runs = wait_all(children);
    for (job, run) in jobs.iter().zip(&runs) {
        assert!(
            run.code == 0 || run.code == 2,
            "{} exited {}:\n{run}",
            job.join(" "),
            run.code
        );
    }
    let count = |prefix: &str| {
        sandbox
            .git(["for-each-ref", "--format=%(refname)", prefix])
            .lines()
            .count()
    };
    assert_eq!(count("refs/hpp/loops/"), 2, "every loop");
    assert_eq!(count("refs/hpp/attestations/"), 2, "every attestation");
    assert_eq!(count("refs/hpp/evidence/"), 2, "every bundle");
    assert_eq!(count("refs/hpp/lanes/"), 2, "every lane");
    let gotchas = sandbox.git(["rev-list", "--count", "refs/hpp/gotchas/failures"]);
    assert_eq!(gotchas, "2", "every failure recorded");
    let handoffs = sandbox.git(["for-each-ref", "--format=%(refname)", "refs/hpp/handoffs/"]);
    let written: usize = handoffs
        .lines()
        .map(|r| {
            sandbox
                .git(["rev-list", "--count", r])
                .parse::<usize>()
                .expect("a count")
        })
        .sum();
    assert_eq!(written, 2, "every handoff");
    // Every board write that said it landed is in the board's log, the shared item's too.
    let board_ok = runs
        .iter()
        .zip(&jobs)
        .filter(|(run, job)| job[0] == "board" && run.code == 0)
        .count();
    let board = sandbox.git(["rev-list", "--count", "refs/hpp/board/log"]);
    assert_eq!(board, board_ok.to_string(), "every board write");
}
