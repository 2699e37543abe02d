//! Many machines, one history: fetched records reconciled into `refs/hpp/`.
//!
//! A fetch stages the remote's records under `refs/hpp-remote/<remote>/` (the store's `sync`),
//! so a plain `git fetch` or `git pull` never fails on them. [`fetch`] then decides, for each
//! staged record, how far it is taken into `refs/hpp/` (forward only), and moves them all in
//! one ref transaction, each edit a compare-and-swap:
//!
//! - a record only the remote has is created; one the remote moved on is fast-forwarded; one
//!   the remote lacks or has an older form of is left for the next push;
//! - a **set log** ([`Kind::Set`]: the board, lane logs with their heartbeats, handoffs, the
//!   gotcha memory), whose entries commute, is merged when both sides wrote: a merge commit
//!   whose log reads every entry of both sides exactly once, in the graph's Lamport order, and
//!   which any machine merging the same two tips writes identically (the store's `merge`). A
//!   board whose joined events break a board rule (both machines moved one item) is not merged
//!   but reported;
//! - the **accepted chain** of Hop re-lands the other side's landings on this side's head (as
//!   `hop land` would: `Hop::reland`), or reports which overlap;
//! - a **sequence** (a loop: one work item's history) that diverged is a real conflict: it is
//!   reported with the command that settles it, `git hpp event reconcile`;
//! - a record created once (evidence, attestations, deliberations, Hop states) that differs is
//!   reported; nothing writes one twice;
//! - the **trust policy** (`refs/hpp/trust`) is taken in only when the staged log verifies from
//!   the pinned root (each change signed by the roots before it); a clone with no pin trusts
//!   the root of the first policy it fetches, pins it, and the report says so.
//!
//! Nothing is overwritten: the local record stays where it was on every outcome but a
//! fast-forward or a merge that contains it, and the remote's stays staged.

use serde::Serialize;

use crate::events::reconcile::Join;
use hpp_core::event_loop::LoopSpec;
use hpp_core::event_loop::gates::Standing;
use hpp_store::{self as store, CommitId, RefMove, Relation, Store, refs};

/// Why a reconciliation failed (the store; every record-level outcome is in the [`Report`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// Hop failed while re-landing.
    #[error(transparent)]
    Hop(#[from] Box<crate::hop::Error>),
}

/// A log whose entries commute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetLog {
    /// `refs/hpp/board/log`: merged only if the joined events keep every board rule.
    Board,
    /// `refs/hpp/lanes/<lane>`: claims, heartbeats and the close; the merge holds the record
    /// that stands (a close over anything, else the later heartbeat).
    Lane,
    /// `refs/hpp/handoffs/<lane>`.
    Handoffs,
    /// `refs/hpp/gotchas/failures` and `refs/hpp/gotchas/promoted`.
    Gotchas,
}

/// How a record behaves when two machines wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Entries commute: merged.
    Set(SetLog),
    /// Hop's accepted chain: the other side's landings re-landed.
    Accepted,
    /// A loop: a conflict, settled by `git hpp event reconcile --loop <loop>`.
    Loop(String),
    /// Anything else: created once, or moved by one writer.
    Other,
}

/// The kind of the record `name` (`refs/hpp/…`).
pub fn kind(name: &str) -> Kind {
    if name == refs::BOARD_LOG {
        Kind::Set(SetLog::Board)
    } else if name.starts_with(refs::LANES_PREFIX) {
        Kind::Set(SetLog::Lane)
    } else if name.starts_with(refs::HANDOFFS_PREFIX) {
        Kind::Set(SetLog::Handoffs)
    } else if name == refs::GOTCHA_FAILURES || name == refs::GOTCHA_PROMOTED {
        Kind::Set(SetLog::Gotchas)
    } else if name == refs::HOP_ACCEPTED {
        Kind::Accepted
    } else if let Some(id) = name.strip_prefix(refs::LOOPS_PREFIX) {
        Kind::Loop(id.to_owned())
    } else {
        Kind::Other
    }
}

/// A record both sides wrote that was not reconciled.
#[derive(Debug, Clone, Serialize)]
pub struct Diverged {
    /// The local record.
    #[serde(rename = "ref")]
    pub name: String,
    /// Where the remote's form of it is staged.
    pub staged: String,
    /// Why it was not reconciled.
    pub reason: String,
    /// What to do.
    pub next: String,
}

