//! The loop: appends through the five gates, refusals that write nothing, export and import.

use serde_json::Value;

use crate::harness::{Sandbox, TICKS, tick_lines, tick_log};

const GENESIS: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn sha256(bytes: &[u8]) -> String {
    crate::harness::sha256_hex(bytes)
}

#[test]
fn five_events_reach_verified() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let status = sandbox.hpp(["status", "--json"]).json(0);
    assert_eq!(status["state"], "verified");
    assert_eq!(status["event_count"], 5);
    assert_eq!(status["evidence_count"], 1);
    assert_eq!(status["next_step"], "no-op");
    assert_eq!(status["chain"]["status"], "intact");
    assert_eq!(
        status["history"],
        serde_json::json!([
            "work_started",
            "evidence_recorded",
            "check_passed",
            "human_approved",
            "verified"
        ])
    );
    let commits = sandbox.git(["rev-list", "--count", "refs/hpp/loops/main"]);
    assert_eq!(commits, "5", "one commit per event");
}

#[test]
fn append_prints_the_projection() {
    let sandbox = Sandbox::repo();
    let p = sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--data",
            r#"{"work":"ITEM-1","maker":"agent-a"}"#,
            "--json",
        ])
        .json(0);
    assert_eq!(p["state"], "active");
    assert_eq!(p["event_count"], 1);
    assert_eq!(p["evidence_count"], 0);
    assert_eq!(p["history"], serde_json::json!(["work_started"]));
    assert_eq!(p["next_step"], "record fresh evidence");
    assert_eq!(p["loop"], "main");
    assert_eq!(
        p["head"],
        Value::String(sandbox.git(["rev-parse", "refs/hpp/loops/main"]))
    );
    let blob = sandbox.git(["show", "refs/hpp/loops/main:event.json"]);
    // The gate stamps what it passed and the workspace tree it measured (here HEAD's).
    let tree = sandbox.git(["rev-parse", "HEAD^{tree}"]);
    assert_eq!(
        blob,
        format!(
            r#"{{"data":{{"gate":{{"name":"scope","tree":"{tree}"}},"maker":"agent-a","work":"ITEM-1"}},"id":"event:1","prev_sha256":"{GENESIS}","seq":1,"type":"work_started"}}"#
        )
    );
}

#[test]
fn control_a_bare_verified_is_refused_and_leaves_no_ref() {
    let sandbox = Sandbox::repo();
    let reason = sandbox
        .hpp(["event", "append", "--type", "verified"])
        .refused();
    assert_eq!(
        reason,
        "invalid transition at event 1: planned --verified--> ?"
    );
    assert_eq!(sandbox.hpp_refs(), "");
}

#[test]
fn control_an_out_of_order_event_is_refused_and_the_tip_does_not_move() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let before = sandbox.hpp_refs();
    let reason = sandbox
        .hpp(["event", "append", "--type", "check_passed"])
        .refused();
    assert_eq!(
        reason,
        "invalid transition at event 2: active --check_passed--> ?"
    );
    assert_eq!(sandbox.hpp_refs(), before);
}

