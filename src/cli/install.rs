//! `git hpp install`: copy verified modules into a workspace for one host, plan first.

use std::path::PathBuf;

use serde_json::json;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::modules::install::{self, Plan};
use crate::modules::{self, Action, Selection};
use hpp_core::manifest;

/// Plan (then, with --apply, perform) the install of modules for a host
///
/// Resolves a bundle or modules on a host (a module unsupported there is refused), verifies
/// each module directory against its CHECKSUMS.txt (beside the manifest in force, or, with the
/// built-in manifest, the copy embedded in this binary), and lists the files to copy (Claude
/// Code: <target>/.claude/hpp/<module>/, each skill also under <target>/.claude/skills/<skill>/
/// and each agent under <target>/.claude/agents/; Codex CLI: <target>/.agents/hpp/<module>/
/// and each skill under <target>/.agents/skills/hpp-<module>-<skill>/) with the hook wiring to
/// paste (each script called with the host as its argument, tool events filtered by the
/// matcher each hook declares). Without --apply nothing is written. With --apply the absent
/// files are copied (hook scripts executable); a different existing file is never replaced
/// (reported as a conflict); a re-run is a no-op. Claude Code's wiring is printed to paste
/// into .claude/settings.json, or, with --plugin, written as a plugin's hooks/hooks.json;
/// Codex's is written to .codex/hooks.json (Codex runs it only in a trusted project, once each
/// hook is reviewed and trusted).
/// Exits 0, 1 when a conflict is left, 2 on refusal.
#[derive(Debug, clap::Args)]
// Not `required`: with neither, the refusal lists the manifest's bundles and modules.
#[command(group(clap::ArgGroup::new("selection").args(["bundle", "module"])))]
pub struct InstallArgs {
    /// Bundle to install
    #[arg(long, value_name = "B")]
    bundle: Option<String>,
    /// Module to install (can be repeated)
    #[arg(long, value_name = "M")]
    module: Vec<String>,
    /// Host the workspace runs (claude-code, codex)
    #[arg(long, value_name = "H")]
    host: String,
    /// Workspace to install into [default: .]
    #[arg(long, value_name = "DIR", default_value = ".")]
    target: PathBuf,
    /// Claude Code: install as a plugin (.claude/plugins/git-hpp with its hooks/hooks.json,
    /// skills and agents, listed by a marketplace in .claude-plugin/marketplace.json), so no
    /// hooks block is pasted
    #[arg(long)]
    plugin: bool,
    /// Copy the files
    #[arg(long)]
    apply: bool,
    /// Print one pretty, sorted-key JSON document instead of text
    #[arg(long)]
    json: bool,
}

/// Runs `git hpp install`.
pub fn dispatch(ctx: &Ctx, args: InstallArgs) -> Result<Outcome, CliError> {
    let manifest = ctx.manifest()?;
    let validated = manifest::validate(manifest.value())
        .map_err(|e| CliError::refused(format!("{}: {e}", manifest.origin())))?;
    let selection = match &args.bundle {
        Some(bundle) => Selection::Bundle(bundle.clone()),
        None if args.module.is_empty() => {
            let bundles: Vec<&str> = validated.bundles.keys().map(String::as_str).collect();
            let modules: Vec<&str> = validated.modules.iter().map(|m| m.id.as_str()).collect();
            return Err(CliError::refused(format!(
                "name what to install: --bundle {} or --module {} (can be repeated)",
                bundles.join("|"),
                modules.join("|")
            )));
        }
        None => Selection::Modules(args.module.clone()),
    };
    let source_root = ctx.manifest_file()?.map(|f| {
        ctx.cwd()
            .join(f.parent().unwrap_or(std::path::Path::new("")))
    });
    let shown = args.target.display().to_string();
    let plan = install::plan(
        &validated,
        &selection,
        &args.host,
        source_root.as_deref(),
        &ctx.cwd().join(&args.target),
        &shown,
        args.plugin,
    )?;
    let (create, unchanged, conflict) = plan.counts();
    let written = if args.apply {
        Some(install::apply(&plan)?)
    } else {
        None
    };
    let mode = match written {
        None => "plan",
        Some(0) => "no-op",
        Some(_) => "apply",
    };
    let exit = if conflict > 0 { Exit::Warn } else { Exit::Ok };
    let mut value = serde_json::to_value(&plan).expect("a plan serialises");
    value["protocol_version"] = json!(validated.protocol_version);
    value["mode"] = json!(mode);
    value["written"] = json!(written);
    let note = if args.plugin {
        PLUGIN_NOTE.to_owned()
    } else {
        wiring_note(&args.host)
    };
    value["wiring_note"] = json!(note);
    let human = human(&plan, mode, (create, unchanged, conflict), written);
    Ok(Outcome::document(args.json, &value, human, exit))
}