/// A loop taken in through a join that kept the remote's side: this machine's side stays
/// reachable under its preserved ref, and the loop now reads the kept side.
#[derive(Debug, Clone, Serialize)]
pub struct Preserved {
    /// The loop.
    #[serde(rename = "ref")]
    pub name: String,
    /// The join commit (its `reconcile.json` says who kept what, and when).
    pub join: String,
    /// The side kept as the loop.
    pub kept: String,
    /// Where this machine's side is preserved.
    pub preserved_ref: String,
}

/// What [`fetch`] did.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Report {
    /// The remote.
    pub remote: String,
    /// Where its records are staged.
    pub staging: String,
    /// Records created or fast-forwarded from the remote.
    pub updated: Vec<String>,
    /// Set logs and accepted chains both sides wrote, now joined (the merge is local until
    /// pushed).
    pub merged: Vec<String>,
    /// Records that hold something the remote lacks (to push).
    pub ahead: Vec<String>,
    /// Records already equal on both sides.
    pub up_to_date: usize,
    /// How many records the remote holds under `refs/hpp/`.
    pub remote_records: usize,
    /// Records both sides wrote that were not reconciled; the local form kept.
    pub diverged: Vec<Diverged>,
    /// Loops the remote reconciled keeping its side: this machine's events are preserved.
    pub preserved: Vec<Preserved>,
    /// Whether the local notes mirror moved to take in the remote's notes history (its lines
    /// only when every one is backed by a record held here; the mirror is then rebuilt from
    /// the records held here).
    pub notes_joined: bool,
    /// Where the remote's notes are staged, when it has them.
    #[serde(skip)]
    pub notes_staged: Option<String>,
    /// How many notes the rebuild from the records held here changed after the fetch.
    pub notes_rebuilt: usize,
    /// The trust policy's root this fetch pinned (`hpp.trustRoot`), trusted on first use.
    pub pinned: Option<String>,
    /// How the policy's roots changed with this fetch (`root removed, root2 added`).
    pub roots_changed: Option<String>,
}