#[test]
fn control_bad_data_is_refused_before_writing() {
    let sandbox = Sandbox::repo();
    let cases = [
        (r#"[1,2]"#, "event data must be a JSON object"),
        (r#"{"work":"#, "invalid JSON in --data"),
        (
            r#"{"note":"password = hunter2"}"#,
            "looks like it carries a secret",
        ),
        // Issue 33: kept as written (`1e+400`) yet read back as infinity.
        (r#"{"a":1e400}"#, "too large for a finite float at a"),
        (
            r#"{"a":[1,{"b":-1e999}]}"#,
            "too large for a finite float at a/1/b",
        ),
    ];
    for (data, needle) in cases {
        let reason = sandbox
            .hpp(["event", "append", "--type", "work_started", "--data", data])
            .refused();
        assert!(reason.contains(needle), "{reason}");
    }
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
    let prose = r#"{"note":"no password or secret is involved","work":"W","maker":"agent-a","big":1e300,"n":123456789012345678901234567890}"#;
    sandbox
        .hpp(["event", "append", "--type", "work_started", "--data", prose])
        .ok();
}

#[test]
fn the_default_loop_is_the_current_branch_and_detached_head_needs_a_name() {
    let sandbox = Sandbox::repo();
    sandbox.git(["checkout", "-q", "-b", "feature/login"]);
    sandbox.start_work().ok();
    assert!(
        sandbox
            .hpp_refs()
            .starts_with("refs/hpp/loops/feature/login ")
    );
    sandbox.git(["checkout", "-q", "--detach"]);
    let reason = sandbox.hpp(["status"]).refused();
    assert!(reason.contains("HEAD is detached"), "{reason}");
    sandbox.hpp(["status", "--loop", "feature/login"]).ok();
}

#[test]
fn loops_and_log_show_every_loop_and_event() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("a");
    sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--loop",
            "b",
            "--data",
            r#"{"work":"X","maker":"agent-a"}"#,
        ])
        .ok();
    let loops = sandbox.hpp(["loops", "--json"]).json(0);
    let rows = loops["loops"].as_array().expect("a list");
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0]["loop"].as_str(), rows[0]["state"].as_str()),
        (Some("a"), Some("verified"))
    );
    assert_eq!(
        (rows[1]["loop"].as_str(), rows[1]["state"].as_str()),
        (Some("b"), Some("active"))
    );
    let log = sandbox
        .hpp(["event", "log", "--loop", "b", "--json"])
        .json(0);
    assert_eq!(log["events"][0]["type"], "work_started");
    assert_eq!(log["events"][0]["data"]["work"], "X");
    assert_eq!(log["events"][0]["id"], "event:1");
    let human = sandbox.hpp(["loops"]).ok();
    assert!(
        human.contains("a  verified") && human.contains("b  active"),
        "{human}"
    );
}

/// Checks a JSON-lines log with the reference's chain rules, independently of the crate.
fn assert_reference_chain(text: &str) {
    let mut prev = GENESIS.to_owned();
    for (i, line) in text.lines().enumerate() {
        let value: Value = serde_json::from_str(line).expect("each line is JSON");
        assert_eq!(
            serde_json::to_string(&value).expect("re-serialises"),
            line,
            "line {} is compact sorted-key JSON",
            i + 1
        );
        assert_eq!(value["seq"], i + 1);
        assert_eq!(value["id"], format!("event:{}", i + 1));
        assert_eq!(
            value["prev_sha256"],
            prev.as_str(),
            "line {} links to the line before",
            i + 1
        );
        prev = sha256(line.as_bytes());
    }
}

#[test]
fn export_then_import_round_trips_byte_for_byte() {
    let sandbox = Sandbox::repo();
    sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--data",
            r#"{"work":"ITEM-1","maker":"agent-a","note":"ação"}"#,
        ])
        .ok();
    sandbox.walk_steps("main", 1..5);
    let exported = sandbox.hpp(["event", "export"]).ok();
    assert_eq!(exported.lines().count(), 5);
    assert!(exported.ends_with('\n'));
    assert_reference_chain(&exported);
    let file = sandbox.path("events.jsonl");
    std::fs::write(&file, &exported).expect("writable");
    let imported = sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8 path"),
            "--loop",
            "copy",
            "--json",
        ])
        .json(0);
    assert_eq!(imported["chain"]["status"], "intact");
    assert_eq!(imported["projection"]["state"], "verified");
    assert_eq!(
        sandbox.hpp(["event", "export", "--loop", "copy"]).ok(),
        exported
    );
    let verify = sandbox
        .hpp(["event", "verify", "--loop", "copy", "--json"])
        .json(0);
    assert_eq!(
        verify["head_sha256"],
        sha256(exported.lines().last().expect("a line").as_bytes())
    );
}

#[test]
fn control_an_edited_line_is_refused_on_import_with_the_event_it_breaks() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let exported = sandbox.hpp(["event", "export"]).ok();
    let edited = exported.replacen(
        r#""type":"check_passed""#,
        r#""type":"check_passed","x":1"#,
        1,
    );
    assert_ne!(edited, exported);
    let file = sandbox.path("edited.jsonl");
    std::fs::write(&file, edited).expect("writable");
    let reason = sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "copy",
        ])
        .refused();
    assert!(reason.contains("first divergent: event:4"), "{reason}");
    assert!(reason.contains("hash chain broken at event:4"), "{reason}");
    assert!(
        !sandbox.hpp_refs().contains("refs/hpp/loops/copy"),
        "nothing was written"
    );
}

