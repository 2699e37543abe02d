//! The install workflow: resolve the modules for a host, verify each module directory against
//! its `CHECKSUMS.txt`, plan the copies into the target, and (on `--apply`) copy only files that
//! are absent, re-checking every byte against the inventory. Module directories are read beside
//! the manifest in force or, for the built-in manifest, from the copy embedded in the binary
//! ([`files::Origin`]); both verify the same way. Reads the module directories and the target;
//! writes only new files in the target, and only in [`apply`].

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::files::{self, Origin};
use super::{Action, CHECKSUMS_FILE, Chosen, Copy, Selection};
use hpp_core::manifest::Validated;
use hpp_core::record::sha256_hex;

/// Why an install could not be planned or applied.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The selection, host or a module was refused.
    #[error(transparent)]
    Choose(#[from] super::Error),
    /// A file could not be read or written.
    #[error(transparent)]
    Files(#[from] files::Error),
    /// The target is not a directory.
    #[error("target is not a directory: {0}")]
    Target(String),
    /// `--apply` on a module whose files are not at hand or do not verify.
    #[error("module {module} cannot be installed: {why}")]
    Unverified {
        /// The module.
        module: String,
        /// Its checksum status.
        why: String,
    },
    /// `--plugin` on a host that has no plugins of this shape.
    #[error("--plugin writes a Claude Code plugin; host {0} has none (leave --plugin out)")]
    PluginHost(String),
    /// A source file changed between the plan and the copy.
    #[error("{0} changed while it was being installed")]
    Changed(String),
}

/// One chosen module, with the state of its files.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedModule {
    /// The module and its integration on the host.
    #[serde(flatten)]
    pub chosen: Chosen,
    /// `verified`, `failed: ...`, `no-checksums` or `not-available`.
    pub checksums: String,
    /// Where its files come from: `beside the manifest` or `built-in` (embedded in the binary).
    pub source: &'static str,
    /// How many files the inventory lists.
    pub files: usize,
}

/// One planned copy and what it does to the target.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedCopy {
    /// The copy.
    #[serde(flatten)]
    pub copy: Copy,
    /// What it does.
    pub action: Action,
    /// The bytes of a file the install writes itself (the plugin's manifests), not a module's.
    #[serde(skip)]
    generated: Option<Vec<u8>>,
    /// For a merge: the sha256 of the file it replaces, checked again before it is replaced.
    #[serde(skip)]
    replaces: Option<String>,
}

/// A whole install plan.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The bundle's name, or `custom`.
    pub bundle: String,
    /// The host.
    pub host: String,
    /// The target directory, as given.
    pub target: String,
    /// The modules, in selection order.
    pub modules: Vec<PlannedModule>,
    /// Every file, in order.
    pub files: Vec<PlannedCopy>,
    /// The capability table of the chosen modules' hooks.
    pub capabilities: Vec<Value>,
    /// The hook wiring to paste (for `--plugin`: the plugin's hooks.json, written with it).
    pub wiring: Value,
    /// Whether the modules go into a Claude Code plugin ([`super::PLUGIN_DIR`]).
    pub plugin: bool,
    /// The module directory (as the manifest declares it) of each file, in order.
    #[serde(skip)]
    sources: Vec<String>,
    /// The manifest's directory, `None` for the embedded copy.
    #[serde(skip)]
    source_root: Option<PathBuf>,
    #[serde(skip)]
    target_dir: PathBuf,
}

impl Plan {
    /// Counts the files per action: (create or merge, unchanged, conflict).
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |a: Action| self.files.iter().filter(|f| f.action == a).count();
        (
            count(Action::Create) + count(Action::Merge),
            count(Action::Unchanged),
            count(Action::Conflict),
        )
    }

    /// Tells whether every module's files are at hand and verify.
    pub fn verified(&self) -> bool {
        self.modules.iter().all(|m| m.checksums == "verified")
    }
}

