//! The init workflow: measure the target, run the six stages, count readiness, and (only with
//! `--apply`) write the profile. Reads the target's files and repository (refs/hpp/loops);
//! runs `git --version` and `git hpp --version`; writes nothing but `.hpp/profile.json`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{
    Choices, Existing, Item, PROFILE_PATH, PROFILE_SCHEMA, Problem, REPORT_SCHEMA, Readiness,
    STAGES, Stage, classify,
};
use crate::events;
use crate::modules::install::{self, Plan};
use crate::modules::{self, Selection, files};
use hpp_core::graph;
use hpp_core::manifest::{Manifest, Validated};
use hpp_core::policy::{Action, Policy};
use hpp_core::record::pretty_json;
use hpp_store::Store;

/// How long a prerequisite probe may run.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What init needs to run.
pub struct Request<'a> {
    /// The manifest in force (parsed).
    pub manifest: &'a Manifest,
    /// The whole protocol's verdict on it.
    pub validated: Result<Validated, String>,
    /// The manifest's directory, where module directories live (`None`: built-in).
    pub manifest_root: Option<&'a Path>,
    /// The target directory.
    pub target: &'a Path,
    /// The target as the user wrote it.
    pub shown_target: &'a str,
    /// The answers.
    pub choices: &'a Choices,
    /// Whether to write the profile.
    pub apply: bool,
}

/// Why init could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A host, bundle or module name is not declared.
    #[error(transparent)]
    Unknown(modules::Error),
    /// The profile could not be written.
    #[error("cannot write {PROFILE_PATH}: {0}")]
    Write(#[source] files::Error),
}

/// Refuses an undeclared host, bundle or module before any stage runs (an unsupported module
/// is not refused here: configure reports it and halts).
pub fn check_names(validated: &Validated, choices: &Choices) -> Result<(), modules::Error> {
    modules::check_host(validated, &choices.host)?;
    match &choices.selection {
        Selection::Bundle(name) if !validated.bundles.contains_key(name) => {
            Err(modules::Error::UnknownBundle(name.clone()))
        }
        Selection::Modules(ids) if ids.is_empty() => Err(modules::Error::NoModules),
        Selection::Modules(ids) => match ids.iter().find(|id| validated.module(id).is_none()) {
            Some(id) => Err(modules::Error::UnknownModule(id.clone())),
            None => Ok(()),
        },
        Selection::Bundle(_) => Ok(()),
    }
}

/// Runs the stages and returns the `hpp.init-report/v1` document and the exit code.
pub fn run(request: &Request<'_>) -> Result<(Value, u8), Error> {
    let store = Store::discover(request.target).ok();
    let mut items: Vec<Item> = Vec::new();
    let mut stages: Vec<Stage> = Vec::new();
    let mut writes: Vec<Value> = Vec::new();
    let mut next: Vec<String> = Vec::new();
    stages.push(detect(request, store.as_ref()));
    let prereqs = prereqs(request, store.as_ref(), &mut items);
    stages.push(prereqs);
    let validated = request.validated.as_ref().ok();
    let mut halted_by = stages.iter().find(|s| s.halts()).map(|s| s.stage);
    let mut no_op = request.apply;
    if let (None, Some(validated)) = (halted_by, validated) {
        let modules = module_ids(validated, &request.choices.selection);
        let (profile, pending) = profile(request, validated, &modules, &mut items, &mut writes);
        no_op &= pending.is_none();
        stages.push(profile);
        let (configure, plan) = configure(request, validated, &mut items);
        stages.push(configure);
        halted_by = stages.iter().find(|s| s.halts()).map(|s| s.stage);
        // The profile is written only once configure has accepted the modules it records.
        if let Some((path, bytes)) = pending {
            if halted_by.is_none() {
                files::write_new(&path, &bytes).map_err(Error::Write)?;
            } else {
                no_op = request.apply;
                writes[0]["action"] = json!("held");
                if let Some(stage) = stages.iter_mut().find(|s| s.stage == "profile") {
                    stage.detail["action"] = json!("held");
                    stage.summary = stage.summary.replacen("written", "held", 1);
                }
                if let Some(item) = items.iter_mut().find(|i| i.id == "profile") {
                    item.status = Readiness::NotVerified;
                    item.evidence = "not written: configure halted".into();
                }
            }
        }
        if halted_by.is_none() {
            if let Some(plan) = &plan {
                stages.push(wire_suggest(request, plan, &mut next));
            }
            stages.push(smoke(request, store.as_ref(), &mut items));
        }
    }
    if let Some(after) = halted_by {
        for name in STAGES.iter().skip(stages.len()) {
            stages.push(Stage::skipped(name, after));
        }
    }
    items.push(Item {
        id: "wiring",
        label: "host hooks wired",
        status: Readiness::NotVerified,
        evidence: "init prints the wiring and never writes it".into(),
        command: "git hpp hooks status".into(),
    });
    for id in [
        "profile",
        "distribution",
        "checksums",
        "policy",
        "graph",
        "events",
    ] {
        if !items.iter().any(|i| i.id == id) {
            items.push(not_run(id, halted_by.unwrap_or("an earlier stage")));
        }
    }
    items.sort_by_key(|i| ITEM_ORDER.iter().position(|id| *id == i.id));
    let (status, exit) = super::verdict(&stages, no_op);
    let mode = match (request.apply, no_op) {
        (false, _) => "plan",
        (true, true) => "no-op",
        (true, false) => "apply",
    };
    let report = json!({
        "schema": REPORT_SCHEMA,
        "version": env!("CARGO_PKG_VERSION"),
        "mode": mode,
        "status": status,
        "exit_code": exit,
        "target": request.shown_target,
        "manifest": request.manifest.origin(),
        "interactive": false,
        "stages": stages,
        "readiness": super::readiness(&items),
        "writes": writes,
        "next": next,
        "documentation": [
            {"path": "README.md", "note": "the quick start and the first day in your own repository"},
            {"path": "docs/src/reference.md", "note": "exit codes and the ref layout"},
            {"path": "hpp.manifest.json", "note": "the protocol: hosts, modules, hooks and their capabilities"},
        ],
    });
    Ok((report, exit))
}

