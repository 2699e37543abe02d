//! Sealed House Sessions in the store (CONCEPTS.md "House Session"): a session the core's rules
//! sealed ([`hpp_core::deliberation`]) is kept at `refs/hpp/deliberations/<id>`, created once
//! ([`store_record`]), read back and re-verified ([`resolve`], [`load`]), and read for a command
//! that acts on it, from a file or a ref ([`read_sealed`]). [`decide`] adds a person's decision
//! beside the seal; [`run`] drives a session through the seats' and the judge's declared
//! commands (`git hpp deliberate run`).

pub mod decide;
pub mod run;

use std::path::Path;

use serde_json::Value;

use crate::sign::{self, AllowedSigners, SignatureReport};
use hpp_core::deliberation::{self as rules, Record, seat};
use hpp_core::record::{canonical_json, canonical_record};
use hpp_store::refs::DELIBERATIONS_PREFIX;
use hpp_store::{self as store, Content, Store};

pub use hpp_core::deliberation::{RECORD_FILE, SIGNATURE_FILE, SIGNER_FILE};
/// The person's decision, outside the seal: added by `deliberate decide` in a child commit of
/// the sealed record, `{"value": an option, "by": who, "note"?: text}`.
pub const HUMAN_DECISION_FILE: &str = "human_decision.json";
/// The deciding person's signature over the bytes of [`HUMAN_DECISION_FILE`], beside it.
pub const HUMAN_DECISION_SIGNATURE: &str = "human_decision.sig";
/// The folder of verbatim texts: `texts/<n>.txt` is the text `turns/<n>.json` hashes. Named by
/// the turn's number, not its seat: a seat id is free text, a tree path is not.
pub const TEXTS_DIR: &str = "texts";

/// Returns the path of the verbatim text of turn `n` (from 1) in a record's tree.
pub fn text_path(n: usize) -> String {
    format!("{TEXTS_DIR}/{n}.txt")
}

/// Why keeping or reading a sealed record at a ref failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No sealed record by that name.
    #[error("no deliberation record named {0}")]
    NotFound(String),
    /// The name matches more than one record.
    #[error("{0} names more than one deliberation record; use its full id")]
    Ambiguous(String),
    /// The record would be signed by someone other than its judge's seat.
    #[error("the signer must be the judge's seat: {0}")]
    SignerNotJudge(String),
    /// The texts handed in are not one verbatim text per turn, each hashing to its turn.
    #[error("the text of turn {0} is not the text its turn hashes; nothing was kept")]
    Text(usize),
    /// The id is taken by a different record.
    #[error("{0} already holds a different deliberation record; a record is written once")]
    Taken(String),
    /// The ref holds no readable record.
    #[error("{name}: {detail}")]
    Unreadable {
        /// The ref.
        name: String,
        /// What is wrong.
        detail: String,
    },
    /// The record does not verify (its tree or its seal), or the rules refuse it.
    #[error(transparent)]
    Rules(#[from] rules::Error),
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] sign::Error),
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Keeps a sealed record at `refs/hpp/deliberations/<id>`, created once: the commit's tree holds
/// `panel.json`, `turns/<n>.json`, `judge.json` (when judged), `rationale.json` (when given),
/// `record.json`, when `texts` are given `texts/<n>.txt` (one verbatim text per turn, in the
/// record's turn order, each checked against its turn's `text_sha256` and `chars`), and, when
/// signed, `record.sig` and `signer`. Recording the same sealed record again returns the ref it
/// already has.
pub fn store_record(
    store: &Store,
    record: &Record,
    texts: &[String],
    signing: Option<&crate::sign::Signing>,
) -> Result<String, StoreError> {
    let name = format!("{DELIBERATIONS_PREFIX}{}", record.id());
    let bytes = canonical_record(record);
    let turns = &record.turns;
    let mismatch = |i: &usize| match (turns.get(*i), texts.get(*i)) {
        (Some(turn), Some(text)) => !seat::text_matches(turn, text.as_bytes()),
        _ => true,
    };
    if !texts.is_empty()
        && let Some(n) = (0..turns.len().max(texts.len())).find(mismatch)
    {
        return Err(StoreError::Text(n + 1));
    }
    if store.tip(&name)?.is_some() {
        let existing = store.read_file(&name, RECORD_FILE)?;
        let signed = store.read_file(&name, SIGNATURE_FILE)?.is_some();
        let has_texts = store.read_file(&name, &text_path(1))?.is_some();
        if existing.as_deref() == Some(bytes.as_slice())
            && (signing.is_none() || signed)
            && (texts.is_empty() || has_texts)
        {
            return Ok(name);
        }
        return Err(StoreError::Taken(name));
    }
    if let Some(signing) = signing
        && let Some(problem) = record.panel.signer_problem(signing.signer.as_str())
    {
        return Err(StoreError::SignerNotJudge(problem));
    }
    let mut entries: Vec<(String, Content)> = Vec::new();
    entries.push((
        "panel.json".into(),
        Content::Bytes(canonical_record(&record.panel)),
    ));
    for (n, turn) in turns.iter().enumerate() {
        entries.push((
            format!("turns/{}.json", n + 1),
            Content::Bytes(canonical_record(turn)),
        ));
    }
    for (n, text) in texts.iter().enumerate() {
        entries.push((text_path(n + 1), Content::Bytes(text.as_bytes().to_vec())));
    }
    if let Some(judge) = &record.judge {
        entries.push(("judge.json".into(), Content::Bytes(canonical_record(judge))));
    }
    if let Some(rationale) = record.rationale() {
        entries.push((
            "rationale.json".into(),
            Content::Bytes(canonical_record(rationale)),
        ));
    }
    entries.push((RECORD_FILE.into(), Content::Bytes(bytes.clone())));
    if let Some(signing) = signing {
        let armored = signing.sign(&bytes)?;
        entries.push((SIGNATURE_FILE.into(), Content::Bytes(armored.into_bytes())));
        entries.push((
            SIGNER_FILE.into(),
            Content::Bytes(signing.signer.as_str().as_bytes().to_vec()),
        ));
    }
    let borrowed: Vec<(&str, Content)> = entries
        .iter()
        .map(|(p, c)| (p.as_str(), c.clone()))
        .collect();
    let message = format!(
        "hpp deliberation {}: {} {}",
        record.id(),
        record.verdict.status,
        record.verdict.value.as_deref().unwrap_or("-")
    );
    store.create_record(&name, &borrowed, &message)?;
    Ok(name)
}

