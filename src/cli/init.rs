//! `git hpp init`: the six-stage setup report, plan first; `--apply` writes one profile file.

use std::path::PathBuf;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::init::{self, Answers, run};
use hpp_core::manifest;

/// Plan (then, with --apply, record) the harness setup of a workspace
///
/// Runs six stages in order (detect, prereqs, profile, configure, wire-suggest, smoke) and
/// counts readiness: each check verified, failed or not-verified, with the command that
/// reproduces it. Without --apply nothing is written. With --apply exactly one file is written,
/// .hpp/profile.json (hpp.init/v1), and never over a different one (a conflict warns). The
/// wiring (host hooks, git hooks, refspecs) is printed for a person to paste or to apply with
/// its own command; init never writes it. Never prompts. Exits with the largest stage hint:
/// 0 ok, 1 warn, 2 a stage halted (a module unsupported on the host, a broken manifest);
/// 2 for an unknown host, bundle, module or policy mode; 3 for a usage error.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Workspace to set up [default: .]
    #[arg(long, value_name = "DIR", default_value = ".")]
    target: PathBuf,
    /// Host the workspace runs (claude-code, codex) [default: claude-code]
    #[arg(long, value_name = "H")]
    host: Option<String>,
    /// Bundle to record [default: reliable-coding]
    #[arg(long, value_name = "B", conflicts_with = "modules")]
    bundle: Option<String>,
    /// Modules to record instead of a bundle, comma-separated (labelled custom)
    #[arg(long, value_name = "A,B", value_delimiter = ',', num_args = 0..)]
    modules: Option<Vec<String>>,
    /// Policy mode to record: audit or enforce [default: audit]
    #[arg(long, value_name = "MODE")]
    policy_mode: Option<String>,
    /// Answers file: a JSON object with only host, bundle, modules, policy_mode
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Write the profile
    #[arg(long)]
    apply: bool,
    /// Never prompt (init never does; kept for scripts written for the reference)
    #[arg(long)]
    non_interactive: bool,
    /// Accepted for scripts written for the reference: init asks nothing, so there is nothing
    /// to say yes to
    #[arg(long)]
    yes: bool,
    /// The reference's decision advisor (off, typesafe, openrouter, compatible): recorded in
    /// the profile when not off; nothing here calls it
    #[arg(long, value_name = "A")]
    decision_advisor: Option<String>,
    /// Accepted for scripts written for the reference: there is no boot animation here
    #[arg(long)]
    no_animation: bool,
    /// Accepted for scripts written for the reference: the smoke stage runs no benchmark here
    #[arg(long)]
    no_benchmark: bool,
    /// Accepted for scripts written for the reference: modules are built into this binary, no
    /// marketplace is read
    #[arg(long, value_name = "SLUG")]
    marketplace: Option<String>,
    /// Print the hpp.init-report/v1 document instead of text
    #[arg(long)]
    json: bool,
}

/// Runs `git hpp init`.
pub fn dispatch(ctx: &Ctx, args: InitArgs) -> Result<Outcome, CliError> {
    let target = ctx.cwd().join(&args.target);
    let shown = args.target.display().to_string();
    if !target.is_dir() {
        return Err(CliError::usage(format!(
            "target is not a directory: {shown}"
        )));
    }
    let file_answers = match &args.profile {
        None => Answers::default(),
        Some(path) => read_answers(ctx, path)?,
    };
    let modules = match &args.modules {
        Some(ids) if ids.iter().all(|i| i.trim().is_empty()) => {
            return Err(CliError::usage(init::Usage::NoModules));
        }
        Some(ids) => Some(
            ids.iter()
                .map(|i| i.trim())
                .filter(|i| !i.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        None => None,
    };
    let flags = Answers {
        host: args.host.clone(),
        bundle: args.bundle.clone(),
        modules,
        policy_mode: args.policy_mode.clone(),
        decision_advisor: args.decision_advisor.clone(),
    };
    let choices = init::choose(&flags, &file_answers)?;
    init::check_decision_advisor(&choices.decision_advisor).map_err(CliError::refused)?;
    let manifest = ctx.manifest()?;
    let validated = manifest::validate(manifest.value()).map_err(|e| e.to_string());
    if let Ok(v) = &validated {
        run::check_names(v, &choices)?;
    }
    let root = ctx.manifest_file()?.map(|f| {
        ctx.cwd()
            .join(f.parent().unwrap_or(std::path::Path::new("")))
    });
    let request = run::Request {
        manifest: &manifest,
        validated,
        manifest_root: root.as_deref(),
        target: &target,
        shown_target: &shown,
        choices: &choices,
        apply: args.apply,
    };
    let (report, code) = run::run(&request)?;
    let exit = match code {
        0 => Exit::Ok,
        1 => Exit::Warn,
        _ => Exit::Block,
    };
    Ok(Outcome::document(args.json, &report, human(&report), exit))
}

fn read_answers(ctx: &Ctx, path: &std::path::Path) -> Result<Answers, CliError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(ctx.cwd().join(path))
        .map_err(|_| CliError::usage(format!("profile file not found: {shown}")))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|_| CliError::usage(format!("profile file is not valid JSON: {shown}")))?;
    Answers::from_json(&value, &shown).map_err(CliError::usage)
}

