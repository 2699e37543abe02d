//! The Hop workflow: the protocol's commands on the store and the bounded runner.
//!
//! Every state is a commit pinned at `refs/hpp/hop/states/<ID>` whose tree is the workspace
//! snapshot and whose message carries the metadata as trailers ([`super::trailers`]). Each
//! attempt has a head ref (`refs/hpp/hop/attempts/<AT_ID>`, moved by compare-and-swap), each
//! prompt keeps its exact bytes in a record of its own (`refs/hpp/hop/prompts/<P_ID>`), each
//! check run is a record (`refs/hpp/hop/checks/<EVIDENCE_ID>`), and accepted states form the
//! chain at `refs/hpp/hop/accepted`, moved only by compare-and-swap. Attempt workspaces and the
//! disposable check and validation worktrees are linked worktrees under `<git dir>/hop/`,
//! outside the user's working tree.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

mod check;
mod doctor;
mod inspect;
mod land;
mod reland;
pub mod skill;
mod views;

pub use doctor::{Doctor, Problem};
pub use inspect::{Against, Checkpointed, DiffSide, Graph, GraphNode, History, StateDiff};
pub use views::{
    AttemptView, CheckRun, Env, Initialised, Landing, Loaded, Prompted, Proposed, StateView,
    Status, Undone,
};

use crate::process;
use hpp_core::hop::ids::{AttemptId, CheckId, Kind, StateId, TaskId};
use hpp_core::hop::states::{self, Launch, Parent, Role, State};
use hpp_core::hop::trailers;
use hpp_store::{self as store, Checkout, CommitId, Store, TreeId, refs};

/// The schema of a check record.
pub const CHECK_SCHEMA: &str = "hop.check/v1";

/// Why a hop command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A refused value (bad id, bad launch, nothing to undo).
    #[error(transparent)]
    Hop(#[from] hpp_core::hop::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// A command could not be run.
    #[error(transparent)]
    Process(#[from] process::Error),
    /// A check's evidence bundle could not be recorded.
    #[error(transparent)]
    Evidence(#[from] crate::evidence::Error),
    /// A state names no valid tree id (its commit was written by something else).
    #[error("{0}: has no valid tree id")]
    BadTree(String),
    /// `hop init` has not run in this repository.
    #[error("hop is not initialised in this repository: run `hop init`")]
    NotInitialised,
    /// No state has this id.
    #[error("unknown state {0}")]
    UnknownState(String),
    /// The state is of another kind than the command needs.
    #[error("{id} is a {found} state; this needs a {expected} state")]
    WrongKind {
        /// The state.
        id: String,
        /// What the command needs.
        expected: &'static str,
        /// What it is.
        found: Kind,
    },
    /// The state belongs to no attempt (an accepted state).
    #[error("{0} belongs to no attempt: start one with `hop start --agent NAME \"<prompt>\"`")]
    NoAttempt(String),
    /// The attempt's workspace is gone.
    #[error("the workspace of {attempt} is missing: {path}")]
    WorkspaceMissing {
        /// The attempt.
        attempt: String,
        /// Where it should be.
        path: String,
    },
    /// A prompt must be one non-empty argument.
    #[error("the prompt is empty: pass the exact instruction as one argument")]
    EmptyPrompt,
    /// A prompt or command line has the shape of a secret.
    #[error(
        "the {0} looks like it carries a secret: hop keeps it unencrypted and `git hpp push` publishes it; pass credentials through the environment"
    )]
    Secret(&'static str),
    /// A workspace file the state would keep looks like it holds a secret.
    #[error(
        "{path} looks like it holds {shape}: the state would keep it, and `git hpp push` publishes hop's states; remove it or ignore it"
    )]
    SecretFile {
        /// The file, relative to the workspace root.
        path: String,
        /// The shape found (never the value).
        shape: &'static str,
    },
    /// A command to run is empty.
    #[error("the command is empty: give it after --")]
    EmptyCommand,
    /// Changed paths overlap paths accepted since the proposal's base.
    #[error("{proposal} overlaps changes accepted since its base {base}")]
    Overlap {
        /// The proposal.
        proposal: String,
        /// Its base.
        base: String,
        /// The colliding paths, sorted.
        paths: Vec<String>,
    },
    /// The three-way merge left conflicts.
    #[error("{proposal} does not compose with the accepted tree")]
    Conflict {
        /// The proposal.
        proposal: String,
        /// The conflicting paths, sorted.
        paths: Vec<String>,
    },
    /// A head moved during compare-and-swap.
    #[error("{name} moved during compare-and-swap: {detail}")]
    HeadMoved {
        /// The ref (or accepted head) that moved.
        name: String,
        /// What was expected and found.
        detail: String,
    },
    /// `--branch` names a branch the accepted commit does not fast-forward.
    #[error(
        "branch {branch} is at {tip}, which the accepted commit does not contain: not a fast-forward"
    )]
    NotFastForward {
        /// The branch.
        branch: String,
        /// Where it is.
        tip: String,
    },
    /// `--branch` names a branch checked out in a worktree with local changes.
    #[error(
        "branch {branch} is checked out in {path} with local changes to {}: commit or stash them, then land again",
        files.join(", ")
    )]
    BranchDirty {
        /// The branch.
        branch: String,
        /// The worktree.
        path: String,
        /// The changed files (tracked: modified or staged).
        files: Vec<String>,
    },
    /// `--sparse` names something that is not a directory of the accepted tree.
    #[error(
        "--sparse {0}: not a directory of the accepted tree (give paths relative to the repository root)"
    )]
    SparsePath(String),
    /// `--branch` names something that is not a branch name.
    #[error("invalid branch name {0:?}")]
    InvalidBranch(String),
    /// The repository is bare.
    #[error("hop needs a repository with a working tree")]
    Bare,
}

