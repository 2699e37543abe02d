//! Hop states: what each state records, its parents with their roles, its digest, the
//! provenance each kind must carry, the undo rule, and the agent launch contract.
//!
//! A state is one causal occurrence. Prompt, checkpoint and proposal states may share a tree
//! and remain distinct. Its digest is `sha256:` and the hex sha256 of the canonical JSON of
//! every field below (parents in recorded order), so `hop doctor` can recompute it from the
//! commit that carries the state.

use serde::Serialize;
use serde_json::{Value, json};

use super::Error;
use super::ids::{AttemptId, Kind, StateId, TaskId};
use crate::record::{canonical_json, sha256_hex};

/// The schema of the digested state payload.
pub const SCHEMA: &str = "hop.state/v1";

/// Why a state names another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The previous state of the same attempt.
    RunParent,
    /// The accepted state a prompt or proposal was issued against.
    CanonicalAnchor,
    /// The accepted state an accepted state follows.
    CanonicalParent,
    /// The proposal an accepted state lands.
    ProposalParent,
    /// The accepted state a failed landing was composed on.
    IntegrationParent,
    /// The landing an undo takes back.
    Reverts,
    /// The accepted state whose tree an undo restores.
    Restores,
}

impl Role {
    /// Every role.
    pub const ALL: [Role; 7] = [
        Role::RunParent,
        Role::CanonicalAnchor,
        Role::CanonicalParent,
        Role::ProposalParent,
        Role::IntegrationParent,
        Role::Reverts,
        Role::Restores,
    ];

    /// Returns the role's name as trailers and JSON spell it.
    pub fn name(self) -> &'static str {
        match self {
            Role::RunParent => "run_parent",
            Role::CanonicalAnchor => "canonical_anchor",
            Role::CanonicalParent => "canonical_parent",
            Role::ProposalParent => "proposal_parent",
            Role::IntegrationParent => "integration_parent",
            Role::Reverts => "reverts",
            Role::Restores => "restores",
        }
    }

    /// Parses a role name.
    pub fn parse(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// One parent of a state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Parent {
    /// Why it is a parent.
    pub role: Role,
    /// The parent state.
    pub state: StateId,
}

/// A state's metadata (its tree is the workspace snapshot; its prompt bytes are kept beside it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct State {
    /// The state's id; its prefix is its kind.
    pub id: StateId,
    /// The task, for attempt states.
    pub task: Option<TaskId>,
    /// The attempt, for attempt states.
    pub attempt: Option<AttemptId>,
    /// The accepted state the attempt's workspace started from, for attempt states.
    pub base: Option<StateId>,
    /// The agent running the attempt.
    pub agent: Option<String>,
    /// The tree id of the snapshot.
    pub tree: String,
    /// The parents, in recorded order.
    pub parents: Vec<Parent>,
    /// `sha256:<hex>` of the exact prompt bytes, for prompt states.
    pub prompt_digest: Option<String>,
    /// The summary (proposals, landings, undos).
    pub summary: Option<String>,
    /// When it was recorded (RFC 3339, UTC).
    pub created_at: String,
}

impl State {
    /// Returns the state's kind.
    pub fn kind(&self) -> Kind {
        self.id.kind()
    }

    /// Returns the first parent with `role`.
    pub fn parent(&self, role: Role) -> Option<&StateId> {
        self.parents
            .iter()
            .find(|p| p.role == role)
            .map(|p| &p.state)
    }

    /// Returns the payload the digest covers.
    pub fn payload(&self) -> Value {
        json!({
            "schema": SCHEMA,
            "id": self.id,
            "kind": self.kind().name(),
            "task": self.task,
            "attempt": self.attempt,
            "base": self.base,
            "agent": self.agent,
            "tree": self.tree,
            "parents": self.parents,
            "prompt_digest": self.prompt_digest,
            "summary": self.summary,
            "created_at": self.created_at,
        })
    }

    /// Returns `sha256:<hex>` of the canonical JSON of [`State::payload`].
    ///
    /// ```
    /// use hpp_core::hop::{Kind, State, StateId};
    /// let state = State {
    ///     id: StateId::new(Kind::Accepted, 0, [0; 8]), task: None, attempt: None, base: None,
    ///     agent: None, tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(), parents: vec![],
    ///     prompt_digest: None, summary: None, created_at: "2026-01-01T00:00:00Z".into(),
    /// };
    /// assert!(state.digest().starts_with("sha256:"));
    /// ```
    pub fn digest(&self) -> String {
        format!("sha256:{}", sha256_hex(&canonical_json(&self.payload())))
    }

