//! Modules (CONCEPTS.md "module", "host", "bundle"): the `CHECKSUMS.txt` inventory of a module
//! directory and the plan that installs modules into a workspace for one host.
//!
//! A module ships `CHECKSUMS.txt`: one `<sha256>  <relative path>` line per file (two spaces),
//! sorted by path, listing every file of the directory except itself. Verification finds the
//! files that are missing, changed or unlisted; an empty inventory or a path that escapes the
//! directory fails outright. An install copies the verified files under a host's layout
//! (Claude Code: `.claude/hpp/<module>/`, with each skill also under `.claude/skills/<skill>/`
//! and each subagent under `.claude/agents/<agent>.md`, where Claude Code discovers them; Codex
//! CLI: `.agents/hpp/<module>/`, with each skill also under `.agents/skills/hpp-<module>-<skill>/`),
//! never over a different existing file, and prints the hook wiring for a person to paste: each
//! script called with the host as its argument, tool events filtered by the hook's declared
//! matcher for that host.
//!
//! This module is pure: [`files`] is the shell that walks directories, hashes and writes, and
//! [`install`] the workflow that joins them.

pub mod embedded;
pub mod files;
pub mod install;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use hpp_core::manifest::{ModuleDecl, Validated, is_inside};

/// The inventory file of a module directory.
pub const CHECKSUMS_FILE: &str = "CHECKSUMS.txt";

/// The events that concern one tool call, for which a settings block needs a matcher.
const TOOL_EVENTS: [&str; 3] = ["PreToolUse", "PostToolUse", "PostToolUseFailure"];

/// Why an inventory or an install was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `CHECKSUMS.txt` lists nothing.
    #[error("{CHECKSUMS_FILE} lists no file")]
    EmptyInventory,
    /// A line is not `<sha256>  <path>`.
    #[error("{CHECKSUMS_FILE} line {line} is not `<sha256>  <relative path>`")]
    BadLine {
        /// 1-based line number.
        line: usize,
    },
    /// A path climbs out of the module directory or is absolute.
    #[error("{CHECKSUMS_FILE} names a path outside the module: {path}")]
    Escaping {
        /// The path as listed.
        path: String,
    },
    /// A path is listed twice.
    #[error("{CHECKSUMS_FILE} lists {path} twice")]
    Duplicate {
        /// The path.
        path: String,
    },
    /// The bundle is not declared.
    #[error("unknown bundle: {0}")]
    UnknownBundle(String),
    /// The host is not declared.
    #[error("unknown host: {host} (expected one of {expected})")]
    UnknownHost {
        /// The host asked for.
        host: String,
        /// The declared hosts, comma-separated.
        expected: String,
    },
    /// A module id is not declared.
    #[error("unknown module: {0}")]
    UnknownModule(String),
    /// A bundle names a module that is unsupported on the host.
    #[error("bundle {bundle} requires {module}, unsupported on {host}")]
    BundleUnsupported {
        /// The bundle.
        bundle: String,
        /// The module.
        module: String,
        /// The host.
        host: String,
    },
    /// A module chosen by name is unsupported on the host.
    #[error("module {module} is unsupported on {host}")]
    ModuleUnsupported {
        /// The module.
        module: String,
        /// The host.
        host: String,
    },
    /// No module was chosen.
    #[error("--modules needs at least one module id")]
    NoModules,
    /// The host is declared but this harness knows no file layout for it.
    #[error("no install layout is known for host {0}")]
    NoLayout(String),
}

/// One line of an inventory: a path relative to the module directory and its sha256.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Entry {
    /// The path, `/`-separated, relative to the module directory.
    pub path: String,
    /// The sha256 of its bytes, lowercase hex.
    pub sha256: String,
}

/// Renders an inventory: one `<sha256>  <path>` line per entry, sorted by path, without
/// `CHECKSUMS.txt` itself.
///
/// ```
/// use git_hpp::modules::{Entry, render, parse};
/// let text = render(&[Entry { path: "b".into(), sha256: "1".repeat(64) },
///                     Entry { path: "a".into(), sha256: "2".repeat(64) }]);
/// assert!(text.starts_with(&format!("{}  a\n", "2".repeat(64))));
/// assert_eq!(parse(&text).unwrap().len(), 2);
/// ```
pub fn render(entries: &[Entry]) -> String {
    let mut sorted: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.path != CHECKSUMS_FILE)
        .collect();
    sorted.sort();
    sorted
        .iter()
        .map(|e| format!("{}  {}\n", e.sha256, e.path))
        .collect()
}

/// Parses an inventory, refusing a malformed line, an escaping or repeated path, or an empty
/// inventory.
pub fn parse(text: &str) -> Result<Vec<Entry>, Error> {
    let mut out: Vec<Entry> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || Error::BadLine { line: index + 1 };
        let (sha, path) = line.split_once("  ").ok_or_else(bad)?;
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) || path.is_empty() {
            return Err(bad());
        }
        if !is_inside(path) {
            return Err(Error::Escaping {
                path: path.to_owned(),
            });
        }
        if out.iter().any(|e| e.path == path) {
            return Err(Error::Duplicate {
                path: path.to_owned(),
            });
        }
        out.push(Entry {
            path: path.to_owned(),
            sha256: sha.to_ascii_lowercase(),
        });
    }
    if out.is_empty() {
        return Err(Error::EmptyInventory);
    }
    Ok(out)
}

