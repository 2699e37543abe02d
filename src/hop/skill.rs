//! `hop skill install`: writes the Hop skill (the protocol instructions an agent host loads)
//! where Claude Code and Codex look for project skills.
//!
//! Claude Code reads `.claude/skills/<name>/SKILL.md`; Codex reads `.agents/skills/<name>/SKILL.md`
//! from the working directory up to the repository root (developers.openai.com/codex/skills,
//! the same place `git hpp install` puts Codex skills). Both take a `SKILL.md` with YAML front
//! matter naming the skill and describing when to use it, so one text serves both.
//!
//! Every target is checked before any is written: a different file already there is refused
//! unless forced, and a symlink or directory in its place is always refused, so a refusal
//! writes nothing. Each file is written whole (a temporary file renamed over it).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where each agent host looks for a project skill named `hop`, relative to the root.
pub const TARGETS: [(&str, &str); 2] = [
    ("claude-code", ".claude/skills/hop/SKILL.md"),
    ("codex", ".agents/skills/hop/SKILL.md"),
];

/// Why the skill was not installed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A different file is already there and `--force` was not given.
    #[error("{} already exists and differs from this hop's skill: pass --force to replace it", path.display())]
    Differs {
        /// The file.
        path: PathBuf,
    },
    /// A symlink or a directory stands where the file would go.
    #[error("{} is a {what}: hop writes the skill only as a plain file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// `symlink` or `directory`.
        what: &'static str,
    },
    /// The filesystem refused.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
}

/// What happened to one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The file did not exist and was written.
    Created,
    /// The file already held exactly this text.
    Unchanged,
    /// A different file was replaced (`--force`).
    Replaced,
}

/// One file of an installation.
#[derive(Debug, Clone, Serialize)]
pub struct Installed {
    /// The agent host that reads it.
    pub host: &'static str,
    /// The file.
    pub path: PathBuf,
    /// What was done.
    pub action: Action,
}

/// What `hop skill install` did.
#[derive(Debug, Clone, Serialize)]
pub struct Installation {
    /// The directory the skill files were written under.
    pub root: PathBuf,
    /// Each file, in [`TARGETS`] order.
    pub files: Vec<Installed>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Decides what to do with `path`: refuses a symlink, a directory, or (without `force`) a
/// different file.
fn plan(path: &Path, text: &str, force: bool) -> Result<Action, Error> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Action::Created),
        Err(e) => return Err(io(path)(e)),
    };
    if meta.file_type().is_symlink() || meta.is_dir() {
        return Err(Error::NotAFile {
            path: path.to_path_buf(),
            what: if meta.is_dir() {
                "directory"
            } else {
                "symlink"
            },
        });
    }
    if std::fs::read(path).map_err(io(path))? == text.as_bytes() {
        Ok(Action::Unchanged)
    } else if force {
        Ok(Action::Replaced)
    } else {
        Err(Error::Differs {
            path: path.to_path_buf(),
        })
    }
}

fn write_whole(path: &Path, text: &str) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io(dir))?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(io(path))?;
    tmp.persist(path).map_err(|e| io(path)(e.error))?;
    Ok(())
}

/// Writes `text` to every [`TARGETS`] file under `root`, after checking them all.
pub fn install(root: &Path, text: &str, force: bool) -> Result<Installation, Error> {
    let mut planned = Vec::new();
    for (host, rel) in TARGETS {
        let path = root.join(rel);
        let action = plan(&path, text, force)?;
        planned.push((host, path, action));
    }
    let mut files = Vec::new();
    for (host, path, action) in planned {
        if action != Action::Unchanged {
            write_whole(&path, text)?;
        }
        files.push(Installed { host, path, action });
    }
    Ok(Installation {
        root: root.to_path_buf(),
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::{Action, Error, install};

    #[test]
    fn installs_then_finds_the_same_text_unchanged() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let first = install(dir.path(), "skill\n", false).expect("installs");
        assert!(first.files.iter().all(|f| f.action == Action::Created));
        let again = install(dir.path(), "skill\n", false).expect("installs");
        assert!(again.files.iter().all(|f| f.action == Action::Unchanged));
        let forced = install(dir.path(), "newer\n", true).expect("installs");
        assert!(forced.files.iter().all(|f| f.action == Action::Replaced));
    }

    #[test]
    fn control_a_different_file_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let codex = dir.path().join(".agents/skills/hop/SKILL.md");
        std::fs::create_dir_all(codex.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&codex, "mine\n").expect("write");
        let err = install(dir.path(), "skill\n", false).expect_err("refused");
        assert!(matches!(err, Error::Differs { .. }), "{err}");
        assert!(!dir.path().join(".claude").exists(), "nothing written");
        assert_eq!(std::fs::read_to_string(&codex).expect("read"), "mine\n");
    }
}