    /// Returns the provenance this state lacks for its kind: prompts need task, attempt,
    /// run_parent and canonical_anchor; checkpoints, proposals, failed and cancelled states need
    /// task, attempt and run_parent; an accepted state that is not the initial one needs a
    /// canonical_parent (`initial` tells which).
    pub fn missing_provenance(&self, initial: bool) -> Vec<&'static str> {
        let mut missing = Vec::new();
        let attempt_state = |missing: &mut Vec<&'static str>| {
            if self.task.is_none() {
                missing.push("task");
            }
            if self.attempt.is_none() {
                missing.push("attempt");
            }
            if self.parent(Role::RunParent).is_none() {
                missing.push(Role::RunParent.name());
            }
        };
        match self.kind() {
            Kind::Prompt => {
                attempt_state(&mut missing);
                if self.parent(Role::CanonicalAnchor).is_none() {
                    missing.push(Role::CanonicalAnchor.name());
                }
                if self.prompt_digest.is_none() {
                    missing.push("prompt_digest");
                }
            }
            Kind::Checkpoint | Kind::Proposal | Kind::Failed | Kind::Cancelled => {
                attempt_state(&mut missing);
            }
            Kind::Accepted => {
                if !initial && self.parent(Role::CanonicalParent).is_none() {
                    missing.push(Role::CanonicalParent.name());
                }
            }
        }
        missing
    }
}

/// Returns `sha256:<hex>` of the exact prompt bytes.
///
/// ```
/// assert!(hpp_core::hop::states::prompt_digest(b" x \n").starts_with("sha256:"));
/// ```
pub fn prompt_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// The landing a `hop undo` steps back over, and the state whose tree it restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoPlan {
    /// The landing (or initial-adjacent accepted state) being taken back.
    pub reverts: StateId,
    /// The accepted state whose tree becomes current again.
    pub restores: StateId,
}

/// Returns the position of an accepted state in the landing stack: an undo state stands for the
/// state it restored, any other accepted state for itself.
fn position(state: &State) -> StateId {
    match state.parent(Role::Restores) {
        Some(restored) if state.parent(Role::Reverts).is_some() => restored.clone(),
        _ => state.id.clone(),
    }
}

/// Decides what `hop undo` does on top of `head`: undo is a stack, so a second undo steps back
/// one more landing instead of re-applying the first one. `lookup` finds accepted states by id.
///
/// ```
/// use hpp_core::hop::{Kind, Parent, Role, State, StateId};
/// use hpp_core::hop::states::undo_plan;
/// let mk = |n: u64, parent: Option<&StateId>| State {
///     id: StateId::new(Kind::Accepted, n, [0; 8]), task: None, attempt: None, base: None,
///     agent: None, tree: String::new(), created_at: String::new(), prompt_digest: None, summary: None,
///     parents: parent.map(|p| Parent { role: Role::CanonicalParent, state: p.clone() }).into_iter().collect(),
/// };
/// let a0 = mk(0, None);
/// let a1 = mk(1, Some(&a0.id));
/// let states = [a0.clone(), a1.clone()];
/// let plan = undo_plan(&a1, |id| states.iter().find(|s| &s.id == id).cloned()).unwrap();
/// assert_eq!(plan.restores, a0.id);
/// ```
pub fn undo_plan(
    head: &State,
    lookup: impl Fn(&StateId) -> Option<State>,
) -> Result<UndoPlan, Error> {
    let here_id = position(head);
    let here = if here_id == head.id {
        head.clone()
    } else {
        lookup(&here_id).ok_or_else(|| Error::BrokenChain {
            id: head.id.to_string(),
            missing: here_id.to_string(),
        })?
    };
    let previous_id = here
        .parent(Role::CanonicalParent)
        .ok_or(Error::NothingToUndo)?;
    let previous = lookup(previous_id).ok_or_else(|| Error::BrokenChain {
        id: here.id.to_string(),
        missing: previous_id.to_string(),
    })?;
    Ok(UndoPlan {
        reverts: here.id,
        restores: position(&previous),
    })
}

/// What an attempt is doing, from the kind of its head state.
pub fn attempt_status(head: Kind) -> &'static str {
    match head {
        Kind::Prompt | Kind::Checkpoint => "active",
        Kind::Proposal => "proposed",
        Kind::Failed => "changes_requested",
        Kind::Cancelled => "cancelled",
        Kind::Accepted => "accepted",
    }
}

/// The five `HOP_*` variables of an agent launch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Launch {
    /// `HOP_ROOT`: the canonical project root.
    pub root: String,
    /// `HOP_STATE_ID`: the prompt state authorising the current instruction.
    pub state: String,
    /// `HOP_TASK_ID`.
    pub task: String,
    /// `HOP_ATTEMPT_ID`.
    pub attempt: String,
    /// `HOP_WORKSPACE`: the only directory the agent may modify.
    pub workspace: String,
}

/// The variable names, in the order `hop env` prints them.
pub const LAUNCH_VARS: [&str; 5] = [
    "HOP_ROOT",
    "HOP_STATE_ID",
    "HOP_TASK_ID",
    "HOP_ATTEMPT_ID",
    "HOP_WORKSPACE",
];

impl Launch {
    /// Reads the launch from `var` (the environment); any missing or empty variable makes the
    /// launch invalid: an agent must not infer its attempt from a nearby worktree.
    pub fn from_vars(var: impl Fn(&'static str) -> Option<String>) -> Result<Launch, Error> {
        let get = |name: &'static str| {
            var(name)
                .filter(|v| !v.is_empty())
                .ok_or(Error::MissingLaunchVar { var: name })
        };
        Ok(Launch {
            root: get("HOP_ROOT")?,
            state: get("HOP_STATE_ID")?,
            task: get("HOP_TASK_ID")?,
            attempt: get("HOP_ATTEMPT_ID")?,
            workspace: get("HOP_WORKSPACE")?,
        })
    }