/// What a comparison of an inventory with the files on disk found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// How many listed files match.
    pub verified: usize,
    /// Listed files that are absent.
    pub missing: Vec<String>,
    /// Listed files whose bytes differ.
    pub changed: Vec<String>,
    /// Files present but not listed.
    pub unlisted: Vec<String>,
}

impl Verification {
    /// Tells whether every file matches and nothing is unlisted.
    pub fn is_intact(&self) -> bool {
        self.missing.is_empty() && self.changed.is_empty() && self.unlisted.is_empty()
    }

    /// Returns a one-line account of what differs.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (label, paths) in [
            ("missing", &self.missing),
            ("changed", &self.changed),
            ("unlisted", &self.unlisted),
        ] {
            if !paths.is_empty() {
                parts.push(format!("{label}: {}", paths.join(", ")));
            }
        }
        if parts.is_empty() {
            format!("{} file(s) verified", self.verified)
        } else {
            parts.join("; ")
        }
    }
}

/// Compares an inventory with the files present (`CHECKSUMS.txt` itself is never a file of the
/// inventory).
pub fn verify(listed: &[Entry], present: &[Entry]) -> Verification {
    let actual: BTreeMap<&str, &str> = present
        .iter()
        .filter(|e| e.path != CHECKSUMS_FILE)
        .map(|e| (e.path.as_str(), e.sha256.as_str()))
        .collect();
    let mut out = Verification::default();
    for entry in listed {
        match actual.get(entry.path.as_str()) {
            None => out.missing.push(entry.path.clone()),
            Some(sha) if *sha != entry.sha256 => out.changed.push(entry.path.clone()),
            Some(_) => out.verified += 1,
        }
    }
    out.unlisted = actual
        .keys()
        .filter(|path| !listed.iter().any(|e| e.path == **path))
        .map(|p| (*p).to_owned())
        .collect();
    out
}

/// What to install: a bundle or a list of modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// A named bundle.
    Bundle(String),
    /// Modules named one by one (the reference labels this `custom`).
    Modules(Vec<String>),
}

impl Selection {
    /// Returns the bundle's name, or `custom`.
    pub fn label(&self) -> &str {
        match self {
            Self::Bundle(name) => name,
            Self::Modules(_) => "custom",
        }
    }
}

/// One module chosen for a host, with its integration there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chosen {
    /// The module id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its directory, relative to the manifest.
    pub path: String,
    /// `native` or `explicit-command` (an unsupported module is refused).
    pub integration: String,
}

/// Checks that `host` is declared, naming the declared ones otherwise.
pub fn check_host(validated: &Validated, host: &str) -> Result<(), Error> {
    if validated.hosts.iter().any(|h| h == host) {
        Ok(())
    } else {
        Err(Error::UnknownHost {
            host: host.to_owned(),
            expected: validated.hosts.join(", "),
        })
    }
}

/// Resolves a selection into the modules to install on `host`, refusing an unknown bundle, host
/// or module and any module unsupported on the host.
pub fn choose(
    validated: &Validated,
    selection: &Selection,
    host: &str,
) -> Result<Vec<Chosen>, Error> {
    let ids: Vec<String> = match selection {
        Selection::Bundle(name) => validated
            .bundles
            .get(name)
            .ok_or_else(|| Error::UnknownBundle(name.clone()))?
            .modules
            .clone(),
        Selection::Modules(ids) if ids.is_empty() => return Err(Error::NoModules),
        Selection::Modules(ids) => ids.clone(),
    };
    check_host(validated, host)?;
    let mut out: Vec<Chosen> = Vec::new();
    for id in ids {
        let module = validated
            .module(&id)
            .ok_or_else(|| Error::UnknownModule(id.clone()))?;
        let integration = module.coverage(host);
        if integration == "unsupported" {
            return Err(match selection {
                Selection::Bundle(bundle) => Error::BundleUnsupported {
                    bundle: bundle.clone(),
                    module: id,
                    host: host.to_owned(),
                },
                Selection::Modules(_) => Error::ModuleUnsupported {
                    module: id,
                    host: host.to_owned(),
                },
            });
        }
        if out.iter().any(|c| c.id == module.id) {
            continue;
        }
        out.push(chosen(module, integration));
    }
    Ok(out)
}

fn chosen(module: &ModuleDecl, integration: &str) -> Chosen {
    Chosen {
        id: module.id.clone(),
        version: module.version.clone(),
        path: module.path.clone(),
        integration: integration.to_owned(),
    }
}

/// Returns where a module's files go in a workspace on `host`, relative to the target.
pub fn install_root(host: &str, module: &str) -> Result<String, Error> {
    match host {
        "claude-code" => Ok(format!(".claude/hpp/{module}")),
        "codex" => Ok(format!(".agents/hpp/{module}")),
        other => Err(Error::NoLayout(other.to_owned())),
    }
}

