//! `init`: the six stages (detect, prereqs, profile, configure, wire-suggest, smoke), the
//! readiness count and the profile, as the reference's wizard has them.
//!
//! CONCEPTS.md "readiness" and "plan and apply": readiness is the count of checks init actually
//! ran, each verified, failed or not-verified with the command that reproduces it; a check that
//! did not run is not-verified, never zero and never one hundred. Without `--apply` nothing is
//! written; with it exactly one file, `.hpp/profile.json`, and never over a different one.
//!
//! This module is pure: it parses answers, builds the profile, and assembles stages and
//! readiness items into the `hpp.init-report/v1` document. [`run`] is the workflow that
//! measures and writes.

pub mod run;

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::modules::Selection;

/// The schema of the profile.
pub const PROFILE_SCHEMA: &str = "hpp.init/v1";
/// The schema of the report.
pub const REPORT_SCHEMA: &str = "hpp.init-report/v1";
/// Where the profile is written, relative to the target.
pub const PROFILE_PATH: &str = ".hpp/profile.json";
/// The stages, in their fixed order.
pub const STAGES: [&str; 6] = [
    "detect",
    "prereqs",
    "profile",
    "configure",
    "wire-suggest",
    "smoke",
];
/// The default host.
pub const DEFAULT_HOST: &str = "claude-code";
/// The default bundle.
pub const DEFAULT_BUNDLE: &str = "reliable-coding";
/// The keys a profile answers file may hold.
pub const ANSWER_KEYS: [&str; 5] = [
    "bundle",
    "decision_advisor",
    "host",
    "modules",
    "policy_mode",
];

/// The decision advisors the reference's profile names. Recorded in the profile (when not
/// `off`) for a team that runs the reference beside this one; nothing here calls an advisor.
pub const DECISION_ADVISORS: [&str; 4] = ["off", "typesafe", "openrouter", "compatible"];
/// How many cells the readiness bar has.
pub const CELLS: usize = 20;

/// A usage error in the answers (exit 3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Usage {
    /// The profile file's root is not an object.
    #[error("profile file root must be a JSON object: {0}")]
    Root(String),
    /// The profile file has keys outside [`ANSWER_KEYS`].
    #[error("profile file has unknown keys: {keys} (allowed: {})", ANSWER_KEYS.join(", "))]
    UnknownKeys {
        /// The unknown keys, comma-separated.
        keys: String,
    },
    /// A key that must be a string is not.
    #[error("profile key {0} must be a string")]
    NotString(String),
    /// `modules` is not a non-empty list of strings.
    #[error("profile key modules must be a non-empty list of module ids")]
    Modules,
    /// `--modules` named nothing.
    #[error("--modules needs at least one module id")]
    NoModules,
    /// A decision advisor the reference does not name.
    #[error("unknown decision advisor: {0} (expected off, typesafe, openrouter or compatible)")]
    DecisionAdvisor(String),
}

/// The policy mode recorded in the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyMode {
    /// Verdicts are printed, nothing is blocked.
    Audit,
    /// BLOCK exits 2, MANUAL exits 1.
    Enforce,
}

/// Why a policy mode was refused (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy mode: {0} (expected audit or enforce)")]
pub struct UnknownPolicyMode(pub String);

impl std::str::FromStr for PolicyMode {
    type Err = UnknownPolicyMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "audit" => Ok(Self::Audit),
            "enforce" => Ok(Self::Enforce),
            other => Err(UnknownPolicyMode(other.to_owned())),
        }
    }
}

/// Answers, from flags or from a profile file; anything left `None` takes its default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answers {
    /// The host.
    pub host: Option<String>,
    /// The bundle.
    pub bundle: Option<String>,
    /// Modules chosen one by one (replace the bundle; labelled `custom`).
    pub modules: Option<Vec<String>>,
    /// The policy mode.
    pub policy_mode: Option<String>,
    /// The reference's decision advisor.
    pub decision_advisor: Option<String>,
}

impl Answers {
    /// Reads a profile answers file (`shown` names it in messages).
    pub fn from_json(value: &Value, shown: &str) -> Result<Self, Usage> {
        let map = value
            .as_object()
            .ok_or_else(|| Usage::Root(shown.to_owned()))?;
        let unknown: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| !ANSWER_KEYS.contains(k))
            .collect();
        if !unknown.is_empty() {
            return Err(Usage::UnknownKeys {
                keys: unknown.join(", "),
            });
        }
        let text = |key: &str| -> Result<Option<String>, Usage> {
            match map.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Usage::NotString(key.to_owned())),
            }
        };
        let modules = match map.get("modules") {
            None => None,
            Some(Value::Array(items)) if !items.is_empty() => Some(
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned).ok_or(Usage::Modules))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => return Err(Usage::Modules),
        };
        Ok(Self {
            host: text("host")?,
            bundle: text("bundle")?,
            modules,
            policy_mode: text("policy_mode")?,
            decision_advisor: text("decision_advisor")?,
        })
    }
}