#[test]
fn import_of_a_log_nested_past_what_its_readers_parse_names_the_depth_not_corruption() {
    let sandbox = Sandbox::repo();
    // The reference writes data 500 levels deep (it takes up to about 990): valid JSON, a
    // valid chain, and more than serde_json reads.
    let deep = format!(
        r#"{{"data":{{"x":{}{}}},"id":"event:1","prev_sha256":"{GENESIS}","seq":1,"type":"work_started"}}"#,
        "[".repeat(500),
        "]".repeat(500)
    );
    let file = sandbox.path("deep.jsonl");
    std::fs::write(&file, format!("{deep}\n")).expect("writable");
    let path = file.to_str().expect("utf-8");
    let reason = sandbox
        .hpp(["event", "import", path, "--loop", "deep"])
        .refused();
    assert!(
        reason.contains("the event at line 1 nests deeper than 126 levels of data"),
        "{reason}"
    );
    assert!(!reason.contains("corrupt"), "{reason}");
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
}

#[test]
fn control_a_line_that_is_not_json_is_still_called_corrupt() {
    let sandbox = Sandbox::repo();
    let file = sandbox.path("broken.jsonl");
    // Cut short at a shallow depth: it is broken JSON, whatever it nests.
    std::fs::write(&file, format!("{{\"data\":{}\n", "[".repeat(10))).expect("writable");
    let reason = sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "b",
        ])
        .refused();
    assert!(
        reason.contains("corrupt event log at line 1: not a UTF-8 JSON object"),
        "{reason}"
    );
}

#[test]
fn control_import_refuses_forbidden_histories_existing_loops_and_blank_lines() {
    let sandbox = Sandbox::repo();
    let line1 = format!(
        r#"{{"data":{{}},"id":"event:1","prev_sha256":"{GENESIS}","seq":1,"type":"work_started"}}"#
    );
    let line2 = format!(
        r#"{{"data":{{}},"id":"event:2","prev_sha256":"{}","seq":2,"type":"verified"}}"#,
        sha256(line1.as_bytes())
    );
    let file = sandbox.path("forbidden.jsonl");
    std::fs::write(&file, format!("{line1}\n{line2}\n")).expect("writable");
    let reason = sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "x",
        ])
        .refused();
    assert!(
        reason.contains("invalid transition at event 2: active --verified--> ?"),
        "{reason}"
    );

    std::fs::write(&file, format!("{line1}\n")).expect("writable");
    sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "x",
        ])
        .ok();
    let reason = sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "x",
        ])
        .refused();
    assert!(reason.contains("loop x already has events"), "{reason}");

    // The reference counts blank lines, so a chained line after one has the wrong seq ...
    std::fs::write(&file, format!("\n{line1}\n")).expect("writable");
    let reason = sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "y",
        ])
        .refused();
    assert!(reason.contains("line 2: non-contiguous seq"), "{reason}");
    // ... and a legacy line after one is valid there but cannot be a contiguous git chain.
    std::fs::write(
        &file,
        "{\"type\":\"work_started\"}\n\n{\"type\":\"evidence_recorded\"}\n",
    )
    .expect("writable");
    let reason = sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "y",
        ])
        .refused();
    assert!(reason.contains("line 2 is blank"), "{reason}");
    assert!(!sandbox.hpp_refs().contains("loops/y"));
}

