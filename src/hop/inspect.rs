//! `hop checkpoint`, `hop diff`, `hop history` and `hop graph`: capturing an attempt's
//! workspace on demand, and reading the state graph under `refs/hpp/hop/` (states, their parent
//! roles, the accepted chain) without changing it.

use serde::Serialize;

use super::{Error, Hop, Kind, Loaded, Role, StateId, TreeId};
use hpp_store::{PathChange, refs};

/// A checkpoint taken on demand.
#[derive(Debug, Clone, Serialize)]
pub struct Checkpointed {
    /// The new checkpoint state.
    pub state: Loaded,
    /// The attempt head it follows (its run_parent).
    pub after: StateId,
}

/// What `hop diff` compares a state against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Against {
    /// Its parent: an attempt state's run_parent, an accepted state's canonical_parent.
    Parent,
    /// The accepted state its attempt started from (what landing compares).
    Base,
    /// Another state.
    State(StateId),
}

/// One side of a diff.
#[derive(Debug, Clone, Serialize)]
pub struct DiffSide {
    /// The state, or `None` for the empty tree (an initial accepted state has no parent).
    pub state: Option<StateId>,
    /// Its kind.
    pub kind: Option<Kind>,
    /// Its summary, where it has one.
    pub summary: Option<String>,
    /// Its tree.
    pub tree: String,
}

/// The changes between two states.
#[derive(Debug, Clone, Serialize)]
pub struct StateDiff {
    /// How the older side was chosen: `run_parent`, `canonical_parent`, `base`, `state` (given
    /// on the command line) or `empty_tree` (no parent).
    pub against: &'static str,
    /// The older side.
    pub from: DiffSide,
    /// The newer side.
    pub to: DiffSide,
    /// Every changed path (git's name-status, renames paired up).
    pub changes: Vec<PathChange>,
    /// The unified patch.
    pub patch: String,
}

/// The accepted chain.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// The accepted head.
    pub accepted: StateId,
    /// Every accepted state from the head back to the initial one, newest first.
    pub states: Vec<Loaded>,
}

/// One state of the causal graph.
#[derive(Debug, Clone, Serialize)]
pub struct GraphNode {
    /// The state.
    #[serde(flatten)]
    pub loaded: Loaded,
    /// Its summary, or for a prompt the first line of its prompt; `None` when it has neither.
    pub label: Option<String>,
}

/// The causal graph: every pinned state, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct Graph {
    /// The accepted head.
    pub accepted: Option<StateId>,
    /// Every state pinned under `refs/hpp/hop/states/`, oldest first (ids are time-ordered).
    pub states: Vec<GraphNode>,
}

/// Returns the first line of `text`, cut to 72 characters.
fn first_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut out: String = line.chars().take(72).collect();
    if line.chars().count() > 72 {
        out.push('…');
    }
    Some(out)
}