/// Plans an install of `selection` on `host` into `target`, reading module files from
/// `source_root` (the manifest's directory; `None` for the built-in manifest, whose modules are
/// embedded in the binary).
pub fn plan(
    validated: &Validated,
    selection: &Selection,
    host: &str,
    source_root: Option<&Path>,
    target: &Path,
    shown_target: &str,
    plugin: bool,
) -> Result<Plan, Error> {
    let chosen = super::choose(validated, selection, host)?;
    if !target.is_dir() {
        return Err(Error::Target(shown_target.to_owned()));
    }
    if plugin && host != "claude-code" {
        return Err(Error::PluginHost(host.to_owned()));
    }
    let origin = Origin::of(source_root);
    let mut modules = Vec::new();
    let mut copies = Vec::new();
    let mut sources = Vec::new();
    for module in &chosen {
        let (checksums, listed) = if origin.has_module(&module.path) {
            inventory(origin, &module.path)?
        } else {
            ("not-available".to_owned(), Vec::new())
        };
        let placed = if plugin {
            super::plugin_copies(&module.id, &listed)
        } else {
            super::copies(host, &module.id, &listed)?
        };
        for copy in placed {
            let existing = files::sha256_of(&target.join(&copy.target))?;
            let action = super::action(&copy, existing.as_deref());
            copies.push(PlannedCopy {
                copy,
                action,
                generated: None,
                replaces: None,
            });
            sources.push(module.path.clone());
        }
        modules.push(PlannedModule {
            chosen: module.clone(),
            checksums,
            source: origin.label(),
            files: listed.len(),
        });
    }
    let wiring = if plugin {
        let hooks = super::plugin_hooks(validated, &chosen)?;
        let (manifest, marketplace) = super::plugin_manifests(env!("CARGO_PKG_VERSION"));
        for (path, value) in [
            (
                format!("{}/.claude-plugin/plugin.json", super::PLUGIN_DIR),
                &manifest,
            ),
            (format!("{}/hooks/hooks.json", super::PLUGIN_DIR), &hooks),
            (".claude-plugin/marketplace.json".to_owned(), &marketplace),
        ] {
            let bytes = hpp_core::record::pretty_json(value).into_bytes();
            let copy = Copy {
                module: super::PLUGIN_NAME.to_owned(),
                source: "(generated)".to_owned(),
                target: path,
                sha256: sha256_hex(&bytes),
            };
            let existing = files::sha256_of(&target.join(&copy.target))?;
            let action = super::action(&copy, existing.as_deref());
            copies.push(PlannedCopy {
                copy,
                action,
                generated: Some(bytes),
                replaces: None,
            });
            sources.push(String::new());
        }
        hooks
    } else {
        let wiring = super::wiring(validated, host, &chosen)?;
        if host == "codex" {
            // Codex reads <repo>/.codex/hooks.json (its hooks documentation), the same shape,
            // and runs them only in a trusted project once each is trusted (`codex exec` asks
            // for neither and skips them silently): written, not pasted. An
            // existing file is kept (a conflict), and the block is printed to merge by hand.
            let path = target.join(".codex/hooks.json");
            let existing = files::sha256_of(&path)?;
            let (action, value, replaces) = match &existing {
                None => (Action::Create, wiring.clone(), None),
                Some(sha) => {
                    let text = std::fs::read(&path).map_err(|e| files::Error::Io {
                        path: path.clone(),
                        source: e,
                    })?;
                    match serde_json::from_slice::<Value>(&text)
                        .ok()
                        .and_then(|v| merge_hooks(&v, &wiring))
                    {
                        Some((merged, false)) => (Action::Unchanged, merged, None),
                        Some((merged, true)) => (Action::Merge, merged, Some(sha.clone())),
                        None => (Action::Conflict, wiring.clone(), None),
                    }
                }
            };
            let bytes = hpp_core::record::pretty_json(&value).into_bytes();
            copies.push(PlannedCopy {
                copy: Copy {
                    module: super::PLUGIN_NAME.to_owned(),
                    source: "(generated)".to_owned(),
                    target: ".codex/hooks.json".to_owned(),
                    sha256: sha256_hex(&bytes),
                },
                action,
                generated: Some(bytes),
                replaces,
            });
            sources.push(String::new());
        }
        wiring
    };
    Ok(Plan {
        bundle: selection.label().to_owned(),
        host: host.to_owned(),
        target: shown_target.to_owned(),
        capabilities: super::capability_table(validated, &chosen),
        wiring,
        plugin,
        modules,
        files: copies,
        sources,
        source_root: source_root.map(Path::to_owned),
        target_dir: target.to_owned(),
    })
}