/// Fetches `remote`'s records into staging and reconciles each into `refs/hpp/`, reading each
/// before a ref moves: the trust policy first (it decides whose signatures count), then the
/// records, then the loops (whose gates name those records), Hop's accepted chain last.
pub fn fetch(store: &Store, spec: &LoopSpec, remote: &str) -> Result<Report, Error> {
    let pin = store.config_string(crate::trust::PIN_KEY);
    let roots_before = policy_roots(store)?;
    let staged = store.fetch_staging(remote)?;
    let mut report = Report {
        remote: remote.to_owned(),
        staging: staged.prefix.clone(),
        notes_staged: staged.notes.clone(),
        remote_records: staged.refs.len(),
        ..Report::default()
    };
    // Hop's accepted chain last: re-landing reads the other side's states through their pins,
    // which are taken in first.
    let mut order: Vec<&(String, CommitId)> = staged.refs.iter().collect();
    order.sort_by_key(|(name, _)| match kind(name) {
        _ if name == refs::TRUST => 0,
        Kind::Loop(_) => 2,
        Kind::Accepted => 3,
        _ => 1,
    });
    // Every record but Hop's chain is decided against a view that holds the moves decided
    // before it (the policy before the records, the records before the loops whose gates name
    // them); then they all move in one ref transaction.
    let mut view = store.view();
    let mut moves: Vec<RefMove> = Vec::new();
    let mut decided: Vec<(String, String, Outcome)> = Vec::new();
    let mut accepted = None;
    let mut boards = crate::board::Writes::default();
    // Which records are here, by name, in one listing: a fetch that brings 10,000 new records
    // would otherwise look each one up twice to find it absent. A record created here after
    // this listing makes its create lose its compare-and-swap, reported as raced.
    let mut held = store.list_names(refs::PREFIX)?;
    for (name, theirs) in order {
        let staged_name = format!("{}{}", staged.prefix, &name[refs::PREFIX.len()..]);
        if kind(name) == Kind::Accepted {
            accepted = Some((name, theirs, staged_name));
            continue;
        }
        let outcome = if name == refs::TRUST
            && let Err(refused) = trusted(&view, &staged_name, pin.as_deref())?
        {
            refused
        } else {
            let ours = if held.contains(name) {
                view.tip(name)?
            } else {
                None
            };
            match admissible(
                &view,
                spec,
                name,
                ours.clone(),
                theirs,
                &staged_name,
                &mut boards,
            )? {
                Err(reason) => Outcome::Diverged {
                    reason,
                    next: format!(
                        "it stays staged at {staged_name}; compare with `git log {staged_name}`: nothing here moved"
                    ),
                },
                Ok(dropped) => {
                    if let Some(join) = &dropped
                        && view.tip(&join.preserved_ref)?.is_none()
                    {
                        let preserve = RefMove {
                            name: join.preserved_ref.clone(),
                            expected: None,
                            new: join.preserved.clone(),
                        };
                        view.stage(&preserve.name, Some(&preserve.new));
                        held.insert(preserve.name.clone());
                        moves.push(preserve);
                    }
                    let (outcome, planned) =
                        plan(&view, name, ours, theirs, &staged_name, &mut boards)?;
                    if let Some(planned) = planned {
                        view.stage(&planned.name, Some(&planned.new));
                        moves.push(planned);
                    }
                    if let (Some(join), Outcome::Forwarded) = (dropped, &outcome) {
                        report.preserved.push(Preserved {
                            name: name.clone(),
                            join: join.commit.to_string(),
                            kept: join.kept.to_string(),
                            preserved_ref: join.preserved_ref,
                        });
                    }
                    outcome
                }
            }
        };
        decided.push((name.clone(), staged_name, outcome));
    }
    drop(view);
    // A board of 10,000 parsed writes took as long to free as the ref transaction takes.
    store.drop_with_caches(boards);
    let raced = make_moves(store, &moves)?;
    if let Some((name, theirs, staged_name)) = accepted {
        let outcome = take_accepted(store, theirs, &staged_name)?;
        decided.push((name.clone(), staged_name, outcome));
    }
    for (name, staged_name, outcome) in decided {
        let outcome = if raced.contains(&name) {
            again()
        } else {
            outcome
        };
        match outcome {
            Outcome::Created | Outcome::Forwarded => report.updated.push(name),
            Outcome::Merged => report.merged.push(name),
            Outcome::Same => report.up_to_date += 1,
            Outcome::Ahead => report.ahead.push(name),
            Outcome::Diverged { reason, next } => report.diverged.push(Diverged {
                name,
                staged: staged_name,
                reason,
                next,
            }),
        }
    }
    if report.updated.iter().any(|n| n == refs::TRUST) {
        // Pinned on first use, and remembered as the newest policy this clone verified.
        report.pinned = match crate::trust::in_force(store) {
            Ok(Some((_, crate::trust::Pinning::FirstUse { fingerprint }))) => Some(fingerprint),
            Ok(_) => None,
            Err(crate::trust::Error::Store(e)) => return Err(e.into()),
            // Verified before it was taken in; a failure here is reported by every reader.
            Err(_) => None,
        };
        report.roots_changed = roots_change(&roots_before, &policy_roots(store)?);
    }
    Ok(report)
}

/// The roots of the policy at refs/hpp/trust, by name (empty without one).
fn policy_roots(store: &Store) -> Result<Vec<String>, Error> {
    Ok(store
        .read_file(refs::TRUST, hpp_core::trust::POLICY_FILE)?
        .and_then(|bytes| hpp_core::trust::Policy::parse(&bytes).ok())
        .map(|p| p.roots.into_iter().collect())
        .unwrap_or_default())
}

/// `root removed, root2 added`, or `None` when the roots are the same (or there were none
/// before: a first policy is reported as pinned).
fn roots_change(before: &[String], after: &[String]) -> Option<String> {
    if before.is_empty() || before == after {
        return None;
    }
    let removed = before
        .iter()
        .filter(|r| !after.contains(r))
        .map(|r| format!("{r} removed"));
    let added = after
        .iter()
        .filter(|r| !before.contains(r))
        .map(|r| format!("{r} added"));
    Some(removed.chain(added).collect::<Vec<_>>().join(", "))
}

enum Outcome {
    Created,
    Forwarded,
    Merged,
    Same,
    Ahead,
    Diverged { reason: String, next: String },
}

const RACED: &str = "it moved here while the fetch ran";

