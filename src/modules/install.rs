//! The install workflow: resolve the modules for a host, verify each module directory against
//! its `CHECKSUMS.txt`, plan the copies into the target, and (on `--apply`) copy only files that
//! are absent, re-checking every byte against the inventory. Reads the module directories and
//! the target; writes only new files in the target, and only in [`apply`].

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::files;
use super::{Action, CHECKSUMS_FILE, Chosen, Copy, Selection};
use crate::manifest::Validated;
use crate::record::sha256_hex;

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
    /// The hook wiring to paste.
    pub wiring: Value,
    #[serde(skip)]
    sources: Vec<PathBuf>,
    #[serde(skip)]
    target_dir: PathBuf,
}

impl Plan {
    /// Counts the files per action: (create, unchanged, conflict).
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |a: Action| self.files.iter().filter(|f| f.action == a).count();
        (
            count(Action::Create),
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
/// `source_root` (the manifest's directory; `None` for the built-in manifest).
pub fn plan(
    validated: &Validated,
    selection: &Selection,
    host: &str,
    source_root: Option<&Path>,
    target: &Path,
    shown_target: &str,
) -> Result<Plan, Error> {
    let chosen = super::choose(validated, selection, host)?;
    if !target.is_dir() {
        return Err(Error::Target(shown_target.to_owned()));
    }
    let mut modules = Vec::new();
    let mut copies = Vec::new();
    let mut sources = Vec::new();
    for module in &chosen {
        let dir = source_root.map(|r| r.join(&module.path));
        let (checksums, listed) = match &dir {
            Some(dir) if dir.is_dir() => inventory(dir)?,
            _ => ("not-available".to_owned(), Vec::new()),
        };
        for copy in super::copies(host, &module.id, &listed)? {
            let existing = files::sha256_of(&target.join(&copy.target))?;
            let action = super::action(&copy, existing.as_deref());
            copies.push(PlannedCopy { copy, action });
            sources.push(dir.clone().unwrap_or_default());
        }
        modules.push(PlannedModule {
            chosen: module.clone(),
            checksums,
            files: listed.len(),
        });
    }
    Ok(Plan {
        bundle: selection.label().to_owned(),
        host: host.to_owned(),
        target: shown_target.to_owned(),
        capabilities: super::capability_table(validated, &chosen),
        wiring: super::wiring(validated, host, &chosen)?,
        modules,
        files: copies,
        sources,
        target_dir: target.to_owned(),
    })
}

/// Reads and verifies a module directory: its checksum status and the files it lists.
pub fn inventory(dir: &Path) -> Result<(String, Vec<super::Entry>), Error> {
    let Ok(text) = std::fs::read_to_string(dir.join(CHECKSUMS_FILE)) else {
        return Ok(("no-checksums".to_owned(), Vec::new()));
    };
    let listed = match super::parse(&text) {
        Ok(listed) => listed,
        Err(e) => return Ok((format!("failed: {e}"), Vec::new())),
    };
    let verification = super::verify(&listed, &files::scan(dir)?);
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
    let mut written = 0;
    for (planned, source) in plan.files.iter().zip(&plan.sources) {
        if planned.action != Action::Create {
            continue;
        }
        let from = source.join(&planned.copy.source);
        let bytes = std::fs::read(&from).map_err(|e| files::Error::Io {
            path: from.clone(),
            source: e,
        })?;
        if sha256_hex(&bytes) != planned.copy.sha256 {
            return Err(Error::Changed(planned.copy.source.clone()));
        }
        let to = plan.target_dir.join(&planned.copy.target);
        files::write_new(&to, &bytes)?;
        // Keep the source's mode, so a hook script stays executable where the host runs it.
        if let Ok(meta) = std::fs::metadata(&from) {
            std::fs::set_permissions(&to, meta.permissions()).map_err(|e| files::Error::Io {
                path: to.clone(),
                source: e,
            })?;
        }
        written += 1;
    }
    Ok(written)
}