/// The choices init works with, after flags, the answers file and defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choices {
    /// The host.
    pub host: String,
    /// A bundle or modules.
    pub selection: Selection,
    /// The policy mode.
    pub policy_mode: PolicyMode,
    /// The reference's decision advisor (`off` unless one was named).
    pub decision_advisor: String,
    /// How many answers took their default.
    pub defaults: usize,
}

/// Merges flags over the answers file over the defaults (host `claude-code`, bundle
/// `reliable-coding`, policy `audit`). Modules named anywhere replace the bundle.
pub fn choose(flags: &Answers, file: &Answers) -> Result<Choices, UnknownPolicyMode> {
    let mut defaults = 0;
    let mut pick = |a: &Option<String>, b: &Option<String>, default: &str| {
        a.clone().or_else(|| b.clone()).unwrap_or_else(|| {
            defaults += 1;
            default.to_owned()
        })
    };
    let host = pick(&flags.host, &file.host, DEFAULT_HOST);
    let policy_mode = pick(&flags.policy_mode, &file.policy_mode, "audit").parse()?;
    let modules = flags.modules.clone().or_else(|| {
        flags
            .bundle
            .is_none()
            .then(|| file.modules.clone())
            .flatten()
    });
    let selection = match modules {
        Some(ids) => Selection::Modules(ids),
        None => Selection::Bundle(pick(&flags.bundle, &file.bundle, DEFAULT_BUNDLE)),
    };
    let decision_advisor = flags
        .decision_advisor
        .clone()
        .or_else(|| file.decision_advisor.clone())
        .unwrap_or_else(|| "off".to_owned());
    Ok(Choices {
        host,
        selection,
        policy_mode,
        decision_advisor,
        defaults,
    })
}

/// Checks a decision advisor against the reference's names.
pub fn check_decision_advisor(name: &str) -> Result<(), Usage> {
    if DECISION_ADVISORS.contains(&name) {
        Ok(())
    } else {
        Err(Usage::DecisionAdvisor(name.to_owned()))
    }
}

/// Builds the `hpp.init/v1` profile.
pub fn profile(
    choices: &Choices,
    modules: &[String],
    product_version: Option<&str>,
    protocol_version: &str,
) -> Value {
    let mut profile = json!({
        "schema": PROFILE_SCHEMA,
        "protocol_version": protocol_version,
        "product_version": product_version,
        "host": choices.host,
        "bundle": choices.selection.label(),
        "modules": modules,
        "policy_mode": choices.policy_mode,
    });
    // As the reference writes it: present only when an advisor is chosen.
    if choices.decision_advisor != "off" {
        profile["decision_advisor"] = json!(choices.decision_advisor);
    }
    profile
}

/// The status of a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageStatus {
    /// It ran and found nothing wrong.
    Ok,
    /// It ran and found something to look at.
    Warn,
    /// It ran and failed.
    Fail,
    /// It did not run, because an earlier stage halted.
    Skipped,
}

/// Something a stage measured that is not what it expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What was measured.
    pub label: String,
    /// What was found.
    pub measured: String,
    /// What was expected.
    pub expected: String,
    /// The command or step that would fix it.
    pub next_step: String,
}

/// One stage's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stage {
    /// Its name, from [`STAGES`].
    pub stage: &'static str,
    /// Its status.
    pub status: StageStatus,
    /// One line.
    pub summary: String,
    /// What it measured, as JSON.
    pub detail: Value,
    /// What was not as expected.
    pub problems: Vec<Problem>,
    /// The exit code this stage asks for (0, 1 or 2); a failed stage asking 2 halts the rest.
    pub exit_hint: u8,
}

impl Stage {
    /// A stage that ran; its status follows its problems and exit hint.
    pub fn ran(stage: &'static str, summary: impl Into<String>, detail: Value) -> Self {
        Self {
            stage,
            status: StageStatus::Ok,
            summary: summary.into(),
            detail,
            problems: Vec::new(),
            exit_hint: 0,
        }
    }

