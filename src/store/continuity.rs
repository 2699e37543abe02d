//! Store support for continuity (see [`crate::continuity`]): one handoff log per lane at
//! `refs/hpp/handoffs/<lane>`, each commit's tree holding `handoff.json`, moved by CAS; and the
//! working tree's `git status --porcelain` a handoff records.

use std::process::Command;

use super::refs::HANDOFFS_PREFIX;
use super::{CommitId, Error, NewRecord, Store};

/// The blob name of a handoff in its commit's tree.
pub const HANDOFF_FILE: &str = "handoff.json";

/// How many times an append is retried after losing a CAS race to another writer.
const APPEND_ATTEMPTS: usize = 8;

impl Store {
    /// Appends one handoff to the lane's log (retrying a lost race: handoffs do not name their
    /// parent, so a retry writes the same record on the new tip).
    pub fn append_handoff(
        &self,
        lane: &str,
        bytes: &[u8],
        message: &str,
    ) -> Result<CommitId, Error> {
        self.append_retrying(
            &format!("{HANDOFFS_PREFIX}{lane}"),
            HANDOFF_FILE,
            bytes,
            message,
        )
    }

    /// Appends a record to the log `name`, retrying a lost CAS race a few times.
    pub(crate) fn append_retrying(
        &self,
        name: &str,
        file: &str,
        bytes: &[u8],
        message: &str,
    ) -> Result<CommitId, Error> {
        let record = NewRecord {
            file,
            bytes,
            message,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let tip = self.tip(name)?.map(CommitId::from);
            match self.append(name, tip.as_ref(), &record) {
                Err(Error::Moved { .. } | Error::Busy { .. }) if attempt < APPEND_ATTEMPTS => {}
                other => return other,
            }
        }
    }

    /// Reads a lane's handoffs, oldest first, with the commit of each.
    pub fn handoffs(&self, lane: &str) -> Result<Vec<(CommitId, Vec<u8>)>, Error> {
        let name = format!("{HANDOFFS_PREFIX}{lane}");
        let chain = self.read_chain(&name, HANDOFF_FILE)?;
        chain
            .links
            .into_iter()
            .map(|link| match link.payload {
                Some(bytes) => Ok((link.commit, bytes)),
                None => Err(Error::Corrupt {
                    name: name.clone(),
                    detail: format!("{} has no {HANDOFF_FILE}", link.commit),
                }),
            })
            .collect()
    }

    /// Lists the lanes that have a handoff log.
    pub fn handoff_lanes(&self) -> Result<Vec<String>, Error> {
        Ok(self
            .list(HANDOFFS_PREFIX)?
            .into_iter()
            .filter_map(|(name, _)| name.strip_prefix(HANDOFFS_PREFIX).map(str::to_owned))
            .collect())
    }

    /// Returns `git status --porcelain` of the worktree, one line per path (untracked files
    /// listed one by one); empty for a bare repository. Runs git, which reads the index as it is.
    pub fn worktree_porcelain(&self) -> Result<Vec<String>, Error> {
        let Some(root) = self.workdir() else {
            return Ok(Vec::new());
        };
        let out = super::git_cli::stdout(
            Command::new("git")
                .arg("--git-dir")
                .arg(self.repo.git_dir())
                .arg("--work-tree")
                .arg(root)
                .args(["status", "--porcelain=v1", "--untracked-files=all"])
                .current_dir(root),
            "git status",
        )?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_owned)
            .collect())
    }
}
