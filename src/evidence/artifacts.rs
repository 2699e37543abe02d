//! Artifact patterns and the before/after stamps that decide whether a run produced a file.
//!
//! An artifact counts only if this run created or changed it: files matching a pattern are
//! stamped (size, modification time in nanoseconds) before the run, and after it a file whose
//! stamp did not change goes to `unchanged` and does not satisfy its pattern. Paths are resolved
//! (symlinks followed) before they are trusted: a pattern whose directory leads outside the
//! workspace or into `.git` is refused, and a file that resolves there is never read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use globset::{GlobBuilder, GlobMatcher};

use super::bundle::is_inside;

/// A file's stamp: size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    size: u64,
    mtime_ns: u128,
}

/// One artifact pattern, validated.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The pattern as the user gave it.
    pub given: String,
    matcher: GlobMatcher,
    base: PathBuf,
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Empty, absolute, with `..` or a drive letter.
    #[error("artifact pattern {0:?} must be a non-empty relative path inside the workspace")]
    Outside(String),
    /// The pattern's directory resolves outside the workspace, or into `.git` (a symlink).
    #[error(
        "artifact pattern {0:?} resolves outside the workspace or into .git (through a symlink): artifacts must be files of the workspace"
    )]
    Escapes(String),
    /// Not a glob.
    #[error("artifact pattern {pattern:?} is not a valid glob: {detail}")]
    BadGlob {
        /// The pattern.
        pattern: String,
        /// The parser's message.
        detail: String,
    },
}

/// Validates patterns: relative, inside, valid globs; a trailing `**` becomes `**/*`.
pub fn parse(raw: &[String]) -> Result<Vec<Pattern>, Error> {
    raw.iter()
        .map(|given| {
            if !is_inside(given.trim()) {
                return Err(Error::Outside(given.clone()));
            }
            let mut glob = given.trim().trim_start_matches("./").to_owned();
            if glob.ends_with("**") {
                glob.push_str("/*");
            }
            let matcher = GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .map_err(|e| Error::BadGlob {
                    pattern: given.clone(),
                    detail: e.kind().to_string(),
                })?
                .compile_matcher();
            let base: PathBuf = glob
                .split('/')
                .take_while(|part| !part.contains(['*', '?', '[', '{']))
                .collect();
            // The last literal component may be the file itself.
            let base = if base.as_os_str().len() == glob.len() {
                base.parent().map(Path::to_path_buf).unwrap_or_default()
            } else {
                base
            };
            Ok(Pattern {
                given: given.clone(),
                matcher,
                base,
            })
        })
        .collect()
}

/// Refuses a pattern whose literal directory, resolved with symlinks followed, is outside the
/// workspace at `root` or inside its `.git`. A directory that does not exist yet is fine: the
/// run may create it, and each file is checked again when it is read.
pub fn check_resolved(root: &Path, patterns: &[Pattern]) -> Result<(), Error> {
    match patterns
        .iter()
        .find(|p| !crate::paths::resolves_inside(root, &p.base))
    {
        Some(escaping) => Err(Error::Escapes(escaping.given.clone())),
        None => Ok(()),
    }
}

/// Stamps every file in the workspace that matches one of `patterns`.
pub fn stamp(root: &Path, patterns: &[Pattern]) -> BTreeMap<String, Stamp> {
    let mut out = BTreeMap::new();
    for pattern in patterns {
        for (path, stamp) in matching(root, pattern) {
            out.insert(path, stamp);
        }
    }
    out
}

/// Returns the files matching `pattern`, with their stamps, sorted by path.
pub fn matching(root: &Path, pattern: &Pattern) -> Vec<(String, Stamp)> {
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut found = Vec::new();
    let mut stack = vec![root.join(&pattern.base)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            if file_type.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
                continue;
            }
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel = rel.to_string_lossy().replace('\\', "/");
            if !pattern.matcher.is_match(&rel) {
                continue;
            }
            // Resolved, not read lexically: a file under a symlinked directory is where the
            // link leads.
            if !path
                .canonicalize()
                .is_ok_and(|target| crate::paths::is_inside_resolved(&canonical_root, &target))
            {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            found.push((
                rel,
                Stamp {
                    size: meta.len(),
                    mtime_ns,
                },
            ));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("writable");
        std::fs::write(path, text).expect("writable");
    }

    #[test]
    fn patterns_match_within_their_base_and_stars_do_not_cross_directories() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "out/a.html", "a");
        write(dir.path(), "out/deep/b.html", "b");
        write(dir.path(), "other/c.html", "c");
        let p = parse(&["out/*.html".into()]).expect("valid");
        let names: Vec<_> = matching(dir.path(), &p[0])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["out/a.html"]);
        let p = parse(&["out/**".into()]).expect("valid");
        let names: Vec<_> = matching(dir.path(), &p[0])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["out/a.html", "out/deep/b.html"]);
        let p = parse(&["out/a.html".into()]).expect("valid");
        assert_eq!(matching(dir.path(), &p[0]).len(), 1);
    }

    #[test]
    fn control_patterns_outside_the_workspace_are_refused() {
        for bad in ["", "/tmp/x", "../x", "out/../../x"] {
            assert!(
                matches!(parse(&[bad.into()]), Err(Error::Outside(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn control_a_pattern_through_a_symlink_out_of_the_workspace_is_refused() {
        let outside = tempfile::tempdir().expect("a temporary directory");
        write(outside.path(), "id_ed25519", "private");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join("out")).expect("writable");
        std::os::unix::fs::symlink(outside.path(), root.join("k")).expect("a symlink");
        std::os::unix::fs::symlink(outside.path().join("id_ed25519"), root.join("out/key"))
            .expect("a symlink");
        let escaping = parse(&["k/id_ed25519".into()]).expect("lexically fine");
        assert_eq!(
            check_resolved(root, &escaping),
            Err(Error::Escapes("k/id_ed25519".into()))
        );
        // Not even a file linked in from outside, inside an honest directory, is read.
        let out = parse(&["out/*".into(), "new/dir/*.txt".into()]).expect("valid");
        assert_eq!(check_resolved(root, &out), Ok(()));
        assert!(matching(root, &out[0]).is_empty());
    }

    #[test]
    fn a_rewritten_file_changes_its_stamp() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "out/a", "a");
        let p = parse(&["out/*".into()]).expect("valid");
        let before = stamp(dir.path(), &p);
        assert_eq!(stamp(dir.path(), &p), before);
        write(dir.path(), "out/a", "longer");
        assert_ne!(stamp(dir.path(), &p), before);
    }
}
