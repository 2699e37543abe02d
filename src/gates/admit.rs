//! The loop gates, decided before an event is written: one function per gate condition.
//!
//! [`hpp_core::event_loop::gates`] says what each gate requires; [`LoopGates`] looks the
//! records an event names up in the store and decides, on every attempt of an append (it is
//! the log's [`Admission`]): the scope names a work item and a maker, evidence bundles still
//! verify and ran on the workspace's tree, an approval of that tree is by a checker who is not
//! the maker and has not revoked it, a person signs their own approval, and a closing event
//! finds every gate it re-checks still holding on the same tree.

use std::cell::OnceCell;

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use hpp_core::event_log::event_id;
use hpp_core::event_loop::LoopSpec;
use hpp_core::event_loop::gates::{Condition, Named, Signed, Stamp, Standing};
use hpp_store::{Store, TreeId};

use super::records::{Found, bundle_holds, find_approval};
use super::{Error, GateOptions, refuse, short};
use crate::attest::VerifyOptions;
use crate::events::{Admission, Admitted, LoopState};
use crate::evidence::{self, ArtifactCheck};
use crate::sign::{self, Purpose, SignatureStatus};

/// The loop's gates as an append's [`Admission`]: measured against the workspace tree, taken
/// once at the first attempt so every retry judges the same bytes.
pub struct LoopGates<'a> {
    store: &'a Store,
    spec: &'a LoopSpec,
    options: GateOptions<'a>,
    tree: OnceCell<TreeId>,
}

impl<'a> LoopGates<'a> {
    /// Returns the gates of `spec` in `store`, checked as strictly as `options` says.
    pub fn new(store: &'a Store, spec: &'a LoopSpec, options: GateOptions<'a>) -> Self {
        Self {
            store,
            spec,
            options,
            tree: OnceCell::new(),
        }
    }

    /// The tree the gates measure against: the workspace as it is now (a bare repository has
    /// none, so only a loop without conditions moves there).
    fn tree(&self) -> Result<&TreeId, Error> {
        if let Some(tree) = self.tree.get() {
            return Ok(tree);
        }
        let tree = self.store.snapshot()?;
        Ok(self.tree.get_or_init(|| tree))
    }
}

impl Admission for LoopGates<'_> {
    type Error = Error;

    fn admit(
        &self,
        state: &LoopState,
        kind: &str,
        mut data: Map<String, Value>,
    ) -> Result<Admitted, Error> {
        let pass = |data| Admitted {
            data,
            signed: false,
        };
        if self.spec.conditions().is_empty() {
            return Ok(pass(data));
        }
        let tree = self.tree()?;
        let here = state
            .projection
            .as_ref()
            .map_or(self.spec.initial(), |p| p.state.as_str());
        let Some(gate) = self.spec.step(here, kind).map(|t| t.gate.as_str()) else {
            // The log has already refused a transition the loop does not take.
            return Ok(pass(data));
        };
        let check = Check {
            store: self.store,
            spec: self.spec,
            state,
            tree,
            kind,
            gate,
            named: Named::from_data(&data),
            maker: maker(state),
            options: &self.options,
        };
        check.same_maker()?;
        let Some(condition) = self.spec.condition(gate) else {
            return Ok(pass(data));
        };
        let mut signed = false;
        match condition {
            Condition::Scope => check.scope(condition)?,
            Condition::Evidence { at_least } => check.evidence(condition, *at_least, &mut data)?,
            Condition::Checker { signed } => check.checker(condition, *signed, &mut data)?,
            Condition::Person { signed: required } => {
                signed = check.person(condition, *required)?;
            }
            Condition::Closure { holds } => check.closure(condition, holds)?,
        }
        Stamp {
            name: gate.to_owned(),
            tree: tree.to_string(),
        }
        .put(&mut data);
        Ok(Admitted { data, signed })
    }

    fn sign(&self, bytes: &[u8], data: &Map<String, Value>) -> Result<Vec<u8>, Error> {
        let signing = self
            .options
            .person
            .expect("an event is signed only when the person's key was given");
        let armored = signing.sign_for(Purpose::Person, bytes)?;
        let gate = Stamp::of(data).map(|s| s.name).unwrap_or_default();
        check_person(
            bytes,
            armored.as_bytes(),
            signing.signer.as_str(),
            &self.options,
            &gate,
        )?;
        Ok(armored.into_bytes())
    }
}

/// The loop's maker, from the first event that names one: the event's id and the maker.
pub fn maker(state: &LoopState) -> Option<(String, String)> {
    state.events.iter().find_map(|e| {
        Named::from_data(&e.data)
            .maker
            .map(|m| (event_id(e.seq), m))
    })
}