/// Finds a sealed record's ref: a full `refs/hpp/deliberations/<id>`, an `<id>`, or a panel id
/// that names exactly one record.
pub fn resolve(store: &Store, name: &str) -> Result<String, StoreError> {
    if name.starts_with("refs/") {
        return match store.tip(name)? {
            Some(_) => Ok(name.to_owned()),
            None => Err(StoreError::NotFound(name.to_owned())),
        };
    }
    let all = store.list(DELIBERATIONS_PREFIX)?;
    if let Some((full, _)) = all
        .iter()
        .find(|(full, _)| full.strip_prefix(DELIBERATIONS_PREFIX) == Some(name))
    {
        return Ok(full.clone());
    }
    let matching: Vec<&String> = all
        .iter()
        .map(|(full, _)| full)
        .filter(|full| {
            full.strip_prefix(DELIBERATIONS_PREFIX)
                .and_then(|rest| rest.strip_prefix(name))
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| rest.len() == 12 && !rest.contains('-'))
        })
        .collect();
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(StoreError::NotFound(name.to_owned())),
        _ => Err(StoreError::Ambiguous(name.to_owned())),
    }
}

/// A sealed record a command acts on, read and verified.
#[derive(Debug, Clone)]
pub struct Sealed {
    /// The record, verified.
    pub record: Record,
    /// The ref it was read from; `None` when it was read from a file.
    pub reference: Option<String>,
}

/// Reads the sealed record a command names (`route`, `board select`, `attest create`): a file
/// (an existing file wins), else `refs/hpp/deliberations/<id>`, `<id>` or a panel id naming one
/// record, whose tree must hold the sealed parts. The record must verify. The command lends what
/// it reads with: `read_file` reads a JSON object file (with its refusal sentences) and
/// `open_store` opens the repository, only when the name is not a file.
///
/// # Errors
///
/// What the lent readers refuse; a name that resolves to no record or to several; a record
/// whose tree or seal does not hold ([`rules::Error::NotIntact`]).
pub fn read_sealed<'s, E: From<StoreError>>(
    cwd: &Path,
    name: &str,
    read_file: impl FnOnce(&Path) -> Result<Value, E>,
    open_store: impl FnOnce() -> Result<&'s Store, E>,
) -> Result<Sealed, E> {
    if cwd.join(name).is_file() {
        let document = read_file(Path::new(name))?;
        let record = Record::from_sealed(&document).map_err(StoreError::from)?;
        return Ok(Sealed {
            record,
            reference: None,
        });
    }
    let store = open_store()?;
    let full = resolve(store, name)?;
    let loaded = load(store, &full, None)?;
    if let Some(problem) = loaded.problems.first() {
        return Err(StoreError::from(rules::Error::NotIntact(problem.clone())).into());
    }
    let record = Record::from_sealed(&loaded.record).map_err(StoreError::from)?;
    Ok(Sealed {
        record,
        reference: Some(full),
    })
}

/// A sealed record read from its ref, with what the ref's tree says beside it.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The record, parsed.
    pub record: Value,
    /// The exact bytes of `record.json`.
    pub bytes: Vec<u8>,
    /// The signature check.
    pub signature: SignatureReport,
    /// The check of the deciding person's signature over the human decision, when there is a
    /// decision.
    pub decision_signature: Option<SignatureReport>,
    /// Tree entries that do not match the sealed record (empty when consistent).
    pub problems: Vec<String>,
}

