//! The exit table: the only place that decides what a failure means to the user.
//!
//! 0 ok · 1 warn or manual gate · 2 block or refused input · 3 usage or internal error.

use std::fmt;

use crate::{attest, events, evidence};
use hpp_core::manifest;
use hpp_store as store;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Exit {
    /// The command did what was asked and the answer is yes.
    Ok = 0,
    /// The command finished and the answer is "not yet" (warn, manual gate).
    Warn = 1,
    /// A block verdict or refused input.
    Block = 2,
    /// A usage or internal error.
    Fault = 3,
}

impl Exit {
    /// Returns the process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// What kind of failure a [`CliError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Refused input or a blocked action: exit 2.
    Refused,
    /// A usage error: exit 3.
    Usage,
    /// Something failed that should not have: exit 3, with the whole cause chain.
    Internal,
}

/// A failure as the user will read it: `hpp: <message>`, then `hint:` lines.
#[derive(Debug)]
pub struct CliError {
    /// What kind of failure it is.
    pub kind: Kind,
    /// The one-line reason.
    pub message: String,
    /// Commands or advice that would help, one per line.
    pub hints: Vec<String>,
}

impl CliError {
    /// A refusal (exit 2).
    pub fn refused(message: impl fmt::Display) -> Self {
        Self {
            kind: Kind::Refused,
            message: message.to_string(),
            hints: Vec::new(),
        }
    }

    /// A usage error (exit 3).
    pub fn usage(message: impl fmt::Display) -> Self {
        Self {
            kind: Kind::Usage,
            message: message.to_string(),
            hints: Vec::new(),
        }
    }

    /// An internal error (exit 3), with the cause chain in the message; or, when the cause is
    /// that the process ran out of file descriptors, a refusal that names the limit (exit 2):
    /// the user's `ulimit -n`, not a fault of ours.
    pub fn internal(context: &str, error: &dyn std::error::Error) -> Self {
        if out_of_descriptors(error) {
            return Self::out_of_descriptors(context);
        }
        let mut message = format!("internal error: {context}: {error}");
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        Self {
            kind: Kind::Internal,
            message,
            hints: Vec::new(),
        }
    }

    /// The refusal for a command that ran out of file descriptors while `what`.
    pub fn out_of_descriptors(what: &str) -> Self {
        let limit = store::descriptors::limit();
        let named = limit.map_or_else(String::new, |l| {
            format!(" (the limit is {l}, see `ulimit -n`)")
        });
        let advice = match limit {
            Some(l) if l >= 256 => "close what holds descriptors, or raise the limit (`ulimit -n` higher) and run it again".to_owned(),
            _ => "raise the limit (`ulimit -n 256` or more) and run it again".to_owned(),
        };
        Self::refused(format!("{what}: too many open files{named}")).hint(advice)
    }

    /// Adds a hint line.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Returns the exit code for this failure.
    pub fn exit(&self) -> Exit {
        match self.kind {
            Kind::Refused => Exit::Block,
            Kind::Usage | Kind::Internal => Exit::Fault,
        }
    }
}

/// Whether `error`, or any error it was caused by, is the operating system saying that no file
/// descriptor is left (EMFILE: this process's `ulimit -n`; ENFILE: the system's table). The
/// errors arrive through gix and the standard library, borrowed and not always with the I/O
/// error as a source, so their text is read: `(os error N)` is how the standard library shows
/// every such error, and the system's own sentence is what other layers keep.
fn out_of_descriptors(error: &dyn std::error::Error) -> bool {
    let mut cause = Some(error);
    while let Some(e) = cause {
        let text = e.to_string();
        if ["(os error 24)", "(os error 23)", "Too many open files"]
            .iter()
            .any(|sign| text.contains(sign))
        {
            return true;
        }
        cause = e.source();
    }
    false
}

