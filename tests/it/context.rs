//! `git hpp context compile`: whole blocks by priority, the separator charged, provenance,
//! secrets refused; no repository needed.

use hpp_core::record::sha256_hex;

use crate::harness::Sandbox;

const INPUTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/context/inputs.json");

fn sources(value: &serde_json::Value, key: &str) -> Vec<String> {
    value[key]
        .as_array()
        .expect("a list of blocks")
        .iter()
        .map(|b| b["source"].as_str().expect("a source").to_owned())
        .collect()
}

#[test]
fn the_example_fits_whole_blocks_by_priority_and_keeps_scanning_after_an_omission() {
    let sandbox = Sandbox::empty();
    let compiled = sandbox
        .hpp(["context", "compile", INPUTS, "--budget", "106"])
        .json(0);
    assert_eq!(compiled["schema"], "hpp.context/v1");
    // task.md (68) fits; policy/renewals.md (157 + 2) does not; style-guide.md (36 + 2) still does.
    assert_eq!(
        sources(&compiled, "included"),
        ["task.md", "style-guide.md"]
    );
    assert_eq!(sources(&compiled, "omitted"), ["policy/renewals.md"]);
    assert_eq!(compiled["used"], 106);
    assert_eq!(compiled["remaining"], 0);
    assert_eq!(
        compiled["text"],
        "Fix the renewal limit: a loan may be renewed twice, not three times.\n\nWrite refusals as one full sentence."
    );
}

#[test]
fn one_character_less_leaves_a_block_out_because_the_separator_is_charged() {
    let sandbox = Sandbox::empty();
    // 68 + 36 = 104 would fit in 105, but 68 + 2 + 36 = 106 does not.
    let compiled = sandbox
        .hpp(["context", "compile", INPUTS, "--budget", "105"])
        .json(0);
    assert_eq!(sources(&compiled, "included"), ["task.md"]);
    assert_eq!(
        sources(&compiled, "omitted"),
        ["policy/renewals.md", "style-guide.md"]
    );
    assert_eq!(compiled["used"], 68);
    assert_eq!(compiled["remaining"], 37);
}

#[test]
fn each_block_carries_its_size_and_sha256() {
    let sandbox = Sandbox::empty();
    let compiled = sandbox
        .hpp(["context", "compile", INPUTS, "--budget", "0"])
        .json(0);
    let omitted = compiled["omitted"].as_array().expect("a list");
    assert_eq!(omitted.len(), 3);
    let task = &omitted[0];
    let content = "Fix the renewal limit: a loan may be renewed twice, not three times.";
    assert_eq!(task["source"], "task.md");
    assert_eq!(task["priority"], 100);
    assert_eq!(task["chars"], 68);
    assert_eq!(task["sha256"], sha256_hex(content.as_bytes()));
    assert_eq!(compiled["text"], "");
}

#[test]
fn control_secret_like_content_is_refused_and_nothing_is_printed() {
    let sandbox = Sandbox::empty();
    std::fs::write(
        sandbox.root.join("inputs.json"),
        r#"[{"source": "notes.md", "priority": 1, "content": "password: hunter2"}]"#,
    )
    .expect("the sandbox is writable");
    let reason = sandbox
        .hpp(["context", "compile", "inputs.json", "--budget", "100"])
        .refused();
    assert_eq!(reason, "secret-like material refused from source: notes.md");
}

#[test]
fn malformed_inputs_and_budgets_are_refused() {
    let sandbox = Sandbox::empty();
    let write = |name: &str, text: &str| {
        std::fs::write(sandbox.root.join(name), text).expect("the sandbox is writable");
    };
    write("object.json", "{}");
    write("broken.json", "[");
    write(
        "dup.json",
        r#"[{"source": "a", "priority": 1, "content": ""}, {"source": "a", "priority": 2, "content": ""}]"#,
    );
    let cases = [
        (["missing.json", "1"], "JSON file not found: missing.json"),
        (
            ["object.json", "1"],
            "JSON root in object.json must be an array",
        ),
        (["dup.json", "1"], "duplicate context source: a"),
        (["dup.json", "-1"], "budget must be a non-negative integer"),
    ];
    for ([file, budget], reason) in cases {
        let got = sandbox
            .hpp(["context", "compile", file, "--budget", budget])
            .refused();
        assert_eq!(got, reason);
    }
    let broken = sandbox
        .hpp(["context", "compile", "broken.json", "--budget", "1"])
        .refused();
    assert!(
        broken.starts_with("invalid JSON in broken.json: "),
        "{broken}"
    );
}
