//! Installing the pre-push gate into the hooks directory git really uses.
//!
//! Plan first: [`plan`] says what would be written; [`apply`] writes it. An existing pre-push
//! hook that is not ours is kept, renamed `pre-push.hpp-chained`, and our hook runs it first
//! with the same arguments and input. [`status`] tells whether the gate is really wired: a
//! missing, non-executable or unreachable hook is a silent gate, which looks like a passing one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use hpp_store::Store;

/// The hook script, as shipped in `hooks/pre-push`.
pub const PRE_PUSH: &str = include_str!("../hooks/pre-push");
/// The line that marks a hook as ours.
pub const MARKER: &str = "git-hpp: pre-push gate";
/// Where a replaced hook is kept.
pub const CHAINED: &str = "pre-push.hpp-chained";

/// Why installing failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// A chained hook already exists, so replacing another hook would lose one.
    #[error("{} already exists: move it away before installing over another pre-push hook", path.display())]
    ChainTaken {
        /// The chained hook's path.
        path: PathBuf,
    },
}

/// What is in place of the pre-push hook now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Existing {
    /// Nothing.
    None,
    /// Our gate, as this version ships it.
    Current,
    /// Our gate, from another version.
    Outdated,
    /// Someone else's hook.
    Other,
}

/// The plan for `hooks install`.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// The hooks directory git uses (`core.hooksPath` respected).
    pub hooks_dir: PathBuf,
    /// The hook file.
    pub hook: PathBuf,
    /// What is there now.
    pub existing: Existing,
    /// The steps `--apply` performs, in words; empty when nothing needs doing.
    pub steps: Vec<String>,
}

/// Plans the installation.
pub fn plan(store: &Store) -> Result<Plan, Error> {
    let hooks_dir = store.hooks_dir();
    let hook = hooks_dir.join("pre-push");
    let existing = existing(&hook)?;
    let chained = hooks_dir.join(CHAINED);
    let mut steps = Vec::new();
    match existing {
        Existing::Current => {}
        Existing::None | Existing::Outdated => {
            steps.push(format!("write {} (mode 755)", hook.display()))
        }
        Existing::Other => {
            if chained.exists() {
                return Err(Error::ChainTaken { path: chained });
            }
            steps.push(format!(
                "move the existing hook to {}; it will still run first",
                chained.display()
            ));
            steps.push(format!("write {} (mode 755)", hook.display()));
        }
    }
    Ok(Plan {
        hooks_dir,
        hook,
        existing,
        steps,
    })
}

fn existing(hook: &Path) -> Result<Existing, Error> {
    match std::fs::read_to_string(hook) {
        Ok(text) if text == PRE_PUSH => Ok(Existing::Current),
        Ok(text) if text.contains(MARKER) => Ok(Existing::Outdated),
        Ok(_) => Ok(Existing::Other),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Existing::None),
        // A hook that is not UTF-8 is somebody's binary: chain it.
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Ok(Existing::Other),
        Err(source) => Err(Error::Io {
            path: hook.to_owned(),
            source,
        }),
    }
}

/// Performs a plan.
pub fn apply(plan: &Plan) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    if plan.steps.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(&plan.hooks_dir).map_err(io(&plan.hooks_dir))?;
    if plan.existing == Existing::Other {
        let chained = plan.hooks_dir.join(CHAINED);
        std::fs::rename(&plan.hook, &chained).map_err(io(&chained))?;
    }
    let tmp = plan.hooks_dir.join("pre-push.hpp-tmp");
    std::fs::write(&tmp, PRE_PUSH).map_err(io(&tmp))?;
    set_executable(&tmp).map_err(io(&tmp))?;
    std::fs::rename(&tmp, &plan.hook).map_err(io(&plan.hook))?;
    Ok(())
}

#[cfg(unix)]
fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Whether the gate is wired.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The hook file git would run.
    pub hook: PathBuf,
    /// What is there.
    pub existing: Existing,
    /// Whether the file is executable.
    pub executable: bool,
    /// Whether a chained hook runs first.
    pub chained: bool,
    /// Whether `git-hpp` is on PATH for the hook to call.
    pub git_hpp_on_path: bool,
    /// Whether all of that holds.
    pub wired: bool,
    /// What is wrong, in sentences.
    pub problems: Vec<String>,
}

/// Inspects the hook git would run. `path_dirs` is the `PATH` the hook will see.
pub fn status(store: &Store, path_dirs: &[PathBuf]) -> Result<Status, Error> {
    let hooks_dir = store.hooks_dir();
    let hook = hooks_dir.join("pre-push");
    let existing = existing(&hook)?;
    let executable = is_executable(&hook);
    let chained = hooks_dir.join(CHAINED).exists();
    let git_hpp_on_path = path_dirs.iter().any(|d| is_executable(&d.join("git-hpp")));
    let mut problems = Vec::new();
    match existing {
        Existing::None => problems.push(format!("no pre-push hook at {}: run `git hpp hooks install --apply`", hook.display())),
        Existing::Other => problems.push(format!("{} is another tool's hook, not the gate: run `git hpp hooks install --apply` to chain it", hook.display())),
        Existing::Outdated => problems.push("the gate is from another version of git-hpp: run `git hpp hooks install --apply`".into()),
        Existing::Current => {}
    }
    if existing != Existing::None && !executable {
        problems.push(format!(
            "{} is not executable, so git skips it",
            hook.display()
        ));
    }
    if !git_hpp_on_path {
        problems.push("git-hpp is not on PATH, so the hook cannot call `git hpp`".into());
    }
    Ok(Status {
        wired: problems.is_empty(),
        hook,
        existing,
        executable,
        chained,
        git_hpp_on_path,
        problems,
    })
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}