/// How the plugin is enabled, once written: the routes that load its hooks in a headless
/// `claude -p` session first (`tests/it/real_hosts.rs` runs each), then the one that does not.
const PLUGIN_NOTE: &str = "the hooks are in .claude/plugins/git-hpp/hooks/hooks.json; enable the plugin with `claude plugin marketplace add ./` then `claude plugin install git-hpp@git-hpp-workspace` (once per machine; `/plugin …` inside a session does the same), or for one session `claude --plugin-dir .claude/plugins/git-hpp`: both load its hooks in headless `claude -p` sessions too. A committed .claude/settings.json with {\"extraKnownMarketplaces\": {\"git-hpp-workspace\": {\"source\": {\"source\": \"directory\", \"path\": \".\"}}}, \"enabledPlugins\": {\"git-hpp@git-hpp-workspace\": true}} only offers it: it loads after someone trusts the folder and accepts the marketplace in an interactive session, and a headless session loads nothing from it (no hook runs), so CI and scripted runs need one of the two routes above";

fn wiring_note(host: &str) -> String {
    match host {
        "claude-code" => {
            "paste the hooks block into .claude/settings.json (it is never written for you)"
                .to_owned()
        }
        _ => format!(
            "{CODEX_NOTE}. Its hooks feature: {}",
            modules::codex_feature_note()
        ),
    }
}

/// Where Codex reads the hooks, and the two trusts it needs before it runs them.
const CODEX_NOTE: &str = "written to .codex/hooks.json, where Codex CLI reads a repository's hooks (kept, and to merge by hand, when one is already there); the commands name the scripts from the repository's top level. Codex runs none of them until you do two things, and `codex exec` never asks for either: it ignores the repository's .codex/ until the project is trusted, then skips every hook not yet trusted, silently. 1) Trust the project: Codex's --trust flag, or trust_level = \"trusted\" for this repository's path under [projects] in ~/.codex/config.toml. 2) Review and trust the hooks: start an interactive `codex` in the repository once and accept them";

fn human(plan: &Plan, mode: &str, counts: (usize, usize, usize), written: Option<usize>) -> String {
    let (create, unchanged, conflict) = counts;
    let mut out = format!(
        "install {mode}: bundle {} · host {} · target {}\n",
        plan.bundle, plan.host, plan.target
    );
    for m in &plan.modules {
        out.push_str(&format!(
            "  {} {} · {} · {} file(s) · checksums {} ({})\n",
            m.chosen.id, m.chosen.version, m.chosen.integration, m.files, m.checksums, m.source
        ));
    }
    out.push_str(&format!(
        "files: {create} to create · {unchanged} unchanged · {conflict} conflict(s)\n"
    ));
    let verb = if written.is_some() {
        "created"
    } else {
        "create"
    };
    for f in &plan.files {
        match f.action {
            Action::Create => out.push_str(&format!("{verb} {}\n", f.copy.target)),
            Action::Conflict => out.push_str(&format!(
                "conflict {} (a different file is there; it is kept)\n",
                f.copy.target
            )),
            Action::Merge => out.push_str(&format!(
                "{} {} (the hooks it lacked added, none removed)\n",
                if written.is_some() { "merged" } else { "merge" },
                f.copy.target
            )),
            Action::Unchanged => {}
        }
    }
    if plan.plugin {
        out.push_str(&format!("plugin: {PLUGIN_NOTE}\n"));
    } else {
        out.push_str(&format!(
            "hooks for {} ({}):\n{}",
            modules::host_label(&plan.host),
            wiring_note(&plan.host),
            hpp_core::record::pretty_json(&plan.wiring)
        ));
    }
    if written.is_none() {
        out.push_str("(plan only: run again with --apply to copy the files)\n");
    }
    out
}