/// What a command run in a disposable worktree left: exit code, stdout, stderr.
type RunOutput = (Option<i32>, Vec<u8>, Vec<u8>);

/// A command run in a disposable worktree, as its evidence bundle records it.
pub(crate) struct WorktreeRun {
    /// Exit code, stdout, stderr.
    out: RunOutput,
    /// The run, when the program started.
    finished: Option<hpp_core::run::Finished>,
    /// When it started.
    started: time::OffsetDateTime,
    /// How long it took.
    duration: std::time::Duration,
    /// The tree it left in the worktree, when that could be read.
    after: Option<TreeId>,
    /// The timeout it was given.
    timeout: std::time::Duration,
}

/// The Hop controller on one repository.
pub struct Hop<'a> {
    store: &'a Store,
    root: PathBuf,
    hop_dir: PathBuf,
    /// The key the evidence bundles of checks and validations are signed with, when given.
    signing: Option<crate::sign::Signing>,
}

static IDS: AtomicU64 = AtomicU64::new(0);

fn stamp() -> (u64, [u8; 8]) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let seed = format!(
        "{}-{}-{}-{:?}",
        std::process::id(),
        now.as_nanos(),
        IDS.fetch_add(1, Ordering::Relaxed),
        std::thread::current().id()
    );
    let digest = Sha256::digest(seed.as_bytes());
    let mut entropy = [0u8; 8];
    entropy.copy_from_slice(&digest[..8]);
    (u64::try_from(now.as_millis()).unwrap_or(u64::MAX), entropy)
}

fn new_state_id(kind: Kind) -> StateId {
    let (ms, e) = stamp();
    StateId::new(kind, ms, e)
}

/// A new accepted state of `tree` that belongs to no task or attempt: the initial state, an
/// undo, a join of another machine's chain.
fn accepted_state(tree: String, parents: Vec<Parent>, summary: String) -> State {
    State {
        id: new_state_id(Kind::Accepted),
        task: None,
        attempt: None,
        base: None,
        agent: None,
        tree,
        parents,
        prompt_digest: None,
        summary: Some(summary),
        created_at: now_rfc3339(),
    }
}

/// A new accepted state that lands `proposal` (whose task, attempt and agent it keeps, from
/// `landed`) on the accepted state `head`, with the composed `tree`.
fn landing_state(
    landed: &State,
    proposal: &StateId,
    head: &StateId,
    tree: String,
    summary: Option<String>,
) -> State {
    State {
        id: new_state_id(Kind::Accepted),
        task: landed.task.clone(),
        attempt: landed.attempt.clone(),
        base: None,
        agent: landed.agent.clone(),
        tree,
        parents: vec![
            Parent {
                role: Role::CanonicalParent,
                state: head.clone(),
            },
            Parent {
                role: Role::ProposalParent,
                state: proposal.clone(),
            },
        ],
        prompt_digest: None,
        summary,
        created_at: now_rfc3339(),
    }
}