#[test]
fn a_legacy_log_imports_and_new_events_chain_to_its_last_line() {
    let sandbox = Sandbox::repo();
    let file = sandbox.path("legacy.jsonl");
    std::fs::write(&file, "{\"type\":\"work_started\",\"data\":{}}\r\n").expect("writable");
    sandbox
        .hpp([
            "event",
            "import",
            file.to_str().expect("utf-8"),
            "--loop",
            "old",
        ])
        .ok();
    let verify = sandbox
        .hpp(["event", "verify", "--loop", "old", "--json"])
        .json(0);
    assert_eq!(verify["status"], "legacy");
    assert_eq!(verify["legacy"], 1);
    sandbox.record_evidence("old");
    // The imported event names nothing a gate checks: reported as unchecked, never as checked;
    // the event written after it was measured.
    let verify = sandbox
        .hpp(["event", "verify", "--loop", "old", "--json"])
        .json(0);
    assert_eq!(verify["gates"][0]["status"], "unchecked-legacy");
    assert_eq!(verify["gates"][1]["status"], "ok");
    let human = sandbox.hpp(["event", "verify", "--loop", "old"]).ok();
    assert!(
        human.contains("event:1 work_started · gates: unchecked (legacy)"),
        "{human}"
    );
    let exported = sandbox.hpp(["event", "export", "--loop", "old"]).ok();
    let second: Value =
        serde_json::from_str(exported.lines().nth(1).expect("two lines")).expect("JSON");
    assert_eq!(
        second["prev_sha256"],
        sha256(br#"{"type":"work_started","data":{}}"#)
    );
}

#[test]
fn control_a_manifest_without_a_loop_block_is_refused_and_a_worktree_manifest_is_used() {
    let sandbox = Sandbox::repo();
    std::fs::write(
        sandbox.root.join("hpp.manifest.json"),
        r#"{"protocol_version":"2.1"}"#,
    )
    .expect("writable");
    let reason = sandbox.start_work().refused();
    assert!(reason.contains("no loop block"), "{reason}");
    assert_eq!(sandbox.hpp_refs(), "");
    let manifest = r#"{"protocol_version":"2.1","loop":{"initial":"open","states":["open","done"],
        "next_step":{"open":"finish","done":"no-op"},
        "transitions":[{"from":"open","event":"finish","to":"done","gate":"closure"}]}}"#;
    std::fs::write(sandbox.root.join("hpp.manifest.json"), manifest).expect("writable");
    let p = sandbox
        .hpp(["event", "append", "--type", "finish", "--json"])
        .json(0);
    assert_eq!(p["state"], "done");
    let other = sandbox.path("m.json");
    std::fs::write(&other, r#"{"protocol_version":"2.0"}"#).expect("writable");
    let reason = sandbox
        .hpp(["status", "--manifest", other.to_str().expect("utf-8")])
        .refused();
    assert!(reason.contains("protocol_version must be 2.1"), "{reason}");
}

#[test]
fn resume_prints_three_facts_as_json() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let resume = sandbox.hpp(["resume"]).json(0);
    assert_eq!(
        (
            &resume["state"],
            &resume["next_step"],
            &resume["event_count"]
        ),
        (
            &Value::from("active"),
            &Value::from("record fresh evidence"),
            &Value::from(1)
        )
    );
    let next = resume["next_action"].as_str().expect("a next action");
    assert!(next.contains("git hpp evidence run --loop main"), "{next}");
    assert_eq!(resume["gates"][0]["status"], "holds");
    assert_eq!(resume["gates"][1]["status"], "not yet");
}

/// Appends one tick to the loop `long`.
const TICK: &[&str] = &["event", "append", "--type", "tick", "--loop", "long"];

/// Runs `git-hpp --manifest MANIFEST ARGS...` in the sandbox's repository.
fn under<'a>(
    sandbox: &'a Sandbox,
    manifest: &'a str,
) -> impl Fn(&[&str]) -> crate::harness::Run + 'a {
    move |args| sandbox.hpp_in(&sandbox.root, &under_args(manifest, args))
}

/// `--manifest MANIFEST ARGS...`.
fn under_args<'a>(manifest: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--manifest", manifest];
    all.extend(args);
    all
}

/// Imports a loop `long` of `n` tick events under [`TICKS`]; returns the manifest's path.
fn long_loop(sandbox: &Sandbox, n: usize) -> String {
    let manifest = sandbox.path("ticks.json");
    std::fs::write(&manifest, TICKS).expect("writable");
    let text = tick_log(n);
    let log = sandbox.path("ticks.jsonl");
    std::fs::write(&log, text).expect("writable");
    let manifest = manifest.to_str().expect("utf-8").to_owned();
    sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "--manifest",
                &manifest,
                "event",
                "import",
                log.to_str().expect("utf-8"),
                "--loop",
                "long",
            ],
        )
        .ok();
    manifest
}

#[test]
fn status_of_a_long_loop_reads_the_same_from_its_verified_tip() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let status = |s: &Sandbox| {
        s.hpp_in(
            &s.root,
            &[
                "--manifest",
                &manifest,
                "status",
                "--loop",
                "long",
                "--json",
            ],
        )
        .json(0)
    };
    let whole = status(&sandbox);
    let cached = status(&sandbox);
    assert_eq!(
        whole, cached,
        "the remembered tip says what the whole chain says"
    );
    assert_eq!(cached["event_count"], 80);
    // A new event moves the tip: the next status reads the chain again and sees it.
    sandbox.tick_in(&sandbox.root, &manifest, "long").ok();
    assert_eq!(status(&sandbox)["event_count"], 81);
}

