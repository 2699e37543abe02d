//! Workspace paths resolved before they are trusted: a path the user names (an artifact
//! pattern's directory, a lane's territory) is followed through symlinks, and must stay in the
//! worktree and out of `.git`, whatever it looks like lexically.

use std::path::Path;

/// Tells whether `rel`, under the worktree `root`, resolves inside the worktree and outside its
/// `.git` once symlinks are followed. Only the part that exists is resolved (its deepest
/// existing ancestor): a directory not created yet is where its path says.
pub fn resolves_inside(root: &Path, rel: &Path) -> bool {
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut probe = root.join(rel);
    let resolved = loop {
        if let Ok(resolved) = probe.canonicalize() {
            break resolved;
        }
        if !probe.pop() || !probe.starts_with(root) {
            return true;
        }
    };
    is_inside_resolved(&canonical_root, &resolved)
}

/// Tells whether an already resolved path is inside the resolved `root` and outside its `.git`.
pub fn is_inside_resolved(canonical_root: &Path, resolved: &Path) -> bool {
    resolved.starts_with(canonical_root) && !resolved.starts_with(canonical_root.join(".git"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_a_link_out_of_the_worktree_or_into_git_does_not_resolve_inside() {
        let outside = tempfile::tempdir().expect("a temporary directory");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).expect("writable");
        std::fs::create_dir_all(root.join("src")).expect("writable");
        std::os::unix::fs::symlink(outside.path(), root.join("out")).expect("a symlink");
        std::os::unix::fs::symlink(root.join(".git"), root.join("g")).expect("a symlink");
        assert!(resolves_inside(root, Path::new("src")));
        assert!(resolves_inside(root, Path::new("src/not/yet")));
        assert!(!resolves_inside(root, Path::new("out")));
        assert!(!resolves_inside(root, Path::new("out/deeper/not/yet")));
        assert!(!resolves_inside(root, Path::new("g/hooks")));
    }
}