/// Where `install --plugin` writes the Claude Code plugin, relative to the target: a plugin in
/// the layout Claude Code's plugins reference documents (`.claude-plugin/plugin.json`, `hooks/
/// hooks.json`, `skills/<skill>/SKILL.md`, `agents/<agent>.md`), the module trees under
/// `modules/<module>/`. A marketplace at the target's `.claude-plugin/marketplace.json` lists
/// it, so `/plugin marketplace add ./` then `/plugin install` enable it without a pasted block.
pub const PLUGIN_DIR: &str = ".claude/plugins/git-hpp";

/// The plugin's name (`plugin.json`) and its marketplace's.
pub const PLUGIN_NAME: &str = "git-hpp";

/// The author the plugin and its marketplace entry name (Claude Code's validator warns on none).
pub const PLUGIN_AUTHOR: &str = "the git-hpp authors";

/// The marketplace the target's `.claude-plugin/marketplace.json` declares.
pub const PLUGIN_MARKETPLACE: &str = "git-hpp-workspace";

impl Copy {
    /// The copy of module `module`'s file `entry` to `target`.
    fn of(module: &str, entry: &Entry, target: String) -> Self {
        Self {
            module: module.to_owned(),
            source: entry.path.clone(),
            target,
            sha256: entry.sha256.clone(),
        }
    }
}

/// Lists the copies that place a module's verified files in the Claude Code plugin: each skill
/// under `skills/<skill>/` and each agent under `agents/<agent>.md`, where the plugin loader
/// discovers them, and every other file under `modules/<module>/`.
pub fn plugin_copies(module: &str, files: &[Entry]) -> Vec<Copy> {
    let mut out = Vec::new();
    for entry in files {
        let copy = |target: String| Copy::of(module, entry, target);
        // A skill or an agent goes where the plugin loader discovers it, once; the rest (hook
        // scripts, the README) keeps the module's own tree.
        match discovered_at("claude-code", module, &entry.path) {
            Some(found) => {
                let inner = found.trim_start_matches(".claude/");
                out.push(copy(format!("{PLUGIN_DIR}/{inner}")));
            }
            None => out.push(copy(format!(
                "{PLUGIN_DIR}/modules/{module}/{}",
                entry.path
            ))),
        }
    }
    out
}

/// The plugin's `hooks/hooks.json`: the same events and matchers as [`wiring`] for Claude Code,
/// each command naming its script under `${CLAUDE_PLUGIN_ROOT}` (the plugin's directory, which
/// Claude Code sets for plugin hooks), with a description.
pub fn plugin_hooks(validated: &Validated, chosen: &[Chosen]) -> Result<Value, Error> {
    let mut wiring = wiring(validated, "claude-code", chosen)?;
    if let Some(events) = wiring["hooks"].as_object_mut() {
        for entries in events.values_mut() {
            for entry in entries.as_array_mut().into_iter().flatten() {
                for hook in entry["hooks"].as_array_mut().into_iter().flatten() {
                    let command = hook["command"].as_str().unwrap_or_default();
                    let script = command
                        .strip_prefix("\"$CLAUDE_PROJECT_DIR\"/.claude/hpp/")
                        .unwrap_or(command);
                    hook["command"] =
                        json!(format!("\"${{CLAUDE_PLUGIN_ROOT}}\"/modules/{script}"));
                }
            }
        }
    }
    wiring["description"] = json!(
        "git-hpp: the House Party Protocol's gates, lanes, handoffs and gotcha memory on this repository's refs/hpp"
    );
    Ok(wiring)
}

/// The plugin's `.claude-plugin/plugin.json` and the target's `.claude-plugin/marketplace.json`.
pub fn plugin_manifests(version: &str) -> (Value, Value) {
    let description = "The House Party Protocol harness, git-native: gates, evidence, lanes, handoffs and gotchas kept under refs/hpp";
    let plugin = json!({
        "name": PLUGIN_NAME,
        "version": version,
        "description": description,
        "keywords": ["git", "verification", "agents"],
        "author": {"name": PLUGIN_AUTHOR},
        "license": env!("CARGO_PKG_LICENSE"),
    });
    let marketplace = json!({
        "name": PLUGIN_MARKETPLACE,
        "owner": {"name": "this repository"},
        "metadata": {"description": description},
        "plugins": [{
            "name": PLUGIN_NAME,
            "source": format!("./{PLUGIN_DIR}"),
            "description": description,
            "version": version,
            "author": {"name": PLUGIN_AUTHOR},
        }],
    });
    (plugin, marketplace)
}

/// One file to place in the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Copy {
    /// The module it belongs to.
    pub module: String,
    /// Its path inside the module directory.
    pub source: String,
    /// Its path inside the target, `/`-separated.
    pub target: String,
    /// The sha256 its bytes must have.
    pub sha256: String,
}

/// Lists the copies that install a module's verified files on `host`: every file under the
/// host's root, and a second copy where the host discovers it — on Claude Code each
/// `skills/<skill>/...` file under `.claude/skills/<skill>/...` and each `agents/<agent>.md`
/// under `.claude/agents/<agent>.md`; on Codex CLI each `skills/<skill>/...` file under
/// `.agents/skills/hpp-<module>-<skill>/...`.
pub fn copies(host: &str, module: &str, files: &[Entry]) -> Result<Vec<Copy>, Error> {
    let root = install_root(host, module)?;
    let mut out = Vec::new();
    for entry in files {
        let copy = |target: String| Copy::of(module, entry, target);
        out.push(copy(format!("{root}/{}", entry.path)));
        if let Some(target) = discovered_at(host, module, &entry.path) {
            out.push(copy(target));
        }
    }
    Ok(out)
}