#[test]
fn control_a_forged_tip_is_verified_whole_whatever_was_remembered() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let args = ["--manifest", manifest.as_str(), "status", "--loop", "long"];
    sandbox.hpp_in(&sandbox.root, &args).ok();
    // Point the loop at a commit that repeats event 79 after event 80: a different tip, so
    // nothing remembered applies, and the chain is found broken.
    let tree = sandbox.git(["rev-parse", "refs/hpp/loops/long~1^{tree}"]);
    let parent = sandbox.git(["rev-parse", "refs/hpp/loops/long"]);
    let forged = sandbox.git(["commit-tree", &tree, "-p", &parent, "-m", "forged"]);
    sandbox.git(["update-ref", "refs/hpp/loops/long", &forged]);
    let reason = sandbox.hpp_in(&sandbox.root, &args).refused();
    assert!(
        reason.contains("loop long is broken at event:81"),
        "{reason}"
    );
}

#[test]
fn appends_to_a_long_loop_from_its_verified_tip_keep_the_chain_whole() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let hpp = under(&sandbox, &manifest);
    for _ in 0..3 {
        hpp(&["event", "append", "--type", "tick", "--loop", "long"]).ok();
    }
    // The whole chain, verified from scratch, agrees with what the appends built on.
    let verify = hpp(&["event", "verify", "--loop", "long", "--json"]).json(0);
    assert_eq!(verify["status"], "intact");
    assert_eq!(verify["events"], 83);
    let exported = hpp(&["event", "export", "--loop", "long"]).ok();
    assert_reference_chain(&exported);
}

#[test]
fn control_an_append_on_a_forged_tip_is_refused_whatever_was_remembered() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let append = under_args(&manifest, TICK);
    sandbox.hpp_in(&sandbox.root, &append).ok();
    let tree = sandbox.git(["rev-parse", "refs/hpp/loops/long~1^{tree}"]);
    let parent = sandbox.git(["rev-parse", "refs/hpp/loops/long"]);
    let forged = sandbox.git(["commit-tree", &tree, "-p", &parent, "-m", "forged"]);
    sandbox.git(["update-ref", "refs/hpp/loops/long", &forged]);
    let reason = sandbox.hpp_in(&sandbox.root, &append).refused();
    assert!(
        reason.contains("loop long is broken at event:82"),
        "{reason}"
    );
}

