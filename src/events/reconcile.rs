//! A loop two machines appended to between fetches: a real conflict, settled by a person.
//!
//! A loop is one work item's history, so two diverged histories cannot be merged event by
//! event. `git hpp event reconcile --loop L --keep ours|theirs` keeps one side as the loop and
//! joins the other to it without losing it: the loop moves forward to a *join* commit whose
//! first parent is the kept side's last event and whose second parent is the other side's.
//! The join's tree is the kept event's tree (so the loop's head event and recorded state are
//! unchanged) plus `reconcile.json` (`hpp.loop-reconcile/v1`: which side was kept, both tips,
//! the remote, when). The other side also stays under
//! `refs/hpp/preserved/loops/<loop>/<commit>`, created once and never deleted.
//!
//! Because the join contains both tips, the local loop moves forward, and so does the remote's
//! on the next `git hpp push`: no ref is ever forced. Reading a loop skips joins
//! ([`super::chain`] skips them): the kept events are the loop's, the next event is appended on the join.

use serde::Serialize;

use hpp_core::event_log::{JOIN_FILE, JOIN_SIGNATURE_FILE};
use hpp_core::event_loop::LoopSpec;
use hpp_core::record::canonical_json;
use hpp_store::refs::{self, LoopId};
use hpp_store::{self as store, CommitId, Relation, Store};

use super::Error as LoopError;

/// The schema of the blob a join adds beside the kept event ([`JOIN_FILE`]).
pub const SCHEMA: &str = "hpp.loop-reconcile/v1";

/// Which side becomes the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// This machine's history.
    Ours,
    /// The remote's, as the last fetch staged it.
    Theirs,
}

/// Why a reconciliation was refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The loop has no history here.
    #[error("loop {id} has no events here")]
    NoLoop {
        /// The loop.
        id: LoopId,
    },
    /// Nothing of the loop is staged from the remote.
    #[error("nothing of loop {id} is staged from {remote}: run `git hpp fetch {remote}` first")]
    NothingStaged {
        /// The loop.
        id: LoopId,
        /// The remote.
        remote: String,
    },
    /// The two sides have not diverged: a fetch or a push settles it.
    #[error("loop {id} has not diverged from {remote}'s: {how}")]
    NotDiverged {
        /// The loop.
        id: LoopId,
        /// The remote.
        remote: String,
        /// What to do instead.
        how: &'static str,
    },
    /// The side to keep does not verify.
    #[error("the side to keep ({side}) does not verify: {problem}")]
    KeptBroken {
        /// `ours` or `theirs`.
        side: &'static str,
        /// Why.
        problem: String,
    },
    /// The person's signature could not be made.
    #[error("the reconciliation could not be signed: {0}")]
    Sign(String),
    /// The loop moved while reconciling.
    #[error("loop {id} moved while it was being reconciled: run the command again")]
    Moved {
        /// The loop.
        id: LoopId,
    },
    /// Reading the loop failed.
    #[error(transparent)]
    Loop(#[from] LoopError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// The `reconcile.json` of a join.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The loop.
    #[serde(rename = "loop")]
    pub loop_id: String,
    /// Which side was kept.
    pub keep: Keep,
    /// The kept side's last event commit.
    pub kept: String,
    /// The other side's tip, joined and preserved.
    pub preserved: String,
    /// The ref that preserves it.
    pub preserved_ref: String,
    /// The remote the other side came from.
    pub remote: String,
    /// When, RFC 3339 UTC.
    pub at: String,
    /// The person who chose, when they signed the choice ([`JOIN_SIGNATURE_FILE`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// Signs a join record's bytes: the armored signature, or why it could not be made.
pub type Signer<'a> = &'a dyn Fn(&[u8]) -> Result<Vec<u8>, String>;

/// A person's signature over a join record's bytes: who, and how to sign.
pub struct Person<'a> {
    /// The principal recorded as `by`.
    pub by: &'a str,
    /// Signs the record's bytes; returns the armored signature or why it could not.
    pub sign: Signer<'a>,
}

/// What [`reconcile`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Reconciled {
    /// The join commit, now the loop's tip.
    pub commit: CommitId,
    /// The record it carries.
    pub record: Record,
    /// How many events the kept side holds.
    pub events: usize,
}