/// Reads and verifies the module directory `module` of `origin`: its checksum status and the
/// files it lists.
pub fn inventory(origin: Origin<'_>, module: &str) -> Result<(String, Vec<super::Entry>), Error> {
    if !origin.has_file(module, CHECKSUMS_FILE) {
        return Ok(("no-checksums".to_owned(), Vec::new()));
    }
    let Ok(text) = String::from_utf8(origin.read(module, CHECKSUMS_FILE)?) else {
        return Ok((format!("failed: {CHECKSUMS_FILE} is not UTF-8"), Vec::new()));
    };
    let listed = match super::parse(&text) {
        Ok(listed) => listed,
        Err(e) => return Ok((format!("failed: {e}"), Vec::new())),
    };
    let verification = super::verify(&listed, &origin.scan(module)?);
    if verification.is_intact() {
        Ok(("verified".to_owned(), listed))
    } else {
        Ok((format!("failed: {}", verification.describe()), listed))
    }
}

/// Copies every file the plan creates, after checking that every module verified and each
/// file's bytes still match the inventory. Conflicts and unchanged files are left alone.
/// Returns how many files were written.
pub fn apply(plan: &Plan) -> Result<usize, Error> {
    if let Some(module) = plan.modules.iter().find(|m| m.checksums != "verified") {
        return Err(Error::Unverified {
            module: module.chosen.id.clone(),
            why: module.checksums.clone(),
        });
    }
    let origin = Origin::of(plan.source_root.as_deref());
    let mut written = 0;
    for (planned, module) in plan.files.iter().zip(&plan.sources) {
        let to = plan.target_dir.join(&planned.copy.target);
        if planned.action == Action::Merge {
            // Replaced only if it is still the file the plan read: nothing the user wrote
            // meanwhile is lost.
            if files::sha256_of(&to)? != planned.replaces {
                return Err(Error::Changed(planned.copy.target.clone()));
            }
            let bytes = planned.generated.as_deref().unwrap_or_default();
            files::replace(&to, bytes)?;
            written += 1;
            continue;
        }
        if planned.action != Action::Create {
            continue;
        }
        if let Some(bytes) = &planned.generated {
            files::write_new(&plan.target_dir.join(&planned.copy.target), bytes)?;
            written += 1;
            continue;
        }
        let bytes = origin.read(module, &planned.copy.source)?;
        if sha256_hex(&bytes) != planned.copy.sha256 {
            return Err(Error::Changed(planned.copy.source.clone()));
        }
        files::write_new(&to, &bytes)?;
        origin.keep_mode(module, &planned.copy.source, &to)?;
        written += 1;
    }
    Ok(written)
}

/// Adds to a hooks file (`{"hooks": {event: [entry, ...]}}`) every entry of `wiring` it lacks,
/// keeping everything it holds. Returns the merged document and whether anything was added;
/// `None` when `existing` is not a hooks document.
fn merge_hooks(existing: &Value, wiring: &Value) -> Option<(Value, bool)> {
    let mut merged = existing.clone();
    let events = merged
        .as_object_mut()?
        .entry("hooks")
        .or_insert_with(|| serde_json::json!({}));
    let events = events.as_object_mut()?;
    let mut added = false;
    for (event, entries) in wiring["hooks"].as_object()? {
        let list = events
            .entry(event.clone())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()?;
        for entry in entries.as_array()? {
            if !list.contains(entry) {
                list.push(entry.clone());
                added = true;
            }
        }
    }
    Some((merged, added))
}