// The store: what the repository holds, or does not, is the user's input (exit 2); a git that
// cannot run, a disk that cannot flush and gix failing are ours to report (exit 3).
impl From<store::Error> for CliError {
    fn from(e: store::Error) -> Self {
        use store::Error as E;
        match e {
            E::NotARepository { .. } => CliError::refused(&e)
                .hint("run it inside a git repository, or create one with `git init`"),
            E::UnsupportedFormat { .. } => CliError::refused(e).hint(
                "git-hpp works in repositories git makes by default (SHA-1 objects, the files ref backend); `git init` without --object-format or --ref-format makes one",
            ),
            E::ConfigParameters(_) => CliError::refused(e)
                .hint("give each setting as `git -c section.key=value`, as git reads it"),
            E::Clash { .. } => CliError::refused(e)
                .hint("loop names nest like branch names: `a` and `a/b` cannot both exist"),
            E::NoSuchRevision { ref spec } if spec == "HEAD" => {
                CliError::refused("HEAD has no commit yet: the branch is unborn").hint(
                    "commit first (`git commit`); until then `git hpp attest verify` checks the workspace itself",
                )
            }
            E::Shallow { .. } => CliError::refused(e).hint(
                "work in a clone with the whole history, or deepen this one: git fetch --unshallow",
            ),
            E::ShallowRange { .. } => CliError::refused(e).hint(
                "deepen the clone until it reaches the range's base (git fetch --deepen N, or --unshallow), or verify a shorter range",
            ),
            E::Moved { .. }
            | E::Busy { .. }
            | E::Contended { .. }
            | E::NotACommit { .. }
            | E::NotCommitish { .. }
            | E::NoSuchRevision { .. }
            | E::NotATree { .. }
            | E::MissingFile { .. }
            | E::Symbolic { .. }
            | E::InvalidRefName { .. }
            | E::Bare { .. }
            | E::Unmerged { .. }
            | E::UnstorableMode { .. }
            | E::OptionLikeRemote { .. }
            | E::GitFailed { .. }
            | E::GitHung { .. }
            | E::BadFetchTimeout { .. } => CliError::refused(e),
            E::GitUnavailable { ref what, .. } => {
                let context = what.clone();
                CliError::internal(&context, &e)
                    .hint("install git and put it on PATH (git 2.36 or newer)")
            }
            E::Git { ref context, .. } => {
                let context = context.clone();
                CliError::internal(&context, &e)
            }
            E::TooManyOpenFiles { ref what, .. } => CliError::out_of_descriptors(what),
            E::Flush { .. } | E::Io { .. } | E::NothingToWrite { .. } => {
                CliError::internal("writing to the repository", &e)
            }
        }
    }
}

impl From<crate::lanes::Error> for CliError {
    fn from(e: crate::lanes::Error) -> Self {
        use crate::lanes::Error as E;
        match e {
            E::Store(inner) => inner.into(),
            E::Collision { .. } => CliError::refused(&e)
                .hint("pick a disjoint territory, start a shared lane (--shared), or wait until the other lane is closed or dead"),
            E::Unsaved { ref id, .. } => {
                let hint = format!(
                    "commit and merge the work, or close the claim only with `git hpp lane close {id} --keep-worktree`"
                );
                CliError::refused(&e).hint(hint)
            }
            E::NoLaneHere { .. } => {
                CliError::refused(&e).hint("list the lanes with `git hpp lane list`")
            }
            other => CliError::refused(other),
        }
    }
}

impl From<crate::atlas::collect::Error> for CliError {
    fn from(e: crate::atlas::collect::Error) -> Self {
        use crate::atlas::collect::Error as E;
        match e {
            E::Store(inner) => inner.into(),
            E::Loops(inner) => inner.into(),
            E::Gates(inner) => inner.into(),
            E::Evidence(inner) => inner.into(),
            E::Lanes(inner) => inner.into(),
            E::Attest(inner) => inner.into(),
        }
    }
}

impl From<crate::deliberation::StoreError> for CliError {
    fn from(e: crate::deliberation::StoreError) -> Self {
        match e {
            crate::deliberation::StoreError::Store(inner) => inner.into(),
            other => CliError::refused(other),
        }
    }
}

impl From<crate::deliberation::decide::Error> for CliError {
    fn from(e: crate::deliberation::decide::Error) -> Self {
        use crate::deliberation::decide::Error as E;
        match e {
            E::Store(inner) => inner.into(),
            E::Sign(inner) => inner.into(),
            other => CliError::refused(other),
        }
    }
}