/// Keeps one side of a diverged loop (the local history or the one staged from `remote`) and
/// joins the other to it; see the module.
pub fn reconcile(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    remote: &str,
    keep: Keep,
    at: &str,
    person: Option<&Person<'_>>,
) -> Result<Reconciled, Error> {
    let name = refs::loop_log(id);
    let ours = store
        .tip(&name)?
        .ok_or_else(|| Error::NoLoop { id: id.clone() })?;
    let staged = format!(
        "{}{}/{}",
        store::STAGING_PREFIX,
        store.staging_name(remote),
        &name[refs::PREFIX.len()..]
    );
    let theirs = store.tip(&staged)?.ok_or_else(|| Error::NothingStaged {
        id: id.clone(),
        remote: remote.to_owned(),
    })?;
    let not_diverged = |how| Error::NotDiverged {
        id: id.clone(),
        remote: remote.to_owned(),
        how,
    };
    match store.relation(&ours, &theirs)? {
        Relation::Same => return Err(not_diverged("both sides are the same")),
        Relation::Ahead => {
            return Err(not_diverged(
                "this side holds the remote's; `git hpp push` shares it",
            ));
        }
        Relation::Behind => {
            return Err(not_diverged(
                "the remote's holds this side's; `git hpp fetch` takes it",
            ));
        }
        Relation::Diverged(_) => {}
    }
    let (kept_state, side) = match keep {
        Keep::Ours => (super::chain::read(store, spec, id)?, "ours"),
        Keep::Theirs => (
            super::chain::read_with_chain_at(store, spec, id, staged)?.0,
            "theirs",
        ),
    };
    if kept_state.chain.is_broken() {
        return Err(Error::KeptBroken {
            side,
            problem: kept_state.chain.problem.clone().unwrap_or_default(),
        });
    }
    let (kept, other) = match keep {
        Keep::Ours => (ours.clone(), theirs),
        Keep::Theirs => (theirs, ours.clone()),
    };
    let preserved_ref = refs::preserved_loop(id, other.as_str());
    let record = Record {
        schema: SCHEMA,
        loop_id: id.to_string(),
        keep,
        kept: kept.to_string(),
        preserved: other.to_string(),
        preserved_ref: preserved_ref.clone(),
        remote: remote.to_owned(),
        at: at.to_owned(),
        by: person.map(|p| p.by.to_owned()),
    };
    let bytes = canonical_json(&serde_json::to_value(&record).expect("a record serialises"));
    let signature = person
        .map(|p| (p.sign)(&bytes))
        .transpose()
        .map_err(Error::Sign)?;
    let mut files: Vec<(&str, &[u8])> = vec![(JOIN_FILE, &bytes)];
    if let Some(signature) = &signature {
        files.push((JOIN_SIGNATURE_FILE, signature));
    }
    match store.create_ref(&preserved_ref, &other) {
        Ok(()) | Err(store::Error::Moved { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let message = format!(
        "hpp reconcile {id}: kept {side} ({}), joined {}\n",
        &kept.as_str()[..12],
        &other.as_str()[..12]
    );
    let commit = match store.join_record(&name, &ours, &kept, &other, &files, &message) {
        Ok(commit) => commit,
        Err(store::Error::Moved { .. } | store::Error::Busy { .. }) => {
            return Err(Error::Moved { id: id.clone() });
        }
        Err(e) => return Err(e.into()),
    };
    Ok(Reconciled {
        commit,
        record,
        events: kept_state.chain.events,
    })
}

/// A join another machine wrote, as [`read_join`] found it well formed.
#[derive(Debug, Clone)]
pub struct Join {
    /// The join commit.
    pub commit: CommitId,
    /// Its first parent: the side kept as the loop.
    pub kept: CommitId,
    /// Its second parent: the side joined and preserved.
    pub preserved: CommitId,
    /// The ref that preserves it (`refs/hpp/preserved/loops/<loop>/<commit>`).
    pub preserved_ref: String,
    /// The record's bytes.
    pub record: Vec<u8>,
    /// The person it names as having chosen.
    pub by: Option<String>,
    /// Their signature over [`Join::record`], when the join carries one.
    pub signature: Option<Vec<u8>>,
}

/// Reads the join `commit` of loop `id` (parents `parents`) and checks that it is what
/// [`reconcile`] writes: two parents, the first parent's tree plus a [`JOIN_FILE`] only, a
/// record (and a person's signature) of this loop naming the first parent as kept and the second as preserved under its
/// preserved ref. Returns why when it is not. (Whether the choice was a person's is their
/// signature's to say: the caller checks it under the signature rule in force.)
pub fn read_join(
    store: &Store,
    id: &LoopId,
    commit: &CommitId,
    parents: &[CommitId],
) -> Result<Result<Join, String>, store::Error> {
    let short = &commit.as_str()[..12];
    let [kept, preserved] = parents else {
        return Ok(Err(format!(
            "{short} has {} parents, not two",
            parents.len()
        )));
    };
    let Some(bytes) = store.read_commit_file(commit, JOIN_FILE)? else {
        return Ok(Err(format!("{short} has two parents and no {JOIN_FILE}")));
    };
    let Ok(serde_json::Value::Object(record)) = serde_json::from_slice::<serde_json::Value>(&bytes)
    else {
        return Ok(Err(format!(
            "the {JOIN_FILE} of {short} is not a JSON object"
        )));
    };
    let field = |key: &str| record.get(key).and_then(serde_json::Value::as_str);
    let preserved_ref = refs::preserved_loop(id, preserved.as_str());
    let expected = [
        ("schema", SCHEMA),
        ("loop", id.as_str()),
        ("kept", kept.as_str()),
        ("preserved", preserved.as_str()),
        ("preserved_ref", preserved_ref.as_str()),
    ];
    for (key, want) in expected {
        if field(key) != Some(want) {
            return Ok(Err(format!(
                "the {JOIN_FILE} of {short} does not match the join: {key} is not {want}"
            )));
        }
    }
    if !matches!(field("keep"), Some("ours" | "theirs")) {
        return Ok(Err(format!(
            "the {JOIN_FILE} of {short} names no side kept (ours or theirs)"
        )));
    }
    let changed = store.changed_paths(&store.commit_tree(kept)?, &store.commit_tree(commit)?)?;
    if let Some(other) = changed
        .iter()
        .find(|p| p.as_str() != JOIN_FILE && p.as_str() != JOIN_SIGNATURE_FILE)
    {
        return Ok(Err(format!(
            "{short} changes {other} of the kept event; a join adds {JOIN_FILE} only"
        )));
    }
    Ok(Ok(Join {
        commit: commit.clone(),
        kept: kept.clone(),
        preserved: preserved.clone(),
        preserved_ref,
        by: field("by").map(str::to_owned),
        signature: store.read_commit_file(commit, JOIN_SIGNATURE_FILE)?,
        record: bytes,
    }))
}
