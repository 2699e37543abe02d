//! The layers, checked from the outside (ARCHITECTURE §3): `hpp-core` is the protocol as values
//! and reaches for no file, process, environment or clock, and depends on none of gix, nix,
//! ssh-key, clap, indicatif or the store; `hpp-store` knows git and nothing of the concepts.
//! Clippy enforces the same from `crates/hpp-core/clippy.toml`; this makes `cargo test` fail too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// What the core must never name: file I/O, processes, the network, the environment, the clock.
const FORBIDDEN_IN_CORE: &[(&str, &str)] = &[
    (r"\bstd::fs\b", "file I/O"),
    (r"\bstd::process\b", "processes"),
    (r"\bstd::net\b", "the network"),
    (
        r"\bstd::\{[^}]*\b(fs|process|net)\b",
        "file I/O, processes or the network",
    ),
    (r"\bstd::io::(stdin|stdout|stderr)\b", "the terminal"),
    (
        r"\benv::(var|var_os|vars|args|args_os|current_dir|temp_dir|home_dir)\b",
        "the environment",
    ),
    (r"\bSystemTime\b", "the clock"),
    (r"\bInstant::now\b", "the clock"),
    (r"\bnow_utc\b", "the clock"),
    (
        r"\bgix\b|\bhpp_store\b|\bnix::|\bssh_key\b|\bclap\b|\bindicatif\b",
        "a crate of another layer",
    ),
];

/// The crates the core's dependency closure must not contain.
const FORBIDDEN_CRATES_IN_CORE: &[&str] =
    &["gix", "nix", "ssh-key", "clap", "indicatif", "hpp-store"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the crate's source directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Returns every `file:line: what` where `source` names something the core must not.
fn violations(name: &str, source: &str) -> Vec<String> {
    let rules: Vec<(Regex, &str)> = FORBIDDEN_IN_CORE
        .iter()
        .map(|(pattern, what)| (Regex::new(pattern).expect("the patterns compile"), *what))
        .collect();
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        // A comment may name what the core does not do.
        let code = line.split("//").next().unwrap_or_default();
        for (rule, what) in &rules {
            if rule.is_match(code) {
                found.push(format!(
                    "{name}:{}: reaches for {what}: {}",
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    found
}

/// The normal (non-dev) dependency closure of `package` in `Cargo.lock`.
fn closure(lock: &str, package: &str) -> BTreeSet<String> {
    let lock: toml::Table = lock.parse().expect("Cargo.lock is TOML");
    let mut deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in lock["package"]
        .as_array()
        .expect("Cargo.lock lists packages")
    {
        let name = entry["name"]
            .as_str()
            .expect("a package has a name")
            .to_owned();
        let list: Vec<String> = entry
            .get("dependencies")
            .and_then(toml::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(toml::Value::as_str)
                    // "name" or "name version" or "name version (source)"
                    .map(|d| d.split(' ').next().unwrap_or(d).to_owned())
                    .collect()
            })
            .unwrap_or_default();
        deps.entry(name).or_default().extend(list);
    }
    let mut seen = BTreeSet::new();
    let mut todo = vec![package.to_owned()];
    while let Some(next) = todo.pop() {
        if seen.insert(next.clone()) {
            todo.extend(deps.get(&next).cloned().unwrap_or_default());
        }
    }
    seen
}

/// The core's dependency closure, without its dev-dependencies (Cargo.lock lists those beside
/// the normal ones): the closure of each normal dependency its manifest names.
fn core_closure() -> BTreeSet<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock is committed");
    let manifest: toml::Table = std::fs::read_to_string(root().join("crates/hpp-core/Cargo.toml"))
        .expect("the core's manifest is readable")
        .parse()
        .expect("the core's manifest is TOML");
    let mut all = BTreeSet::from(["hpp-core".to_owned()]);
    for dependency in manifest["dependencies"]
        .as_table()
        .expect("the core has dependencies")
        .keys()
    {
        all.extend(closure(&lock, dependency));
    }
    all
}

#[test]
fn the_core_reaches_for_no_file_process_environment_or_clock() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/hpp-core/src"), &mut files);
    assert!(
        files.len() > 30,
        "the core's sources were found: {}",
        files.len()
    );
    let mut found = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a source file is UTF-8");
        let name = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        found.extend(violations(&name, &source));
    }
    assert!(
        found.is_empty(),
        "the core must take these as values:\n{}",
        found.join("\n")
    );
}

#[test]
fn control_the_source_check_finds_each_kind_of_reach() {
    for (line, what) in [
        ("let b = std::fs::read(path)?;", "file I/O"),
        (
            "use std::{collections::BTreeMap, fs};",
            "file I/O, processes or the network",
        ),
        ("std::process::Command::new(\"git\")", "processes"),
        ("let home = std::env::var(\"HOME\");", "the environment"),
        ("let now = time::OffsetDateTime::now_utc();", "the clock"),
        ("let t = std::time::Instant::now();", "the clock"),
        ("use gix::ObjectId;", "a crate of another layer"),
    ] {
        let found = violations("probe.rs", line);
        assert!(
            found.iter().any(|f| f.contains(what)),
            "{line:?} should be found as {what}: {found:?}"
        );
    }
    assert!(violations("probe.rs", "// std::fs is for the application").is_empty());
}

#[test]
fn the_core_depends_on_no_git_process_signing_or_terminal_crate() {
    let closure = core_closure();
    assert!(
        closure.contains("serde_json"),
        "the closure was read: {closure:?}"
    );
    let found: Vec<&&str> = FORBIDDEN_CRATES_IN_CORE
        .iter()
        .filter(|name| closure.contains(**name))
        .collect();
    assert!(found.is_empty(), "hpp-core depends on {found:?}");
}

#[test]
fn control_the_application_closure_holds_what_the_core_must_not() {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock is committed");
    let app = closure(&lock, "git-hpp");
    for name in FORBIDDEN_CRATES_IN_CORE {
        assert!(
            app.contains(*name),
            "git-hpp depends on {name}, so the check can see it"
        );
    }
}

#[test]
fn the_store_knows_nothing_of_the_core() {
    let lock = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock is committed");
    let store = closure(&lock, "hpp-store");
    assert!(store.contains("gix"), "the closure was read");
    assert!(!store.contains("hpp-core"), "hpp-store depends on hpp-core");
    let mut files = Vec::new();
    rust_files(&root().join("crates/hpp-store/src"), &mut files);
    for file in files {
        let source = std::fs::read_to_string(&file).expect("a source file is UTF-8");
        assert!(
            !source.contains("hpp_core"),
            "{} names the core",
            file.display()
        );
    }
}
