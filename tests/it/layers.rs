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

/// The application's floors, bottom first (ARCHITECTURE §3, the README's "How the code is laid
/// out"): a module of `src/` imports only modules on floors below its own, so the trust spine
/// reads bottom up (the loop log, the records above it, the gates on top) and no import runs
/// back up or closes a circle. A new module is placed here when it is added.
const FLOORS: &[&[&str]] = &[
    // The loop log, and what needs nothing of the application.
    &[
        "events",
        "paths",
        "process",
        "board",
        "continuity",
        "continuity_checkpoint",
        "gotcha",
        "hooks",
        "modules",
    ],
    // What leaves the machine: reads the records of the floor below (turn checkpoints).
    &["sign", "lanes", "monitors", "outbound"],
    // The trust root, and the records above the log.
    &["trust", "evidence", "deliberation"],
    &["attest", "hop"],
    // The top of the trust spine.
    &["gates"],
    // Workflows above the gates.
    &["evals", "reconcile", "doctor"],
    &["atlas", "init"],
    &["cli"],
];

/// Inside the loop log, bottom first: reading and verifying a chain, remembering verified tips,
/// then what extends or carries a log, then the module that names them all.
const LOG_FLOORS: &[&[&str]] = &[
    &["chain"],
    &["reconcile"],
    &["cache"],
    &["append", "transfer"],
    &["mod"],
];

/// The code of `source` without its comments.
fn code_of(source: &str) -> String {
    source
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules `source` names under `root` (`crate` or `super`): `root::name` paths and the
/// names inside `root::{a, b::c}` groups.
fn named_under(source: &str, root: &str) -> BTreeSet<String> {
    let code = code_of(source);
    let path = Regex::new(&format!(r"\b{root}::([a-z_][a-z0-9_]*)")).expect("the pattern compiles");
    let group = Regex::new(&format!(r"\b{root}::\{{([^}}]*)\}}")).expect("the pattern compiles");
    let mut names: BTreeSet<String> = path.captures_iter(&code).map(|c| c[1].to_owned()).collect();
    for c in group.captures_iter(&code) {
        for item in c[1].split(',') {
            let name = item.trim().split("::").next().unwrap_or_default().trim();
            if !name.is_empty() && name != "self" {
                names.insert(name.to_owned());
            }
        }
    }
    names
}

/// The floor of `module` in `floors`, if it has one.
fn floor_of(floors: &[&[&str]], module: &str) -> Option<usize> {
    floors.iter().position(|floor| floor.contains(&module))
}

/// Every `file: module -> imported` where `module` (on a floor of `floors`) names a module of
/// `floors` that is not on a floor below its own.
fn imports_up(
    floors: &[&[&str]],
    module: &str,
    file: &str,
    names: &BTreeSet<String>,
) -> Vec<String> {
    let Some(own) = floor_of(floors, module) else {
        return vec![format!("{file}: module {module} is on no floor")];
    };
    names
        .iter()
        .filter(|name| name.as_str() != module)
        .filter_map(|name| {
            let theirs = floor_of(floors, name)?;
            (theirs >= own)
                .then(|| format!("{file}: {module} (floor {own}) imports {name} (floor {theirs})"))
        })
        .collect()
}

/// The top-level module a file of `src/` belongs to (`None` for the crate root and binaries).
fn application_module(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root().join("src")).ok()?;
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    match first.as_str() {
        "lib.rs" | "main.rs" | "bin" => None,
        name => Some(name.trim_end_matches(".rs").to_owned()),
    }
}

