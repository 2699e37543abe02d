//! The shell of [`crate::modules`]: walking a module directory (on disk, or the copy embedded in
//! the binary), hashing its files, and copying verified files into a workspace without ever
//! replacing a different file.

use std::path::{Path, PathBuf};

use super::{CHECKSUMS_FILE, Entry, embedded};
use hpp_core::record::sha256_hex;

/// Why a directory could not be read or a file could not be placed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a path failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A module directory holds a symbolic link, which an inventory cannot pin.
    #[error("{}: a module may not hold symbolic links", path.display())]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// A file's path is not UTF-8, so no inventory line can name it.
    #[error("{}: a module file name must be UTF-8", path.display())]
    NotUtf8 {
        /// The path.
        path: PathBuf,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

/// Lists every regular file under `dir` (except `CHECKSUMS.txt` at its root) with its sha256,
/// sorted by path.
pub fn scan(dir: &Path) -> Result<Vec<Entry>, Error> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for item in std::fs::read_dir(&current).map_err(io(&current))? {
            let item = item.map_err(io(&current))?;
            let path = item.path();
            let kind = item.file_type().map_err(io(&path))?;
            if kind.is_symlink() {
                return Err(Error::Symlink { path });
            }
            if kind.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path
                .strip_prefix(dir)
                .expect("a walked path is under its root")
                .to_str()
                .ok_or_else(|| Error::NotUtf8 { path: path.clone() })?
                .replace('\\', "/");
            if relative == CHECKSUMS_FILE {
                continue;
            }
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            out.push(Entry {
                path: relative,
                sha256: sha256_hex(&bytes),
            });
        }
    }
    out.sort();
    Ok(out)
}

/// Returns the sha256 of the file at `path`, or `None` when nothing is there.
pub fn sha256_of(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(sha256_hex(&bytes))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Io {
            path: path.to_owned(),
            source: e,
        }),
    }
}

/// Writes `bytes` to a new file at `target` (creating its directories); fails if it exists.
pub fn write_new(target: &Path, bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)
        .map_err(io(target))?;
    file.write_all(bytes).map_err(io(target))?;
    file.sync_all().map_err(io(target))
}

/// Replaces `target` with `bytes` atomically: a new file beside it, flushed, renamed over it.
pub fn replace(target: &Path, bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io(dir))?;
    file.write_all(bytes).map_err(io(target))?;
    file.as_file().sync_all().map_err(io(target))?;
    file.persist(target).map_err(|e| Error::Io {
        path: target.to_owned(),
        source: e.error,
    })?;
    Ok(())
}

/// Where module directories are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin<'a> {
    /// Beside a manifest on disk: module paths are taken from this directory.
    Dir(&'a Path),
    /// The copy compiled into the binary, for the built-in manifest.
    Embedded,
}

impl<'a> Origin<'a> {
    /// Returns the origin for a manifest's directory: on disk when there is one, the embedded
    /// copy for the built-in manifest (`None`).
    pub fn of(manifest_root: Option<&'a Path>) -> Self {
        manifest_root.map_or(Self::Embedded, Self::Dir)
    }

    /// Names the origin in reports: `beside the manifest` or `built-in`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Dir(_) => "beside the manifest",
            Self::Embedded => "built-in",
        }
    }

    /// Tells whether the module directory `module` (a path relative to the manifest) is there.
    pub fn has_module(&self, module: &str) -> bool {
        match self {
            Self::Dir(root) => root.join(module).is_dir(),
            Self::Embedded => embedded::has_dir(module),
        }
    }

    /// Tells whether the module directory `module` holds the file `relative`.
    pub fn has_file(&self, module: &str, relative: &str) -> bool {
        match self {
            Self::Dir(root) => root.join(module).join(relative).is_file(),
            Self::Embedded => embedded::file(module, relative).is_some(),
        }
    }

    /// Reads the file `relative` of the module directory `module`.
    pub fn read(&self, module: &str, relative: &str) -> Result<Vec<u8>, Error> {
        match self {
            Self::Dir(root) => {
                let path = root.join(module).join(relative);
                std::fs::read(&path).map_err(io(&path))
            }
            Self::Embedded => embedded::file(module, relative)
                .map(|f| f.bytes.to_vec())
                .ok_or_else(|| Error::Io {
                    path: Path::new(module).join(relative),
                    source: std::io::ErrorKind::NotFound.into(),
                }),
        }
    }

    /// Lists the files of the module directory `module` (except its `CHECKSUMS.txt`) with their
    /// sha256, sorted by path.
    pub fn scan(&self, module: &str) -> Result<Vec<Entry>, Error> {
        match self {
            Self::Dir(root) => scan(&root.join(module)),
            Self::Embedded => Ok(embedded::scan(module)),
        }
    }

    /// Gives the file `to`, just copied from `relative` in `module`, the mode of its source, so
    /// a hook script stays executable where the host runs it.
    pub fn keep_mode(&self, module: &str, relative: &str, to: &Path) -> Result<(), Error> {
        let permissions = match self {
            Self::Dir(root) => match std::fs::metadata(root.join(module).join(relative)) {
                Ok(meta) => meta.permissions(),
                Err(_) => return Ok(()),
            },
            Self::Embedded => {
                let executable = embedded::file(module, relative).is_some_and(|f| f.executable);
                if !executable {
                    return Ok(());
                }
                executable_permissions(to)?
            }
        };
        std::fs::set_permissions(to, permissions).map_err(io(to))
    }
}

#[cfg(unix)]
fn executable_permissions(path: &Path) -> Result<std::fs::Permissions, Error> {
    use std::os::unix::fs::PermissionsExt;
    let mut permissions = std::fs::metadata(path).map_err(io(path))?.permissions();
    permissions.set_mode(permissions.mode() | 0o111);
    Ok(permissions)
}

#[cfg(not(unix))]
fn executable_permissions(path: &Path) -> Result<std::fs::Permissions, Error> {
    Ok(std::fs::metadata(path).map_err(io(path))?.permissions())
}