    /// Records a problem that asks for `exit_hint` (1 warns, 2 fails and halts).
    pub fn problem(&mut self, problem: Problem, exit_hint: u8) {
        self.problems.push(problem);
        self.exit_hint = self.exit_hint.max(exit_hint);
        let status = if exit_hint >= 2 {
            StageStatus::Fail
        } else {
            StageStatus::Warn
        };
        self.status = self.status.max(status);
    }

    /// Tells whether this stage halts the ones after it.
    pub fn halts(&self) -> bool {
        self.status == StageStatus::Fail && self.exit_hint >= 2
    }

    /// A stage that did not run because `after` failed.
    pub fn skipped(stage: &'static str, after: &str) -> Self {
        Self {
            stage,
            status: StageStatus::Skipped,
            summary: format!("not run — {after} failed"),
            detail: json!({}),
            problems: Vec::new(),
            exit_hint: 0,
        }
    }
}

/// The result of one readiness check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Readiness {
    /// The check ran and passed.
    Verified,
    /// The check ran and failed.
    Failed,
    /// The check did not run (or cannot be run by init).
    NotVerified,
}

/// One readiness item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Item {
    /// Its id.
    pub id: &'static str,
    /// What it checks.
    pub label: &'static str,
    /// Its result.
    pub status: Readiness,
    /// What was measured.
    pub evidence: String,
    /// The command that reproduces the check.
    pub command: String,
}

/// Counts readiness items and splits [`CELLS`] cells between the three results in proportion
/// (largest remainders first), so the bar always has twenty cells. Counts and cells are keyed
/// by the status exactly as an item spells it (`verified`, `failed`, `not-verified`), so
/// `readiness[item.status]` is its count: the reference keys the count `not_verified` beside
/// items' `not-verified`, one spelling here.
pub fn readiness(items: &[Item]) -> Value {
    let count = |s: Readiness| items.iter().filter(|i| i.status == s).count();
    let counts = [
        ("verified", count(Readiness::Verified)),
        ("failed", count(Readiness::Failed)),
        ("not-verified", count(Readiness::NotVerified)),
    ];
    let total = items.len();
    let mut cells: Vec<(&str, usize, usize)> = counts
        .iter()
        .map(|(k, n)| {
            let exact = n * CELLS;
            (
                *k,
                exact.checked_div(total).unwrap_or(0),
                exact.checked_rem(total).unwrap_or(0),
            )
        })
        .collect();
    let mut left = if total == 0 {
        0
    } else {
        CELLS - cells.iter().map(|c| c.1).sum::<usize>()
    };
    let mut order: Vec<usize> = (0..cells.len()).collect();
    order.sort_by(|a, b| cells[*b].2.cmp(&cells[*a].2));
    for i in order {
        if left == 0 {
            break;
        }
        cells[i].1 += 1;
        left -= 1;
    }
    let mut out = Map::new();
    out.insert("items".into(), json!(items));
    for (k, n) in counts {
        out.insert(k.into(), json!(n));
    }
    out.insert("total".into(), json!(total));
    out.insert(
        "cells".into(),
        Value::Object(
            cells
                .iter()
                .map(|(k, n, _)| ((*k).to_owned(), json!(n)))
                .collect(),
        ),
    );
    Value::Object(out)
}

/// What the target already holds, as detect measures it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Existing {
    /// A profile that parses as `hpp.init/v1` is there.
    pub profile: bool,
    /// A `.claude/` directory.
    pub claude_dir: bool,
    /// `.claude/settings.json` with hooks or a status line.
    pub settings_wired: bool,
    /// An `AGENTS.md`.
    pub agents_md: bool,
    /// Loops under refs/hpp/loops.
    pub loops: usize,
}

/// Classifies the target: `re-run` (a valid profile is there), `in-progress` (agent settings,
/// AGENTS.md or a loop) or `greenfield`; with the count of existing items init leaves alone.
pub fn classify(existing: &Existing) -> (&'static str, usize) {
    let items = [
        existing.profile,
        existing.claude_dir,
        existing.settings_wired,
        existing.agents_md,
        existing.loops > 0,
    ]
    .iter()
    .filter(|b| **b)
    .count();
    let kind = if existing.profile {
        "re-run"
    } else if items > 0 {
        "in-progress"
    } else {
        "greenfield"
    };
    (kind, items)
}