impl Hop<'_> {
    /// `hop checkpoint STATE`: snapshots the live workspace of STATE's attempt as a checkpoint
    /// after the attempt's head, as `hop prompt` and `hop check` do before their own step.
    pub fn checkpoint_now(&self, id: &StateId) -> Result<Checkpointed, Error> {
        let state = self.load(id)?;
        let attempt = self.attempt_of(&state)?;
        let loaded = self.checkpoint(&attempt)?;
        let after = loaded
            .state
            .parent(Role::RunParent)
            .cloned()
            .unwrap_or_else(|| id.clone());
        Ok(Checkpointed {
            state: loaded,
            after,
        })
    }

    fn side(loaded: &Loaded) -> DiffSide {
        DiffSide {
            state: Some(loaded.state.id.clone()),
            kind: Some(loaded.kind),
            summary: loaded.state.summary.clone(),
            tree: loaded.state.tree.clone(),
        }
    }

    fn tree_id(loaded: &Loaded) -> Result<TreeId, Error> {
        TreeId::parse(&loaded.state.tree).ok_or_else(|| Error::BadTree(loaded.state.id.to_string()))
    }

    /// `hop diff`: the changes of state `id` against its parent, its attempt's base, or another
    /// state. A state with no such parent (the initial accepted state) is compared with the
    /// empty tree.
    pub fn diff(&self, id: &StateId, against: &Against) -> Result<StateDiff, Error> {
        let to = self.load(id)?;
        let (role, parent) = match against {
            Against::State(other) => ("state", Some(other.clone())),
            Against::Base => (
                "base",
                match to.kind {
                    Kind::Accepted => to.state.parent(Role::CanonicalParent).cloned(),
                    _ => to.state.base.clone(),
                },
            ),
            Against::Parent => match to.kind {
                Kind::Accepted => (
                    Role::CanonicalParent.name(),
                    to.state.parent(Role::CanonicalParent).cloned(),
                ),
                _ => (
                    Role::RunParent.name(),
                    to.state.parent(Role::RunParent).cloned(),
                ),
            },
        };
        let (against, from) = match parent {
            Some(parent) => (role, Some(self.load(&parent)?)),
            None => ("empty_tree", None),
        };
        let from_side = match &from {
            Some(from) => Self::side(from),
            None => DiffSide {
                state: None,
                kind: None,
                summary: None,
                tree: self.store.empty_tree().to_string(),
            },
        };
        let from_tree = match &from {
            Some(from) => Self::tree_id(from)?,
            None => self.store.empty_tree(),
        };
        let diff = self.store.diff_trees(&from_tree, &Self::tree_id(&to)?)?;
        Ok(StateDiff {
            against,
            from: from_side,
            to: Self::side(&to),
            changes: diff.changes,
            patch: diff.patch,
        })
    }

    /// `hop history`: the accepted chain, newest first.
    pub fn accepted_history(&self) -> Result<History, Error> {
        let head = self.accepted()?;
        Ok(History {
            accepted: head.state.id.clone(),
            states: self.history(&head)?,
        })
    }

    /// `hop graph`: every pinned state with its parents and their roles, oldest first.
    pub fn graph(&self) -> Result<Graph, Error> {
        let accepted = self
            .store
            .tip(refs::HOP_ACCEPTED)?
            .map(|commit| self.load_commit(&commit))
            .transpose()?
            .map(|l| l.state.id);
        let mut states = Vec::new();
        for (_name, commit) in self.store.list(refs::HOP_STATES_PREFIX)? {
            let loaded = self.load_commit(&commit)?;
            let label = match &loaded.state.summary {
                Some(summary) => first_line(summary),
                None if loaded.kind == Kind::Prompt => self
                    .prompt_bytes(&loaded.state.id)?
                    .and_then(|b| first_line(&String::from_utf8_lossy(&b))),
                None => None,
            };
            states.push(GraphNode { loaded, label });
        }
        Ok(Graph {
            accepted,
            states: causal_order(states),
        })
    }
}

/// Orders states oldest first (ids are the kind's prefix and a time-ordered body), with every
/// state after its parents even when two were recorded in the same millisecond.
fn causal_order(mut states: Vec<GraphNode>) -> Vec<GraphNode> {
    use std::cmp::Reverse;
    use std::collections::{BTreeMap, BinaryHeap};
    let body = |n: &GraphNode| {
        let id = n.loaded.state.id.as_str();
        id.split_once('_').map_or(id, |(_, body)| body).to_owned()
    };
    states.sort_by_key(|n| body(n));
    let index: BTreeMap<&StateId, usize> = states
        .iter()
        .enumerate()
        .map(|(i, n)| (&n.loaded.state.id, i))
        .collect();
    let mut waiting = vec![0usize; states.len()];
    let mut children = vec![Vec::new(); states.len()];
    for (i, node) in states.iter().enumerate() {
        let mut parents: Vec<usize> = node
            .loaded
            .state
            .parents
            .iter()
            .filter_map(|p| index.get(&p.state).copied())
            .collect();
        parents.sort_unstable();
        parents.dedup();
        waiting[i] = parents.len();
        for p in parents {
            children[p].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..states.len())
        .filter(|&i| waiting[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(states.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &children[i] {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                ready.push(Reverse(c));
            }
        }
    }
    // Commits cannot form a cycle; should forged trailers claim one, keep those states last.
    let placed: std::collections::BTreeSet<usize> = order.iter().copied().collect();
    order.extend((0..states.len()).filter(|i| !placed.contains(i)));
    let mut slots: Vec<Option<GraphNode>> = states.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::first_line;

    #[test]
    fn a_label_is_the_first_non_empty_line() {
        assert_eq!(
            first_line("\n  Add reset emails \nmore").as_deref(),
            Some("Add reset emails")
        );
        let long = "x".repeat(100);
        assert_eq!(
            first_line(&long).map(|l| l.chars().count()),
            Some(73),
            "72 characters and an ellipsis"
        );
    }

    #[test]
    fn control_blank_text_has_no_label() {
        assert_eq!(first_line(" \n\t\n"), None);
    }
}