/// Writes `lines` as a loop on `refs/hpp/loops/<name>` with `git fast-import` (one commit per
/// event holding `event.json`, as the store lays them out), as another tool could.
fn fast_import_loop(sandbox: &Sandbox, name: &str, lines: &[String]) -> String {
    use std::io::Write;
    let mut stream = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let message = format!("hpp event {}: tick", i + 1);
        write!(
            stream,
            "commit refs/hpp/loops/{name}\nmark :{}\ncommitter t <t@example.com> {} +0000\ndata {}\n{message}\n",
            i + 1,
            1_700_000_000 + i,
            message.len()
        )
        .expect("in memory");
        if i > 0 {
            writeln!(stream, "from :{i}").expect("in memory");
        }
        write!(
            stream,
            "M 100644 inline event.json\ndata {}\n{line}\n\n",
            line.len()
        )
        .expect("in memory");
    }
    let mut child = sandbox
        .command("git", &sandbox.root)
        .args(["fast-import", "--quiet", "--force"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git fast-import runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(&stream)
        .expect("git fast-import reads");
    assert!(child.wait().expect("git fast-import ends").success());
    sandbox.git(["rev-parse", &format!("refs/hpp/loops/{name}")])
}

#[test]
fn a_tampered_event_in_the_middle_of_ten_thousand_is_found_after_the_tip_was_remembered() {
    let sandbox = Sandbox::repo();
    let manifest = sandbox.path("ticks.json");
    std::fs::write(&manifest, TICKS).expect("writable");
    let manifest = manifest.to_str().expect("utf-8").to_owned();
    let hpp = under(&sandbox, &manifest);
    fast_import_loop(&sandbox, "long", &tick_lines(10_000, None));
    // Remember the honest tip, as status and an append do.
    assert_eq!(
        hpp(&["status", "--loop", "long", "--json"]).json(0)["event_count"],
        10_000
    );
    hpp(&["event", "append", "--type", "tick", "--loop", "long"]).ok();
    // Another tool rewrites the loop with event 5,000 edited, and the ref moves to it.
    let forged = fast_import_loop(&sandbox, "forged", &tick_lines(10_001, Some(5_000)));
    sandbox.git(["update-ref", "refs/hpp/loops/long", &forged]);
    let report = hpp(&["event", "verify", "--loop", "long", "--json"]).json(2);
    assert_eq!(report["status"], "broken");
    assert_eq!(report["first_divergent"], "event:5001", "{report}");
    let tip = sandbox.git(["rev-parse", "refs/hpp/loops/long"]);
    for args in [
        &["status", "--loop", "long"][..],
        &["event", "append", "--type", "tick", "--loop", "long"][..],
    ] {
        let reason = hpp(args).refused();
        assert!(
            reason.contains("loop long is broken at event:5001"),
            "{args:?}: {reason}"
        );
    }
    assert_eq!(
        sandbox.git(["rev-parse", "refs/hpp/loops/long"]),
        tip,
        "nothing was appended to the broken loop"
    );
}

/// Replaces the loop's tip by a commit with the same event and parent whose `state.json` says
/// `edit` did to it; returns the forged commit.
fn forge_recorded_state(sandbox: &Sandbox, edit: impl Fn(&mut Value)) -> String {
    let tip = "refs/hpp/loops/long";
    let mut recorded: Value =
        serde_json::from_str(&sandbox.git(["show", &format!("{tip}:state.json")]))
            .expect("the tip records its state");
    edit(&mut recorded);
    let file = sandbox.path("forged-state.json");
    std::fs::write(&file, recorded.to_string()).expect("writable");
    let blob = sandbox.git(["hash-object", "-w", file.to_str().expect("utf-8")]);
    let event = sandbox.git(["rev-parse", &format!("{tip}:event.json")]);
    let listing = format!("100644 blob {event}\tevent.json\n100644 blob {blob}\tstate.json\n");
    let listing_file = sandbox.path("forged-tree.txt");
    std::fs::write(&listing_file, listing).expect("writable");
    let mut mktree = sandbox.command("git", &sandbox.root);
    mktree
        .arg("mktree")
        .stdin(std::fs::File::open(&listing_file).expect("readable"));
    let out = mktree.output().expect("git mktree runs");
    assert!(out.status.success());
    let tree = String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned();
    let parent = sandbox.git(["rev-parse", &format!("{tip}~1")]);
    let forged = sandbox.git(["commit-tree", &tree, "-p", &parent, "-m", "hpp event: tick"]);
    sandbox.git(["update-ref", tip, &forged]);
    forged
}

#[test]
fn an_append_reads_the_tips_recorded_state_and_each_tip_records_it() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let append = under_args(&manifest, TICK);
    sandbox.hpp_in(&sandbox.root, &append).ok();
    sandbox.hpp_in(&sandbox.root, &append).ok();
    let recorded: Value =
        serde_json::from_str(&sandbox.git(["show", "refs/hpp/loops/long:state.json"]))
            .expect("the tip records its state");
    assert_eq!(recorded["schema"], "hpp.loop-state/v1");
    assert_eq!(recorded["seq"], 82);
    assert_eq!(recorded["state"], "a");
    let event = sandbox.git(["show", "refs/hpp/loops/long:event.json"]);
    assert_eq!(recorded["head_sha256"], sha256(event.as_bytes()).as_str());
    // The kept events are the latest of each type before the tip: event 81.
    let kept = recorded["kept"].as_array().expect("a list");
    assert_eq!(kept.len(), 1, "{recorded}");
    assert_eq!(kept[0]["seq"], 81);
    assert_eq!(
        kept[0]["commit"],
        sandbox.git(["rev-parse", "refs/hpp/loops/long~1"]).as_str()
    );
    // The JSON form still names every event type, as the reference's append does.
    let mut json = append.to_vec();
    json.push("--json");
    let printed = sandbox.hpp_in(&sandbox.root, &json).json(0);
    assert_eq!(printed["event_count"], 83);
    assert_eq!(printed["history"].as_array().map(Vec::len), Some(83));
}