/// Assembles the stages (skipping those after a halting one) into the report's verdict:
/// `(status, exit code)`. The exit code is the largest exit hint, raised to 1 by any warning or
/// failure.
pub fn verdict(stages: &[Stage], no_op: bool) -> (&'static str, u8) {
    let halted = stages.iter().any(Stage::halts);
    let mut exit = stages.iter().map(|s| s.exit_hint).max().unwrap_or(0);
    let worst = stages
        .iter()
        .map(|s| s.status)
        .filter(|s| *s != StageStatus::Skipped)
        .max()
        .unwrap_or(StageStatus::Ok);
    if worst >= StageStatus::Warn {
        exit = exit.max(1);
    }
    let status = match worst {
        _ if halted => "halted",
        StageStatus::Fail => "fail",
        StageStatus::Warn => "warn",
        _ if no_op => "no-op",
        _ => "ok",
    };
    (status, exit)
}

/// Returns `ids` in order without repeats (a repeated `--modules` entry is kept once).
pub fn dedup(ids: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    ids.iter().filter(|i| seen.insert(*i)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &'static str, status: Readiness) -> Item {
        Item {
            id,
            label: id,
            status,
            evidence: String::new(),
            command: String::new(),
        }
    }

    #[test]
    fn cells_always_add_up_to_twenty() {
        for (v, f, n) in [(9, 0, 3), (1, 1, 1), (12, 0, 0), (0, 0, 7), (5, 2, 5)] {
            let mut items = Vec::new();
            items.extend((0..v).map(|_| item("a", Readiness::Verified)));
            items.extend((0..f).map(|_| item("b", Readiness::Failed)));
            items.extend((0..n).map(|_| item("c", Readiness::NotVerified)));
            let r = readiness(&items);
            let cells = r["cells"].as_object().unwrap();
            let sum: u64 = cells.values().map(|c| c.as_u64().unwrap()).sum();
            assert_eq!(sum, 20, "{r}");
            assert_eq!(r["total"], v + f + n);
        }
    }

    #[test]
    fn control_a_halting_stage_fails_the_run_and_a_warning_raises_the_exit() {
        let mut configure = Stage::ran("configure", "x", json!({}));
        assert_eq!(verdict(std::slice::from_ref(&configure), false), ("ok", 0));
        assert_eq!(
            verdict(std::slice::from_ref(&configure), true),
            ("no-op", 0)
        );
        let problem = Problem {
            label: "m".into(),
            measured: "unsupported".into(),
            expected: "native".into(),
            next_step: "pick another".into(),
        };
        configure.problem(problem.clone(), 1);
        assert_eq!(
            verdict(std::slice::from_ref(&configure), false),
            ("warn", 1)
        );
        configure.problem(problem, 2);
        assert!(configure.halts());
        assert_eq!(
            verdict(&[configure, Stage::skipped("smoke", "configure")], false),
            ("halted", 2)
        );
    }

    #[test]
    fn answers_files_are_refused_with_the_reference_sentences() {
        let bad = |v: Value| Answers::from_json(&v, "p.json").unwrap_err().to_string();
        assert_eq!(
            bad(json!([])),
            "profile file root must be a JSON object: p.json"
        );
        assert_eq!(
            bad(json!({"colour": "red"})),
            "profile file has unknown keys: colour (allowed: bundle, decision_advisor, host, modules, policy_mode)"
        );
        assert_eq!(bad(json!({"host": 1})), "profile key host must be a string");
        assert_eq!(
            bad(json!({"modules": []})),
            "profile key modules must be a non-empty list of module ids"
        );
        let ok =
            Answers::from_json(&json!({"host": "codex", "modules": ["lane-kit"]}), "p").unwrap();
        let choices = choose(&Answers::default(), &ok).unwrap();
        assert_eq!(choices.host, "codex");
        assert_eq!(
            choices.selection,
            Selection::Modules(vec!["lane-kit".into()])
        );
        assert_eq!(choices.defaults, 1);
        assert_eq!(
            "strict".parse::<PolicyMode>().unwrap_err().to_string(),
            "unknown policy mode: strict (expected audit or enforce)"
        );
    }

    #[test]
    fn detect_tells_greenfield_from_work_in_progress_and_a_rerun() {
        assert_eq!(classify(&Existing::default()), ("greenfield", 0));
        assert_eq!(
            classify(&Existing {
                agents_md: true,
                loops: 2,
                ..Existing::default()
            }),
            ("in-progress", 2)
        );
        assert_eq!(
            classify(&Existing {
                profile: true,
                ..Existing::default()
            })
            .0,
            "re-run"
        );
    }
}
