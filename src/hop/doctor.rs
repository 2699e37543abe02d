//! `hop doctor`: every state reachable from hop's refs, checked; `--repair` re-creates the refs
//! that can be re-derived and moves back a state ref pinned to the wrong commit, and names the
//! manual step for anything else.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{CommitId, Error, Hop, Kind, Role, StateId, TreeId, refs_states};
use hpp_core::hop::{states, trailers};
use hpp_store::refs;

impl Hop<'_> {
    /// `hop doctor`: checks every state reachable from hop's refs; with `repair`, re-creates
    /// the refs that can be re-derived (unpinned states found through the chain or their
    /// children, a missing accepted ref), moves a state ref pinned to the wrong commit back to
    /// the commit that carries the state (by compare-and-swap), and checks again.
    pub fn doctor(&self, repair: bool) -> Result<Doctor, Error> {
        let first = self.diagnose()?;
        if !repair || first.problems.iter().all(|p| !p.repairable) {
            return Ok(first);
        }
        let mut repaired = Vec::new();
        for problem in &first.problems {
            let (true, Some(name), Some(commit)) =
                (problem.repairable, &problem.pin, &problem.commit)
            else {
                continue;
            };
            let Some(commit) = self.store.commit_id(commit) else {
                continue;
            };
            // A missing ref is created; a wrong one moves, by compare-and-swap from exactly
            // the commit it was diagnosed at.
            let done = match problem.replaces.as_deref().map(|c| self.store.commit_id(c)) {
                None => self.store.create_ref(name, &commit),
                Some(Some(wrong)) => self.store.move_ref(name, &wrong, &commit),
                Some(None) => continue,
            };
            if done.is_ok() {
                repaired.push(name.clone());
            }
        }
        let mut again = self.diagnose()?;
        again.repaired = repaired;
        Ok(again)
    }

    fn diagnose(&self) -> Result<Doctor, Error> {
        let mut problems: Vec<Problem> = Vec::new();
        let mut found: BTreeMap<StateId, (CommitId, trailers::Parsed, TreeId, Vec<CommitId>)> =
            BTreeMap::new();
        let mut pinned: BTreeMap<StateId, CommitId> = BTreeMap::new();
        let mut queue: Vec<CommitId> = Vec::new();
        for (name, commit) in self.store.list(refs_states())? {
            let id_text = name.rsplit('/').next().unwrap_or_default().to_owned();
            match id_text.parse::<StateId>() {
                Ok(id) => {
                    pinned.insert(id, commit.clone());
                }
                Err(e) => problems.push(Problem::new(Some(&id_text), &e.to_string())),
            }
            queue.push(commit);
        }
        let accepted = self.store.tip(refs::HOP_ACCEPTED)?;
        queue.extend(accepted.iter().cloned());
        for (name, commit) in self.store.list(refs::HOP_ATTEMPTS_PREFIX)? {
            let attempt = name.rsplit('/').next().unwrap_or_default();
            match self.load_commit(&commit) {
                Ok(head) if head.state.attempt.as_ref().map(|a| a.as_str()) == Some(attempt) => {}
                _ => problems.push(Problem::new(
                    None,
                    &format!("{name} points at {commit}, which is not a state of {attempt}"),
                )),
            }
            queue.push(commit);
        }
        let mut seen = BTreeSet::new();
        while let Some(commit) = queue.pop() {
            if !seen.insert(commit.clone()) {
                continue;
            }
            let Ok((tree, parents, message)) = self.store.read_commit(&commit) else {
                problems.push(Problem::new(None, &format!("commit {commit} is missing")));
                continue;
            };
            let Ok(parsed) = trailers::parse(&message) else {
                // A user commit (the parent of the initial accepted state) ends the walk.
                continue;
            };
            queue.extend(parents.iter().cloned());
            found.insert(parsed.state.id.clone(), (commit, parsed, tree, parents));
        }
        for (id, commit) in &pinned {
            let pin = refs::hop_state(id.as_str());
            match found.get(id) {
                Some((c, ..)) if c == commit => {}
                // The state is carried by another commit reachable from hop's refs: the pin
                // moves back to it (from exactly the commit it was found at).
                Some((c, ..)) => problems.push(Problem {
                    state: Some(id.to_string()),
                    problem: format!(
                        "{pin} pins {commit}, which does not carry state {id}; {c} does"
                    ),
                    repairable: true,
                    pin: Some(pin),
                    commit: Some(c.to_string()),
                    replaces: Some(commit.to_string()),
                }),
                None => problems.push(Problem::new(
                    Some(id.as_str()),
                    &format!(
                        "{pin} pins {commit}, which does not carry state {id}, and no commit reachable from hop's refs does: if nothing names {id}, delete the ref with `git update-ref -d {pin} {commit}`"
                    ),
                )),
            }
        }
        for (id, (commit, parsed, tree, parents)) in &found {
            let state = &parsed.state;
            let mut say = |text: String| problems.push(Problem::new(Some(id.as_str()), &text));
            if !self.store.has_tree(tree) {
                say(format!("tree {tree} is missing"));
            }
            if tree.as_str() != state.tree {
                say(format!(
                    "commit tree {tree} does not match the recorded tree {}",
                    state.tree
                ));
            }
            if parsed.recorded_digest.as_deref() != Some(&state.digest()) {
                say("digest does not recompute".into());
            }
            let initial = state.kind() == Kind::Accepted
                && state.parent(Role::CanonicalParent).is_none()
                && parents
                    .first()
                    .is_none_or(|p| !found.values().any(|(c, ..)| c == p));
            for role in state.missing_provenance(initial) {
                say(format!("missing required provenance: {role}"));
            }
            for parent in &state.parents {
                if !found.contains_key(&parent.state) && !pinned.contains_key(&parent.state) {
                    say(format!(
                        "parent {} ({}) is missing",
                        parent.state,
                        parent.role.name()
                    ));
                }
            }
            if state.kind() == Kind::Prompt {
                match self.prompt_bytes(id)? {
                    None => say("the exact prompt bytes are missing".into()),
                    Some(bytes) => {
                        if state.prompt_digest.as_deref() != Some(&states::prompt_digest(&bytes)) {
                            say("the prompt bytes do not match the prompt digest".into());
                        }
                    }
                }
            }
            if !pinned.contains_key(id) {
                problems.push(Problem {
                    state: Some(id.to_string()),
                    problem: format!("{} is missing", refs::hop_state(id.as_str())),
                    repairable: true,
                    pin: Some(refs::hop_state(id.as_str())),
                    commit: Some(commit.to_string()),
                    replaces: None,
                });
            }
        }
        match &accepted {
            None => {
                // Re-derivable when exactly one pinned accepted state has no successor.
                let named: BTreeSet<&StateId> = found
                    .values()
                    .filter_map(|(_, p, ..)| p.state.parent(Role::CanonicalParent))
                    .collect();
                let tips: Vec<(&StateId, &CommitId)> = found
                    .iter()
                    .filter(|(id, _)| id.kind() == Kind::Accepted && !named.contains(id))
                    .map(|(id, (c, ..))| (id, c))
                    .collect();
                if !found.is_empty() || !pinned.is_empty() {
                    problems.push(Problem {
                        state: tips.first().map(|(id, _)| id.to_string()),
                        problem: format!("{} is missing", refs::HOP_ACCEPTED),
                        repairable: tips.len() == 1,
                        pin: Some(refs::HOP_ACCEPTED.to_owned()),
                        commit: tips.first().map(|(_, c)| c.to_string()),
                        replaces: None,
                    });
                }
            }
            Some(commit) => match self.load_commit(commit) {
                Ok(head) if head.kind == Kind::Accepted => {}
                _ => problems.push(Problem::new(
                    None,
                    &format!(
                        "{} points at {commit}, which is not an accepted state",
                        refs::HOP_ACCEPTED
                    ),
                )),
            },
        }
        Ok(Doctor {
            ok: problems.is_empty(),
            states: found.len(),
            problems,
            repaired: Vec::new(),
        })
    }
}

/// One problem `hop doctor` found.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// The state involved, if any.
    pub state: Option<String>,
    /// What is wrong.
    pub problem: String,
    /// Whether `--repair` can re-derive it.
    pub repairable: bool,
    /// The ref a repair would create.
    #[serde(skip_serializing_if = "Option::is_none", rename = "ref")]
    pub pin: Option<String>,
    /// The commit it would point at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The commit the ref points at now, when the repair moves it rather than creates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
}

impl Problem {
    fn new(state: Option<&str>, problem: &str) -> Self {
        Self {
            state: state.map(str::to_owned),
            problem: problem.to_owned(),
            repairable: false,
            pin: None,
            commit: None,
            replaces: None,
        }
    }
}

/// What `hop doctor` found.
#[derive(Debug, Clone, Serialize)]
pub struct Doctor {
    /// Whether nothing is wrong.
    pub ok: bool,
    /// How many states were checked.
    pub states: usize,
    /// What is wrong.
    pub problems: Vec<Problem>,
    /// The refs `--repair` re-created.
    pub repaired: Vec<String>,
}