/// One event's gate being decided: what it names, on which loop and tree.
struct Check<'c> {
    store: &'c Store,
    spec: &'c LoopSpec,
    state: &'c LoopState,
    tree: &'c TreeId,
    kind: &'c str,
    gate: &'c str,
    named: Named,
    maker: Option<(String, String)>,
    options: &'c GateOptions<'c>,
}

impl Check<'_> {
    /// The gate's refusal, saying what `condition` requires.
    fn refuse(&self, condition: &Condition, record: Option<String>, reason: String) -> Error {
        refuse(self.gate, &condition.describe(), record, reason)
    }

    /// Every gated event that names a maker names the one the loop's first event fixed.
    fn same_maker(&self) -> Result<(), Error> {
        if let (Some((at, fixed)), Some(named)) = (&self.maker, &self.named.maker)
            && fixed != named
        {
            return Err(refuse(
                self.gate,
                "the loop's maker, fixed at its first event",
                Some(at.clone()),
                format!("the loop's maker is {fixed} (named at {at}); this event names {named}"),
            ));
        }
        Ok(())
    }

    /// Scope: the event names a work item and a maker.
    fn scope(&self, condition: &Condition) -> Result<(), Error> {
        let missing = match (&self.named.work, &self.named.maker) {
            (Some(_), Some(_)) => return Ok(()),
            (None, None) => "work item and no maker",
            (None, Some(_)) => "work item",
            (Some(_), None) => "maker",
        };
        Err(self.refuse(
            condition,
            None,
            format!(
                "{} names no {missing}: pass --work ITEM --maker NAME (or \"work\" and \"maker\" in --data)",
                self.kind
            ),
        ))
    }

    /// Evidence: at least `at_least` bundles, each still verifying and run on the tree; the
    /// data then names each by its ref and self-hash.
    fn evidence(
        &self,
        condition: &Condition,
        at_least: usize,
        data: &mut Map<String, Value>,
    ) -> Result<(), Error> {
        let named = &self.named.evidence;
        if named.len() < at_least {
            return Err(self.refuse(
                condition,
                None,
                format!(
                    "{} names {} evidence bundle(s), at least {at_least} required: run `git hpp evidence run --id ID --artifact GLOB --record-event -- COMMAND`, or pass --evidence ID",
                    self.kind,
                    named.len()
                ),
            ));
        }
        let artifacts = self
            .store
            .workdir()
            .map_or(ArtifactCheck::RecordOnly, ArtifactCheck::Workspace);
        let mut refs = Vec::new();
        let mut hashes = Vec::new();
        for name in named {
            let record_ref = match evidence::resolve(self.store, name) {
                Ok(r) => r,
                Err(evidence::Error::Store(e)) => return Err(e.into()),
                Err(_) => {
                    return Err(self.refuse(
                        condition,
                        Some(name.clone()),
                        format!("no evidence bundle named {name} in this repository"),
                    ));
                }
            };
            let (sha, problem) = bundle_holds(
                self.store,
                &record_ref,
                self.tree,
                artifacts,
                self.options.verify(),
            )?;
            if let Some(problem) = problem {
                return Err(self.refuse(condition, Some(record_ref), problem));
            }
            refs.push(Value::String(record_ref));
            hashes.push(json!(sha));
        }
        data.insert("evidence".into(), Value::Array(refs));
        data.insert("evidence_sha256".into(), Value::Array(hashes));
        Ok(())
    }

    /// Checker: the tree the evidence ran on is the workspace's, and a checker other than the
    /// maker approved it; the data then names the approval and its checker.
    fn checker(
        &self,
        condition: &Condition,
        signed: Signed,
        data: &mut Map<String, Value>,
    ) -> Result<(), Error> {
        let Some((_, maker)) = &self.maker else {
            return Err(self.refuse(
                condition,
                None,
                "the loop names no maker (its first event was recorded before gates measured): start a new loop with --work and --maker".into(),
            ));
        };
        let tree = self.tree.as_str();
        if let Some((at, evidence_tree)) = self.latest_evidence_tree()
            && evidence_tree != tree
        {
            return Err(self.refuse(
                condition,
                Some(at.clone()),
                format!(
                    "the evidence of {at} ran on tree {}; the workspace is at {} now: the checker must check the tree the evidence ran on",
                    short(&evidence_tree),
                    short(tree)
                ),
            ));
        }
        let verify = VerifyOptions {
            require_signed: self.options.require_signed || signed == Signed::Always,
            ..self.options.verify()
        };
        let (reference, checker) = find_approval(
            self.store,
            self.tree,
            maker,
            self.named.attestation.as_deref(),
            verify,
        )
        .map_err(|e| match e {
            Found::Store(e) => e,
            Found::No { record, reason } => self.refuse(condition, record, reason),
        })?;
        data.insert("attestation".into(), Value::String(reference));
        data.insert("checker".into(), Value::String(checker));
        Ok(())
    }

    /// Person: the event names the person, and the key given is theirs. Returns whether the
    /// event is to be signed with it.
    fn person(&self, condition: &Condition, signed: Signed) -> Result<bool, Error> {
        let Some(by) = &self.named.by else {
            return Err(self.refuse(
                condition,
                None,
                format!("{} names no person: pass --by NAME", self.kind),
            ));
        };
        let required = self.options.require_signed || signed == Signed::Always;
        match self.options.person {
            Some(signing) if signing.signer.as_str() != by => Err(self.refuse(
                condition,
                None,
                format!(
                    "the key is {}'s, but the event names {by}: a person signs their own approval",
                    signing.signer.as_str()
                ),
            )),
            Some(_) if required && self.options.allowed.is_none() => Err(self.refuse(
                condition,
                None,
                "signatures are required, but no allowed-signers file is configured to mark anyone as a person".into(),
            )),
            Some(_) => Ok(true),
            None if required => Err(self.refuse(
                condition,
                None,
                format!(
                    "signatures are required: {by} signs the approval with --sign-key KEY (or git's user.signingKey with gpg.format=ssh), from a key the allowed-signers file marks as a person (namespaces=\"{}\")",
                    sign::PERSON_NAMESPACE
                ),
            )),
            None => Ok(false),
        }
    }

    /// Closure: every gate in `holds` was passed by an event of this loop, on this tree, and
    /// still stands with every record it names re-checked.
    fn closure(&self, condition: &Condition, holds: &[String]) -> Result<(), Error> {
        for held in holds {
            let Some((index, event)) = self
                .state
                .events
                .iter()
                .enumerate()
                .rev()
                .find(|(_, e)| Stamp::of(&e.data).is_some_and(|s| &s.name == held))
            else {
                return Err(self.refuse(
                    condition,
                    None,
                    format!("no event of this loop passed gate {held} with its records checked"),
                ));
            };
            let at = event_id(event.seq);
            let stamp = Stamp::of(&event.data).expect("found by its stamp");
            if stamp.tree != self.tree.as_str() {
                return Err(self.refuse(
                    condition,
                    Some(at.clone()),
                    format!(
                        "{held} held at {at} on tree {}; the workspace is at {} now: the loop can only close on the tree its gates measured",
                        short(&stamp.tree),
                        short(self.tree.as_str())
                    ),
                ));
            }
            let commit = &self.state.commits[index];
            match super::standing(self.store, event, commit, self.options.verify())? {
                Standing::Ok => {}
                Standing::ReferenceMissing { record } => {
                    return Err(self.refuse(
                        condition,
                        Some(record.clone()),
                        format!("{held} ({at}) names {record}, which is not in this repository"),
                    ));
                }
                Standing::NoLongerHolds { reason } => {
                    return Err(self.refuse(
                        condition,
                        Some(at.clone()),
                        format!("{held} ({at}) no longer holds: {reason}"),
                    ));
                }
                Standing::UncheckedLegacy => unreachable!("a stamped event is checked"),
            }
        }
        Ok(())
    }

    /// The latest event that passed the evidence gate, with the tree it recorded.
    fn latest_evidence_tree(&self) -> Option<(String, String)> {
        let kind = self
            .spec
            .transitions()
            .iter()
            .find(|t| {
                self.spec
                    .condition(&t.gate)
                    .is_some_and(|c| matches!(c, Condition::Evidence { .. }))
            })
            .map(|t| t.event.as_str())?;
        self.state
            .events
            .iter()
            .rev()
            .find(|e| e.kind == kind)
            .and_then(|e| Stamp::of(&e.data).map(|s| (event_id(e.seq), s.tree)))
    }
}

/// Checks a person's signature over the event's bytes before it is written: the allowed
/// signers in force must admit them as a person.
fn check_person(
    bytes: &[u8],
    armored: &[u8],
    by: &str,
    options: &GateOptions<'_>,
    gate: &str,
) -> Result<(), Error> {
    let report = sign::check_for(
        Purpose::Person,
        bytes,
        Some(armored),
        Some(by),
        options.allowed,
        OffsetDateTime::now_utc(),
    );
    if report.status == SignatureStatus::Refused {
        return Err(refuse(
            gate,
            "names a person, signed by them when signatures are required",
            None,
            format!(
                "{by}'s signature does not admit them as a person: {}",
                report.detail.unwrap_or_default()
            ),
        ));
    }
    Ok(())
}
