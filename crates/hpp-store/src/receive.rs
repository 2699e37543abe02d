//! Reading a push before it is accepted: what a `pre-receive` gate needs.
//!
//! While `git receive-pack` runs the `pre-receive` hook, the pushed objects sit in a quarantine
//! directory (`GIT_QUARANTINE_PATH`) that git reads through its environment and gix does not, and
//! the pushed refs have not moved yet. [`Store::receiving`] makes both visible: the store reads
//! objects through a private alternates file listing the quarantine and the repository's own
//! object directories (outside the repository, removed when the store is dropped), and every
//! read of a ref sees the push's updates as if they had landed. Nothing is written.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::{Error, Store};

/// One ref update of a push: the ref and its new id (`None` for a deletion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingUpdate {
    /// The full ref name.
    pub name: String,
    /// The new id, hex; `None` when the push deletes the ref.
    pub new: Option<String>,
}

impl Store {
    /// A second handle on this repository that reads the same refs, for staging moves not yet
    /// made ([`Store::stage`]): a fetch decides every record's move against what it decided
    /// before, then makes them all in one transaction ([`Store::move_refs`]).
    pub fn view(&self) -> Store {
        Store {
            repo: self.repo.clone(),
            pending: self.pending.clone(),
            _quarantine: None,
            git_refs: self.git_refs,
            opened: self.opened,
            synced: std::sync::Arc::clone(&self.synced),
            set_commits: std::sync::Arc::clone(&self.set_commits),
            fresh: std::sync::Arc::clone(&self.fresh),
            loose: std::sync::Arc::clone(&self.loose),
            handed: std::sync::Arc::clone(&self.handed),
        }
    }

    /// Tells whether reads through this handle see moves not made (a fetch's staging, a push
    /// being received): nothing learnt through it is kept, since the moves may never land.
    pub fn is_provisional(&self) -> bool {
        !self.pending.is_empty() || self._quarantine.is_some()
    }

    /// Makes every read of `name` through this handle return `new` (`None`: gone), as if the
    /// move had been made. Nothing is written.
    pub fn stage(&mut self, name: &str, new: Option<&super::CommitId>) {
        self.pending
            .insert(name.to_owned(), new.map(super::CommitId::oid));
    }

    /// Sees a push being received: objects in `quarantine` (and in `alternates`, as git lists
    /// them to the hook) become readable, and `updates` are what every ref read returns.
    pub fn receiving(
        mut self,
        quarantine: Option<&Path>,
        alternates: &[PathBuf],
        updates: &[PendingUpdate],
    ) -> Result<Self, Error> {
        if let Some(quarantine) = quarantine {
            let dir = tempfile::Builder::new()
                .prefix("hpp-receive-")
                .tempdir()
                .map_err(|source| Error::Io {
                    what: "the quarantine's alternates".into(),
                    source,
                })?;
            let objects = dir.path().join("objects");
            let info = objects.join("info");
            std::fs::create_dir_all(&info).map_err(|source| Error::Io {
                what: info.display().to_string(),
                source,
            })?;
            let mut listed = vec![
                quarantine.to_owned(),
                self.repo.objects.store_ref().path().to_owned(),
            ];
            listed.extend(alternates.iter().cloned());
            let text: String = listed
                .iter()
                .map(|p| format!("{}\n", p.display()))
                .collect();
            std::fs::write(info.join("alternates"), text).map_err(|source| Error::Io {
                what: "the quarantine's alternates".into(),
                source,
            })?;
            let handle =
                gix::odb::at(&objects, self.repo.object_hash()).map_err(|source| Error::Io {
                    what: objects.display().to_string(),
                    source,
                })?;
            self.repo.objects = gix::OdbHandle::from(handle);
            self._quarantine = Some(dir);
        }
        for update in updates {
            let new =
                match &update.new {
                    None => None,
                    Some(hex) => Some(ObjectId::from_hex(hex.as_bytes()).map_err(|e| {
                        Error::InvalidRefName {
                            name: update.name.clone(),
                            reason: format!("{hex} is not an object id: {e}"),
                        }
                    })?),
                };
            self.pending.insert(update.name.clone(), new);
        }
        Ok(self)
    }
}