/// Refuses an empty prompt, and one shaped like a secret (prompts are stored unencrypted).
fn refuse_bad_prompt(prompt: &[u8]) -> Result<(), Error> {
    if prompt.is_empty() {
        return Err(Error::EmptyPrompt);
    }
    if hpp_core::secrets::looks_secret(&String::from_utf8_lossy(prompt)) {
        return Err(Error::Secret("prompt"));
    }
    Ok(())
}

/// Refuses an empty command, and one whose argv carries a secret (it is recorded).
fn refuse_bad_command(argv: &[String]) -> Result<(), Error> {
    if argv.is_empty() {
        return Err(Error::EmptyCommand);
    }
    if hpp_core::secrets::command_line_carries_secret(argv) {
        return Err(Error::Secret("command line"));
    }
    Ok(())
}

fn now_rfc3339() -> String {
    hpp_core::timestamp::rfc3339(time::OffsetDateTime::now_utc())
}

fn moved(e: store::Error) -> Error {
    match e {
        store::Error::Moved {
            name,
            expected,
            actual,
        } => Error::HeadMoved {
            name,
            detail: format!(
                "expected {}, found {}",
                expected.as_ref().map_or("nothing", CommitId::as_str),
                actual.as_ref().map_or("nothing", CommitId::as_str)
            ),
        },
        other => Error::Store(other),
    }
}

impl<'a> Hop<'a> {
    /// Opens the controller on `store` (which must have a working tree).
    pub fn new(store: &'a Store) -> Result<Self, Error> {
        let root = store.main_worktree_root().ok_or(Error::Bare)?;
        let common = std::fs::canonicalize(store.common_dir())
            .unwrap_or_else(|_| store.common_dir().to_path_buf());
        Ok(Self {
            store,
            root: std::fs::canonicalize(&root).unwrap_or(root),
            hop_dir: common.join("hop"),
            signing: None,
        })
    }

    /// Signs the evidence bundles this controller records (checks, landing validations) with
    /// `signing`, so a repository that requires signed records accepts them.
    #[must_use]
    pub fn signing_evidence(mut self, signing: Option<crate::sign::Signing>) -> Self {
        self.signing = signing;
        self
    }

    /// Returns the canonical project root (`HOP_ROOT`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Returns the workspace directory of `attempt`.
    pub fn workspace(&self, attempt: &AttemptId) -> PathBuf {
        self.hop_dir.join("workspaces").join(attempt.as_str())
    }

    fn attempt_ref(attempt: &AttemptId) -> String {
        refs::hop_attempt(attempt.as_str())
    }

    fn prompt_ref(id: &StateId) -> String {
        refs::hop_prompt(id.as_str())
    }

    fn check_ref(id: &CheckId) -> String {
        refs::hop_check(id.as_str())
    }

    /// Reads the state carried by `commit`.
    pub fn load_commit(&self, commit: &CommitId) -> Result<Loaded, Error> {
        let (_tree, _parents, message) = self.store.read_commit(commit)?;
        let parsed = trailers::parse(&message)?;
        Ok(Loaded {
            kind: parsed.state.kind(),
            state: parsed.state,
            commit: commit.clone(),
            recorded_digest: parsed.recorded_digest,
        })
    }

    /// Reads state `id` through its ref.
    pub fn load(&self, id: &StateId) -> Result<Loaded, Error> {
        let commit = self
            .store
            .tip(&refs::hop_state(id.as_str()))?
            .ok_or_else(|| Error::UnknownState(id.to_string()))?;
        self.load_commit(&commit)
    }

    /// Returns the accepted head.
    pub fn accepted(&self) -> Result<Loaded, Error> {
        let commit = self
            .store
            .tip(refs::HOP_ACCEPTED)?
            .ok_or(Error::NotInitialised)?;
        self.load_commit(&commit)
    }

    fn attempt_head(&self, attempt: &AttemptId) -> Result<Loaded, Error> {
        let commit = self
            .store
            .tip(&Self::attempt_ref(attempt))?
            .ok_or_else(|| Error::UnknownState(attempt.to_string()))?;
        self.load_commit(&commit)
    }

