//! Installing the gates into the hooks directory git really uses: the client's `pre-push` and
//! the server's `pre-receive` ([`Gate`]).
//!
//! Plan first: [`plan`] says what would be written; [`apply`] writes it. An existing hook of the
//! same name that is not ours is kept, renamed `<hook>.hpp-chained`, and our hook runs it first
//! with the same arguments and input. [`status`] tells whether the gate is really wired: a
//! missing, non-executable or unreachable hook is a silent gate, which looks like a passing one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use hpp_store::Store;

/// The client's hook script, as shipped in `hooks/pre-push`.
pub const PRE_PUSH: &str = include_str!("../hooks/pre-push");
/// The server's hook script, as shipped in `hooks/pre-receive`.
pub const PRE_RECEIVE: &str = include_str!("../hooks/pre-receive");

/// Which gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    /// The client's gate: `pre-push`, skipped by `git push --no-verify`.
    PrePush,
    /// The server's gate: `pre-receive`, in the repository others push to.
    PreReceive,
}

impl Gate {
    /// Returns the hook's file name.
    pub fn hook_name(self) -> &'static str {
        match self {
            Gate::PrePush => "pre-push",
            Gate::PreReceive => "pre-receive",
        }
    }

    /// Returns the script we install.
    pub fn script(self) -> &'static str {
        match self {
            Gate::PrePush => PRE_PUSH,
            Gate::PreReceive => PRE_RECEIVE,
        }
    }

    /// Returns the line that marks a hook as ours.
    pub fn marker(self) -> &'static str {
        match self {
            Gate::PrePush => "git-hpp: pre-push gate",
            Gate::PreReceive => "git-hpp: pre-receive gate",
        }
    }

    /// Returns where a replaced hook is kept.
    pub fn chained(self) -> String {
        format!("{}.hpp-chained", self.hook_name())
    }
}

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
    #[error("{} already exists: move it away before installing over another hook", path.display())]
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
    /// Which gate.
    pub gate: Gate,
    /// The hooks directory git uses (`core.hooksPath` respected).
    pub hooks_dir: PathBuf,
    /// The hook file.
    pub hook: PathBuf,
    /// What is there now.
    pub existing: Existing,
    /// The steps `--apply` performs, in words; empty when nothing needs doing.
    pub steps: Vec<String>,
}

/// Plans the installation of `gate`.
pub fn plan(store: &Store, gate: Gate) -> Result<Plan, Error> {
    let hooks_dir = store.hooks_dir();
    let hook = hooks_dir.join(gate.hook_name());
    let existing = existing(&hook, gate)?;
    let chained = hooks_dir.join(gate.chained());
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
        gate,
        hooks_dir,
        hook,
        existing,
        steps,
    })
}

fn existing(hook: &Path, gate: Gate) -> Result<Existing, Error> {
    match std::fs::read_to_string(hook) {
        Ok(text) if text == gate.script() => Ok(Existing::Current),
        Ok(text) if text.contains(gate.marker()) => Ok(Existing::Outdated),
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
        let chained = plan.hooks_dir.join(plan.gate.chained());
        std::fs::rename(&plan.hook, &chained).map_err(io(&chained))?;
    }
    let tmp = plan
        .hooks_dir
        .join(format!("{}.hpp-tmp", plan.gate.hook_name()));
    std::fs::write(&tmp, plan.gate.script()).map_err(io(&tmp))?;
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

/// Inspects the hook of `gate` git would run. `path_dirs` is the `PATH` the hook will see.
pub fn status(store: &Store, path_dirs: &[PathBuf], gate: Gate) -> Result<Status, Error> {
    let hooks_dir = store.hooks_dir();
    let hook = hooks_dir.join(gate.hook_name());
    let existing = existing(&hook, gate)?;
    let executable = is_executable(&hook);
    let chained = hooks_dir.join(gate.chained()).exists();
    let git_hpp_on_path = path_dirs.iter().any(|d| is_executable(&d.join("git-hpp")));
    let mut problems = Vec::new();
    let install = match gate {
        Gate::PrePush => "git hpp hooks install --apply",
        Gate::PreReceive => "git hpp hooks install --server --apply",
    };
    match existing {
        Existing::None => problems.push(format!(
            "no {} hook at {}: run `{install}`",
            gate.hook_name(),
            hook.display()
        )),
        Existing::Other => problems.push(format!(
            "{} is another tool's hook, not the gate: run `{install}` to chain it",
            hook.display()
        )),
        Existing::Outdated => problems.push(format!(
            "the gate is from another version of git-hpp: run `{install}`"
        )),
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