#[test]
fn no_module_of_the_application_imports_one_above_it() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let Some(module) = application_module(file) else {
            continue;
        };
        seen.insert(module.clone());
        let source = std::fs::read_to_string(file).expect("a source file is UTF-8");
        let name = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        found.extend(imports_up(
            FLOORS,
            &module,
            &name,
            &named_under(&source, "crate"),
        ));
    }
    assert!(
        seen.contains("gates") && seen.contains("events"),
        "the modules were read: {seen:?}"
    );
    assert!(
        found.is_empty(),
        "imports that run back up:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_loop_log_names_no_gate_attestation_or_evidence() {
    let mut files = Vec::new();
    rust_files(&root().join("src/events"), &mut files);
    assert!(files.len() >= 5, "the log's files were read: {files:?}");
    let mut found = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a source file is UTF-8");
        for above in named_under(&source, "crate").intersection(&BTreeSet::from([
            "gates".to_owned(),
            "attest".to_owned(),
            "evidence".to_owned(),
        ])) {
            found.push(format!("{}: names crate::{above}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "the loop log reaches above itself:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_loop_log_reads_bottom_up() {
    let mut files = Vec::new();
    rust_files(&root().join("src/events"), &mut files);
    let mut found = Vec::new();
    for file in &files {
        let module = file
            .file_stem()
            .expect("a source file has a name")
            .to_string_lossy()
            .into_owned();
        let source = std::fs::read_to_string(file).expect("a source file is UTF-8");
        let name = file
            .strip_prefix(root())
            .unwrap_or(file)
            .display()
            .to_string();
        found.extend(imports_up(
            LOG_FLOORS,
            &module,
            &name,
            &named_under(&source, "super"),
        ));
    }
    assert!(
        found.is_empty(),
        "the log's own files run back up:\n{}",
        found.join("\n")
    );
}

#[test]
fn control_an_import_that_runs_back_up_is_found() {
    // The circle this layout broke: the log admitting events through the gates above it.
    let log = "use crate::gates::admit;\nlet a = crate::attest::verify_tree(s);";
    let found = imports_up(FLOORS, "events", "probe.rs", &named_under(log, "crate"));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("imports attest") && found[1].contains("imports gates"));
    // Grouped imports, a sibling on the same floor, and a module on no floor.
    let grouped = named_under("use crate::{evidence::run, sign, self};", "crate");
    assert_eq!(
        grouped,
        BTreeSet::from(["evidence".to_owned(), "sign".to_owned()])
    );
    let sibling = imports_up(
        FLOORS,
        "attest",
        "probe.rs",
        &named_under("crate::hop::x", "crate"),
    );
    assert_eq!(
        sibling.len(),
        1,
        "a module on the same floor is not below: {sibling:?}"
    );
    assert_eq!(
        imports_up(FLOORS, "nowhere", "probe.rs", &BTreeSet::new()).len(),
        1
    );
    // A comment may name anything; a lower floor may be imported.
    assert!(named_under("// crate::gates is above", "crate").is_empty());
    assert!(
        imports_up(
            FLOORS,
            "gates",
            "probe.rs",
            &named_under("use crate::events;", "crate")
        )
        .is_empty()
    );
    // Inside the log: the chain reader may not reach for the cache.
    let chain = imports_up(
        LOG_FLOORS,
        "chain",
        "probe.rs",
        &named_under("super::cache::mark(s)", "super"),
    );
    assert_eq!(chain.len(), 1, "{chain:?}");
}

/// The dependencies a manifest lists (its `[dependencies]` table's names).
fn dependencies_of(manifest: &Path) -> BTreeSet<String> {
    let manifest: toml::Table = std::fs::read_to_string(manifest)
        .expect("the manifest is readable")
        .parse()
        .expect("the manifest is TOML");
    manifest["dependencies"]
        .as_table()
        .expect("the manifest has dependencies")
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_application_reaches_git_only_through_the_store() {
    let app = dependencies_of(&root().join("Cargo.toml"));
    assert!(
        app.contains("hpp-store"),
        "the root's dependencies were read: {app:?}"
    );
    assert!(
        !app.contains("gix"),
        "the root package depends on gix directly"
    );
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let gix = Regex::new(r"\bgix::").expect("the pattern compiles");
    let found: Vec<String> = files
        .iter()
        .filter(|f| gix.is_match(&code_of(&std::fs::read_to_string(f).expect("UTF-8"))))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        found.is_empty(),
        "these name gix outside the store: {found:?}"
    );
}

#[test]
fn control_the_dependency_check_sees_the_stores_gix() {
    let store = dependencies_of(&root().join("crates/hpp-store/Cargo.toml"));
    assert!(store.contains("gix"), "{store:?}");
}