    /// Writes `state` as a commit on `git_parents` (no ref moved yet).
    fn write(&self, state: &State, git_parents: &[CommitId]) -> Result<Loaded, Error> {
        let tree =
            TreeId::parse(&state.tree).ok_or_else(|| Error::BadTree(state.id.to_string()))?;
        let mut parents: Vec<CommitId> = Vec::new();
        for p in git_parents {
            if !parents.contains(p) {
                parents.push(p.clone());
            }
        }
        let commit = self
            .store
            .write_commit(&tree, &parents, &trailers::render(state))?;
        Ok(Loaded {
            kind: state.kind(),
            state: state.clone(),
            commit,
            recorded_digest: Some(state.digest()),
        })
    }

    fn pin(&self, loaded: &Loaded) -> Result<(), Error> {
        self.store
            .create_ref(&refs::hop_state(loaded.state.id.as_str()), &loaded.commit)?;
        Ok(())
    }

    fn env_for(&self, state: &State) -> Result<Env, Error> {
        let (Some(task), Some(attempt)) = (&state.task, &state.attempt) else {
            return Err(Error::NoAttempt(state.id.to_string()));
        };
        Ok(Env {
            root: self.root.display().to_string(),
            state: state.id.to_string(),
            task: task.to_string(),
            attempt: attempt.to_string(),
            workspace: self.workspace(attempt).display().to_string(),
        })
    }

    /// `hop init`: records the initial accepted state (HEAD's tree, HEAD as its parent) unless
    /// one exists. HEAD, the branch, the index and the working tree are not touched.
    pub fn init(&self) -> Result<Initialised, Error> {
        if let Some(commit) = self.store.tip(refs::HOP_ACCEPTED)? {
            return Ok(Initialised {
                created: false,
                accepted: self.load_commit(&commit)?,
            });
        }
        let head = self.store.head_commit()?;
        let tree = match &head {
            Some(commit) => self.store.commit_tree(commit)?,
            None => self.store.empty_tree(),
        };
        let state = accepted_state(
            tree.to_string(),
            Vec::new(),
            "initial accepted state".into(),
        );
        let loaded = self.write(&state, &head.into_iter().collect::<Vec<_>>())?;
        self.store
            .create_ref(refs::HOP_ACCEPTED, &loaded.commit)
            .map_err(moved)?;
        self.pin(&loaded)?;
        Ok(Initialised {
            created: true,
            accepted: loaded,
        })
    }

    fn record_prompt(&self, id: &StateId, prompt: &[u8]) -> Result<(), Error> {
        self.store.create_blobs(
            &Self::prompt_ref(id),
            &[("prompt", prompt)],
            None,
            &format!("hop: prompt bytes of {id}"),
        )?;
        Ok(())
    }

    /// `hop start`: creates the task, the attempt, the prompt state (pinned, with its exact
    /// bytes) and then the attempt's detached workspace at the accepted commit: all of it, or
    /// with `sparse` directories only those (and the top-level files) checked out, git's sparse
    /// checkout in cone mode. The workspace's snapshot is the whole tree either way.
    pub fn start(&self, agent: &str, prompt: &[u8], sparse: &[String]) -> Result<Prompted, Error> {
        refuse_bad_prompt(prompt)?;
        if hpp_core::secrets::looks_secret(agent) {
            return Err(Error::Secret("agent name"));
        }
        let head = self.accepted()?;
        let head_tree = TreeId::parse(&head.state.tree)
            .ok_or_else(|| Error::BadTree(head.state.id.to_string()))?;
        for dir in sparse {
            let plain = !dir.is_empty()
                && !dir.starts_with(['/', '-'])
                && dir
                    .split('/')
                    .all(|c| !c.is_empty() && c != "." && c != "..");
            let is_dir = plain && self.store.is_dir_in(&head_tree, dir)?;
            if !is_dir {
                return Err(Error::SparsePath(dir.clone()));
            }
        }
        let (ms, e) = stamp();
        let task = TaskId::new(ms, e);
        let (ms, e) = stamp();
        let attempt = AttemptId::new(ms, e);
        let state = State {
            id: new_state_id(Kind::Prompt),
            task: Some(task),
            attempt: Some(attempt.clone()),
            base: Some(head.state.id.clone()),
            agent: Some(agent.to_owned()),
            tree: head.state.tree.clone(),
            parents: vec![
                Parent {
                    role: Role::RunParent,
                    state: head.state.id.clone(),
                },
                Parent {
                    role: Role::CanonicalAnchor,
                    state: head.state.id.clone(),
                },
            ],
            prompt_digest: Some(states::prompt_digest(prompt)),
            summary: None,
            created_at: now_rfc3339(),
        };
        let loaded = self.write(&state, std::slice::from_ref(&head.commit))?;
        // The prompt is durable before any effect: bytes, state, attempt head, then workspace.
        self.record_prompt(&state.id, prompt)?;
        self.pin(&loaded)?;
        self.store
            .create_ref(&Self::attempt_ref(&attempt), &loaded.commit)
            .map_err(moved)?;
        let workspace = self.workspace(&attempt);
        let checkout = if sparse.is_empty() {
            Checkout::Detached(&head.commit)
        } else {
            Checkout::Sparse(&head.commit, sparse)
        };
        self.store.add_worktree(&workspace, checkout)?;
        Ok(Prompted {
            env: self.env_for(&state)?,
            state: loaded,
            checkpoint: None,
        })
    }

