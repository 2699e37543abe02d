//! `Ctx`: what every command may need, resolved once: the working directory, the store (opened
//! on first use), the manifest and the default loop.

use std::cell::OnceCell;
use std::path::PathBuf;

use super::exit::CliError;
use crate::manifest::{self, Manifest};
use crate::store::Store;
use crate::store::refs::LoopId;

/// The command context.
pub struct Ctx {
    cwd: PathBuf,
    manifest_path: Option<PathBuf>,
    store: OnceCell<Store>,
}

impl Ctx {
    /// Builds a context from the process's working directory and the global `--manifest`.
    pub fn new(manifest_path: Option<PathBuf>) -> Result<Self, CliError> {
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::refused(format!("cannot read the working directory: {e}")))?;
        Ok(Self {
            cwd,
            manifest_path,
            store: OnceCell::new(),
        })
    }

    /// Returns the working directory.
    pub fn cwd(&self) -> &std::path::Path {
        &self.cwd
    }

    /// Returns the repository, opening it on first use (`GIT_DIR` honoured).
    pub fn store(&self) -> Result<&Store, CliError> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let store = Store::discover(&self.cwd)?;
        Ok(self.store.get_or_init(|| store))
    }

    /// Returns the manifest in force: `--manifest FILE`, else `hpp.manifest.json` at the root
    /// of the worktree, else the one compiled into the binary.
    pub fn manifest(&self) -> Result<Manifest, CliError> {
        let path = match &self.manifest_path {
            Some(path) => Some(path.clone()),
            None => self
                .store()?
                .workdir()
                .map(|root| root.join(manifest::FILE_NAME))
                .filter(|path| path.is_file()),
        };
        match path {
            None => Ok(Manifest::built_in()),
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    CliError::refused(format!("cannot read manifest {}: {e}", path.display()))
                })?;
                Ok(Manifest::parse(&text, &path.display().to_string())?)
            }
        }
    }

    /// Returns the loop to act on: `--loop`, else the current branch's name.
    pub fn loop_id(&self, explicit: Option<&LoopId>) -> Result<LoopId, CliError> {
        if let Some(id) = explicit {
            return Ok(id.clone());
        }
        match self.store()?.current_branch()? {
            Some(branch) => branch.parse().map_err(CliError::refused),
            None => Err(
                CliError::refused("HEAD is detached, so there is no default loop")
                    .hint("name the loop with --loop NAME"),
            ),
        }
    }
}
