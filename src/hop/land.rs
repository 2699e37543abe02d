//! `hop land` and `hop undo`: the two ways the accepted chain grows.

use std::time::Duration;

use super::{
    CheckId, CommitId, Error, Hop, Kind, Landing, Loaded, Parent, Role, State, StateId, TreeId,
    Undone, accepted_state, invalid_ref_name, landing_state, moved, new_state_id, now_rfc3339,
    stamp,
};
use hpp_core::hop::{overlap, states};
use hpp_store::retry::{self, Attempt};
use hpp_store::{self as store, refs};

/// Where `--branch` moves: the ref, its tip now, and the worktree it is checked out in.
struct BranchPlan {
    name: String,
    tip: CommitId,
    checked_out: Option<std::path::PathBuf>,
}

impl Hop<'_> {
    pub(super) fn tree_of(loaded: &Loaded) -> Result<TreeId, Error> {
        TreeId::parse(&loaded.state.tree).ok_or_else(|| Error::BadTree(loaded.state.id.to_string()))
    }

    /// Plans the move of `--branch` to the accepted commit: refuses a branch the accepted
    /// commit would not fast-forward, and one checked out in a worktree with local changes
    /// (naming the files). A branch checked out in a clean worktree is fast-forwarded there,
    /// files and index with it, as `git merge --ff-only` would.
    fn check_branch(&self, branch: &str, head: &Loaded) -> Result<BranchPlan, Error> {
        let name = format!("refs/heads/{branch}");
        if branch.is_empty() || branch.starts_with('-') || invalid_ref_name(branch) {
            return Err(Error::InvalidBranch(branch.to_owned()));
        }
        let mut checked_out = None;
        for wt in self.store.list_worktrees()? {
            if wt.branch.as_deref() == Some(name.as_str()) {
                let files: Vec<String> = self
                    .store
                    .worktree_status(&wt.path)?
                    .into_iter()
                    .filter(|e| e.is_modified() || e.is_staged())
                    .map(|e| e.path)
                    .collect();
                if !files.is_empty() {
                    return Err(Error::BranchDirty {
                        branch: branch.to_owned(),
                        path: wt.path.display().to_string(),
                        files,
                    });
                }
                checked_out = Some(wt.path);
            }
        }
        let tip = self
            .store
            .tip(&name)?
            .ok_or_else(|| Error::InvalidBranch(branch.to_owned()))?;
        if !self.store.is_ancestor(&tip, &head.commit)? {
            return Err(Error::NotFastForward {
                branch: branch.to_owned(),
                tip: tip.to_string(),
            });
        }
        Ok(BranchPlan {
            name,
            tip,
            checked_out,
        })
    }

    /// The commit a new accepted state is written on: the head's, except on the initial
    /// accepted state, whose commit only records where hop began. There the user's own commit
    /// it was made from is the parent, so the accepted chain starts at the user's commit and a
    /// branch fast-forwarded to it gains only the landed states' commits.
    pub(super) fn chain_parent(&self, head: &Loaded) -> Result<Vec<CommitId>, Error> {
        if head.state.parent(Role::CanonicalParent).is_some() {
            return Ok(vec![head.commit.clone()]);
        }
        let (_, parents, _) = self.store.read_commit(&head.commit)?;
        Ok(parents)
    }

    /// `hop land`: lands a proposal on the accepted head.
    ///
    /// Blocks when the proposal's changed paths collide with paths accepted since its base
    /// ([`overlap::overlapping`]); composes with a three-way tree merge; validates the composed
    /// tree in a disposable worktree when `validation` is given (a failure records an `F_`
    /// state and leaves the head); then moves the accepted ref by compare-and-swap. A lost
    /// swap recomposes on the new head (by the store's one retry rule) unless `expect_head`
    /// pins the head, in which case it fails with [`Error::HeadMoved`].
    pub fn land(
        &self,
        proposal_id: &StateId,
        branch: Option<&str>,
        validation: Option<&[String]>,
        expect_head: Option<&StateId>,
        timeout: Duration,
    ) -> Result<Landing, Error> {
        if let Some(argv) = validation {
            super::refuse_bad_command(argv)?;
        }
        let proposal = self.load(proposal_id)?;
        if proposal.kind != Kind::Proposal {
            return Err(Error::WrongKind {
                id: proposal_id.to_string(),
                expected: "proposal",
                found: proposal.kind,
            });
        }
        let base_id = proposal
            .state
            .parent(Role::CanonicalAnchor)
            .cloned()
            .ok_or_else(|| Error::NoAttempt(proposal_id.to_string()))?;
        let base = self.load(&base_id)?;
        let base_tree = Self::tree_of(&base)?;
        let proposal_tree = Self::tree_of(&proposal)?;
        let changed = self.store.tree_changes(&base_tree, &proposal_tree)?;
        let landed = retry::retry(|attempt| {
            let retries = attempt - 1;
            let head = self.accepted()?;
            if let Some(expected) = expect_head
                && *expected != head.state.id
            {
                return Err(Error::HeadMoved {
                    name: refs::HOP_ACCEPTED.to_owned(),
                    detail: format!("expected {expected}, found {}", head.state.id),
                });
            }
            let head_tree = Self::tree_of(&head)?;
            let accepted_since = self.store.tree_changes(&base_tree, &head_tree)?;
            let paths = overlap::overlapping(changed.paths(), accepted_since.paths());
            if !paths.is_empty() {
                return Err(Error::Overlap {
                    proposal: proposal_id.to_string(),
                    base: base_id.to_string(),
                    paths,
                });
            }
            let composed = match self.store.merge_disjoint_trees(
                &base_tree,
                (&head_tree, &accepted_since),
                (&proposal_tree, &changed),
            )? {
                Ok(tree) => tree,
                Err(paths) => {
                    return Err(Error::Conflict {
                        proposal: proposal_id.to_string(),
                        paths,
                    });
                }
            };
            let branch_plan = branch.map(|b| self.check_branch(b, &head)).transpose()?;
            let state = landing_state(
                &proposal.state,
                proposal_id,
                &head.state.id,
                composed.to_string(),
                Some(
                    proposal
                        .state
                        .summary
                        .clone()
                        .unwrap_or_else(|| format!("land {proposal_id}")),
                ),
            );
            let candidate = self.write(&state, &self.chain_parent(&head)?)?;
            let validation_run = match validation {
                None => None,
                Some(argv) => {
                    let (ms, e) = stamp();
                    let check_id = CheckId::new(ms, e);
                    let dir = self.hop_dir.join("integration").join(check_id.as_str());
                    let env = vec![
                        ("HOP_ROOT".into(), self.root.display().to_string()),
                        ("HOP_STATE_ID".into(), state.id.to_string()),
                        (
                            "HOP_TASK_ID".into(),
                            state
                                .task
                                .as_ref()
                                .map(ToString::to_string)
                                .unwrap_or_default(),
                        ),
                        (
                            "HOP_ATTEMPT_ID".into(),
                            state
                                .attempt
                                .as_ref()
                                .map(ToString::to_string)
                                .unwrap_or_default(),
                        ),
                    ];
                    let out = self.run_in_worktree(&candidate.commit, &dir, argv, &env, timeout)?;
                    if out.out.0 != Some(0) {
                        let failed = self.record_failed(&proposal, &head, &composed)?;
                        let run = self.record_check(
                            &check_id,
                            &failed.state.id,
                            &failed,
                            proposal.state.attempt.as_ref(),
                            argv,
                            out,
                            "land",
                        )?;
                        return Ok(Attempt::Done(Landing::ValidationFailed {
                            failed,
                            validation: run,
                        }));
                    }
                    Some(self.record_check(
                        &check_id,
                        &state.id,
                        &candidate,
                        proposal.state.attempt.as_ref(),
                        argv,
                        out,
                        "land",
                    )?)
                }
            };
            match self
                .store
                .move_ref(refs::HOP_ACCEPTED, &head.commit, &candidate.commit)
            {
                Ok(()) => {}
                Err(store::Error::Moved { .. } | store::Error::Busy { .. })
                    if expect_head.is_none() =>
                {
                    return Ok(Attempt::Lost);
                }
                Err(e) => return Err(moved(e)),
            }
            // The accepted ref moved first: a crash here leaves the state unpinned, which
            // `hop doctor --repair` re-derives from the chain.
            self.pin(&candidate)?;
            let branch_done = match branch_plan {
                Some(plan) => {
                    match &plan.checked_out {
                        Some(worktree) => self
                            .store
                            .fast_forward_checkout(
                                worktree,
                                &plan.name,
                                &plan.tip,
                                &candidate.commit,
                            )
                            .map_err(moved)?,
                        None => self
                            .store
                            .move_ref(&plan.name, &plan.tip, &candidate.commit)
                            .map_err(moved)?,
                    }
                    branch.map(str::to_owned)
                }
                None => None,
            };
            Ok(Attempt::Done(Landing::Landed {
                accepted: candidate,
                previous: head.state.id,
                proposal: proposal_id.clone(),
                retries,
                validation: validation_run,
                branch: branch_done,
            }))
        })?;
        landed.ok_or_else(|| Error::HeadMoved {
            name: refs::HOP_ACCEPTED.to_owned(),
            detail: format!("it kept moving: gave up after {} attempts", retry::ATTEMPTS),
        })
    }

    /// Records the `F_` state of a failed landing validation: the composed tree, after the
    /// proposal, composed on `head`. The attempt's head moves to it if the proposal is still
    /// the attempt's head.
    fn record_failed(
        &self,
        proposal: &Loaded,
        head: &Loaded,
        composed: &TreeId,
    ) -> Result<Loaded, Error> {
        let extra = vec![Parent {
            role: Role::IntegrationParent,
            state: head.state.id.clone(),
        }];
        let attempt = self.attempt_of(proposal)?;
        let current = self.attempt_head(&attempt)?;
        if current.commit == proposal.commit {
            match self.append(
                proposal,
                Kind::Failed,
                composed,
                extra.clone(),
                std::slice::from_ref(&head.commit),
                Some("final validation failed".into()),
            ) {
                Ok(failed) => return Ok(failed),
                Err(Error::HeadMoved { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        // The attempt moved on: record the failure without moving its head.
        let mut parents = vec![Parent {
            role: Role::RunParent,
            state: proposal.state.id.clone(),
        }];
        parents.extend(extra);
        let state = State {
            id: new_state_id(Kind::Failed),
            task: proposal.state.task.clone(),
            attempt: proposal.state.attempt.clone(),
            base: proposal.state.base.clone(),
            agent: proposal.state.agent.clone(),
            tree: composed.to_string(),
            parents,
            prompt_digest: None,
            summary: Some("final validation failed".into()),
            created_at: now_rfc3339(),
        };
        let loaded = self.write(&state, &[proposal.commit.clone(), head.commit.clone()])?;
        self.pin(&loaded)?;
        Ok(loaded)
    }

    /// `hop undo`: records a new accepted state whose tree is the one before the last landing
    /// not yet undone (forward-only: the chain only grows).
    pub fn undo(&self) -> Result<Undone, Error> {
        let head = self.accepted()?;
        let plan = states::undo_plan(&head.state, |id| self.load(id).ok().map(|l| l.state))?;
        let restores = self.load(&plan.restores)?;
        let state = accepted_state(
            restores.state.tree.clone(),
            vec![
                Parent {
                    role: Role::CanonicalParent,
                    state: head.state.id.clone(),
                },
                Parent {
                    role: Role::Reverts,
                    state: plan.reverts.clone(),
                },
                Parent {
                    role: Role::Restores,
                    state: plan.restores.clone(),
                },
            ],
            format!("undo {}", plan.reverts),
        );
        let loaded = self.write(&state, std::slice::from_ref(&head.commit))?;
        self.store
            .move_ref(refs::HOP_ACCEPTED, &head.commit, &loaded.commit)
            .map_err(moved)?;
        self.pin(&loaded)?;
        Ok(Undone {
            accepted: loaded,
            reverts: plan.reverts,
            restores: plan.restores,
        })
    }
}