/// The order readiness items are listed in.
const ITEM_ORDER: [&str; 12] = [
    "host",
    "git",
    "git-hpp",
    "repository",
    "manifest",
    "distribution",
    "checksums",
    "profile",
    "policy",
    "graph",
    "events",
    "wiring",
];

fn label(id: &str) -> &'static str {
    match id {
        "host" => "host declared by the manifest",
        "git" => "git runs",
        "git-hpp" => "git hpp on PATH",
        "repository" => "target is a git repository",
        "manifest" => "manifest passes the protocol",
        "distribution" => "module directories verify",
        "checksums" => "chosen modules' checksums",
        "profile" => "profile written",
        "policy" => "command policy distinguishes",
        "graph" => "capability graph builds",
        "events" => "the target's loops verify",
        _ => "host hooks wired",
    }
}

fn item(
    id: &'static str,
    status: Readiness,
    evidence: impl Into<String>,
    command: impl Into<String>,
) -> Item {
    Item {
        id,
        label: label(id),
        status,
        evidence: evidence.into(),
        command: command.into(),
    }
}

fn not_run(id: &'static str, after: &str) -> Item {
    let command = match id {
        "profile" => format!("cat {PROFILE_PATH}"),
        "distribution" => "git hpp doctor".into(),
        "checksums" => "git hpp module checksums --check".into(),
        "policy" => "git hpp policy check --mode enforce --command \"rm -rf src\"".into(),
        "graph" => "git hpp graph --view capability".into(),
        _ => "git hpp event verify".into(),
    };
    item(
        id,
        Readiness::NotVerified,
        format!("not run: {after} halted"),
        command,
    )
}

fn module_ids(validated: &Validated, selection: &Selection) -> Vec<String> {
    match selection {
        Selection::Bundle(name) => validated
            .bundles
            .get(name)
            .map(|b| b.modules.clone())
            .unwrap_or_default(),
        Selection::Modules(ids) => super::dedup(ids),
    }
}

fn detect(request: &Request<'_>, store: Option<&Store>) -> Stage {
    let target = request.target;
    let settings: Option<Value> = std::fs::read(target.join(".claude/settings.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let existing = Existing {
        profile: std::fs::read(target.join(PROFILE_PATH))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| v["schema"] == PROFILE_SCHEMA),
        claude_dir: target.join(".claude").is_dir(),
        settings_wired: settings
            .is_some_and(|s| s.get("hooks").is_some() || s.get("statusLine").is_some()),
        agents_md: target.join("AGENTS.md").is_file(),
        loops: store
            .and_then(|s| s.list(hpp_store::refs::LOOPS_PREFIX).ok())
            .map_or(0, |l| l.len()),
    };
    let (kind, count) = classify(&existing);
    Stage::ran(
        "detect",
        format!("{kind} · {count} existing item(s) preserved"),
        json!({"classification": kind, "existing": existing}),
    )
}

