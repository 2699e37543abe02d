//! A diverged accepted chain: two machines landed proposals on one accepted state between
//! fetches. The other side's landings are landed again on this side's head, oldest first, under
//! `hop land`'s rules (a landing whose changed paths overlap paths this side accepted since
//! its base is refused; the rest compose by a three-way tree merge). Each re-landing is a new
//! accepted state naming the same proposal; the last one also has the other side's head as a
//! git parent, so both heads are reachable from the result and the other machine's next
//! fetch is a fast-forward. A landing whose proposal this side already landed (the other side
//! re-landed it first) is not landed twice.

use std::collections::BTreeSet;

use super::{Error, Hop, Loaded, Parent, Role, StateId, accepted_state, landing_state};
use hpp_store::{CommitId, refs};

impl Hop<'_> {
    /// Re-lands the landings of `theirs` (the other machine's accepted head) that `ours` lacks
    /// on `ours`, and moves the accepted ref from `ours` to the result by compare-and-swap.
    /// `Ok(Err(reason))` when they cannot be re-landed (an overlap, a conflict, an undo, two
    /// separate `hop init`s); nothing moved then.
    pub fn reland(
        &self,
        ours: &CommitId,
        theirs: &CommitId,
    ) -> Result<Result<CommitId, String>, Error> {
        let head = self.load_commit(ours)?;
        let other = self.load_commit(theirs)?;
        let other_id = other.state.id.clone();
        let mine = self.history(&head)?;
        let our_states: BTreeSet<&StateId> = mine.iter().map(|l| &l.state.id).collect();
        let our_proposals: BTreeSet<&StateId> = mine
            .iter()
            .filter_map(|l| l.state.parent(Role::ProposalParent))
            .collect();
        // Their states since the last one this side has, oldest first.
        let mut since = Vec::new();
        let mut current = other;
        loop {
            if our_states.contains(&current.state.id) {
                break;
            }
            let Some(parent) = current.state.parent(Role::CanonicalParent).cloned() else {
                return Ok(Err(format!(
                    "the two accepted chains share no state ({} began on its own): \
                     `hop init` ran on both machines",
                    current.state.id
                )));
            };
            since.push(current);
            current = self.load(&parent)?;
        }
        since.reverse();
        let mut tip = head;
        let mut written: Vec<Loaded> = Vec::new();
        for landing in &since {
            let Some(proposal) = landing.state.parent(Role::ProposalParent) else {
                if landing.state.parent(Role::Reverts).is_some() {
                    return Ok(Err(format!(
                        "the other side's {} undoes a landing: undo it here by hand \
                         (`git hpp hop undo`) or land again",
                        landing.state.id
                    )));
                }
                // A join of two chains written by another machine: nothing to land.
                continue;
            };
            if our_proposals.contains(proposal) {
                continue;
            }
            let parent_id = landing
                .state
                .parent(Role::CanonicalParent)
                .cloned()
                .expect("walked through its canonical parent");
            let base = self.load(&parent_id)?;
            let base_tree = Self::tree_of(&base)?;
            let landed_tree = Self::tree_of(landing)?;
            let tip_tree = Self::tree_of(&tip)?;
            let changed = self.store.tree_changes(&base_tree, &landed_tree)?;
            let accepted_since = self.store.tree_changes(&base_tree, &tip_tree)?;
            let paths =
                hpp_core::hop::overlap::overlapping(changed.paths(), accepted_since.paths());
            if !paths.is_empty() {
                return Ok(Err(format!(
                    "the other side's landing {} of {proposal} overlaps what this side accepted \
                     since: {}",
                    landing.state.id,
                    paths.join(", ")
                )));
            }
            let composed = match self.store.merge_disjoint_trees(
                &base_tree,
                (&tip_tree, &accepted_since),
                (&landed_tree, &changed),
            )? {
                Ok(tree) => tree,
                Err(paths) => {
                    return Ok(Err(format!(
                        "the other side's landing {} of {proposal} conflicts with this side's: {}",
                        landing.state.id,
                        paths.join(", ")
                    )));
                }
            };
            let state = landing_state(
                &landing.state,
                proposal,
                &tip.state.id,
                composed.to_string(),
                landing.state.summary.clone(),
            );
            tip = self.write(&state, &self.chain_parent(&tip)?)?;
            written.push(tip.clone());
        }
        // The other head joins as a git parent of one last state, so it stays reachable and the
        // other machine fast-forwards. With nothing left to land, a join state of the same tree.
        let state = accepted_state(
            tip.state.tree.clone(),
            vec![Parent {
                role: Role::CanonicalParent,
                state: tip.state.id.clone(),
            }],
            format!("joined another machine's accepted chain at {other_id}"),
        );
        let mut git_parents = self.chain_parent(&tip)?;
        git_parents.push(theirs.clone());
        let joined = self.write(&state, &git_parents)?;
        written.push(joined.clone());
        self.store
            .move_ref(refs::HOP_ACCEPTED, ours, &joined.commit)?;
        for loaded in &written {
            self.pin(loaded)?;
        }
        Ok(Ok(joined.commit))
    }
}