/// Reads the sealed record at `name` and checks its tree's side files against it and its
/// signature (against `allowed`, when given).
pub fn load(
    store: &Store,
    name: &str,
    allowed: Option<&AllowedSigners>,
) -> Result<Loaded, StoreError> {
    let unreadable = |detail: &str| StoreError::Unreadable {
        name: name.to_owned(),
        detail: detail.to_owned(),
    };
    let bytes = store
        .read_file(name, RECORD_FILE)?
        .ok_or_else(|| unreadable("holds no record.json"))?;
    let record: Value =
        serde_json::from_slice(&bytes).map_err(|_| unreadable("record.json is not JSON"))?;
    let sig = store.read_file(name, SIGNATURE_FILE)?;
    let signer = store
        .read_file(name, SIGNER_FILE)?
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned());
    let signature = sign::check(
        &bytes,
        sig.as_deref(),
        signer.as_deref(),
        allowed,
        time::OffsetDateTime::now_utc(),
    );
    let mut problems = Vec::new();
    if let Some(signer) = &signer
        && let Some(problem) = hpp_core::deliberation::panel::signer_problem(
            record.get("panel").unwrap_or(&Value::Null),
            signer,
        )
    {
        problems.push(problem);
    }
    let mut side = |path: &str, expected: Option<&Value>| -> Result<(), StoreError> {
        let found = store.read_file(name, path)?;
        let expected = expected.filter(|v| !v.is_null()).map(canonical_json);
        if found != expected {
            problems.push(format!("{path} in the ref's tree is not the sealed one"));
        }
        Ok(())
    };
    side("panel.json", record.get("panel"))?;
    side("judge.json", record.get("judge"))?;
    side("rationale.json", record.get("rationale"))?;
    let turns = record
        .get("turns")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (n, turn) in turns.iter().enumerate() {
        side(&format!("turns/{}.json", n + 1), Some(turn))?;
    }
    side(&format!("turns/{}.json", turns.len() + 1), None)?;
    problems.extend(text_problems(store, name, &turns)?);
    if let Some(map) = record.as_object()
        && map.contains_key("human_decision")
        && !map["human_decision"].is_null()
    {
        // record.json is written once with a null decision; a person's decision is the
        // separate HUMAN_DECISION_FILE of a later commit.
        problems.push("a record kept in a ref carries no human_decision".into());
    }
    let mut record = record;
    let mut decision_signature = None;
    if let Some(human) = store.read_file(name, HUMAN_DECISION_FILE)? {
        match (
            serde_json::from_slice::<Value>(&human),
            record.as_object_mut(),
        ) {
            (Ok(decision), Some(map)) => {
                // The deciding person signs the decision, as its `by`.
                let by = decision
                    .get("by")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let sig = store.read_file(name, HUMAN_DECISION_SIGNATURE)?;
                let report = sign::check(
                    &human,
                    sig.as_deref(),
                    by.as_deref(),
                    allowed,
                    time::OffsetDateTime::now_utc(),
                );
                if sig.is_some() && report.status == sign::SignatureStatus::Refused {
                    problems.push(format!(
                        "the human decision's signature does not hold: {}",
                        report.detail.clone().unwrap_or_default()
                    ));
                }
                decision_signature = Some(report);
                map.insert("human_decision".into(), decision);
            }
            _ => problems.push(format!("{HUMAN_DECISION_FILE} is not JSON")),
        }
    }
    Ok(Loaded {
        record,
        bytes,
        signature,
        decision_signature,
        problems,
    })
}

/// What is wrong with the verbatim texts a ref keeps beside its turns: none is fine (a session
/// recorded from files), but when there are texts, every turn has one and each is the text its
/// turn hashes, and nothing else sits in the folder.
fn text_problems(store: &Store, name: &str, turns: &[Value]) -> Result<Vec<String>, StoreError> {
    let Some(tip) = store.tip(name)? else {
        return Ok(Vec::new());
    };
    let tree = store.commit_tree(&tip)?;
    let prefix = format!("{TEXTS_DIR}/");
    let kept: Vec<String> = store
        .changed_paths(&store.empty_tree(), &tree)?
        .into_iter()
        .filter(|p| p.starts_with(&prefix))
        .collect();
    if kept.is_empty() {
        return Ok(Vec::new());
    }
    let mut problems = Vec::new();
    let expected: Vec<String> = (1..=turns.len()).map(text_path).collect();
    for path in kept.iter().filter(|p| !expected.contains(p)) {
        problems.push(format!("{path} in the ref's tree belongs to no turn"));
    }
    for (n, (path, turn)) in expected.iter().zip(turns).enumerate() {
        match store.read_file(name, path)? {
            None => problems.push(format!(
                "{path} is missing: the ref keeps texts, so every turn has one"
            )),
            Some(bytes)
                if !seat::text_is(turn["text_sha256"].as_str(), turn["chars"].as_i64(), &bytes) =>
            {
                problems.push(format!(
                    "{path} in the ref's tree is not the text turns/{}.json hashes",
                    n + 1
                ));
            }
            Some(_) => {}
        }
    }
    Ok(problems)
}