/// Returns where `host` discovers the module file `path` (a skill or a subagent), if anywhere
/// besides the module's own root.
fn discovered_at(host: &str, module: &str, path: &str) -> Option<String> {
    let skill = path
        .strip_prefix("skills/")
        .and_then(|rest| rest.split_once('/'));
    match host {
        "claude-code" => {
            if let Some((skill, inner)) = skill {
                return Some(format!(".claude/skills/{skill}/{inner}"));
            }
            path.strip_prefix("agents/")
                .filter(|agent| agent.ends_with(".md") && !agent.contains('/'))
                .map(|agent| format!(".claude/agents/{agent}"))
        }
        "codex" => {
            skill.map(|(skill, inner)| format!(".agents/skills/hpp-{module}-{skill}/{inner}"))
        }
        _ => None,
    }
}

/// What applying a copy does to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// The file is absent: it will be written.
    Create,
    /// The file is there with the same bytes: nothing to do.
    Unchanged,
    /// A different file is there: it is kept, and the copy is reported as a conflict.
    Conflict,
    /// A hooks file is there: the missing hook entries are added to it, none removed.
    Merge,
}

/// Decides what a copy does, given the sha256 of the file already at its target, if any.
pub fn action(copy: &Copy, existing: Option<&str>) -> Action {
    match existing {
        None => Action::Create,
        Some(sha) if sha == copy.sha256 => Action::Unchanged,
        Some(_) => Action::Conflict,
    }
}

/// Returns the command a host runs for a hook script installed in the workspace: the script
/// under the host's layout, with the host as its first argument (the scripts default to
/// `claude-code`, so Codex CLI must be named).
pub fn hook_command(host: &str, module: &str, script: &str) -> Result<String, Error> {
    let root = install_root(host, module)?;
    Ok(match host {
        "claude-code" => format!("\"$CLAUDE_PROJECT_DIR\"/{root}/{script} {host}"),
        // Codex CLI runs the command through a shell in the session's directory, which may be
        // below the workspace root: name the script from the repository's top level.
        _ => format!("\"$(git rev-parse --show-toplevel)\"/{root}/{script} {host}"),
    })
}

/// The `timeout` (seconds) a hook's wiring declares to the host: 600 for a Stop gate, whose
/// criteria run inside it; 30 for every other hook. Each script's own deadline for git-hpp
/// (the seconds it gives `hpp-run.sh`) is shorter, so the script, not the host, decides what
/// a hang means: a guard blocks, a note is skipped.
pub fn timeout_seconds(exit_policy: &str, event: &str) -> u64 {
    if event == "Stop" && exit_policy == "block" {
        600
    } else {
        30
    }
}

/// The first Codex CLI release that runs hooks with no feature flag (its `hooks` feature,
/// formerly `codex_hooks`, became stable and on by default).
pub const CODEX_HOOKS_BY_DEFAULT: (u64, u64, u64) = (0, 124, 0);

/// Whether the Codex CLI on PATH needs its hooks feature switched on to run a repository's
/// hooks, as one sentence: read from `codex --version` and the `[features]` table of
/// `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`), where `hooks = false` (or the older
/// `codex_hooks = false`) turns them off whatever the version.
pub fn codex_feature_note() -> String {
    let version = std::process::Command::new("codex")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| parse_version(&String::from_utf8_lossy(&o.stdout)));
    let home = std::env::var_os("CODEX_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".codex")));
    let off = home
        .and_then(|h| std::fs::read_to_string(h.join("config.toml")).ok())
        .is_some_and(|text| hooks_turned_off(&text));
    feature_sentence(version, off)
}

/// The sentence [`codex_feature_note`] says for a Codex `version` (`None`: not on PATH) and a
/// config that turns hooks off.
fn feature_sentence(version: Option<(u64, u64, u64)>, off: bool) -> String {
    let (major, minor, patch) = CODEX_HOOKS_BY_DEFAULT;
    let since = format!("{major}.{minor}.{patch}");
    let mut sentence = match version {
        Some(v) if v >= CODEX_HOOKS_BY_DEFAULT => format!(
            "the codex on PATH is {}.{}.{}, which runs hooks with no feature flag (from {since} on)",
            v.0, v.1, v.2
        ),
        Some(v) => format!(
            "the codex on PATH is {}.{}.{}, older than {since}: switch its hooks on first, `codex_hooks = true` under [features] in ~/.codex/config.toml (or upgrade)",
            v.0, v.1, v.2
        ),
        None => format!(
            "no codex on PATH here: from {since} on Codex runs hooks with no feature flag; before it, set `codex_hooks = true` under [features] in ~/.codex/config.toml"
        ),
    };
    if off {
        sentence.push_str("; your config.toml turns hooks off (`hooks = false` under [features]): Codex runs none until that line goes");
    }
    sentence
}

/// `codex-cli 0.171.0` → (0, 171, 0).
fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let word = text.split_whitespace().find(|w| w.contains('.'))?;
    let mut parts = word.split(['.', '-']).map(|p| p.parse::<u64>());
    Some((
        parts.next()?.ok()?,
        parts.next()?.ok()?,
        parts.next()?.ok()?,
    ))
}