fn probe(argv: &[&str], cwd: &Path) -> Option<String> {
    let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
    let done = crate::process::run_bounded(&crate::process::Request {
        argv: &argv,
        cwd,
        timeout: PROBE_TIMEOUT,
        stdin: None,
        env: &[],
    })
    .ok()?;
    (done.exit_code == Some(0)).then(|| String::from_utf8_lossy(&done.stdout).trim().to_owned())
}

fn prereqs(request: &Request<'_>, store: Option<&Store>, items: &mut Vec<Item>) -> Stage {
    let mut stage = Stage::ran("prereqs", "", json!({}));
    let git = probe(&["git", "--version"], request.target);
    let hpp = probe(&["git", "hpp", "--version"], request.target);
    let host = &request.choices.host;
    items.push(item(
        "host",
        Readiness::Verified,
        format!("host {host}"),
        format!("git hpp init --host {host}"),
    ));
    match &git {
        Some(v) => items.push(item("git", Readiness::Verified, v.clone(), "git --version")),
        None => {
            items.push(item(
                "git",
                Readiness::Failed,
                "git did not run",
                "git --version",
            ));
            stage.problem(
                problem("git", "not runnable", "git on PATH", "install git"),
                2,
            );
        }
    }
    match &hpp {
        Some(v) => items.push(item(
            "git-hpp",
            Readiness::Verified,
            v.clone(),
            "git hpp --version",
        )),
        None => {
            items.push(item(
                "git-hpp",
                Readiness::Failed,
                "`git hpp` did not run",
                "git hpp --version",
            ));
            stage.problem(
                problem(
                    "git hpp",
                    "not on PATH",
                    "git-hpp on PATH",
                    "cargo install --locked git-hpp (or put the built git-hpp on PATH)",
                ),
                1,
            );
        }
    }
    match store {
        Some(_) => items.push(item(
            "repository",
            Readiness::Verified,
            "a git repository",
            "git rev-parse --show-toplevel",
        )),
        // A plain directory is planned like a repository: what git adds (the refs loops,
        // evidence and attestations live in) is said, not failed.
        None => items.push(item(
            "repository",
            Readiness::NotVerified,
            "not a git repository yet: `git init` makes it one, and loops, evidence and attestations are kept in its refs",
            "git init",
        )),
    }
    match &request.validated {
        Ok(v) => items.push(item(
            "manifest",
            Readiness::Verified,
            format!("protocol {}", v.protocol_version),
            "git hpp doctor",
        )),
        Err(e) => {
            items.push(item(
                "manifest",
                Readiness::Failed,
                e.clone(),
                "git hpp doctor",
            ));
            stage.problem(
                problem(
                    "manifest",
                    e,
                    "a manifest that passes the protocol",
                    "git hpp doctor",
                ),
                2,
            );
        }
    }
    stage.summary = format!(
        "{} · {} · protocol {}",
        git.as_deref().unwrap_or("git missing"),
        hpp.as_deref().map_or("git hpp missing".to_owned(), |v| v
            .replace("git-hpp", "git hpp")),
        hpp_core::manifest::PROTOCOL_VERSION
    );
    stage.detail = json!({"git": git, "git_hpp": hpp, "repository": store.is_some()});
    stage
}

fn problem(label: &str, measured: &str, expected: &str, next_step: &str) -> Problem {
    Problem {
        label: label.into(),
        measured: measured.into(),
        expected: expected.into(),
        next_step: next_step.into(),
    }
}

fn profile(
    request: &Request<'_>,
    validated: &Validated,
    modules: &[String],
    items: &mut Vec<Item>,
    writes: &mut Vec<Value>,
) -> (Stage, Option<(std::path::PathBuf, Vec<u8>)>) {
    let choices = request.choices;
    let value = super::profile(
        choices,
        modules,
        validated.product_version.as_deref(),
        &validated.protocol_version,
    );
    let bytes = pretty_json(&value).into_bytes();
    let path = request.target.join(PROFILE_PATH);
    let existing = std::fs::read(&path).ok();
    let action = match (&existing, request.apply) {
        (Some(old), _) if *old == bytes => "unchanged",
        (Some(_), _) => "conflict",
        (None, false) => "would-write",
        (None, true) => "written",
    };
    let pending = (action == "written").then(|| (path.clone(), bytes.clone()));
    writes.push(json!({"path": PROFILE_PATH, "action": action}));
    let mut stage = Stage::ran(
        "profile",
        format!(
            "{action} · host={} · bundle={} · policy={} · {} default(s)",
            choices.host,
            choices.selection.label(),
            serde_json::to_value(choices.policy_mode)
                .expect("a mode serialises")
                .as_str()
                .unwrap_or_default(),
            choices.defaults
        ),
        json!({"path": PROFILE_PATH, "action": action, "profile": value}),
    );
    let command = format!("cat {PROFILE_PATH}");
    match action {
        "conflict" => {
            stage.problem(
                problem(
                    PROFILE_PATH,
                    "a different profile",
                    "the profile these answers make",
                    "keep it, or remove it and run init --apply again",
                ),
                1,
            );
            items.push(item(
                "profile",
                Readiness::Failed,
                "a different profile is there; it was kept",
                command,
            ));
        }
        "would-write" => items.push(item(
            "profile",
            Readiness::NotVerified,
            "plan only: run again with --apply",
            command,
        )),
        _ => items.push(item("profile", Readiness::Verified, action, command)),
    }
    (stage, pending)
}