// A seat that changed the repository voids the session: refused, nothing sealed.
impl From<crate::deliberation::run::Error> for CliError {
    fn from(e: crate::deliberation::run::Error) -> Self {
        use crate::deliberation::run::Error as E;
        match e {
            E::Store(inner) => inner.into(),
            E::Rules(inner) => inner.into(),
            changed @ E::Changed { .. } => CliError::refused(changed),
        }
    }
}

impl From<events::Error> for CliError {
    fn from(e: events::Error) -> Self {
        match e {
            events::Error::Store(inner) => inner.into(),
            events::Error::Broken { ref id, .. } => {
                let hint = format!("inspect it with `git hpp event verify --loop {id}`");
                CliError::refused(e).hint(hint)
            }
            other => CliError::refused(other),
        }
    }
}

// The loop gates: a gate that does not hold is refused with what it requires; the log's and the
// store's errors are theirs.
impl From<crate::gates::Error> for CliError {
    fn from(e: crate::gates::Error) -> Self {
        use crate::gates::Error as E;
        match e {
            E::Loop(inner) => inner.into(),
            E::Store(inner) => inner.into(),
            E::Gate(refusal) => {
                let hint = format!("gate {} requires: {}", refusal.gate, refusal.requires);
                CliError::refused(refusal).hint(hint)
            }
            sign @ E::Sign(_) => CliError::refused(sign),
        }
    }
}

/// Each type listed maps every error to a refusal (exit 2) whose message is the error's own
/// sentence: the core's rules refuse the input they were handed, and nothing else.
macro_rules! refusals {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for CliError {
            fn from(e: $error) -> Self {
                CliError::refused(e)
            }
        })*
    };
}

// The pure protocol: every error is a refused input.
refusals!(
    manifest::Error,
    hpp_core::attestation::Error,
    hpp_core::board::Error,
    hpp_core::board::checker::UnknownProvider,
    hpp_core::citations::Error,
    hpp_core::context::Error,
    hpp_core::continuity::Error,
    hpp_core::coverage::Error,
    hpp_core::decision::Error,
    hpp_core::deliberation::Error,
    hpp_core::evals::Error,
    hpp_core::evidence::InvalidEvidenceId,
    hpp_core::event_loop::Error,
    hpp_core::findings::Error,
    hpp_core::gate::Error,
    hpp_core::gotcha::Error,
    hpp_core::graph::Error,
    hpp_core::hop::Error,
    hpp_core::host::Error,
    hpp_core::lane::claim::Error,
    hpp_core::lane::liveness::Error,
    hpp_core::maps::Error,
    hpp_core::mutation::Error,
    hpp_core::policy::Error,
    hpp_core::retrieval::Error,
    hpp_core::routing::Error,
    hpp_core::run::BadTimeout,
    hpp_core::workgraph::Error,
    store::refs::InvalidLoopId,
);

// The application's side effects whose every failure is about what the user handed in: a key
// file, an allowed-signers file, a module tree, a hook path, an artifact pattern, a profile.
refusals!(
    crate::sign::Error,
    crate::modules::Error,
    crate::modules::files::Error,
    crate::modules::install::Error,
    crate::hooks::Error,
    crate::init::run::Error,
    crate::init::UnknownPolicyMode,
    crate::evidence::artifacts::Error,
);

// The bounded runner: a command that cannot be run as given is refused input; the operating
// system failing us midway is ours.
impl From<crate::process::Error> for CliError {
    fn from(e: crate::process::Error) -> Self {
        use crate::process::Error as E;
        match e {
            E::EmptyCommand | E::BadTimeout | E::CouldNotStart { .. } => CliError::refused(e),
            E::Thread { .. } | E::Wait { .. } | E::Kill { .. } => {
                CliError::internal("running a command", &e)
            }
        }
    }
}

