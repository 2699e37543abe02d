//! `git hpp map lane|agent|monitor|context`: the examples byte for byte, the same bytes for a
//! permuted source, and every refusal with exit 2 and nothing on stdout.

use hpp_core::record::sha256_hex;
use serde_json::{Value, json};

use crate::harness::Sandbox;

const LANES_DISJOINT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lanes/disjoint.json");
const LANES_COLLISION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/lanes/collision.json");
const MONITORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/monitors/monitors.json"
);
const THRESHOLDS: [&str; 6] = [
    "--now",
    "1000",
    "--suspect-after",
    "60",
    "--dead-after",
    "300",
];

fn expected(name: &str) -> String {
    let path = format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn lane(sandbox: &Sandbox, source: &str, extra: &[&str]) -> crate::harness::Run {
    let mut args = vec!["map", "lane", source];
    args.extend(THRESHOLDS);
    args.extend(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

fn read(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON")
}

#[test]
fn the_disjoint_lanes_example_reports_both_alive_and_no_collision() {
    let sandbox = Sandbox::empty();
    let out = lane(&sandbox, LANES_DISJOINT, &[]).ok();
    assert_eq!(out, expected("lanes/disjoint.expected.json"));
    let map: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(map["schema"], "hpp.map/v1");
    assert_eq!(map["collisions"], json!([]));
    assert_eq!(
        map["liveness"],
        json!({"checker-a": "alive", "maker-a": "alive"})
    );
}

#[test]
fn the_collision_example_reports_only_the_live_exclusive_nested_pair() {
    let sandbox = Sandbox::empty();
    let out = lane(&sandbox, LANES_COLLISION, &[]).ok();
    assert_eq!(out, expected("lanes/collision.expected.json"));
    let map: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        map["collisions"],
        json!([{"lanes": ["checker", "maker"], "territory": ["src", "src/api"]}])
    );
    assert_eq!(map["liveness"]["stale-builder"], "dead");
    assert_eq!(map["liveness"]["checker"], "suspect");
    let mermaid = lane(&sandbox, LANES_COLLISION, &["--format", "mermaid"]).ok();
    assert_eq!(mermaid, expected("lanes/collision.expected.mmd"));
    assert!(mermaid.contains("-->|collides:src, src/api|"));
}

#[test]
fn the_monitor_example_is_healthy_stale_skew_and_unknown() {
    let sandbox = Sandbox::empty();
    let out = sandbox
        .hpp(["map", "monitor", MONITORS, "--now", "1000"])
        .ok();
    assert_eq!(out, expected("monitors/expected.json"));
    let map: Value = serde_json::from_str(&out).expect("JSON");
    let statuses: Vec<(&str, &str)> = map["monitors"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|m| {
            (
                m["id"].as_str().expect("id"),
                m["status"].as_str().expect("status"),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("clock-ahead", "skew"),
            ("data-freshness", "stale"),
            ("never-probed", "unknown"),
            ("service-health", "healthy"),
        ]
    );
    let mermaid = sandbox
        .hpp([
            "map", "monitor", MONITORS, "--now", "1000", "--format", "mermaid",
        ])
        .ok();
    assert_eq!(mermaid, expected("monitors/expected.mmd"));
}

#[test]
fn a_wider_skew_tolerance_turns_a_future_signal_healthy() {
    let sandbox = Sandbox::empty();
    let map = sandbox
        .hpp([
            "map",
            "monitor",
            MONITORS,
            "--now",
            "1000",
            "--skew-tolerance",
            "100",
        ])
        .json(0);
    assert_eq!(map["skew_tolerance"], 100);
    let ahead = map["monitors"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|m| m["id"] == "clock-ahead")
        .expect("listed");
    assert_eq!(ahead["status"], "healthy");
}

#[test]
fn map_output_has_the_same_sha256_over_two_runs_and_over_a_permuted_source() {
    let sandbox = Sandbox::empty();
    for format in ["json", "mermaid"] {
        let first = lane(&sandbox, LANES_COLLISION, &["--format", format]).ok();
        let second = lane(&sandbox, LANES_COLLISION, &["--format", format]).ok();
        let permuted =
            crate::harness::write_reversed(&sandbox, "lanes.json", &read(LANES_COLLISION));
        let third = lane(&sandbox, &permuted, &["--format", format]).ok();
        assert_eq!(sha256_hex(first.as_bytes()), sha256_hex(second.as_bytes()));
        assert_eq!(sha256_hex(first.as_bytes()), sha256_hex(third.as_bytes()));

        let monitors = crate::harness::write_reversed(&sandbox, "monitors.json", &read(MONITORS));
        let args = |source: &str| {
            sandbox
                .hpp_in(
                    &sandbox.root,
                    &[
                        "map", "monitor", source, "--now", "1000", "--format", format,
                    ],
                )
                .ok()
        };
        assert_eq!(
            sha256_hex(args(MONITORS).as_bytes()),
            sha256_hex(args(&monitors).as_bytes())
        );
    }
}

#[test]
fn lane_refusals_exit_2_with_nothing_on_stdout() {
    let sandbox = Sandbox::empty();
    let write = |name: &str, text: &str| {
        let path = sandbox.path(name);
        std::fs::write(&path, text).expect("writable");
        path.display().to_string()
    };
    let future = write(
        "future.json",
        r#"[{"id": "a", "territory": ["src"], "heartbeat_at": 1001}]"#,
    );
    assert!(
        lane(&sandbox, &future, &[])
            .refused()
            .contains("lane a has invalid heartbeat_at")
    );
    let negative = write(
        "negative.json",
        r#"[{"id": "a", "territory": ["src"], "heartbeat_at": -5}]"#,
    );
    assert!(
        lane(&sandbox, &negative, &[])
            .refused()
            .contains("is negative")
    );
    for (suspect, dead) in [("300", "300"), ("0", "10"), ("400", "300")] {
        let reason = sandbox
            .hpp_in(
                &sandbox.root,
                &[
                    "map",
                    "lane",
                    LANES_DISJOINT,
                    "--now",
                    "1000",
                    "--suspect-after",
                    suspect,
                    "--dead-after",
                    dead,
                ],
            )
            .refused();
        assert_eq!(
            reason,
            "lane thresholds must satisfy 0 < suspect_after < dead_after"
        );
    }
    let bad = write("bad.json", "[{\"id\": ");
    assert!(
        lane(&sandbox, &bad, &[])
            .refused()
            .starts_with("invalid JSON in ")
    );
    let object = write("object.json", "{}");
    assert!(
        lane(&sandbox, &object, &[])
            .refused()
            .ends_with("must be an array")
    );
    let missing = sandbox.path("absent.json").display().to_string();
    assert!(
        lane(&sandbox, &missing, &[])
            .refused()
            .starts_with("JSON file not found: ")
    );
}

#[test]
fn monitor_refusals_exit_2_with_nothing_on_stdout() {
    let sandbox = Sandbox::empty();
    assert_eq!(
        sandbox.hpp(["map", "monitor", MONITORS]).refused(),
        "map monitor needs --now: the projection never reads the clock"
    );
    assert_eq!(
        sandbox
            .hpp(["map", "monitor", MONITORS, "--now", "-1"])
            .refused(),
        "now must be a non-negative integer"
    );
    let dup = sandbox.path("dup.json");
    let one = json!({"id": "m", "target": "t", "type": "x", "cadence": 1, "freshness": 1,
        "severity": "s", "cost": "c", "consumer_gate": "g"});
    std::fs::write(&dup, json!([one, one]).to_string()).expect("writable");
    assert_eq!(
        sandbox
            .hpp_in(
                &sandbox.root,
                &["map", "monitor", dup.to_str().expect("utf-8"), "--now", "5"]
            )
            .refused(),
        "duplicate monitor: m"
    );
}

#[test]
fn control_a_heartbeat_in_the_future_is_refused_not_taken_as_liveness() {
    let sandbox = Sandbox::empty();
    let path = sandbox.path("lanes.json");
    std::fs::write(
        &path,
        r#"[{"id": "maker", "territory": ["src"], "heartbeat_at": 5000},
            {"id": "checker", "territory": ["src/api"], "heartbeat_at": 990}]"#,
    )
    .expect("writable");
    let reason = lane(&sandbox, path.to_str().expect("utf-8"), &[]).refused();
    assert_eq!(
        reason,
        "lane maker has invalid heartbeat_at (5000 is in the future of now 1000)"
    );
}

#[test]
fn map_lane_without_a_source_projects_the_lanes_under_refs() {
    let sandbox = Sandbox::repo();
    let map = sandbox.hpp(["map", "lane", "--now", "1000"]).json(0);
    assert_eq!(map["view"], "lane");
    assert_eq!(map["collisions"], json!([]));
    assert!(map["liveness"].is_object());
    // Without --now the lanes from refs are projected against the current time: still valid.
    sandbox.hpp(["map", "lane"]).json(0);
    let outside = Sandbox::empty();
    outside.hpp(["map", "lane"]).refused();
}

#[test]
fn the_agent_map_needs_no_repository_and_chains_the_events_file() {
    let sandbox = Sandbox::empty();
    let events = sandbox.path("events.json");
    std::fs::write(
        &events,
        r#"[{"type": "work_started"}, {"type": "evidence_recorded"}]"#,
    )
    .expect("writable");
    let map = sandbox
        .hpp_in(
            &sandbox.root,
            &["map", "agent", "--events", events.to_str().expect("utf-8")],
        )
        .json(0);
    assert_eq!(map["view"], "agent");
    let edges = map["edges"].as_array().expect("a list");
    assert!(edges.contains(&json!({"from": "event:1:work_started",
        "to": "event:2:evidence_recorded", "relation": "then"})));
    assert!(edges.iter().any(|e| e["relation"] == "provides"));
    std::fs::write(&events, r#"[{"kind": "x"}]"#).expect("writable");
    assert_eq!(
        sandbox
            .hpp_in(
                &sandbox.root,
                &["map", "agent", "--events", events.to_str().expect("utf-8")]
            )
            .refused(),
        "event 1 needs a type"
    );
}

#[test]
fn the_context_map_records_each_block_included_or_omitted() {
    let sandbox = Sandbox::empty();
    let inputs = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/context/inputs.json");
    let map = sandbox
        .hpp(["map", "context", inputs, "--budget", "106"])
        .json(0);
    assert_eq!(map["view"], "context");
    assert_eq!(map["used"], 106);
    let statuses: Vec<(String, String)> = map["provenance"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| {
            (
                p["source"].as_str().expect("source").to_owned(),
                p["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("policy/renewals.md".to_owned(), "omitted".to_owned()),
            ("style-guide.md".to_owned(), "included".to_owned()),
            ("task.md".to_owned(), "included".to_owned()),
        ]
    );
    assert_eq!(
        sandbox
            .hpp(["map", "context", inputs, "--budget", "-1"])
            .refused(),
        "budget must be a non-negative integer"
    );
}

#[test]
fn map_monitor_without_a_source_projects_the_manifest_monitors() {
    let sandbox = Sandbox::empty();
    let map = sandbox.hpp(["map", "monitor", "--now", "1000"]).json(0);
    assert_eq!(map["schema"], "hpp.monitor-map/v1");
    let monitors = map["monitors"].as_array().expect("a list");
    assert!(!monitors.is_empty());
    assert!(monitors.iter().all(|m| m["status"] == "unknown"));
}

#[test]
fn every_map_draws_as_mermaid() {
    let sandbox = Sandbox::empty();
    let inputs = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/context/inputs.json");
    let context = sandbox
        .hpp([
            "map", "context", inputs, "--budget", "106", "--format", "mermaid",
        ])
        .ok();
    assert!(context.starts_with("flowchart LR\n"), "{context}");
    assert!(context.contains("-->|omitted|"), "{context}");
    let agent = sandbox.hpp(["map", "agent", "--format", "mermaid"]).ok();
    assert!(agent.contains("-->|provides|"), "{agent}");
    assert!(agent.ends_with('\n'));
}

/// The CONCEPTS.md "Verify:" lines for lane and monitor, run as written (with `git hpp`) from
/// the repository root.
#[test]
fn the_seed_verify_lines_for_lane_and_monitor_hold_on_the_reliable_coding_examples() {
    let sandbox = Sandbox::empty();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lanes = sandbox
        .hpp_in(
            root,
            &[
                "map",
                "lane",
                "examples/reliable-coding/lanes.json",
                "--now",
                "1000",
                "--suspect-after",
                "60",
                "--dead-after",
                "300",
            ],
        )
        .json(0);
    assert_eq!(lanes["collisions"], json!([]));
    assert_eq!(lanes["liveness"]["maker-a"], "alive");
    assert_eq!(lanes["liveness"]["checker-a"], "alive");
    let monitors = sandbox
        .hpp_in(
            root,
            &[
                "map",
                "monitor",
                "examples/reliable-coding/monitors.json",
                "--now",
                "1000",
            ],
        )
        .json(0);
    let status = |id: &str| {
        monitors["monitors"]
            .as_array()
            .expect("a monitor list")
            .iter()
            .find(|m| m["id"] == id)
            .map(|m| m["status"].clone())
    };
    assert_eq!(status("service-health"), Some(json!("healthy")));
    assert_eq!(status("data-freshness"), Some(json!("stale")));
}

/// The projected status of monitor `id` in a monitor map.
fn status_of(map: &Value, id: &str) -> String {
    map["monitors"]
        .as_array()
        .expect("monitors")
        .iter()
        .find(|m| m["id"] == id)
        .and_then(|m| m["status"].as_str())
        .expect("the monitor is projected")
        .to_owned()
}

/// The built-in manifest with two probes: one that passes and one that fails.
fn probed_manifest(sandbox: &Sandbox, probes: &[(&str, Value)]) -> String {
    let mut manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json"))
            .expect("the built-in manifest"),
    )
    .expect("JSON");
    for monitor in manifest["monitors"].as_array_mut().expect("monitors") {
        monitor.as_object_mut().expect("an object").remove("probe");
        if let Some((_, probe)) = probes.iter().find(|(id, _)| monitor["id"] == *id) {
            monitor["probe"] = probe.clone();
        }
    }
    let path = sandbox.path("probed.manifest.json");
    std::fs::write(&path, manifest.to_string()).expect("writable");
    path.to_str().expect("UTF-8").to_owned()
}

#[test]
fn probes_record_signals_that_make_the_monitor_map_measured() {
    let sandbox = Sandbox::repo();
    let manifest = probed_manifest(
        &sandbox,
        &[
            ("harness-doctor", json!({"command": ["true"]})),
            (
                "loop-freshness",
                json!({"command": ["false"], "timeout_s": 5}),
            ),
        ],
    );
    let before = sandbox
        .hpp_in(
            &sandbox.root,
            &["map", "monitor", "--now", "1000", "--manifest", &manifest],
        )
        .json(0);
    assert_eq!(status_of(&before, "harness-doctor"), "unknown", "{before}");
    let probed = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "monitor",
                "probe",
                "--now",
                "1000",
                "--manifest",
                &manifest,
                "--json",
            ],
        )
        .json(1);
    let ok: Vec<(String, bool)> = probed["probed"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| (p["id"].as_str().expect("id").to_owned(), p["ok"] == true))
        .collect();
    assert_eq!(
        ok,
        [
            ("harness-doctor".to_owned(), true),
            ("loop-freshness".to_owned(), false)
        ]
    );
    let signal: Value = serde_json::from_str(
        &sandbox.git(["show", "refs/hpp/monitors/harness-doctor:signal.json"]),
    )
    .expect("JSON");
    assert_eq!(signal["schema"], "hpp.monitor-signal/v1");
    let after = sandbox
        .hpp_in(
            &sandbox.root,
            &["map", "monitor", "--now", "1100", "--manifest", &manifest],
        )
        .json(0);
    assert_eq!(status_of(&after, "harness-doctor"), "healthy", "{after}");
    assert_eq!(
        status_of(&after, "loop-freshness"),
        "unknown",
        "a failed probe is no signal"
    );
    let later = sandbox
        .hpp_in(
            &sandbox.root,
            &["map", "monitor", "--now", "100000", "--manifest", &manifest],
        )
        .json(0);
    assert_eq!(status_of(&later, "harness-doctor"), "stale", "{later}");
    sandbox
        .hpp_in(&sandbox.root, &["doctor", "--manifest", &manifest])
        .ok();
}

#[test]
fn control_a_malformed_probe_is_refused_and_records_nothing() {
    let sandbox = Sandbox::repo();
    let manifest = probed_manifest(&sandbox, &[("harness-doctor", json!({"command": "true"}))]);
    let reason = sandbox
        .hpp_in(
            &sandbox.root,
            &["monitor", "probe", "--manifest", &manifest],
        )
        .refused();
    assert!(reason.contains("probe must be"), "{reason}");
    assert_eq!(sandbox.hpp_refs(), "");
}

#[test]
fn control_every_malformed_field_of_a_probe_refuses_the_run_and_records_nothing() {
    let sandbox = Sandbox::repo();
    let cases = [
        (json!({"command": [""]}), "the command's program is empty"),
        (
            json!({"command": ["  ", "x"]}),
            "the command's program is empty",
        ),
        (json!({"command": ["true", "a\u{0}b"]}), "NUL byte"),
        (
            json!({"command": ["true"], "timeout_s": -1}),
            "timeout_s must be",
        ),
        (
            json!({"command": ["true"], "timeout_s": "5"}),
            "timeout_s must be",
        ),
        (
            json!({"command": ["true"], "timeout_s": 0}),
            "timeout_s must be",
        ),
        (
            json!({"command": ["true"], "timeout_s": 3601}),
            "timeout_s must be",
        ),
        (json!({"http": "http://[::1"}), "the URL does not parse"),
        (json!({"http": "http:///health"}), "the URL"),
        (json!({"command": ["true"], "retries": 3}), "an unknown key"),
        (
            json!({"command": ["true"], "http": "http://localhost/"}),
            "both",
        ),
        (json!("true"), "not an object"),
    ];
    for (probe, why) in cases {
        let manifest = probed_manifest(&sandbox, &[("harness-doctor", probe.clone())]);
        let run = sandbox.hpp_in(
            &sandbox.root,
            &["monitor", "probe", "--manifest", &manifest],
        );
        let reason = run.refused();
        assert!(
            reason.contains("monitor harness-doctor: probe must be") && reason.contains(why),
            "{probe}: {reason}"
        );
        assert_eq!(sandbox.hpp_refs(), "", "{probe} recorded a signal");
    }
    // A well-formed probe with a fractional timeout runs and records its signal.
    let manifest = probed_manifest(
        &sandbox,
        &[(
            "harness-doctor",
            json!({"command": ["true"], "timeout_s": 2.5}),
        )],
    );
    sandbox
        .hpp_in(
            &sandbox.root,
            &["monitor", "probe", "--manifest", &manifest],
        )
        .ok();
    assert_ne!(sandbox.hpp_refs(), "");
}

/// Serves one plain-http answer per status in `statuses` on 127.0.0.1, in order, from a thread
/// the test owns; returns the URL of its `/health` path.
fn health_server(statuses: &'static [u16]) -> (String, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a local port");
    let url = format!(
        "http://{}/health",
        listener.local_addr().expect("an address")
    );
    let server = std::thread::spawn(move || {
        for status in statuses {
            let (mut stream, _) = listener.accept().expect("a probe connects");
            let mut request = [0_u8; 1024];
            let n = stream.read(&mut request).expect("a request");
            assert!(
                request[..n].starts_with(b"GET /health HTTP/1.1\r\n"),
                "{}",
                String::from_utf8_lossy(&request[..n])
            );
            let answer =
                format!("HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
            stream.write_all(answer.as_bytes()).expect("answered");
        }
    });
    (url, server)
}

#[test]
fn an_http_probe_passes_on_2xx_and_records_the_status_it_got() {
    let sandbox = Sandbox::repo();
    let (url, server) = health_server(&[200, 503]);
    let manifest = probed_manifest(
        &sandbox,
        &[("harness-doctor", json!({"http": url, "timeout_s": 5}))],
    );
    let probe = |now: &str, code: i32| {
        sandbox
            .hpp_in(
                &sandbox.root,
                &[
                    "monitor",
                    "probe",
                    "--now",
                    now,
                    "--manifest",
                    &manifest,
                    "--json",
                ],
            )
            .json(code)
    };
    let up = probe("1000", 0);
    assert_eq!(up["probed"][0]["http_status"], 200, "{up}");
    let down = probe("1200", 1);
    assert_eq!(down["probed"][0]["http_status"], 503, "{down}");
    assert_eq!(down["probed"][0]["ok"], false);
    server.join().expect("the server answered both");
    // The signal keeps the status, never the URL (one may carry credentials).
    let signal = sandbox.git(["show", "refs/hpp/monitors/harness-doctor:signal.json"]);
    assert!(signal.contains("\"http_status\":503"), "{signal}");
    assert!(!signal.contains("/health"), "{signal}");
    // The newest passing signal is the 200 at 1000: fresh at 1300 (freshness 600), stale later.
    let map = |now: &str| {
        sandbox
            .hpp_in(
                &sandbox.root,
                &["map", "monitor", "--now", now, "--manifest", &manifest],
            )
            .json(0)
    };
    assert_eq!(status_of(&map("1300"), "harness-doctor"), "healthy");
    assert_eq!(status_of(&map("1700"), "harness-doctor"), "stale");
}

#[test]
fn due_probes_only_run_once_their_cadence_has_passed() {
    let sandbox = Sandbox::repo();
    // harness-doctor's cadence is 300 s.
    let manifest = probed_manifest(
        &sandbox,
        &[("harness-doctor", json!({"command": ["true"]}))],
    );
    let probe = |now: &str| {
        sandbox
            .hpp_in(
                &sandbox.root,
                &[
                    "monitor",
                    "probe",
                    "--due",
                    "--now",
                    now,
                    "--manifest",
                    &manifest,
                    "--json",
                ],
            )
            .json(0)
    };
    assert_eq!(probe("1000")["probed"][0]["id"], "harness-doctor");
    let early = probe("1200");
    assert_eq!(early["probed"], json!([]), "{early}");
    assert_eq!(early["not_due"], json!(["harness-doctor"]));
    assert_eq!(probe("1300")["probed"][0]["id"], "harness-doctor");
    let signals = sandbox.git(["rev-list", "--count", "refs/hpp/monitors/harness-doctor"]);
    assert_eq!(signals, "2");
}

#[test]
fn control_an_https_or_malformed_probe_refuses_the_whole_run_before_any_probe_runs() {
    let sandbox = Sandbox::repo();
    let manifest = probed_manifest(
        &sandbox,
        &[
            ("harness-doctor", json!({"command": ["true"]})),
            (
                "loop-freshness",
                json!({"http": "https://example.invalid/health"}),
            ),
        ],
    );
    let reason = sandbox
        .hpp_in(
            &sandbox.root,
            &["monitor", "probe", "--manifest", &manifest],
        )
        .refused();
    assert!(reason.contains("\"curl\", \"-fsS\""), "{reason}");
    let manifest = probed_manifest(
        &sandbox,
        &[
            ("harness-doctor", json!({"command": ["true"]})),
            ("loop-freshness", json!({"http": 7})),
        ],
    );
    let reason = sandbox
        .hpp_in(
            &sandbox.root,
            &["monitor", "probe", "--manifest", &manifest],
        )
        .refused();
    assert!(
        reason.contains("monitor loop-freshness: probe must be"),
        "{reason}"
    );
    assert_eq!(
        sandbox.hpp_refs(),
        "",
        "the good probe before it did not run"
    );
}