const BOOT: [(&str, &str); 6] = [
    ("detect", "detecting host"),
    ("prereqs", "checking prerequisites"),
    ("profile", "mounting profile"),
    ("configure", "loading modules"),
    ("wire-suggest", "wiring suggestions"),
    ("smoke", "verifying evidence"),
];

fn human(report: &serde_json::Value) -> String {
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
    let mut out = String::new();
    for stage in report["stages"].as_array().into_iter().flatten() {
        let name = text(&stage["stage"]);
        let label = BOOT
            .iter()
            .find(|(s, _)| *s == name)
            .map_or(name.as_str(), |(_, l)| l);
        let mark = match stage["status"].as_str() {
            Some("ok") => "✓",
            Some("warn") => "!",
            Some("fail") => "✗",
            _ => "-",
        };
        out.push_str(&format!(
            "{:<30}{mark} {}\n",
            format!("> {label}..."),
            text(&stage["summary"])
        ));
        for p in stage["problems"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "    {}: {} (expected {}) → {}\n",
                text(&p["label"]),
                text(&p["measured"]),
                text(&p["expected"]),
                text(&p["next_step"])
            ));
        }
    }
    let halted = report["status"] == "halted";
    out.push_str(if halted {
        "> protocol halted.\n"
    } else {
        "> protocol online.\n"
    });
    let r = &report["readiness"];
    out.push_str(&format!(
        "\nREADINESS {}/{} verified · {} not verified · {} failed\n",
        r["verified"], r["total"], r["not-verified"], r["failed"]
    ));
    for item in r["items"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "  {:<13}{:<13}{}  [{}]\n",
            text(&item["id"]),
            text(&item["status"]),
            text(&item["evidence"]),
            text(&item["command"])
        ));
    }
    if let Some(wire) = report["stages"].as_array().and_then(|s| {
        s.iter()
            .find(|s| s["stage"] == "wire-suggest" && s["status"] != "skipped")
    }) {
        // The reference's table, column for column: id padded to 40, events joined by "," and
        // padded to 25, the exit policy; the capabilities on the line below.
        out.push_str(
            "\n  HOOK CAPABILITIES  what each hook you are about to paste is able to do — read it before the block below\n",
        );
        let table = wire["detail"]["capabilities"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if table.is_empty() {
            out.push_str("    (none: no chosen module ships a hook)\n");
        }
        let list = |v: &serde_json::Value, by: &str| {
            v.as_array()
                .into_iter()
                .flatten()
                .map(&text)
                .collect::<Vec<_>>()
                .join(by)
        };
        for (index, row) in table.iter().enumerate() {
            let branch = if index + 1 == table.len() {
                '└'
            } else {
                '├'
            };
            out.push_str(&format!(
                "    {branch} {:<40} {:<25} {}\n        {}\n",
                text(&row["hook"]),
                list(&row["events"], ","),
                text(&row["exit_policy"]),
                list(&row["capabilities"], ", "),
            ));
        }
        out.push_str("\nWiring to paste (never written by init):\n");
        out.push_str(&hpp_core::record::pretty_json(&wire["detail"]["wiring"]));
    }
    let next: Vec<String> = report["next"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    if !next.is_empty() {
        out.push_str("\nNext, each with its own plan and --apply:\n");
        for n in next {
            out.push_str(&format!("  {n}\n"));
        }
    }
    if report["mode"] == "plan" {
        out.push_str("\n(plan only: run again with --apply to write .hpp/profile.json)\n");
    }
    out
}
