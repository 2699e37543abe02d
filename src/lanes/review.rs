//! The review guard's fingerprint (CONCEPTS.md "maker and checker"): git's view of a worktree,
//! read from the store, turned into the digests [`hpp_core::review_guard`] compares. Contents are
//! kept as sha256 digests; configuration values never, only a digest per key. Refs under
//! `refs/hpp/` are left out for a checker, which may record evidence and attestations, and kept
//! for a House Session's seats, which record nothing ([`RefScope`]).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use hpp_core::record::sha256_hex;
use hpp_core::review_guard::Fingerprint;
use hpp_store::{self as store, Store, refs};

/// The digest of a file's bytes (a symlink's target) and its executable bit; `None` if unreadable.
fn file_digest(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        return Some(format!(
            "link:{}",
            sha256_hex(target.as_os_str().as_encoded_bytes())
        ));
    }
    if meta.is_dir() {
        return Some("dir".to_owned());
    }
    let bytes = std::fs::read(path).ok()?;
    let exec = meta.permissions().mode() & 0o111 != 0;
    Some(format!(
        "{}:{}",
        if exec { "x" } else { "-" },
        sha256_hex(&bytes)
    ))
}

/// Which refs a fingerprint covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefScope {
    /// Every ref outside `refs/hpp/` (a checker may record evidence and attestations).
    OutsideHpp,
    /// Every ref, `refs/hpp/` included (a House Session's seat records nothing).
    Every,
}

/// Fingerprints git's view of the repository's worktree now, with the refs of `scope`.
pub fn fingerprint(store: &Store, scope: RefScope) -> Result<Fingerprint, store::Error> {
    let facts = store.worktree_facts()?;
    let status = facts
        .status
        .iter()
        .map(|e| format!("{}{} {}", e.staged, e.worktree, e.path))
        .collect();
    let untracked = facts
        .status
        .iter()
        .filter(|e| e.is_untracked())
        .map(|e| {
            let digest =
                file_digest(&facts.root.join(&e.path)).unwrap_or_else(|| "unreadable".into());
            (e.path.clone(), digest)
        })
        .collect();
    let refs = facts
        .refs
        .into_iter()
        .filter(|(name, _)| scope == RefScope::Every || !name.starts_with(refs::PREFIX))
        .collect();
    let config = facts
        .config
        .iter()
        .map(|(name, bytes)| (name.clone(), sha256_hex(bytes)))
        .collect();
    let mut hooks = std::collections::BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir(&facts.hooks_dir) {
        for entry in dir.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let digest = file_digest(&entry.path()).unwrap_or_else(|| "unreadable".into());
            hooks.insert(name, digest);
        }
    }
    let info_exclude = std::fs::read(&facts.info_exclude)
        .ok()
        .map(|b| sha256_hex(&b));
    Ok(Fingerprint {
        head: facts.head,
        symbolic_head: facts.symbolic_head,
        status,
        diff: sha256_hex(&facts.diff),
        untracked,
        refs,
        worktrees: facts.worktrees,
        config,
        hooks,
        info_exclude,
        other_worktrees: std::collections::BTreeMap::new(),
    })
}

/// Fingerprints the whole repository for a House Session's seats, which record nothing and
/// write nowhere: [`fingerprint`] with every ref, plus each of the repository's other worktrees
/// (a lane's, a hop workspace's) as one digest of its HEAD, status, diff and untracked
/// contents, so a seat that writes into another worktree is seen too.
pub fn fingerprint_every_worktree(store: &Store) -> Result<Fingerprint, store::Error> {
    let mut fp = fingerprint(store, RefScope::Every)?;
    for linked in store.linked_worktree_facts()? {
        let mut facts = String::new();
        facts.push_str(&format!(
            "head {}\nsymbolic {}\n",
            linked.head.as_deref().unwrap_or("-"),
            linked.symbolic_head.as_deref().unwrap_or("-")
        ));
        for entry in &linked.status {
            facts.push_str(&format!(
                "{}{} {}\n",
                entry.staged, entry.worktree, entry.path
            ));
            if entry.is_untracked() {
                let digest = file_digest(&linked.root.join(&entry.path))
                    .unwrap_or_else(|| "unreadable".into());
                facts.push_str(&format!("  {digest}\n"));
            }
        }
        facts.push_str(&format!("diff {}\n", sha256_hex(&linked.diff)));
        fp.other_worktrees.insert(
            linked.root.display().to_string(),
            sha256_hex(facts.as_bytes()),
        );
    }
    Ok(fp)
}