fn configure(
    request: &Request<'_>,
    validated: &Validated,
    items: &mut Vec<Item>,
) -> (Stage, Option<Plan>) {
    let choices = request.choices;
    let origin = files::Origin::of(request.manifest_root);
    let distribution = crate::doctor::check_origin(validated, origin);
    items.push(match distribution.status {
        "ok" => item(
            "distribution",
            Readiness::Verified,
            format!(
                "{} module directories verify ({})",
                distribution.modules.len(),
                origin.label()
            ),
            "git hpp doctor",
        ),
        "failed" => item(
            "distribution",
            Readiness::Failed,
            distribution
                .findings
                .first()
                .map(|f| f.problem.clone())
                .unwrap_or_default(),
            "git hpp doctor",
        ),
        _ => item(
            "distribution",
            Readiness::NotVerified,
            "no module directory beside the manifest",
            "git hpp doctor",
        ),
    });
    let planned = install::plan(
        validated,
        &choices.selection,
        &choices.host,
        request.manifest_root,
        request.target,
        request.shown_target,
        false,
    );
    let plan = match planned {
        Ok(plan) => plan,
        Err(e) => {
            let mut stage = Stage::ran("configure", format!("halted: {e}"), json!({}));
            let module = match &e {
                install::Error::Choose(
                    modules::Error::BundleUnsupported { module, .. }
                    | modules::Error::ModuleUnsupported { module, .. },
                ) => module.clone(),
                _ => "modules".to_owned(),
            };
            stage.problem(
                problem(
                    &module,
                    &e.to_string(),
                    "native or explicit-command on the host",
                    "git hpp doctor --matrix",
                ),
                2,
            );
            items.push(item(
                "checksums",
                Readiness::NotVerified,
                format!("not run: {e}"),
                "git hpp module checksums --check",
            ));
            return (stage, None);
        }
    };
    let verified = plan
        .modules
        .iter()
        .filter(|m| m.checksums == "verified")
        .count();
    let failed: Vec<String> = plan
        .modules
        .iter()
        .filter(|m| m.checksums.starts_with("failed"))
        .map(|m| format!("{}: {}", m.chosen.id, m.checksums))
        .collect();
    let total = plan.modules.len();
    let clause = if verified == total {
        format!("{verified}/{total} checksums verified")
    } else if failed.is_empty() {
        "checksums not verified (no module directories beside the manifest)".to_owned()
    } else {
        format!("{verified}/{total} checksums verified")
    };
    let mut stage = Stage::ran(
        "configure",
        format!(
            "{total} modules · {} · {} · {clause}",
            choices.selection.label(),
            choices.host
        ),
        json!({"modules": plan.modules}),
    );
    let command = "git hpp module checksums --check";
    if !failed.is_empty() {
        stage.problem(
            problem(
                "checksums",
                &failed.join("; "),
                "every module verifies",
                command,
            ),
            2,
        );
        items.push(item(
            "checksums",
            Readiness::Failed,
            failed.join("; "),
            command,
        ));
    } else if verified == total {
        items.push(item("checksums", Readiness::Verified, clause, command));
    } else {
        items.push(item("checksums", Readiness::NotVerified, clause, command));
    }
    (stage, Some(plan))
}