/// The report of a record whose ref moved here while the fetch ran.
fn again() -> Outcome {
    Outcome::Diverged {
        reason: RACED.to_owned(),
        next: "run `git hpp fetch` again".to_owned(),
    }
}

/// Makes `moves` in one ref transaction; when one lost its race, nothing moved, and each is
/// then made on its own. Returns the refs whose move lost (moved here while the fetch ran).
fn make_moves(store: &Store, moves: &[RefMove]) -> Result<Vec<String>, Error> {
    match store.move_refs(moves) {
        Ok(taken) => return Ok(taken),
        Err(store::Error::Moved { .. } | store::Error::Busy { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let mut raced = Vec::new();
    for planned in moves {
        let made = match &planned.expected {
            None => store.create_ref(&planned.name, &planned.new),
            Some(expected) => store.move_ref(&planned.name, expected, &planned.new),
        };
        match made {
            Ok(()) => {}
            Err(store::Error::Moved { .. } | store::Error::Busy { .. }) => {
                raced.push(planned.name.clone());
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(raced)
}

/// Decides how far the remote's `theirs` of `name` (here at `ours`) is taken as its kind
/// allows, and the move that takes it (a set log's merge commit is written here; no ref moves).
fn plan(
    store: &Store,
    name: &str,
    ours: Option<CommitId>,
    theirs: &CommitId,
    staged: &str,
    boards: &mut crate::board::Writes,
) -> Result<(Outcome, Option<RefMove>), Error> {
    let to = |expected: Option<CommitId>, new: &CommitId| RefMove {
        name: name.to_owned(),
        expected,
        new: new.clone(),
    };
    let Some(ours) = ours else {
        return Ok((Outcome::Created, Some(to(None, theirs))));
    };
    let relation = match kind(name) {
        Kind::Set(_) => store.set_relation(name, &ours, theirs)?,
        _ => store.relation(&ours, theirs)?,
    };
    match relation {
        Relation::Same => return Ok((Outcome::Same, None)),
        Relation::Ahead => return Ok((Outcome::Ahead, None)),
        Relation::Behind => return Ok((Outcome::Forwarded, Some(to(Some(ours), theirs)))),
        Relation::Diverged(_) => {}
    }
    let log = match kind(name) {
        Kind::Set(log) => log,
        Kind::Loop(id) => {
            return Ok((
                Outcome::Diverged {
                    reason: "a loop is one work item's history and both machines appended to it"
                        .to_owned(),
                    next: format!(
                        "keep one side with `git hpp event reconcile --loop {id} --keep ours` (or \
                         `--keep theirs`); the other stays reachable"
                    ),
                },
                None,
            ));
        }
        Kind::Accepted | Kind::Other => {
            return Ok((
                Outcome::Diverged {
                    reason: "this record is written once, and the two sides differ".to_owned(),
                    next: format!("compare with `git log {staged}`; nothing was overwritten"),
                },
                None,
            ));
        }
    };
    Ok(match merge_set(store, name, log, &ours, theirs, boards)? {
        Ok(merged) => (Outcome::Merged, Some(to(Some(ours), &merged))),
        Err(reason) => (
            Outcome::Diverged {
                reason,
                next: format!(
                    "compare with `git log {staged}`, settle the item on one machine, fetch again"
                ),
            },
            None,
        ),
    })
}

/// Takes the remote's Hop accepted chain `theirs`: created, fast-forwarded, or the other side's
/// landings re-landed on this side's head (as `hop land` would), moving the chain itself.
fn take_accepted(store: &Store, theirs: &CommitId, staged: &str) -> Result<Outcome, Error> {
    let name = refs::HOP_ACCEPTED;
    let Some(ours) = store.tip(name)? else {
        return Ok(match store.create_ref(name, theirs) {
            Ok(()) => Outcome::Created,
            Err(store::Error::Moved { .. } | store::Error::Busy { .. }) => again(),
            Err(e) => return Err(e.into()),
        });
    };
    match store.relation(&ours, theirs)? {
        Relation::Same => return Ok(Outcome::Same),
        Relation::Ahead => return Ok(Outcome::Ahead),
        Relation::Behind => {
            return Ok(match store.move_ref(name, &ours, theirs) {
                Ok(()) => Outcome::Forwarded,
                Err(store::Error::Moved { .. } | store::Error::Busy { .. }) => again(),
                Err(e) => return Err(e.into()),
            });
        }
        Relation::Diverged(_) => {}
    }
    let hop = crate::hop::Hop::new(store).map_err(Box::new)?;
    Ok(match hop.reland(&ours, theirs) {
        Ok(Ok(_)) => Outcome::Merged,
        Ok(Err(reason)) => Outcome::Diverged {
            reason,
            next: format!(
                "compare with `git hpp hop history` and `git log {staged}`, land what is missing by hand (`git hpp hop land`), fetch again"
            ),
        },
        Err(crate::hop::Error::Store(store::Error::Moved { .. } | store::Error::Busy { .. })) => {
            again()
        }
        Err(e) => return Err(Box::new(e).into()),
    })
}

/// The files a person's decision adds to a sealed House Session, its one step forward.
const DECISION_FILES: [&str; 2] = ["human_decision.json", "human_decision.sig"];

/// Reads a staged record before it is taken in. A write-once record that exists here is never
/// moved by the remote's version (a sealed session may take one step: a person's decision); a
/// set log's every entry must read as its record; a loop's staged history must verify from its
/// first event (chains, transitions, the tip's state) with every gate's records holding under
/// the signature rule in force, and every join it gained must be one `event reconcile` writes.
/// Returns the join that drops this machine's side of a loop, when one does: taking it in
/// preserves that side first. The board's writes read are kept in `boards`.
fn admissible(
    store: &Store,
    spec: &LoopSpec,
    name: &str,
    ours: Option<CommitId>,
    theirs: &CommitId,
    staged: &str,
    boards: &mut crate::board::Writes,
) -> Result<Result<Option<Join>, String>, Error> {
    if let Some(ours) = &ours
        && ours != theirs
        && refs::WRITE_ONCE
            .iter()
            .any(|prefix| name.starts_with(prefix))
        && store.relation(ours, theirs)? != Relation::Ahead
    {
        return Ok(Err(
            "this record is written once and exists here; the remote's version differs, so it is not taken".to_owned(),
        ));
    }
    if let Some(ours) = &ours
        && ours != theirs
        && name.starts_with(refs::DELIBERATIONS_PREFIX)
        && store.relation(ours, theirs)? == Relation::Behind
        && !is_decision_step(store, staged, ours)?
    {
        return Ok(Err(
            "a sealed session moves one step only, a person's decision; the remote's differs"
                .to_owned(),
        ));
    }
    if ours.as_ref() == Some(theirs) {
        return Ok(Ok(None));
    }
    let id = match kind(name) {
        Kind::Set(log) => return Ok(set_entries(store, name, log, theirs, boards)?.map(|()| None)),
        Kind::Loop(id) => id,
        Kind::Accepted | Kind::Other => return Ok(Ok(None)),
    };
    let Ok(id) = id.parse::<refs::LoopId>() else {
        return Ok(Err(format!("{id} is not a loop name")));
    };
    let state = match crate::events::chain::read_at(store, spec, &id, staged) {
        Ok(state) => state,
        Err(crate::events::Error::Store(e)) => return Err(e.into()),
        Err(e) => return Ok(Err(format!("the remote's history does not read: {e}"))),
    };
    if let Some(problem) = &state.chain.problem {
        return Ok(Err(format!(
            "the remote's history does not verify: {problem}"
        )));
    }
    let trust = match crate::trust::decide(store, None, false) {
        Ok(trust) => trust,
        Err(crate::trust::Error::Store(e)) => return Err(e.into()),
        Err(e) => return Ok(Err(e.to_string())),
    };
    let gates = match crate::gates::report(
        store,
        spec,
        &state,
        crate::attest::VerifyOptions::of(&trust).history_elsewhere(),
    ) {
        Ok(gates) => gates,
        Err(crate::gates::Error::Store(e)) => return Err(e.into()),
        Err(e) => return Ok(Err(e.to_string())),
    };
    for gate in &gates {
        let why = match &gate.standing {
            Standing::NoLongerHolds { reason } => reason.clone(),
            Standing::ReferenceMissing { record } => {
                format!("it names {record}, which is not here")
            }
            Standing::Ok | Standing::UncheckedLegacy => continue,
        };
        return Ok(Err(format!(
            "the remote's {} ({}) does not hold: {why}",
            gate.event, gate.kind
        )));
    }
    joins(store, &id, ours.as_ref(), staged, &trust)
}

/// Reads the joins a staged loop gained (those this side does not hold): each must be one
/// `event reconcile` writes, signed by a person when signatures are required. Returns the join
/// that drops this side (`ours` only under its second parent), if any.
fn joins(
    store: &Store,
    id: &refs::LoopId,
    ours: Option<&CommitId>,
    staged: &str,
    trust: &crate::trust::Trust,
) -> Result<Result<Option<Join>, String>, Error> {
    let chain = store.read_chain(staged, hpp_core::event_log::EVENT_FILE)?;
    let mut dropped = None;
    for link in chain.links.iter().filter(|l| l.parents.len() == 2) {
        if let Some(ours) = ours
            && store.is_ancestor(&link.commit, ours)?
        {
            continue;
        }
        let join =
            match crate::events::reconcile::read_join(store, id, &link.commit, &link.parents)? {
                Ok(join) => join,
                Err(reason) => {
                    return Ok(Err(format!(
                        "the remote's history holds a join that is not a reconciliation: {reason}"
                    )));
                }
            };
        if let Err(reason) = person_signed(&join, trust) {
            return Ok(Err(format!(
                "the remote's join {} is not signed as required: {reason}",
                &join.commit.as_str()[..12]
            )));
        }
        if let Some(ours) = ours
            && dropped.is_none()
            && store.is_ancestor(ours, &join.preserved)?
            && !store.is_ancestor(ours, &join.kept)?
        {
            dropped = Some(join);
        }
    }
    Ok(Ok(dropped))
}

/// One update of `refs/hpp/` a push makes, as the server's gate reads it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The ref.
    pub name: String,
    /// Where it was (`None`: it is new).
    pub old: Option<String>,
    /// Where the push moves it (`None`: a deletion).
    pub new: Option<String>,
}

/// An update of `refs/hpp/` the server's gate refuses: the ref and the rule it breaks.
#[derive(Debug, Clone, Serialize)]
pub struct Refused {
    /// The ref.
    #[serde(rename = "ref")]
    pub name: String,
    /// The rule, in words, with what broke it.
    pub reason: String,
}

/// The server's gate over `refs/hpp/` (ARCHITECTURE §4): the same reading as [`fetch`], for
/// what a push brings. `store` reads the refs as the push would leave them (the receiving
/// store: the push's objects and ref values visible). Per update: a record is never deleted;
/// only commits live under `refs/hpp/`; every ref moves forward only; a write-once record is
/// created, never moved; a set log's every entry reads; a loop's new history verifies with its
/// gates' records, and a join that drops the server's side comes with that side preserved in
/// the same push (or already here). Returns every refusal (none: the push may go).
pub fn receive(
    store: &Store,
    spec: &LoopSpec,
    updates: &[Received],
) -> Result<Vec<Refused>, Error> {
    let mut refused = Vec::new();
    for update in updates {
        if !update.name.starts_with(refs::PREFIX) {
            continue;
        }
        if let Some(reason) = receive_one(store, spec, update)? {
            refused.push(Refused {
                name: update.name.clone(),
                reason,
            });
        }
    }
    Ok(refused)
}

/// Reads one update of `refs/hpp/`; returns why it is refused, if it is.
fn receive_one(store: &Store, spec: &LoopSpec, update: &Received) -> Result<Option<String>, Error> {
    let name = &update.name;
    if refs::namespace(name).is_none() {
        let known: Vec<&str> = refs::NAMESPACES.iter().map(|(_, place)| *place).collect();
        return Ok(Some(format!(
            "{name} is in no namespace of the ref layout (rule: known namespaces only; a server takes what `git hpp fetch` reads: {})",
            known.join(", ")
        )));
    }
    let Some(new) = &update.new else {
        return Ok(Some(
            "records are never deleted: a ref under refs/hpp/ only moves forward".to_owned(),
        ));
    };
    let Some(theirs) = store.commit_id(new) else {
        return Ok(Some(format!(
            "{} is not a commit: only record commits live under refs/hpp/",
            &new[..new.len().min(12)]
        )));
    };
    let ours = match &update.old {
        None => None,
        Some(old) => match store.commit_id(old) {
            Some(ours) => Some(ours),
            None => {
                return Ok(Some(
                    "what is here is not a record commit; it cannot move".to_owned(),
                ));
            }
        },
    };
    if let Some(ours) = &ours {
        if refs::WRITE_ONCE
            .iter()
            .any(|prefix| name.starts_with(prefix))
        {
            return Ok(Some(
                "this record is written once: it may be created, never moved".to_owned(),
            ));
        }
        if !store.is_ancestor(ours, &theirs)? {
            return Ok(Some(format!(
                "a record moves forward only: {} does not contain {}",
                &theirs.as_str()[..12],
                &ours.as_str()[..12]
            )));
        }
    }
    let mut boards = crate::board::Writes::default();
    let dropped = match admissible(store, spec, name, ours, &theirs, name, &mut boards)? {
        Ok(dropped) => dropped,
        Err(reason) => return Ok(Some(reason.replace("the remote's", "the pushed"))),
    };
    if let Some(join) = dropped
        && store.tip(&join.preserved_ref)?.as_ref() != Some(&join.preserved)
    {
        return Ok(Some(format!(
            "the join {} drops this repository's side without preserving it: push {} with it",
            &join.commit.as_str()[..12],
            join.preserved_ref
        )));
    }
    Ok(None)
}

/// Checks the person a join names: when signatures are required, the join carries their
/// signature over its record and the signers in force admit them as a person; a signature
/// that is there must verify either way.
fn person_signed(join: &Join, trust: &crate::trust::Trust) -> Result<(), String> {
    let Some(armored) = &join.signature else {
        return if trust.require_signed {
            Err(
                "it is not signed by the person who reconciled, and signatures are required"
                    .to_owned(),
            )
        } else {
            Ok(())
        };
    };
    let Some(by) = &join.by else {
        return Err("it is signed but names no person (`by`)".to_owned());
    };
    let report = crate::sign::check_for(
        crate::sign::Purpose::Person,
        &join.record,
        Some(armored),
        Some(by),
        trust.allowed.as_ref(),
        time::OffsetDateTime::now_utc(),
    );
    if report.status == crate::sign::SignatureStatus::Refused {
        return Err(format!(
            "{by}'s signature does not verify: {}",
            report.detail.unwrap_or_default()
        ));
    }
    Ok(())
}

/// Reads every entry of a staged set log as its record (the board also by its rules, its
/// writes kept in `boards`), so a log with an entry that does not read is neither
/// fast-forwarded nor merged.
fn set_entries(
    store: &Store,
    name: &str,
    log: SetLog,
    theirs: &CommitId,
    boards: &mut crate::board::Writes,
) -> Result<Result<(), String>, Error> {
    let parse: fn(&str, &[u8]) -> Result<(), String> = match log {
        SetLog::Board => {
            return Ok(crate::board::check_at(store, theirs, boards)
                .map_err(|e| format!("the remote's board does not read: {e}")));
        }
        SetLog::Lane => |name, bytes| {
            hpp_core::lane::claim::LaneRecord::parse(name, bytes)
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
        SetLog::Handoffs => |_, bytes| {
            hpp_core::continuity::parse(bytes)
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
        SetLog::Gotchas if name == refs::GOTCHA_FAILURES => |_, bytes| {
            hpp_core::gotcha::parse_failure(bytes)
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
        SetLog::Gotchas => |_, bytes| {
            hpp_core::gotcha::parse_gotcha(bytes)
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
    };
    let file = match log {
        SetLog::Board => crate::board::FILE,
        SetLog::Lane => crate::lanes::LANE_FILE,
        SetLog::Handoffs => hpp_core::continuity::FILE,
        SetLog::Gotchas if name == refs::GOTCHA_FAILURES => hpp_core::gotcha::FAILURE_FILE,
        SetLog::Gotchas => hpp_core::gotcha::GOTCHA_FILE,
    };
    let chain = store.read_set_at(name, theirs, file)?;
    for link in &chain.links {
        let short = &link.commit.as_str()[..12];
        let Some(bytes) = &link.payload else {
            return Ok(Err(format!("the remote's entry {short} holds no {file}")));
        };
        if let Err(e) = parse(name, bytes) {
            return Ok(Err(format!(
                "the remote's entry {short} does not read: {e}"
            )));
        }
    }
    Ok(Ok(()))
}

/// Tells whether the staged session is one child of `ours` that adds a person's decision only.
fn is_decision_step(store: &Store, staged: &str, ours: &CommitId) -> Result<bool, Error> {
    let Some(chain) = store.read_chain_since(staged, crate::deliberation::RECORD_FILE, ours, 1)?
    else {
        return Ok(false);
    };
    let [link] = chain.links.as_slice() else {
        return Ok(false);
    };
    if link.parents.as_slice() != std::slice::from_ref(ours) {
        return Ok(false);
    }
    let changed =
        store.changed_paths(&store.commit_tree(ours)?, &store.commit_tree(&link.commit)?)?;
    Ok(changed
        .iter()
        .all(|path| DECISION_FILES.contains(&path.as_str())))
}

/// Verifies the staged trust policy from the pinned root before it is taken in; a policy that
/// does not verify stays staged, reported with the reason.
fn trusted(store: &Store, staged: &str, pin: Option<&str>) -> Result<Result<(), Outcome>, Error> {
    match crate::trust::verify_log(store, staged, pin, crate::trust::From::Remembered) {
        // A clone that trusts its own signers adopts no policy on first use.
        Ok(Some((_, crate::trust::Pinning::FirstUse { fingerprint })))
            if let Some(trusted) = crate::trust::trusts_already(store) =>
        {
            Ok(Err(Outcome::Diverged {
                reason: crate::trust::Error::NotPinned {
                    fingerprint: fingerprint.clone(),
                    trusted,
                }
                .to_string(),
                next: format!(
                    "the policy stays staged; check its root with the repository's owner, then `git hpp trust pin {fingerprint} --apply` and fetch again"
                ),
            }))
        }
        Ok(_) => Ok(Ok(())),
        Err(crate::trust::Error::Store(e)) => Err(e.into()),
        Err(refused) => Ok(Err(Outcome::Diverged {
            reason: refused.to_string(),
            next: format!(
                "the policy stays staged; compare with `git log {staged}` and ask the repository's owner which root is right"
            ),
        })),
    }
}

/// Writes the merge of a set log's two tips (no ref moves), or says why they do not join
/// (the board's writes read are kept in `boards`).
fn merge_set(
    store: &Store,
    name: &str,
    log: SetLog,
    ours: &CommitId,
    theirs: &CommitId,
    boards: &mut crate::board::Writes,
) -> Result<Result<CommitId, String>, Error> {
    let tree = match log {
        SetLog::Lane => match standing_lane(store, name, ours, theirs)? {
            Ok(tree) => tree,
            Err(reason) => return Ok(Err(reason)),
        },
        SetLog::Board | SetLog::Handoffs | SetLog::Gotchas => store.empty_tree(),
    };
    let merged = store.write_set_merge(name, ours, theirs, &tree)?;
    if log == SetLog::Board
        && let Err(e) = crate::board::check_at(store, &merged, boards)
    {
        return Ok(Err(format!("the two boards do not compose: {e}")));
    }
    Ok(Ok(merged))
}

/// The tree of the lane record that stands after two machines wrote one lane: a close over
/// anything, else the later heartbeat; a tie goes to the smaller commit id, so every machine
/// picks the same.
fn standing_lane(
    store: &Store,
    name: &str,
    ours: &CommitId,
    theirs: &CommitId,
) -> Result<Result<store::TreeId, String>, Error> {
    let read =
        |commit: &CommitId| -> Result<Result<hpp_core::lane::claim::LaneRecord, String>, Error> {
            let Some(bytes) = store.read_commit_file(commit, crate::lanes::LANE_FILE)? else {
                return Ok(Err(format!("{commit} has no {}", crate::lanes::LANE_FILE)));
            };
            Ok(hpp_core::lane::claim::LaneRecord::parse(name, &bytes).map_err(|e| e.to_string()))
        };
    let (a, b) = match (read(ours)?, read(theirs)?) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    if a.id != b.id {
        return Ok(Err(format!(
            "the two sides name lanes {} and {}",
            a.id, b.id
        )));
    }
    let rank = |r: &hpp_core::lane::claim::LaneRecord, c: &CommitId| {
        (r.is_closed(), r.heartbeat_at, std::cmp::Reverse(c.clone()))
    };
    let winner = if rank(&a, ours) >= rank(&b, theirs) {
        ours
    } else {
        theirs
    };
    Ok(Ok(store.commit_tree(winner)?))
}