#[test]
fn control_an_append_on_a_tip_whose_recorded_state_was_tampered_with_is_refused() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let hpp = under(&sandbox, &manifest);
    let append = TICK;
    hpp(append).ok();
    hpp(append).ok();
    // The same event and parent, but the tip claims one evidence event the history never had.
    let forged = forge_recorded_state(&sandbox, |state| state["evidence_count"] = 1.into());
    let reason = hpp(append).refused();
    assert!(
        reason.contains("loop long is broken at event:82")
            && reason.contains("state.json records a after 82 events with 1 evidence"),
        "{reason}"
    );
    assert_eq!(sandbox.git(["rev-parse", "refs/hpp/loops/long"]), forged);
    let report = hpp(&["event", "verify", "--loop", "long", "--json"]).json(2);
    assert_eq!(report["first_divergent"], "event:82");
}

#[test]
fn control_an_edited_standing_under_the_git_directory_is_not_shown() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let hpp = under(&sandbox, &manifest);
    hpp(&["event", "append", "--type", "tick", "--loop", "long"]).ok();
    let status = hpp(&["status", "--loop", "long", "--json"]).json(0);
    assert_eq!(status["evidence_count"], 0);
    let dir = sandbox.root.join(".git/hpp-cache/loops");
    let mut edited = 0;
    for entry in std::fs::read_dir(&dir).expect("the cache exists") {
        let path = entry.expect("listable").path();
        if path.extension().is_none() {
            let mut standing: Value =
                serde_json::from_slice(&std::fs::read(&path).expect("readable")).expect("JSON");
            standing["projection"]["evidence_count"] = 7.into();
            std::fs::write(&path, standing.to_string()).expect("writable");
            edited += 1;
        }
    }
    assert_eq!(edited, 1, "one loop's standing was remembered");
    let again = hpp(&["status", "--loop", "long", "--json"]).json(0);
    assert_eq!(
        again, status,
        "the edited standing disagrees with the tip and is not used"
    );
}

#[test]
fn appends_and_status_of_a_long_loop_read_only_what_is_new_since_its_verified_tip() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 80);
    let hpp = under(&sandbox, &manifest);
    let append = TICK;
    let status = ["status", "--loop", "long", "--json"];
    hpp(append).ok();
    assert_eq!(hpp(&status).json(0)["event_count"], 81);
    // Take the first event's bytes out of the object database: a whole read can no longer
    // succeed, so whatever still works did not read the whole history.
    let blob = sandbox.git(["rev-parse", "refs/hpp/loops/long~80:event.json"]);
    let object = sandbox
        .root
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    std::fs::remove_file(&object).expect("the imported event's blob is a loose object");
    hpp(append).ok();
    hpp(append).ok();
    let now = hpp(&status).json(0);
    assert_eq!(now["event_count"], 83);
    assert_eq!(now["history"].as_array().map(Vec::len), Some(83));
    assert_eq!(now["chain"]["status"], "intact");
    // The whole verification reads every event, so it cannot pass without the first.
    let verify = hpp(&["event", "verify", "--loop", "long"]);
    assert_ne!(verify.code, 0, "{verify}");
}

#[test]
fn a_long_import_is_one_pack_that_git_checks_and_the_loop_reads_and_extends() {
    let sandbox = Sandbox::repo();
    let manifest = long_loop(&sandbox, 300);
    let pack_dir = sandbox.root.join(".git/objects/pack");
    let files: Vec<String> = std::fs::read_dir(&pack_dir)
        .expect("the import wrote a pack")
        .map(|e| {
            e.expect("listable")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        files.iter().filter(|f| f.ends_with(".pack")).count(),
        1,
        "{files:?}"
    );
    assert!(
        !files.iter().any(|f| f.ends_with(".keep")),
        "the pack is left to git gc once the loop names it: {files:?}"
    );
    // git itself reads every object of the pack and finds nothing wrong or missing.
    sandbox.git(["fsck", "--strict", "--no-dangling"]);
    let hpp = under(&sandbox, &manifest);
    let exported = hpp(&["event", "export", "--loop", "long"]).ok();
    assert_eq!(
        exported,
        std::fs::read_to_string(sandbox.path("ticks.jsonl")).expect("readable"),
        "the export is the imported file byte for byte"
    );
    hpp(&["event", "append", "--type", "tick", "--loop", "long"]).ok();
    let verify = hpp(&["event", "verify", "--loop", "long", "--json"]).json(0);
    assert_eq!(verify["events"], 301);
    assert_eq!(verify["status"], "intact");
}

#[test]
fn control_a_short_import_stays_loose_objects() {
    let sandbox = Sandbox::repo();
    long_loop(&sandbox, 10);
    let packs = std::fs::read_dir(sandbox.root.join(".git/objects/pack"))
        .map(|dir| {
            dir.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".pack"))
            })
            .count()
        })
        .unwrap_or(0);
    assert_eq!(packs, 0, "ten events are written as loose objects");
}