fn wire_suggest(request: &Request<'_>, plan: &Plan, next: &mut Vec<String>) -> Stage {
    let choices = request.choices;
    let selection = match &choices.selection {
        Selection::Bundle(b) => format!("--bundle {b}"),
        Selection::Modules(ids) => ids
            .iter()
            .map(|m| format!("--module {m}"))
            .collect::<Vec<_>>()
            .join(" "),
    };
    // Module files come from the directory of the manifest in force: name it, so the command
    // finds them from wherever it is pasted.
    let manifest = match request.manifest_root {
        Some(_) => format!(" --manifest {}", request.manifest.origin()),
        None => String::new(),
    };
    next.push(format!(
        "git hpp install {selection} --host {} --target {}{manifest} --apply",
        choices.host, request.shown_target
    ));
    // Who may sign what comes before anything is signed: a key for you, the policy's root.
    next.push(
        "git hpp trust init --root me --key ~/.ssh/hpp-me.pub --sign-key ~/.ssh/hpp-me --apply   # after `ssh-keygen -t ed25519 -f ~/.ssh/hpp-me`; then `git hpp trust add` each agent (maker) and checker (docs/src/trust.md)"
            .into(),
    );
    next.push("git hpp hooks install --apply".into());
    next.push("git hpp remote setup origin --apply".into());
    let hooks = plan.capabilities.len();
    let wiring_events = plan.wiring["hooks"].as_object().map_or(0, |m| m.len());
    Stage::ran(
        "wire-suggest",
        format!(
            "{} commands to paste · 0 files written · {hooks} hooks declaring capabilities",
            next.len() + usize::from(wiring_events > 0)
        ),
        json!({"commands": next, "wiring": plan.wiring, "capabilities": plan.capabilities,
               "note": "printed for a person to paste or apply with its own command; init never writes it"}),
    )
}

fn smoke(request: &Request<'_>, store: Option<&Store>, items: &mut Vec<Item>) -> Stage {
    let mut stage = Stage::ran("smoke", "", json!({}));
    let mut passed = Vec::new();
    let policy = Policy::built_in();
    let block = policy.classify("rm -rf src").action;
    let allow = policy.classify("cargo test").action;
    let command = "git hpp policy check --mode enforce --command \"rm -rf src\"";
    if block == Action::Block && allow == Action::Allow {
        passed.push("policy");
        items.push(item(
            "policy",
            Readiness::Verified,
            "rm -rf src → BLOCK · cargo test → ALLOW",
            command,
        ));
    } else {
        let measured = format!("rm -rf src → {block} · cargo test → {allow}");
        stage.problem(problem("policy", &measured, "BLOCK and ALLOW", command), 1);
        items.push(item("policy", Readiness::Failed, measured, command));
    }
    let command = "git hpp graph --view capability";
    match graph::view(request.manifest.value(), "capability") {
        Ok(v) if v["nodes"].as_array().is_some_and(|n| !n.is_empty()) => {
            passed.push("graph");
            let count = |k: &str| v[k].as_array().map_or(0, Vec::len);
            items.push(item(
                "graph",
                Readiness::Verified,
                format!("{} nodes · {} edges", count("nodes"), count("edges")),
                command,
            ));
        }
        Ok(_) => {
            stage.problem(
                problem(
                    "graph",
                    "no nodes",
                    "a capability graph with nodes",
                    command,
                ),
                1,
            );
            items.push(item(
                "graph",
                Readiness::Failed,
                "the capability graph has no nodes",
                command,
            ));
        }
        Err(e) => {
            stage.problem(
                problem("graph", &e.to_string(), "a capability graph", command),
                1,
            );
            items.push(item("graph", Readiness::Failed, e.to_string(), command));
        }
    }
    let command = "git hpp event verify";
    match store.map(|s| events::list(s, request.manifest.loop_spec())) {
        None => items.push(item(
            "events",
            Readiness::NotVerified,
            "no repository, so no loop to verify",
            command,
        )),
        Some(Ok(loops)) => match loops.iter().find(|l| l.chain.is_broken()) {
            None => {
                passed.push("events");
                items.push(item(
                    "events",
                    Readiness::Verified,
                    format!("{} loop(s) verify", loops.len()),
                    command,
                ));
            }
            Some(l) => {
                let measured = format!(
                    "loop {} broken at {}",
                    l.id,
                    l.chain.first_divergent.clone().unwrap_or_default()
                );
                stage.problem(
                    problem("events", &measured, "every loop verifies", command),
                    1,
                );
                items.push(item("events", Readiness::Failed, measured, command));
            }
        },
        Some(Err(e)) => {
            stage.problem(
                problem("events", &e.to_string(), "every loop verifies", command),
                1,
            );
            items.push(item("events", Readiness::Failed, e.to_string(), command));
        }
    }
    stage.summary = if passed.is_empty() {
        "nothing verified".into()
    } else {
        passed.join(" · ")
    };
    stage.detail = json!({"verified": passed});
    stage
}