    /// Checks that the launch belongs to `state`'s task and attempt.
    pub fn matches(&self, state: &State) -> Result<(), Error> {
        let check = |var: &'static str, found: &str, expected: Option<String>| match expected {
            Some(expected) if expected == found => Ok(()),
            expected => Err(Error::LaunchMismatch {
                var,
                found: found.to_owned(),
                state: state.id.to_string(),
                expected: expected.unwrap_or_else(|| "no attempt".into()),
            }),
        };
        check(
            "HOP_ATTEMPT_ID",
            &self.attempt,
            state.attempt.as_ref().map(ToString::to_string),
        )?;
        check(
            "HOP_TASK_ID",
            &self.task,
            state.task.as_ref().map(ToString::to_string),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(n: u64, parents: Vec<Parent>) -> State {
        State {
            id: StateId::new(Kind::Accepted, n, [0; 8]),
            task: None,
            attempt: None,
            base: None,
            agent: None,
            tree: format!("tree{n}"),
            parents,
            prompt_digest: None,
            summary: None,
            created_at: "t".into(),
        }
    }

    fn p(role: Role, s: &State) -> Parent {
        Parent {
            role,
            state: s.id.clone(),
        }
    }

    #[test]
    fn undo_is_a_stack_not_a_toggle() {
        let a0 = accepted(0, vec![]);
        let a1 = accepted(1, vec![p(Role::CanonicalParent, &a0)]);
        let a2 = accepted(2, vec![p(Role::CanonicalParent, &a1)]);
        let mut all = vec![a0.clone(), a1.clone(), a2.clone()];
        let plan = undo_plan(&a2, |id| all.iter().find(|s| &s.id == id).cloned()).unwrap();
        assert_eq!(
            (plan.reverts.clone(), plan.restores.clone()),
            (a2.id.clone(), a1.id.clone())
        );
        let u1 = accepted(
            3,
            vec![
                p(Role::CanonicalParent, &a2),
                p(Role::Reverts, &a2),
                p(Role::Restores, &a1),
            ],
        );
        all.push(u1.clone());
        let plan = undo_plan(&u1, |id| all.iter().find(|s| &s.id == id).cloned()).unwrap();
        assert_eq!(plan.restores, a0.id, "the second undo steps back once more");
        let u2 = accepted(
            4,
            vec![
                p(Role::CanonicalParent, &u1),
                p(Role::Reverts, &a1),
                p(Role::Restores, &a0),
            ],
        );
        all.push(u2.clone());
        let err = undo_plan(&u2, |id| all.iter().find(|s| &s.id == id).cloned()).unwrap_err();
        assert_eq!(err, Error::NothingToUndo);
    }

    #[test]
    fn a_landing_after_an_undo_undoes_to_the_restored_tree() {
        let a0 = accepted(0, vec![]);
        let a1 = accepted(1, vec![p(Role::CanonicalParent, &a0)]);
        let a2 = accepted(2, vec![p(Role::CanonicalParent, &a1)]);
        let u = accepted(
            3,
            vec![
                p(Role::CanonicalParent, &a2),
                p(Role::Reverts, &a2),
                p(Role::Restores, &a1),
            ],
        );
        let a3 = accepted(4, vec![p(Role::CanonicalParent, &u)]);
        let all = [a0, a1.clone(), a2, u, a3.clone()];
        let plan = undo_plan(&a3, |id| all.iter().find(|s| &s.id == id).cloned()).unwrap();
        assert_eq!(plan.restores, a1.id);
    }

    #[test]
    fn control_the_digest_changes_with_any_field_and_provenance_is_required() {
        let a0 = accepted(0, vec![]);
        let mut other = a0.clone();
        other.tree = "different".into();
        assert_ne!(a0.digest(), other.digest());
        assert!(a0.missing_provenance(true).is_empty());
        assert_eq!(a0.missing_provenance(false), ["canonical_parent"]);
        let mut prompt = a0.clone();
        prompt.id = StateId::new(Kind::Prompt, 1, [0; 8]);
        assert_eq!(
            prompt.missing_provenance(false),
            [
                "task",
                "attempt",
                "run_parent",
                "canonical_anchor",
                "prompt_digest"
            ]
        );
    }

    #[test]
    fn control_a_launch_without_every_variable_is_invalid() {
        let full = |name: &str| Some(format!("value of {name}"));
        assert!(Launch::from_vars(full).is_ok());
        let err =
            Launch::from_vars(|name| (name != "HOP_WORKSPACE").then(|| "x".into())).unwrap_err();
        assert_eq!(
            err,
            Error::MissingLaunchVar {
                var: "HOP_WORKSPACE"
            }
        );
        let err =
            Launch::from_vars(|name| (name != "HOP_TASK_ID").then(|| "x".into())).unwrap_err();
        assert_eq!(err, Error::MissingLaunchVar { var: "HOP_TASK_ID" });
    }
}