#[test]
fn an_unknown_or_out_of_order_type_is_refused_with_the_events_the_loop_takes_now() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let before = sandbox.hpp_refs();
    let run = sandbox.hpp(["event", "append", "--type", "bogus"]);
    let stderr = run.stderr.clone();
    let reason = run.refused();
    assert_eq!(reason, "invalid transition at event 2: active --bogus--> ?");
    assert!(
        stderr.contains("hint: from active the loop takes: evidence_recorded"),
        "{stderr}"
    );
    assert_eq!(sandbox.hpp_refs(), before, "nothing was written");
}

#[test]
fn control_a_closed_loop_says_it_takes_no_further_event() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    let run = sandbox.hpp([
        "event",
        "append",
        "--type",
        "work_started",
        "--loop",
        "main",
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .contains("hint: from verified the loop takes no further event"),
        "{run}"
    );
}

/// The whole stderr of a refused run (its reason line and every hint line).
fn refusal_text(run: crate::harness::Run) -> String {
    assert_eq!(run.code, 2, "expected a refusal:\n{run}");
    assert!(
        run.stdout.is_empty(),
        "a refusal prints nothing on stdout:\n{run}"
    );
    run.stderr
}

#[test]
fn a_second_work_item_on_a_moved_loop_is_pointed_to_a_loop_of_its_own() {
    // Issue 31: `work_started` on a loop that is past planned was refused with a hint that did
    // not say how to start another work item.
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let before = sandbox.hpp_refs();
    let stderr = refusal_text(sandbox.hpp(["event", "append", "--type", "work_started"]));
    assert!(
        stderr.contains("hint: to start another work item here, name a new loop: git hpp event append --loop NAME --type work_started"),
        "{stderr}"
    );
    assert_eq!(sandbox.hpp_refs(), before, "nothing was written");
}

#[test]
fn control_an_out_of_order_event_gets_no_new_loop_hint() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    let stderr = refusal_text(sandbox.hpp(["event", "append", "--type", "check_passed"]));
    assert!(!stderr.contains("--loop NAME"), "{stderr}");
    assert!(
        stderr.contains("hint: from active the loop takes"),
        "{stderr}"
    );
}

#[test]
fn a_loop_name_no_loop_has_is_refused_naming_the_loops_that_exist() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    for args in [
        &["status", "--loop", "mastr"][..],
        &["event", "verify", "--loop", "mastr"][..],
        &["event", "log", "--loop", "mastr"][..],
        &["event", "export", "--loop", "mastr"][..],
        &["resume", "--loop", "mastr"][..],
    ] {
        let run = sandbox.hpp_in(&sandbox.root, args).exit(2);
        assert!(run.stdout.is_empty(), "{args:?}: {run}");
        assert!(
            run.stderr
                .contains("no loop named mastr; the loops here: main"),
            "{args:?}: {run}"
        );
    }
}

#[test]
fn control_the_loops_that_exist_and_the_default_loop_are_read_as_before() {
    let sandbox = Sandbox::repo();
    // No loop at all: the branch's loop is planned, not an error.
    sandbox.hpp(["status"]).ok();
    sandbox.start_work().ok();
    sandbox.hpp(["status", "--loop", "main"]).ok();
    sandbox.hpp(["event", "verify", "--loop", "main"]).ok();
}

#[test]
fn a_refused_event_s_hint_keeps_the_loop_it_named() {
    let sandbox = Sandbox::repo();
    let run = sandbox
        .hpp([
            "event",
            "append",
            "--loop",
            "item-2",
            "--type",
            "check_passed",
        ])
        .exit(2);
    assert!(
        run.stderr
            .contains("git hpp event append --loop item-2 --type work_started"),
        "{run}"
    );
}