    /// `hop env`: the launch environment of a prompt state.
    pub fn env(&self, id: &StateId) -> Result<Env, Error> {
        let loaded = self.load(id)?;
        if loaded.kind != Kind::Prompt {
            return Err(Error::WrongKind {
                id: id.to_string(),
                expected: "prompt",
                found: loaded.kind,
            });
        }
        self.env_for(&loaded.state)
    }

    fn live_workspace(&self, attempt: &AttemptId) -> Result<PathBuf, Error> {
        let dir = self.workspace(attempt);
        if dir.is_dir() {
            Ok(dir)
        } else {
            Err(Error::WorkspaceMissing {
                attempt: attempt.to_string(),
                path: dir.display().to_string(),
            })
        }
    }

    /// Appends an attempt state after `head` (run_parent = head, plus `extra` parents) and moves
    /// the attempt's head ref to it by compare-and-swap.
    fn append(
        &self,
        head: &Loaded,
        kind: Kind,
        tree: &TreeId,
        extra: Vec<Parent>,
        git_extra: &[CommitId],
        summary: Option<String>,
    ) -> Result<Loaded, Error> {
        let attempt = head
            .state
            .attempt
            .clone()
            .ok_or_else(|| Error::NoAttempt(head.state.id.to_string()))?;
        if summary
            .as_deref()
            .is_some_and(hpp_core::secrets::looks_secret)
        {
            return Err(Error::Secret("summary"));
        }
        // A state keeps its workspace's tree: a file it adds that holds a secret stays out.
        if let Some(before) = TreeId::parse(&head.state.tree)
            && let Some((path, shape)) =
                crate::outbound::secret_file_added(self.store, &before, tree)?
        {
            return Err(Error::SecretFile { path, shape });
        }
        let mut parents = vec![Parent {
            role: Role::RunParent,
            state: head.state.id.clone(),
        }];
        parents.extend(extra);
        let state = State {
            id: new_state_id(kind),
            task: head.state.task.clone(),
            attempt: Some(attempt.clone()),
            base: head.state.base.clone(),
            agent: head.state.agent.clone(),
            tree: tree.to_string(),
            parents,
            prompt_digest: None,
            summary,
            created_at: now_rfc3339(),
        };
        let mut git_parents = vec![head.commit.clone()];
        git_parents.extend_from_slice(git_extra);
        let loaded = self.write(&state, &git_parents)?;
        self.pin(&loaded)?;
        self.store
            .move_ref(&Self::attempt_ref(&attempt), &head.commit, &loaded.commit)
            .map_err(moved)?;
        Ok(loaded)
    }

    /// Snapshots the attempt's live workspace as a checkpoint after its head.
    fn checkpoint(&self, attempt: &AttemptId) -> Result<Loaded, Error> {
        let head = self.attempt_head(attempt)?;
        let tree = Store::snapshot_of(&self.live_workspace(attempt)?)?;
        self.append(&head, Kind::Checkpoint, &tree, Vec::new(), &[], None)
    }

    fn attempt_of(&self, loaded: &Loaded) -> Result<AttemptId, Error> {
        loaded
            .state
            .attempt
            .clone()
            .ok_or_else(|| Error::NoAttempt(loaded.state.id.to_string()))
    }