// The trust policy: a policy that does not verify, a bad key or change is refused (exit 2); the
// store's failures are the store's.
impl From<crate::trust::Error> for CliError {
    fn from(e: crate::trust::Error) -> Self {
        use crate::trust::Error as E;
        match e {
            E::Store(inner) => inner.into(),
            E::Sign(inner) => inner.into(),
            refused @ E::Refused { .. } => CliError::refused(refused)
                .hint("check who changed refs/hpp/trust (`git log refs/hpp/trust`); a fetch leaves such a policy staged, never takes it in"),
            missing @ E::PinnedButMissing { .. } => CliError::refused(missing).hint(
                "fetch the policy from the remote that has it (`git hpp fetch`); if the remote's was deleted, ask the repository's owner; unset hpp.trustRoot only on purpose",
            ),
            E::NotPinned { ref fingerprint, .. } => {
                let hint = format!(
                    "check that root with the repository's owner, then `git hpp trust pin {fingerprint} --apply`"
                );
                CliError::refused(e).hint(hint)
            }
            other => CliError::refused(other),
        }
    }
}

// Handoff logs: the store's failures are the store's; an unreadable handoff is refused.
impl From<crate::continuity::Error> for CliError {
    fn from(e: crate::continuity::Error) -> Self {
        match e {
            crate::continuity::Error::Store(inner) => inner.into(),
            other => CliError::refused(other),
        }
    }
}

// The gates: bad input is refused; a verification that fails to run is its own error's.
impl From<crate::gates::push::Error> for CliError {
    fn from(e: crate::gates::push::Error) -> Self {
        match e {
            crate::gates::push::Error::Store(inner) => inner.into(),
            crate::gates::push::Error::Attest(inner) => inner.into(),
            other => CliError::refused(other),
        }
    }
}

// A record a push brings that keeps a secret: the push is refused.
impl From<crate::gates::secrets::Error> for CliError {
    fn from(e: crate::gates::secrets::Error) -> Self {
        match e {
            crate::gates::secrets::Error::Store(inner) => inner.into(),
            leak => CliError::refused(format!("push refused: {leak}")),
        }
    }
}

// The gotcha memory: the store's failures are the store's; everything else is refused.
impl From<crate::gotcha::Error> for CliError {
    fn from(e: crate::gotcha::Error) -> Self {
        match e {
            crate::gotcha::Error::Store(inner) => inner.into(),
            other => CliError::refused(other),
        }
    }
}

// Reconciling fetched records: every record-level outcome is in the report; what fails here is
// the store's, or Hop's reading of its own states (not the user's input).
impl From<crate::reconcile::Error> for CliError {
    fn from(e: crate::reconcile::Error) -> Self {
        match e {
            crate::reconcile::Error::Store(inner) => inner.into(),
            crate::reconcile::Error::Hop(inner) => {
                CliError::internal("re-landing the other side's Hop landings", &*inner)
            }
        }
    }
}

// The board's log: the store's failures are the store's; everything else is refused.
impl From<crate::board::Error> for CliError {
    fn from(e: crate::board::Error) -> Self {
        match e {
            crate::board::Error::Store(inner) => inner.into(),
            other => CliError::refused(other),
        }
    }
}

impl From<evidence::Error> for CliError {
    fn from(e: evidence::Error) -> Self {
        match e {
            evidence::Error::Store(inner) => inner.into(),
            evidence::Error::Process(ref inner) => {
                CliError::internal("running the criterion command", inner)
            }
            other => CliError::refused(other),
        }
    }
}

// Criterion sensitivity: the copies it makes and the mutants it runs are ours to fail (3).
impl From<crate::evidence::mutate::Error> for CliError {
    fn from(e: crate::evidence::mutate::Error) -> Self {
        use crate::evidence::mutate::Error as E;
        match e {
            E::Store(inner) => inner.into(),
            E::Io { .. } | E::Process(_) => CliError::internal("evidence mutate", &e),
            other => CliError::refused(other),
        }
    }
}

impl From<attest::Error> for CliError {
    fn from(e: attest::Error) -> Self {
        match e {
            attest::Error::Store(inner) => inner.into(),
            attest::Error::Evidence(inner) => inner.into(),
            attest::Error::Loop(inner) => inner.into(),
            other => CliError::refused(other),
        }
    }
}