/// Tells whether a Codex `config.toml` sets `hooks = false` (or `codex_hooks = false`) under
/// `[features]`, or `features.hooks = false` at the top.
fn hooks_turned_off(text: &str) -> bool {
    let mut table = String::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name.trim().to_owned();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        let key = if table == "features" {
            key.to_owned()
        } else if table.is_empty() {
            match key.strip_prefix("features.") {
                Some(k) => k.to_owned(),
                None => continue,
            }
        } else {
            continue;
        };
        if matches!(key.as_str(), "hooks" | "codex_hooks") && value.trim() == "false" {
            return true;
        }
    }
    false
}

/// The hook events Codex CLI has (its hooks documentation); a hook declared for another event
/// (such as Claude Code's `PostToolUseFailure`) is left out of the Codex wiring.
const CODEX_EVENTS: &[&str] = &[
    "SessionStart",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "PreCompact",
    "PostCompact",
];

/// Whether `host` has the hook event `event`.
fn host_has_event(host: &str, event: &str) -> bool {
    host != "codex" || CODEX_EVENTS.contains(&event)
}

/// Builds the hook wiring to paste for the chosen modules on `host`: a `{"hooks": {event:
/// [{"matcher"?, "hooks": [{"type": "command", "command"}]}]}}` block, in the shape of Claude
/// Code's settings.json (Codex CLI's hooks.json takes the same shape, behind its trust prompt).
/// A tool event (PreToolUse, PostToolUse, PostToolUseFailure) carries the matcher the hook
/// declares for the host, and none (every tool) when it declares none; other events never carry
/// one. An event the host does not have is left out. The block is printed, never written.
pub fn wiring(validated: &Validated, host: &str, chosen: &[Chosen]) -> Result<Value, Error> {
    let mut events: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for module in chosen {
        for hook in validated.hooks_of(&module.id) {
            let command = hook_command(host, &module.id, &hook.script)?;
            for event in hook.events.iter().filter(|e| host_has_event(host, e)) {
                let timeout = timeout_seconds(&hook.exit_policy, event);
                let mut entry = json!({"hooks": [{"type": "command", "command": command,
                                                  "timeout": timeout}]});
                if TOOL_EVENTS.contains(&event.as_str())
                    && let Some(matcher) = hook.matcher_for(host)
                {
                    entry["matcher"] = json!(matcher);
                }
                events.entry(event.clone()).or_default().push(entry);
            }
        }
    }
    Ok(json!({ "hooks": events }))
}

/// The capability table of the chosen modules' hooks: one row per hook (id, events,
/// capabilities, exit policy), in the manifest's order. Empty, not absent, when no chosen module
/// ships a hook.
pub fn capability_table(validated: &Validated, chosen: &[Chosen]) -> Vec<Value> {
    // In the manifest's order of hooks, as the reference lists them.
    validated
        .hooks
        .iter()
        .filter(|h| chosen.iter().any(|m| m.id == h.module))
        .map(|h| {
            json!({"hook": h.id, "events": h.events, "capabilities": h.capabilities,
                   "exit_policy": h.exit_policy})
        })
        .collect()
}

/// Renders the host matrix as Markdown: one row per module, one column per host, each cell
/// `` `integration` · channels ``.
pub fn host_matrix(validated: &Validated) -> String {
    let mut out = String::from("| module |");
    for host in &validated.hosts {
        out.push_str(&format!(" {} |", host_label(host)));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(validated.hosts.len()));
    out.push('\n');
    for module in &validated.modules {
        out.push_str(&format!("| `{}` {} |", module.id, module.version));
        for host in &validated.hosts {
            let integration = module.coverage(host);
            let channels = if integration == "unsupported" {
                "—".to_owned()
            } else if module.has_component("hooks") {
                "verified copy + hooks after the wiring is pasted".to_owned()
            } else {
                "verified copy".to_owned()
            };
            out.push_str(&format!(" `{integration}` · {channels} |"));
        }
        out.push('\n');
    }
    out
}