    /// `hop prompt --from STATE`: checkpoints the attempt's workspace, then records the
    /// follow-up prompt against the current accepted state.
    pub fn prompt(&self, from: &StateId, prompt: &[u8]) -> Result<Prompted, Error> {
        refuse_bad_prompt(prompt)?;
        let from = self.load(from)?;
        let attempt = self.attempt_of(&from)?;
        let checkpoint = self.checkpoint(&attempt)?;
        let accepted = self.accepted()?;
        let id = new_state_id(Kind::Prompt);
        let state = State {
            id: id.clone(),
            task: checkpoint.state.task.clone(),
            attempt: Some(attempt.clone()),
            base: checkpoint.state.base.clone(),
            agent: checkpoint.state.agent.clone(),
            tree: checkpoint.state.tree.clone(),
            parents: vec![
                Parent {
                    role: Role::RunParent,
                    state: checkpoint.state.id.clone(),
                },
                Parent {
                    role: Role::CanonicalAnchor,
                    state: accepted.state.id.clone(),
                },
            ],
            prompt_digest: Some(states::prompt_digest(prompt)),
            summary: None,
            created_at: now_rfc3339(),
        };
        let loaded = self.write(
            &state,
            &[checkpoint.commit.clone(), accepted.commit.clone()],
        )?;
        self.record_prompt(&id, prompt)?;
        self.pin(&loaded)?;
        self.store
            .move_ref(
                &Self::attempt_ref(&attempt),
                &checkpoint.commit,
                &loaded.commit,
            )
            .map_err(moved)?;
        Ok(Prompted {
            env: self.env_for(&state)?,
            state: loaded,
            checkpoint: Some(checkpoint.state.id),
        })
    }

    /// Returns the exact prompt bytes of a prompt state.
    pub fn prompt_bytes(&self, id: &StateId) -> Result<Option<Vec<u8>>, Error> {
        match self.store.tip(&Self::prompt_ref(id))? {
            Some(commit) => Ok(self.store.read_commit_file(&commit, "prompt")?),
            None => Ok(None),
        }
    }

    /// `hop state`: one state with its prompt and checks.
    pub fn state(&self, id: &StateId) -> Result<StateView, Error> {
        let loaded = self.load(id)?;
        let prompt = self
            .prompt_bytes(id)?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        Ok(StateView {
            pin: refs::hop_state(id.as_str()),
            prompt,
            digest_ok: loaded.recorded_digest.as_deref() == Some(&loaded.state.digest()),
            checks: self.checks_for(&loaded.state.tree)?,
            loaded,
        })
    }

    /// Returns the accepted chain from `head`, newest first.
    pub fn history(&self, head: &Loaded) -> Result<Vec<Loaded>, Error> {
        let mut out = vec![head.clone()];
        let mut current = head.clone();
        while let Some(parent) = current.state.parent(Role::CanonicalParent).cloned() {
            current = self.load(&parent)?;
            out.push(current.clone());
        }
        Ok(out)
    }

    /// `hop status`: the accepted head, its history and every attempt.
    pub fn status(&self) -> Result<Status, Error> {
        let accepted = self.accepted()?;
        let chain = self.history(&accepted)?;
        let landed: std::collections::BTreeSet<&StateId> = chain
            .iter()
            .filter_map(|l| l.state.parent(Role::ProposalParent))
            .collect();
        let mut attempts = Vec::new();
        for (name, commit) in self.store.list(refs::HOP_ATTEMPTS_PREFIX)? {
            let head = self.load_commit(&commit)?;
            let attempt = name.rsplit('/').next().unwrap_or_default().to_owned();
            let workspace = attempt
                .parse::<AttemptId>()
                .map(|a| self.workspace(&a))
                .unwrap_or_default();
            attempts.push(AttemptView {
                attempt,
                task: head.state.task.clone(),
                agent: head.state.agent.clone(),
                base: head.state.base.clone(),
                status: if landed.contains(&head.state.id) {
                    "landed"
                } else {
                    states::attempt_status(head.kind)
                },
                head_kind: head.kind,
                head: head.state.id,
                workspace_exists: workspace.is_dir(),
                workspace: workspace.display().to_string(),
            });
        }
        let history = chain.iter().map(|l| l.state.id.clone()).collect();
        Ok(Status {
            accepted,
            history,
            attempts,
            states: self.store.list(refs_states())?.len(),
        })
    }
}

fn refs_states() -> &'static str {
    store::refs::HOP_STATES_PREFIX
}

fn invalid_ref_name(name: &str) -> bool {
    name.parse::<store::refs::LoopId>().is_err()
}