/// Returns a host's display name.
pub fn host_label(host: &str) -> &str {
    match host {
        "claude-code" => "Claude Code",
        "codex" => "Codex CLI",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpp_core::manifest;

    fn sha(c: char) -> String {
        c.to_string().repeat(64)
    }

    fn entry(path: &str, c: char) -> Entry {
        Entry {
            path: path.into(),
            sha256: sha(c),
        }
    }

    fn validated() -> Validated {
        let value: Value = serde_json::from_str(manifest::BUILT_IN).unwrap();
        manifest::validate(&value).unwrap()
    }

    /// The deadline a hook script gives git-hpp: the number after `hpp-run.sh KIND "NAME"`.
    fn deadline_of(script: &str) -> Option<(String, u64)> {
        let line = script.lines().find(|l| l.contains("hpp-run.sh\" "))?;
        let rest = line.split("hpp-run.sh\" ").nth(1)?;
        let kind = rest.split_whitespace().next()?.to_owned();
        let after_name = rest.splitn(3, '"').nth(2)?;
        let seconds = after_name.split_whitespace().next()?.parse().ok()?;
        Some((kind, seconds))
    }

    #[test]
    fn every_hook_script_runs_git_hpp_under_a_deadline_inside_its_declared_timeout() {
        let v = validated();
        assert!(!v.hooks.is_empty());
        for hook in &v.hooks {
            let module = v.modules.iter().find(|m| m.id == hook.module).unwrap();
            let file = embedded::file(&module.path, &hook.script)
                .unwrap_or_else(|| panic!("{} ships {}", hook.module, hook.script));
            let text = std::str::from_utf8(file.bytes).unwrap();
            let (kind, seconds) = deadline_of(text)
                .unwrap_or_else(|| panic!("{} runs git hpp through hpp-run.sh", hook.id));
            let want = match hook.exit_policy.as_str() {
                "block" if hook.events.iter().any(|e| e == "Stop") => "stop",
                "block" => "guard",
                _ => "note",
            };
            assert_eq!(kind, want, "{}", hook.id);
            assert!(
                embedded::file(&module.path, "hooks/hpp-run.sh").is_some(),
                "{} ships its runner",
                hook.module
            );
            for event in &hook.events {
                let timeout = timeout_seconds(&hook.exit_policy, event);
                assert!(
                    seconds + 10 <= timeout,
                    "{}: a deadline of {seconds} s leaves under 10 s of the {timeout} s timeout on {event}",
                    hook.id
                );
            }
        }
    }

    #[test]
    fn the_codex_note_says_whether_the_version_or_the_config_needs_the_feature_switched_on() {
        assert_eq!(parse_version("codex-cli 0.171.0\n"), Some((0, 171, 0)));
        assert_eq!(parse_version("codex-cli 0.99.1-alpha.2"), Some((0, 99, 1)));
        assert!(
            feature_sentence(Some((0, 171, 0)), false).contains("runs hooks with no feature flag")
        );
        assert!(feature_sentence(Some((0, 123, 9)), false).contains("`codex_hooks = true`"));
        assert!(feature_sentence(None, false).starts_with("no codex on PATH"));
        assert!(hooks_turned_off("[features]\nhooks = false\n"));
        assert!(hooks_turned_off("features.codex_hooks = false # old\n"));
        assert!(feature_sentence(Some((0, 171, 0)), true).contains("turns hooks off"));
    }

    #[test]
    fn control_hooks_on_or_elsewhere_are_not_read_as_off() {
        assert!(!hooks_turned_off("[features]\nhooks = true\n"));
        assert!(!hooks_turned_off("[projects.\"/x\"]\nhooks = false\n"));
        assert!(!hooks_turned_off("[features]\napps = false\n"));
        assert_eq!(parse_version("codex"), None);
    }

    #[test]
    fn every_module_ships_the_same_runner() {
        // Each module installs alone, so each carries `hooks/hpp-run.sh`; one copy may not drift.
        let v = validated();
        let runners: Vec<(&str, &[u8])> = v
            .modules
            .iter()
            .filter_map(|m| {
                embedded::file(&m.path, "hooks/hpp-run.sh").map(|f| (m.id.as_str(), f.bytes))
            })
            .collect();
        assert!(runners.len() >= 5, "{runners:?}");
        for (id, bytes) in &runners {
            assert_eq!(
                *bytes, runners[0].1,
                "{id}'s hpp-run.sh differs from {}'s",
                runners[0].0
            );
        }
    }

    #[test]
    fn control_a_script_without_a_deadline_is_found() {
        assert_eq!(
            deadline_of("git hpp policy hook --host codex\nexit 0\n"),
            None
        );
        assert_eq!(
            deadline_of("bash \"$here/hpp-run.sh\" guard \"policy gate\" 20 policy hook"),
            Some(("guard".into(), 20))
        );
    }

    #[test]
    fn render_sorts_and_leaves_out_the_inventory_itself() {
        let text = render(&[
            entry("z", 'a'),
            entry(CHECKSUMS_FILE, 'b'),
            entry("a/b", 'c'),
        ]);
        assert_eq!(text, format!("{}  a/b\n{}  z\n", sha('c'), sha('a')));
        assert_eq!(
            parse(&text).unwrap(),
            vec![entry("a/b", 'c'), entry("z", 'a')]
        );
    }

    #[test]
    fn control_tampered_missing_and_unlisted_files_are_found() {
        let listed = vec![entry("a", 'a'), entry("b", 'b'), entry("c", 'c')];
        let present = vec![entry("a", 'a'), entry("b", 'f'), entry("d", 'd')];
        let v = verify(&listed, &present);
        assert!(!v.is_intact());
        assert_eq!(
            (v.verified, v.changed, v.missing, v.unlisted),
            (
                1,
                vec!["b".to_owned()],
                vec!["c".to_owned()],
                vec!["d".to_owned()]
            )
        );
        assert!(verify(&listed, &listed).is_intact());
    }

    #[test]
    fn control_malformed_inventories_are_refused() {
        assert_eq!(parse("\n").unwrap_err(), Error::EmptyInventory);
        assert_eq!(
            parse(&format!("{} ../x\n", sha('a'))).unwrap_err(),
            Error::BadLine { line: 1 }
        );
        assert!(matches!(
            parse(&format!("{}  ../x\n", sha('a'))),
            Err(Error::Escaping { .. })
        ));
        assert!(matches!(
            parse(&format!("{}  /etc/x\n", sha('a'))),
            Err(Error::Escaping { .. })
        ));
        assert!(matches!(
            parse(&format!("{}  x\n{}  x\n", sha('a'), sha('b'))),
            Err(Error::Duplicate { .. })
        ));
        assert_eq!(parse("xyz  a\n").unwrap_err(), Error::BadLine { line: 1 });
        assert!(matches!(
            parse(&format!("{}  a/./b\n", sha('a'))),
            Err(Error::Escaping { .. })
        ));
    }

    #[test]
    fn choosing_refuses_unknown_names_with_the_reference_sentences() {
        let v = validated();
        let bundle = |b: &str| Selection::Bundle(b.into());
        assert_eq!(
            choose(&v, &bundle("nope"), "codex")
                .unwrap_err()
                .to_string(),
            "unknown bundle: nope"
        );
        assert_eq!(
            choose(&v, &bundle("solo"), "vim").unwrap_err().to_string(),
            "unknown host: vim (expected one of claude-code, codex)"
        );
        assert_eq!(
            choose(&v, &Selection::Modules(vec!["ghost".into()]), "codex")
                .unwrap_err()
                .to_string(),
            "unknown module: ghost"
        );
        let mut v2 = v.clone();
        v2.modules[0]
            .hosts
            .insert("codex".into(), "unsupported".into());
        assert_eq!(
            choose(&v2, &bundle("solo"), "codex")
                .unwrap_err()
                .to_string(),
            "bundle solo requires operator-kit, unsupported on codex"
        );
        let ok = choose(&v, &bundle("reliable-coding"), "codex").unwrap();
        assert_eq!(ok.len(), v.bundles["reliable-coding"].modules.len());
    }

    #[test]
    fn codex_copies_skills_where_codex_looks_for_them() {
        let copies = copies(
            "codex",
            "lane-kit",
            &[
                entry("skills/lanes/SKILL.md", 'a'),
                entry("hooks/x.sh", 'b'),
            ],
        )
        .unwrap();
        let targets: Vec<&str> = copies.iter().map(|c| c.target.as_str()).collect();
        assert_eq!(
            targets,
            [
                ".agents/hpp/lane-kit/skills/lanes/SKILL.md",
                ".agents/skills/hpp-lane-kit-lanes/SKILL.md",
                ".agents/hpp/lane-kit/hooks/x.sh"
            ]
        );
        let claude = super::copies("claude-code", "lane-kit", &[entry("hooks/x.sh", 'b')]).unwrap();
        assert_eq!(claude[0].target, ".claude/hpp/lane-kit/hooks/x.sh");
        assert_eq!(action(&claude[0], None), Action::Create);
        assert_eq!(action(&claude[0], Some(&sha('b'))), Action::Unchanged);
        assert_eq!(action(&claude[0], Some(&sha('c'))), Action::Conflict);
    }

    #[test]
    fn the_wiring_names_each_hook_script_under_the_host_layout_with_the_host() {
        let v = validated();
        let chosen = choose(&v, &Selection::Bundle("solo".into()), "claude-code").unwrap();
        let wiring = wiring(&v, "claude-code", &chosen).unwrap();
        assert_eq!(
            wiring["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "\"$CLAUDE_PROJECT_DIR\"/.claude/hpp/operator-kit/hooks/policy-gate.sh claude-code"
        );
        assert!(
            host_matrix(&v).starts_with("| module | Claude Code | Codex CLI |\n|---|---|---|\n")
        );
    }

    /// Every `(event, matcher, command)` of a wiring block.
    fn entries(wiring: &Value) -> Vec<(String, Option<String>, String)> {
        let mut out = Vec::new();
        for (event, list) in wiring["hooks"].as_object().unwrap() {
            for entry in list.as_array().unwrap() {
                for hook in entry["hooks"].as_array().unwrap() {
                    out.push((
                        event.clone(),
                        entry.get("matcher").map(|m| m.as_str().unwrap().to_owned()),
                        hook["command"].as_str().unwrap().to_owned(),
                    ));
                }
            }
        }
        out
    }

    #[test]
    fn codex_wiring_names_scripts_from_the_top_level_and_leaves_out_events_codex_lacks() {
        let v = validated();
        let events = |host: &str| {
            let chosen = choose(&v, &Selection::Bundle("reliable-coding".into()), host).unwrap();
            entries(&wiring(&v, host, &chosen).unwrap())
        };
        let codex = events("codex");
        assert!(!codex.is_empty());
        assert!(codex.iter().all(|(event, _, command)| {
            CODEX_EVENTS.contains(&event.as_str())
                && command.starts_with("\"$(git rev-parse --show-toplevel)\"/.agents/hpp/")
        }));
        assert!(
            events("claude-code")
                .iter()
                .any(|(event, _, _)| event == "PostToolUseFailure"),
            "Claude Code keeps the event Codex lacks"
        );
    }

    #[test]
    fn codex_wiring_passes_codex_and_each_tool_event_carries_its_declared_matcher() {
        let v = validated();
        for (host, territory) in [
            ("claude-code", "Edit|Write|NotebookEdit"),
            ("codex", "apply_patch"),
        ] {
            let chosen = choose(&v, &Selection::Bundle("reliable-coding".into()), host).unwrap();
            let all = entries(&wiring(&v, host, &chosen).unwrap());
            assert!(
                all.iter()
                    .all(|(_, _, c)| c.ends_with(&format!(".sh {host}"))),
                "{all:?}"
            );
            let matcher_of = |script: &str, event: &str| {
                all.iter()
                    .find(|(e, _, c)| e == event && c.contains(script))
                    .unwrap_or_else(|| panic!("{script} on {event}"))
                    .1
                    .clone()
            };
            assert_eq!(
                matcher_of("policy-gate.sh", "PreToolUse").as_deref(),
                Some("Bash")
            );
            assert_eq!(
                matcher_of("territory-guard.sh", "PreToolUse").as_deref(),
                Some(territory)
            );
            // Claude Code calls its tools by names a matcher can list, so the two PostToolUse
            // hooks start only after the tools that can fail or move a lane (issue 30); Codex's
            // names for its tools in hooks are not pinned down, so Codex keeps every tool.
            let post = (host == "claude-code").then_some("Bash|Edit|Write|NotebookEdit");
            assert_eq!(
                matcher_of("gotcha-record.sh", "PostToolUse").as_deref(),
                post
            );
            if host == "claude-code" {
                assert_eq!(
                    matcher_of("gotcha-record.sh", "PostToolUseFailure").as_deref(),
                    post
                );
            }
            for event in ["SessionStart", "Stop", "PreCompact"] {
                assert!(
                    all.iter()
                        .filter(|(e, _, _)| e == event)
                        .all(|(_, m, _)| m.is_none()),
                    "{event} takes no matcher"
                );
            }
        }
        let chosen = choose(&v, &Selection::Bundle("solo".into()), "codex").unwrap();
        assert_eq!(
            wiring(&v, "codex", &chosen).unwrap()["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "\"$(git rev-parse --show-toplevel)\"/.agents/hpp/operator-kit/hooks/policy-gate.sh codex"
        );
    }

    #[test]
    fn control_a_matcher_never_lands_on_an_event_without_tools_and_follows_the_declaration() {
        let mut v = validated();
        let gate = v
            .hooks
            .iter_mut()
            .find(|h| h.id == "operator-kit/loop-gate")
            .unwrap();
        gate.matcher.insert("claude-code".into(), "Bash".into());
        // Every tool hook of the bundle declares no matcher now (the policy gate, the secret
        // guard): none may appear.
        for hook in v
            .hooks
            .iter_mut()
            .filter(|h| h.module == "operator-kit" && h.events.iter().any(|e| e == "PreToolUse"))
        {
            hook.matcher.clear();
        }
        let chosen = choose(&v, &Selection::Bundle("solo".into()), "claude-code").unwrap();
        let all = entries(&wiring(&v, "claude-code", &chosen).unwrap());
        assert!(all.iter().all(|(_, m, _)| m.is_none()), "{all:?}");
    }

    #[test]
    fn claude_code_gets_skills_and_agents_where_it_discovers_them() {
        let files = [
            entry("skills/hpp-loop/SKILL.md", 'a'),
            entry("skills/hpp-loop/ref/notes.md", 'b'),
            entry("agents/lens-deletion.md", 'c'),
            entry("hooks/policy-gate.sh", 'd'),
        ];
        let targets: Vec<String> = copies("claude-code", "operator-kit", &files)
            .unwrap()
            .into_iter()
            .map(|c| c.target)
            .collect();
        assert_eq!(
            targets,
            [
                ".claude/hpp/operator-kit/skills/hpp-loop/SKILL.md",
                ".claude/skills/hpp-loop/SKILL.md",
                ".claude/hpp/operator-kit/skills/hpp-loop/ref/notes.md",
                ".claude/skills/hpp-loop/ref/notes.md",
                ".claude/hpp/operator-kit/agents/lens-deletion.md",
                ".claude/agents/lens-deletion.md",
                ".claude/hpp/operator-kit/hooks/policy-gate.sh",
            ]
        );
    }

    #[test]
    fn control_only_skill_directories_and_top_level_agent_files_are_placed_for_discovery() {
        let files = [
            entry("skills/loose.md", 'a'),
            entry("agents/notes.txt", 'b'),
            entry("agents/nested/x.md", 'c'),
            entry("skillset/x/SKILL.md", 'd'),
        ];
        let claude = copies("claude-code", "m", &files).unwrap();
        assert_eq!(claude.len(), files.len(), "{claude:?}");
        let codex = copies("codex", "m", &[entry("agents/lens.md", 'e')]).unwrap();
        assert_eq!(codex.len(), 1, "Codex has no subagent directory: {codex:?}");
    }

    proptest::proptest! {
        #[test]
        fn rendering_then_parsing_gives_back_the_sorted_inventory(
            files in proptest::collection::btree_map("[a-z]{1,6}(/[a-z0-9_-][a-z0-9._-]{0,7}){0,2}", "[0-9a-f]{64}", 1..12)
        ) {
            let entries: Vec<Entry> = files.iter().rev().map(|(p, s)| Entry { path: p.clone(), sha256: s.clone() }).collect();
            let parsed = parse(&render(&entries)).unwrap();
            let mut sorted = entries.clone();
            sorted.sort();
            proptest::prop_assert_eq!(parsed, sorted);
        }
    }
}
