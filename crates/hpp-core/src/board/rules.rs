//! The board's rules: prior events + one request → the events to append, or the refusal.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::{
    Actor, Choice, Compared, CompetitionEvent, CompetitionState, Deliberated, Error, Event,
    ItemEvent, LaneRegistry, Request, SetRequest, State, VerdictBy,
};
use crate::deliberation::SessionType;
use crate::family::model_family;

/// Decides one request against every event written so far, at time `ts` (UTC ISO-8601).
/// Returns the events to append in one write (select writes its SELECTED event and one
/// NOT-SELECTED event per loser together), or why the board refuses.
pub fn decide(history: &[Event], request: &Request, ts: &str) -> Result<Vec<Event>, Error> {
    let board = Board::new(history);
    match request {
        Request::Set(set) => board.set(set, ts).map(|e| vec![Event::Item(e)]),
        Request::Compete { task, items, actor } => board.compete(task, items, actor, ts),
        Request::Select {
            task,
            choice,
            actor,
            reason,
        } => board.select(task, choice, actor, reason.as_deref(), ts),
        Request::Withdraw {
            task,
            item,
            actor,
            reason,
        } => board.withdraw(task, item, actor, reason, ts),
        Request::ReleaseFix {
            item,
            target_lane,
            actor,
            operator,
            lanes,
        } => board
            .release_fix(item, target_lane, actor, *operator, lanes, ts)
            .map(|e| vec![Event::Item(e)]),
        Request::StartReview {
            item,
            target_lane,
            target_model,
            actor,
            lanes,
        } => board
            .start_review(item, target_lane, target_model.as_deref(), actor, lanes, ts)
            .map(|e| vec![Event::Item(e)]),
        Request::Approve {
            item,
            actor,
            reason,
        } => board
            .approve(item, actor, reason.as_deref(), ts)
            .map(|e| vec![Event::Item(e)]),
    }
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type FastSet<K> = HashSet<K, foldhash::fast::RandomState>;

/// Checks that a history could have been written by [`decide`]'s transitions: every item event
/// follows the table from the item's previous state, NOT-SELECTED and WITHDRAWN follow the
/// competition event that decided them, and a competition is declared once and decided at most
/// once. Returns the index of the first event that breaks this, and why.
pub fn validate<'a>(history: impl IntoIterator<Item = &'a Event>) -> Result<(), (usize, String)> {
    // Looked up, never listed: hashed (by foldhash, not SipHash: a fetch checks 10,000 items
    // in one go, twice when it merges two boards), each item once per event.
    let mut states: FastMap<&str, State> = FastMap::default();
    let mut declared: FastSet<&str> = FastSet::default();
    let mut decided: FastSet<&str> = FastSet::default();
    let mut losers: FastSet<(&str, &str)> = FastSet::default();
    let mut withdrawn: FastSet<(&str, &str)> = FastSet::default();
    for (index, event) in history.into_iter().enumerate() {
        match event {
            Event::Competition(e) => {
                let task = e.task_id.as_str();
                let first = declared.insert(task);
                if first != (e.state == CompetitionState::Declared) {
                    return Err((
                        index,
                        format!("competition {task} {} out of order", e.state.as_str()),
                    ));
                }
                if decided.contains(task) {
                    return Err((
                        index,
                        format!("competition {task} moved after it was decided"),
                    ));
                }
                match e.state {
                    CompetitionState::Selected => {
                        decided.insert(task);
                        for loser in e.not_selected.iter().flatten() {
                            losers.insert((task, loser));
                        }
                    }
                    CompetitionState::Withdrawn => {
                        if let Some(item) = &e.item {
                            withdrawn.insert((task, item));
                        }
                    }
                    CompetitionState::Declared | CompetitionState::Deferred => {}
                }
            }
            Event::Item(e) => {
                let item = e.item_id.as_str();
                let slot = states.entry(item);
                let from = match &slot {
                    std::collections::hash_map::Entry::Occupied(state) => Some(*state.get()),
                    std::collections::hash_map::Entry::Vacant(_) => None,
                };
                let task = e.task_id.as_deref().unwrap_or_default();
                let ok = match e.state {
                    _ if from.is_some_and(State::is_terminal) => false,
                    State::NotSelected => from.is_some() && losers.remove(&(task, item)),
                    State::Withdrawn => from.is_some() && withdrawn.remove(&(task, item)),
                    State::FixQueued => {
                        matches!(from, Some(State::NeedsFix | State::FixQueued))
                    }
                    to => State::successors(from).contains(&to),
                };
                if !ok {
                    let from = from.map_or("None", State::as_str);
                    return Err((
                        index,
                        format!("{item}: {from} -> {} is not a board transition", e.state),
                    ));
                }
                slot.insert_entry(e.state);
            }
        }
    }
    Ok(())
}

/// Checks a House Session that is to decide competition `task`: a design session whose verdict
/// is a recommendation, whose options are exactly the `active` candidates, selected by its
/// judge. Returns the recommended candidate.
fn deliberated(
    task: &str,
    d: &Deliberated,
    actor: &Actor,
    active: &[&str],
) -> Result<String, Error> {
    if d.session_type != SessionType::Design {
        return Err(Error::DeliberationType(d.session_type.to_string()));
    }
    if d.status != "recommendation" {
        return Err(Error::DeliberationVerdict(d.status.clone()));
    }
    if actor.lane != d.judge.lane || actor.model != d.judge.model {
        return Err(Error::DeliberationJudge {
            lane: d.judge.lane.clone(),
            model: d.judge.model.clone(),
        });
    }
    let options: BTreeSet<&str> = d.options.iter().map(String::as_str).collect();
    let remaining: BTreeSet<&str> = active.iter().copied().collect();
    if options != remaining || options.len() != d.options.len() {
        return Err(Error::DeliberationOptions {
            task: task.to_owned(),
            options: options.into_iter().map(str::to_owned).collect(),
            remaining: remaining.into_iter().map(str::to_owned).collect(),
        });
    }
    d.value
        .clone()
        .ok_or_else(|| Error::DeliberationVerdict(format!("{} without a value", d.status)))
}

fn check_id(what: &'static str, value: &str) -> Result<(), Error> {
    if value.trim().is_empty() {
        return Err(Error::Empty(what));
    }
    let ok = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    if !ok {
        return Err(Error::BadId {
            what,
            value: value.to_owned(),
        });
    }
    crate::secrets::check_name(what, value)?;
    Ok(())
}

fn check_actor(actor: &Actor) -> Result<(), Error> {
    check_id("--lane", &actor.lane)?;
    if actor.role.trim().is_empty() {
        return Err(Error::Empty("--role"));
    }
    if actor.model.trim().is_empty() {
        return Err(Error::Empty("--model"));
    }
    crate::secrets::check_name("--model", &actor.model)?;
    Ok(())
}

/// The board as the events so far describe it.
struct Board<'a> {
    items: BTreeMap<&'a str, Vec<&'a ItemEvent>>,
    competitions: BTreeMap<&'a str, Vec<&'a CompetitionEvent>>,
}

impl<'a> Board<'a> {
    fn new(history: &'a [Event]) -> Self {
        let mut items: BTreeMap<&str, Vec<&ItemEvent>> = BTreeMap::new();
        let mut competitions: BTreeMap<&str, Vec<&CompetitionEvent>> = BTreeMap::new();
        for event in history {
            match event {
                Event::Item(e) => items.entry(e.item_id.as_str()).or_default().push(e),
                Event::Competition(e) => {
                    competitions.entry(e.task_id.as_str()).or_default().push(e)
                }
            }
        }
        Self {
            items,
            competitions,
        }
    }

    fn events(&self, item: &str) -> &[&'a ItemEvent] {
        self.items.get(item).map_or(&[], Vec::as_slice)
    }

    fn last(&self, item: &str) -> Option<&'a ItemEvent> {
        self.events(item).last().copied()
    }

    fn state(&self, item: &str) -> Option<State> {
        self.last(item).map(|e| e.state)
    }

    fn builders(&self, item: &str) -> impl Iterator<Item = &'a ItemEvent> + '_ {
        self.events(item)
            .iter()
            .copied()
            .filter(|e| e.state.is_build())
    }

    fn built_by(&self, item: &str, lane: &str) -> bool {
        self.builders(item).any(|e| e.lane_id == lane)
    }

    fn is_red(&self, item: &str) -> bool {
        self.events(item).iter().any(|e| e.is_red())
    }

    fn withdrawn(&self, task: &str) -> BTreeSet<&'a str> {
        self.competitions
            .get(task)
            .into_iter()
            .flatten()
            .filter(|e| e.state == CompetitionState::Withdrawn)
            .filter_map(|e| e.item.as_deref())
            .collect()
    }

    fn decided(&self, task: &str) -> bool {
        self.competitions
            .get(task)
            .into_iter()
            .flatten()
            .any(|e| e.state == CompetitionState::Selected)
    }

    fn candidates(&self, task: &str) -> Vec<&'a str> {
        self.competitions
            .get(task)
            .and_then(|events| events.first())
            .map(|e| e.candidates.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    fn active(&self, task: &str) -> Vec<&'a str> {
        let withdrawn = self.withdrawn(task);
        self.candidates(task)
            .into_iter()
            .filter(|c| !withdrawn.contains(c))
            .collect()
    }

    /// The competition `item` is an active candidate of.
    fn competition_of(&self, item: &str) -> Option<&'a str> {
        self.competitions
            .keys()
            .copied()
            .find(|task| self.active(task).contains(&item))
    }

    /// A rival of `item` (same competition) that `lane` built.
    fn rival_built_by(&self, item: &str, lane: &str) -> Option<(&'a str, &'a str)> {
        let task = self.competition_of(item)?;
        self.candidates(task)
            .into_iter()
            .find(|c| *c != item && self.built_by(c, lane))
            .map(|rival| (task, rival))
    }

    /// The checker rules shared by verdicts and select: `lane` claimed or built none of
    /// `items`, and `model` names a family that no builder of `items` shares.
    fn check_checker(
        &self,
        lane: &str,
        model: &str,
        lane_items: &[&str],
        family_items: &[&str],
    ) -> Result<(), Error> {
        for item in lane_items {
            if self.built_by(item, lane) {
                return Err(Error::ReviewerBuilt {
                    lane: lane.to_owned(),
                    item: (*item).to_owned(),
                });
            }
        }
        let family = model_family(model).ok_or_else(|| Error::NoFamily(model.to_owned()))?;
        for item in family_items {
            for builder in self.builders(item) {
                match model_family(&builder.model) {
                    None => {
                        return Err(Error::BuilderNoFamily {
                            model: builder.model.to_string(),
                            item: (*item).to_owned(),
                        });
                    }
                    Some(theirs) if theirs == family => {
                        return Err(Error::SameFamily {
                            model: model.to_owned(),
                            family,
                            item: (*item).to_owned(),
                        });
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    fn transition(&self, item: &str, to: State) -> Result<Option<State>, Error> {
        let from = self.state(item);
        if let Some(state) = from.filter(|s| s.is_terminal()) {
            return Err(Error::Terminal {
                item: item.to_owned(),
                state,
            });
        }
        if !State::successors(from).contains(&to) {
            return Err(Error::Transition {
                item: item.to_owned(),
                from: from.map_or("None".to_owned(), |s| s.as_str().to_owned()),
                to,
            });
        }
        Ok(from)
    }

    fn set(&self, req: &SetRequest, ts: &str) -> Result<ItemEvent, Error> {
        check_id("item", &req.item)?;
        check_actor(&req.actor)?;
        let item = req.item.as_str();
        let lane = req.actor.lane.as_str();
        match req.state {
            State::FixQueued => {
                return Err(Error::OnlyVia {
                    state: req.state,
                    verb: "release-fix",
                });
            }
            State::Approved => {
                return Err(Error::OnlyVia {
                    state: req.state,
                    verb: "approve",
                });
            }
            State::NotSelected => {
                return Err(Error::OnlyVia {
                    state: req.state,
                    verb: "select",
                });
            }
            State::Withdrawn => {
                return Err(Error::OnlyVia {
                    state: req.state,
                    verb: "withdraw",
                });
            }
            _ => {}
        }
        let from = self.transition(item, req.state)?;
        let mut event = ItemEvent::new(ts, item, req.state, &req.actor);
        event.evidence = req.evidence.clone();
        event.reason = req.reason.clone();
        event.branch = req.branch.clone();
        if req.red {
            event.tag = Some(super::RED.to_owned());
        }
        match req.state {
            State::Building | State::CheckpointReady => {
                if from == Some(State::FixQueued) {
                    let target = self
                        .last(item)
                        .and_then(|e| e.target_lane.clone())
                        .unwrap_or_default();
                    if target != lane {
                        return Err(Error::NotQueuedLane {
                            item: item.to_owned(),
                            lane: lane.to_owned(),
                            target,
                        });
                    }
                }
                if let Some((task, rival)) = self.rival_built_by(item, lane) {
                    return Err(Error::RivalBuilder {
                        lane: lane.to_owned(),
                        item: item.to_owned(),
                        rival: rival.to_owned(),
                        task: task.to_owned(),
                    });
                }
                if req.state == State::CheckpointReady {
                    if req.actor.role != "executor" {
                        return Err(Error::CheckpointRole {
                            role: req.actor.role.clone(),
                        });
                    }
                    let owner = self
                        .last(item)
                        .map(|e| e.lane_id.to_string())
                        .unwrap_or_default();
                    if owner != lane {
                        return Err(Error::NotOwner {
                            item: item.to_owned(),
                            lane: lane.to_owned(),
                            owner,
                        });
                    }
                    let check = req.evidence_record.as_ref().ok_or(Error::NoEvidence)?;
                    if !check.is_valid() {
                        return Err(Error::EvidenceInvalid {
                            record: check.record.record_ref.clone(),
                            status: check.status.clone(),
                            problems: check.problems.join("; "),
                        });
                    }
                    event.evidence_record = Some(check.record.clone());
                }
            }
            State::Verified | State::NeedsFix => {
                if req.actor.role != "reviewer" {
                    return Err(Error::VerdictRole {
                        state: req.state,
                        role: req.actor.role.clone(),
                    });
                }
                if req.checker_unavailable {
                    return Err(Error::VerdictUnavailable { state: req.state });
                }
                let (Some(by_lane), Some(by_model)) = (
                    req.verdict_by_lane
                        .as_deref()
                        .filter(|s| !s.trim().is_empty()),
                    req.verdict_by_model
                        .as_deref()
                        .filter(|s| !s.trim().is_empty()),
                ) else {
                    return Err(Error::VerdictByMissing { state: req.state });
                };
                self.check_checker(by_lane, by_model, &[item], &[item])?;
                event.verdict_by = Some(VerdictBy {
                    lane: by_lane.to_owned(),
                    model: by_model.to_owned(),
                });
            }
            State::Deferred => {
                if !req.checker_unavailable {
                    return Err(Error::DeferredNeedsUnavailable);
                }
                event.checker_unavailable = true;
            }
            State::Merged => {
                if !self.events(item).iter().any(|e| e.state == State::Verified) {
                    return Err(Error::NeverVerified(item.to_owned()));
                }
                if let Some(task) = self.competition_of(item)
                    && !self.decided(task)
                {
                    return Err(Error::Undecided {
                        item: item.to_owned(),
                        task: task.to_owned(),
                    });
                }
                let approved = self.events(item).iter().any(|e| e.state == State::Approved);
                if (self.is_red(item) || req.red) && !req.human_approved && !approved {
                    return Err(Error::RedNeedsHuman(item.to_owned()));
                }
            }
            _ => {}
        }
        event.human_approved = req.human_approved;
        Ok(event)
    }

    fn compete(
        &self,
        task: &str,
        items: &[String],
        actor: &Actor,
        ts: &str,
    ) -> Result<Vec<Event>, Error> {
        check_id("--task", task)?;
        check_actor(actor)?;
        let mut distinct: Vec<String> = Vec::new();
        for item in items {
            check_id("item", item)?;
            if !distinct.contains(item) {
                distinct.push(item.clone());
            }
        }
        if distinct.len() < 2 {
            return Err(Error::TooFewItems);
        }
        if self.competitions.contains_key(task) {
            return Err(Error::TaskUsed(task.to_owned()));
        }
        for item in &distinct {
            match self.state(item) {
                None => return Err(Error::NotClaimed(item.clone())),
                Some(state) if state.is_terminal() => {
                    return Err(Error::Terminal {
                        item: item.clone(),
                        state,
                    });
                }
                Some(_) => {}
            }
            if let Some(other) = self.competition_of(item) {
                return Err(Error::OtherCompetition {
                    item: item.clone(),
                    task: other.to_owned(),
                });
            }
        }
        for (i, first) in distinct.iter().enumerate() {
            for second in &distinct[i + 1..] {
                if let Some(shared) = self
                    .builders(first)
                    .find(|e| self.built_by(second, &e.lane_id))
                {
                    return Err(Error::SharedBuilder {
                        lane: shared.lane_id.to_string(),
                        first: first.clone(),
                        second: second.clone(),
                    });
                }
            }
        }
        let event = CompetitionEvent::new(ts, task, CompetitionState::Declared, distinct, actor);
        Ok(vec![Event::Competition(event)])
    }

    fn open_competition(&self, task: &str) -> Result<(), Error> {
        check_id("--task", task)?;
        if !self.competitions.contains_key(task) {
            return Err(Error::NoCompetition(task.to_owned()));
        }
        if self.decided(task) {
            return Err(Error::Decided(task.to_owned()));
        }
        Ok(())
    }

    fn select(
        &self,
        task: &str,
        choice: &Choice,
        actor: &Actor,
        reason: Option<&str>,
        ts: &str,
    ) -> Result<Vec<Event>, Error> {
        check_actor(actor)?;
        self.open_competition(task)?;
        let candidates: Vec<String> = self
            .candidates(task)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let active = self.active(task);
        let mut competition =
            CompetitionEvent::new(ts, task, CompetitionState::Deferred, candidates, actor);
        competition.reason = reason.map(str::to_owned);
        let winner = match choice {
            Choice::CheckerUnavailable => {
                competition.checker_unavailable = true;
                competition.remaining = Some(active.iter().map(|s| (*s).to_owned()).collect());
                return Ok(vec![Event::Competition(competition)]);
            }
            Choice::Winner(winner) => winner.clone(),
            Choice::Deliberation(d) => {
                let winner = deliberated(task, d, actor, &active)?;
                competition.deliberation = Some(d.record.clone());
                winner
            }
        };
        if !active.contains(&winner.as_str()) {
            return Err(Error::NotCandidate {
                winner: winner.clone(),
                task: task.to_owned(),
            });
        }
        let mut compared = BTreeMap::new();
        for item in &active {
            let last = self.last(item);
            let ready = match last {
                Some(e) if e.state == State::Verified => true,
                Some(e) if e.state == State::CheckpointReady => {
                    e.evidence_record.is_some() || e.evidence.is_some()
                }
                _ => false,
            };
            if !ready {
                return Err(Error::NotReady {
                    item: (*item).to_owned(),
                    state: last.map_or("None".to_owned(), |e| e.state.as_str().to_owned()),
                });
            }
            // The evidence the candidate was judged on: its last checkpoint's.
            let checkpoint = self
                .events(item)
                .iter()
                .rev()
                .find(|e| e.state == State::CheckpointReady);
            compared.insert(
                (*item).to_owned(),
                Compared {
                    state: last.map_or(State::CheckpointReady, |e| e.state),
                    evidence: checkpoint.and_then(|e| e.evidence.clone()),
                    evidence_record: checkpoint.and_then(|e| e.evidence_record.clone()),
                },
            );
        }
        // The selector built no candidate, withdrawn ones included, and is of another family
        // than the builders of every active candidate.
        let all = self.candidates(task);
        if let Some(built) = all.iter().find(|c| self.built_by(c, &actor.lane)) {
            return Err(Error::SelectorBuilt {
                lane: actor.lane.clone(),
                item: (*built).to_owned(),
                task: task.to_owned(),
            });
        }
        self.check_checker(&actor.lane, &actor.model, &all, &active)?;
        let losers: Vec<String> = active
            .iter()
            .filter(|c| **c != winner.as_str())
            .map(|c| (*c).to_owned())
            .collect();
        competition.state = CompetitionState::Selected;
        competition.winner = Some(winner.clone());
        competition.not_selected = Some(losers.clone());
        competition.verdict_by = Some(VerdictBy {
            lane: actor.lane.clone(),
            model: actor.model.clone(),
        });
        competition.compared = Some(compared);
        let mut out = vec![Event::Competition(competition)];
        for loser in losers {
            let mut event = ItemEvent::new(ts, &loser, State::NotSelected, actor);
            event.task_id = Some(task.to_owned());
            event.winner = Some(winner.clone());
            event.reason = reason.map(str::to_owned);
            event.verdict_by = Some(VerdictBy {
                lane: actor.lane.clone(),
                model: actor.model.clone(),
            });
            out.push(Event::Item(event));
        }
        Ok(out)
    }

    fn withdraw(
        &self,
        task: &str,
        item: &str,
        actor: &Actor,
        reason: &str,
        ts: &str,
    ) -> Result<Vec<Event>, Error> {
        check_actor(actor)?;
        check_id("--item", item)?;
        if reason.trim().is_empty() {
            return Err(Error::ReasonRequired);
        }
        self.open_competition(task)?;
        let active = self.active(task);
        if !active.contains(&item) {
            return Err(Error::NotCandidate {
                winner: item.to_owned(),
                task: task.to_owned(),
            });
        }
        if active.len() < 2 {
            return Err(Error::TooFewRemaining(task.to_owned()));
        }
        if let Some(rival) = active
            .iter()
            .find(|c| **c != item && self.built_by(c, &actor.lane))
        {
            return Err(Error::WithdrawerBuiltRival {
                lane: actor.lane.clone(),
                item: item.to_owned(),
                rival: (*rival).to_owned(),
            });
        }
        if let Some(state) = self.state(item).filter(|s| s.is_terminal()) {
            return Err(Error::Terminal {
                item: item.to_owned(),
                state,
            });
        }
        let candidates: Vec<String> = self
            .candidates(task)
            .into_iter()
            .map(str::to_owned)
            .collect();
        let mut withdrawn: Vec<String> = self
            .withdrawn(task)
            .into_iter()
            .map(str::to_owned)
            .collect();
        withdrawn.push(item.to_owned());
        let mut competition =
            CompetitionEvent::new(ts, task, CompetitionState::Withdrawn, candidates, actor);
        competition.item = Some(item.to_owned());
        competition.withdrawn = Some(withdrawn);
        competition.remaining = Some(
            active
                .iter()
                .filter(|c| **c != item)
                .map(|c| (*c).to_owned())
                .collect(),
        );
        competition.reason = Some(reason.to_owned());
        let mut event = ItemEvent::new(ts, item, State::Withdrawn, actor);
        event.task_id = Some(task.to_owned());
        event.reason = Some(reason.to_owned());
        Ok(vec![Event::Competition(competition), Event::Item(event)])
    }

    fn release_fix(
        &self,
        item: &str,
        target_lane: &str,
        actor: &Actor,
        operator: bool,
        lanes: &LaneRegistry,
        ts: &str,
    ) -> Result<ItemEvent, Error> {
        check_id("item", item)?;
        check_id("--target-lane", target_lane)?;
        check_actor(actor)?;
        let reroute = self.state(item) == Some(State::FixQueued);
        if reroute {
            let target = self
                .last(item)
                .and_then(|e| e.target_lane.clone())
                .unwrap_or_default();
            if !operator && lanes.get(&target) != Some(&false) {
                return Err(Error::RerouteNeedsOperator {
                    item: item.to_owned(),
                    target,
                });
            }
        } else {
            self.transition(item, State::FixQueued)?;
        }
        if lanes.get(target_lane) == Some(&false) {
            return Err(Error::DeadLane(target_lane.to_owned()));
        }
        if let Some((task, rival)) = self.rival_built_by(item, target_lane) {
            return Err(Error::RivalBuilder {
                lane: target_lane.to_owned(),
                item: item.to_owned(),
                rival: rival.to_owned(),
                task: task.to_owned(),
            });
        }
        let mut event = ItemEvent::new(ts, item, State::FixQueued, actor);
        event.target_lane = Some(target_lane.to_owned());
        event.reroute = reroute;
        event.operator = operator;
        Ok(event)
    }

    fn start_review(
        &self,
        item: &str,
        target_lane: &str,
        target_model: Option<&str>,
        actor: &Actor,
        lanes: &LaneRegistry,
        ts: &str,
    ) -> Result<ItemEvent, Error> {
        check_id("item", item)?;
        check_id("--target-lane", target_lane)?;
        check_actor(actor)?;
        self.transition(item, State::UnderReview)?;
        if lanes.get(target_lane) == Some(&false) {
            return Err(Error::DeadLane(target_lane.to_owned()));
        }
        if self.built_by(item, target_lane) {
            return Err(Error::TargetBuilt {
                lane: target_lane.to_owned(),
                item: item.to_owned(),
            });
        }
        if let Some(model) = target_model {
            self.check_checker(target_lane, model, &[item], &[item])?;
        }
        let mut event = ItemEvent::new(ts, item, State::UnderReview, actor);
        event.target_lane = Some(target_lane.to_owned());
        event.target_model = target_model.map(str::to_owned);
        Ok(event)
    }

    fn approve(
        &self,
        item: &str,
        actor: &Actor,
        reason: Option<&str>,
        ts: &str,
    ) -> Result<ItemEvent, Error> {
        check_id("item", item)?;
        check_actor(actor)?;
        self.transition(item, State::Approved)?;
        if !self.is_red(item) {
            return Err(Error::NotRed(item.to_owned()));
        }
        if let Some(task) = self.competition_of(item)
            && !self.decided(task)
        {
            return Err(Error::Undecided {
                item: item.to_owned(),
                task: task.to_owned(),
            });
        }
        let mut event = ItemEvent::new(ts, item, State::Approved, actor);
        event.human_approved = true;
        event.reason = reason.map(str::to_owned);
        Ok(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{EvidenceCheck, EvidenceRef};

    const TS: &str = "2026-01-01T00:00:00Z";

    fn actor(lane: &str, role: &str, model: &str) -> Actor {
        Actor {
            lane: lane.into(),
            role: role.into(),
            model: model.into(),
        }
    }

    fn evidence(valid: bool) -> EvidenceCheck {
        EvidenceCheck {
            record: EvidenceRef {
                record_ref: "refs/hpp/evidence/e-20260101T000000Z".into(),
                id: Some("e".into()),
                record_sha256: Some("0".repeat(64)),
            },
            status: if valid { "valid" } else { "blocked" }.into(),
            problems: if valid {
                vec![]
            } else {
                vec!["the run did not pass (verdict: failed)".into()]
            },
        }
    }

    fn set(item: &str, state: State, lane: &str, role: &str, model: &str) -> SetRequest {
        SetRequest::new(item, state, actor(lane, role, model))
    }

    fn checkpoint(item: &str, lane: &str, model: &str) -> SetRequest {
        let mut req = set(item, State::CheckpointReady, lane, "executor", model);
        req.evidence_record = Some(evidence(true));
        req
    }

    fn verdict(item: &str, state: State, lane: &str, model: &str) -> SetRequest {
        let mut req = set(item, state, lane, "reviewer", model);
        req.verdict_by_lane = Some(lane.into());
        req.verdict_by_model = Some(model.into());
        req
    }

    /// A board built only through `decide`, so every history in these tests is a valid one.
    #[derive(Default, Clone)]
    struct Play(Vec<Event>);

    impl Play {
        fn try_do(&self, req: Request) -> Result<Vec<Event>, Error> {
            decide(&self.0, &req, TS)
        }

        fn ok(&mut self, req: Request) -> &mut Self {
            let events = self
                .try_do(req.clone())
                .unwrap_or_else(|e| panic!("{req:?}: {e}"));
            self.0.extend(events);
            self
        }

        fn set(&mut self, req: SetRequest) -> &mut Self {
            self.ok(Request::Set(req))
        }

        fn refuse(&self, req: SetRequest) -> Error {
            self.try_do(Request::Set(req)).expect_err("refused")
        }

        fn allow(&self, req: SetRequest) {
            self.try_do(Request::Set(req)).expect("allowed");
        }

        /// A built by lane-a (gpt), checkpointed with valid evidence.
        fn checkpointed() -> Self {
            let mut p = Play::default();
            p.set(set("A", State::Claimed, "lane-a", "executor", "gpt-5"))
                .set(set("A", State::Building, "lane-a", "executor", "gpt-5"))
                .set(checkpoint("A", "lane-a", "gpt-5"));
            p
        }

        fn under_review() -> Self {
            let mut p = Self::checkpointed();
            p.set(set(
                "A",
                State::UnderReview,
                "coord",
                "coordinator",
                "gpt-5",
            ));
            p
        }

        fn verified(red: bool) -> Self {
            let mut p = Self::under_review();
            let mut v = verdict("A", State::Verified, "rev", "claude-opus-4");
            v.red = red;
            p.set(v);
            p
        }

        /// A by lane-a (gpt) and B by lane-b (gemini), both checkpointed, in competition T.
        fn competition() -> Self {
            let mut p = Play::default();
            for (item, lane, model) in [("A", "lane-a", "gpt-5"), ("B", "lane-b", "gemini-2.5-pro")]
            {
                p.set(set(item, State::Claimed, lane, "executor", model))
                    .set(set(item, State::Building, lane, "executor", model))
                    .set(checkpoint(item, lane, model));
            }
            p.ok(compete("T", &["A", "B"], "coord"));
            p
        }
    }

    fn compete(task: &str, items: &[&str], lane: &str) -> Request {
        Request::Compete {
            task: task.into(),
            items: items.iter().map(|s| (*s).to_owned()).collect(),
            actor: actor(lane, "coordinator", "gpt-5"),
        }
    }

    fn select(task: &str, winner: Option<&str>, lane: &str, model: &str) -> Request {
        Request::Select {
            task: task.into(),
            choice: winner.map_or(Choice::CheckerUnavailable, |w| Choice::Winner(w.into())),
            actor: actor(lane, "reviewer", model),
            reason: None,
        }
    }

    #[test]
    fn every_state_name_parses_back_and_is_its_json_name() {
        for state in State::ALL {
            assert_eq!(state.as_str().parse::<State>(), Ok(state));
            assert_eq!(state.as_str().to_lowercase().parse::<State>(), Ok(state));
            let json = serde_json::to_value(state).unwrap();
            assert_eq!(json, state.as_str());
        }
        assert!("DONE".parse::<State>().is_err());
    }

    #[test]
    fn every_transition_outside_the_table_is_refused_and_every_one_inside_is_allowed() {
        for from in [None].into_iter().chain(State::ALL.map(Some)) {
            for to in State::ALL {
                let allowed = State::successors(from).contains(&to);
                let terminal = from.is_some_and(State::is_terminal);
                assert!(!(terminal && allowed), "{from:?} is terminal");
            }
        }
        assert_eq!(State::successors(None), &[State::Claimed]);
        assert!(State::successors(Some(State::Merged)).is_empty());
        assert!(State::successors(Some(State::NotSelected)).is_empty());
        assert!(State::successors(Some(State::Withdrawn)).is_empty());
    }

    #[test]
    fn control_a_state_skipped_is_refused_and_the_next_one_is_allowed() {
        let p = Play::default();
        let err = p.refuse(set("A", State::Building, "lane-a", "executor", "gpt-5"));
        assert!(matches!(err, Error::Transition { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "invalid transition for A: None -> BUILDING"
        );
        p.allow(set("A", State::Claimed, "lane-a", "executor", "gpt-5"));
    }

    #[test]
    fn fix_queued_and_approved_are_only_written_by_their_verbs() {
        let p = Play::verified(true);
        let err = p.refuse(set("A", State::Approved, "human", "human", "human"));
        assert_eq!(
            err.to_string(),
            "APPROVED is written only by `git hpp board approve`"
        );
        p.try_do(Request::Approve {
            item: "A".into(),
            actor: actor("human", "human", "human"),
            reason: None,
        })
        .expect("approve writes APPROVED");
        let mut p = Play::under_review();
        p.set(verdict("A", State::NeedsFix, "rev", "claude-opus-4"));
        let err = p.refuse(set("A", State::FixQueued, "coord", "coordinator", "gpt-5"));
        assert!(
            matches!(
                err,
                Error::OnlyVia {
                    verb: "release-fix",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn checkpoint_ready_needs_an_executor_the_owner_and_valid_evidence() {
        let mut p = Play::default();
        p.set(set("A", State::Claimed, "lane-a", "executor", "gpt-5"))
            .set(set("A", State::Building, "lane-a", "executor", "gpt-5"));
        // Role.
        let mut bad = checkpoint("A", "lane-a", "gpt-5");
        bad.actor.role = "reviewer".into();
        assert!(matches!(p.refuse(bad), Error::CheckpointRole { .. }));
        // Owner.
        let err = p.refuse(checkpoint("A", "lane-x", "gpt-5"));
        assert!(matches!(err, Error::NotOwner { .. }), "{err}");
        // No evidence, or a text note only.
        let mut bad = checkpoint("A", "lane-a", "gpt-5");
        bad.evidence_record = None;
        bad.evidence = Some("tests pass".into());
        assert_eq!(p.refuse(bad), Error::NoEvidence);
        // Evidence that does not verify.
        let mut bad = checkpoint("A", "lane-a", "gpt-5");
        bad.evidence_record = Some(evidence(false));
        let err = p.refuse(bad);
        assert!(matches!(err, Error::EvidenceInvalid { .. }), "{err}");
        assert!(err.to_string().contains("verdict: failed"), "{err}");
        // The twin.
        p.allow(checkpoint("A", "lane-a", "gpt-5"));
    }

    #[test]
    fn a_verdict_needs_a_reviewer_naming_a_lane_and_model_of_another_family() {
        let p = Play::under_review();
        let mut bad = verdict("A", State::Verified, "rev", "claude-opus-4");
        bad.actor.role = "executor".into();
        assert!(matches!(p.refuse(bad), Error::VerdictRole { .. }));
        let mut bad = verdict("A", State::Verified, "rev", "claude-opus-4");
        bad.checker_unavailable = true;
        assert!(matches!(p.refuse(bad), Error::VerdictUnavailable { .. }));
        let mut bad = verdict("A", State::Verified, "rev", "claude-opus-4");
        bad.verdict_by_model = None;
        assert!(matches!(p.refuse(bad), Error::VerdictByMissing { .. }));
        // The builder's own lane.
        let err = p.refuse(verdict("A", State::Verified, "lane-a", "claude-opus-4"));
        assert!(matches!(err, Error::ReviewerBuilt { .. }), "{err}");
        // The builder's family under another name.
        let err = p.refuse(verdict("A", State::NeedsFix, "rev", "o4-mini"));
        assert!(matches!(err, Error::SameFamily { .. }), "{err}");
        assert!(err.to_string().contains("family gpt"), "{err}");
        // A model that names no family.
        let err = p.refuse(verdict("A", State::Verified, "rev", "auto"));
        assert!(matches!(err, Error::NoFamily(_)), "{err}");
        // The twins.
        p.allow(verdict("A", State::Verified, "rev", "claude-opus-4"));
        p.allow(verdict("A", State::NeedsFix, "rev", "gemini-2.5-pro"));
    }

    #[test]
    fn a_builder_whose_model_names_no_family_cannot_be_checked_against() {
        let mut p = Play::default();
        p.set(set("A", State::Claimed, "lane-a", "executor", "auto"))
            .set(set("A", State::Building, "lane-a", "executor", "auto"))
            .set(checkpoint("A", "lane-a", "auto"))
            .set(set("A", State::UnderReview, "coord", "coordinator", "x"));
        let err = p.refuse(verdict("A", State::Verified, "rev", "claude-opus-4"));
        assert!(matches!(err, Error::BuilderNoFamily { .. }), "{err}");
    }

    #[test]
    fn deferred_needs_checker_unavailable() {
        let p = Play::under_review();
        let bad = set("A", State::Deferred, "coord", "coordinator", "gpt-5");
        assert_eq!(p.refuse(bad.clone()), Error::DeferredNeedsUnavailable);
        let mut good = bad;
        good.checker_unavailable = true;
        p.allow(good);
    }

    #[test]
    fn merged_needs_verified_and_a_red_item_needs_a_person() {
        let p = Play::checkpointed();
        let err = p.refuse(set("A", State::Merged, "lane-a", "executor", "gpt-5"));
        assert!(matches!(err, Error::Transition { .. }), "{err}");
        let p = Play::verified(false);
        p.allow(set("A", State::Merged, "lane-a", "executor", "gpt-5"));
        // Red is sticky: tagged at the verdict, still red at merge without the tag.
        let mut p = Play::verified(true);
        let err = p.refuse(set("A", State::Merged, "lane-a", "executor", "gpt-5"));
        assert_eq!(err, Error::RedNeedsHuman("A".into()));
        let mut human = set("A", State::Merged, "lane-a", "executor", "gpt-5");
        human.human_approved = true;
        p.allow(human);
        p.ok(Request::Approve {
            item: "A".into(),
            actor: actor("human", "human", "human"),
            reason: None,
        });
        p.allow(set("A", State::Merged, "lane-a", "executor", "gpt-5"));
    }

    #[test]
    fn approve_is_only_for_red_items() {
        let p = Play::verified(false);
        let err = p
            .try_do(Request::Approve {
                item: "A".into(),
                actor: actor("human", "human", "human"),
                reason: None,
            })
            .expect_err("not red");
        assert_eq!(err, Error::NotRed("A".into()));
    }

    #[test]
    fn building_from_fix_queued_is_only_for_the_queued_lane() {
        let mut p = Play::under_review();
        p.set(verdict("A", State::NeedsFix, "rev", "claude-opus-4"));
        let release = |target: &str, operator, lanes: &[(&str, bool)]| Request::ReleaseFix {
            item: "A".into(),
            target_lane: target.into(),
            actor: actor("coord", "coordinator", "gpt-5"),
            operator,
            lanes: lanes.iter().map(|(l, a)| ((*l).to_owned(), *a)).collect(),
        };
        // A registered lane that is dead cannot take the fix; an alive or unregistered one can.
        let err = p
            .try_do(release("lane-f", false, &[("lane-f", false)]))
            .expect_err("dead");
        assert_eq!(err, Error::DeadLane("lane-f".into()));
        p.try_do(release("lane-f", false, &[("lane-f", true)]))
            .expect("alive");
        p.ok(release("lane-f", false, &[]));
        let err = p.refuse(set("A", State::Building, "lane-a", "executor", "gpt-5"));
        assert!(matches!(err, Error::NotQueuedLane { .. }), "{err}");
        p.allow(set("A", State::Building, "lane-f", "executor", "gpt-5"));
        // A second release is a reroute: when the queued lane is dead, or by an operator.
        let err = p
            .try_do(release("lane-g", false, &[]))
            .expect_err("reroute");
        assert!(matches!(err, Error::RerouteNeedsOperator { .. }), "{err}");
        let err = p
            .try_do(release("lane-g", false, &[("lane-f", true)]))
            .expect_err("the queued lane is alive");
        assert!(matches!(err, Error::RerouteNeedsOperator { .. }), "{err}");
        p.try_do(release("lane-g", false, &[("lane-f", false)]))
            .expect("the queued lane is dead");
        let rerouted = p
            .try_do(release("lane-g", true, &[]))
            .expect("an operator reroutes");
        assert!(matches!(&rerouted[0], Event::Item(e) if e.reroute && e.operator));
    }

    #[test]
    fn a_registered_lane_is_dead_when_closed_or_silent_for_thirty_minutes() {
        let source = serde_json::json!([
            {"id": "fresh", "status": "open", "heartbeat_at": 10_000},
            {"id": "silent", "status": "open", "heartbeat_at": 10_000 - 1801},
            {"id": "closed", "status": "closed", "heartbeat_at": 10_000},
            {"status": "open"},
        ]);
        let registry = crate::board::lane_registry(&source, 10_000);
        assert_eq!(registry.get("fresh"), Some(&true));
        assert_eq!(registry.get("silent"), Some(&false));
        assert_eq!(registry.get("closed"), Some(&false));
        assert_eq!(registry.len(), 3);
    }

    #[test]
    fn compete_needs_two_claimed_items_with_distinct_builders_and_a_new_task() {
        let mut p = Play::default();
        p.set(set("A", State::Claimed, "lane-a", "executor", "gpt-5"))
            .set(set("B", State::Claimed, "lane-b", "executor", "gemini-2.5"))
            .set(set("C", State::Claimed, "lane-a", "executor", "gpt-5"));
        assert_eq!(
            p.try_do(compete("T", &["A", "A"], "coord")),
            Err(Error::TooFewItems)
        );
        assert_eq!(
            p.try_do(compete("T", &["A", "Z"], "coord")),
            Err(Error::NotClaimed("Z".into()))
        );
        let err = p
            .try_do(compete("T", &["A", "C"], "coord"))
            .expect_err("shared");
        assert!(matches!(err, Error::SharedBuilder { .. }), "{err}");
        p.ok(compete("T", &["A", "B"], "coord"));
        assert_eq!(
            p.try_do(compete("T", &["C", "B"], "coord")),
            Err(Error::TaskUsed("T".into()))
        );
        let err = p
            .try_do(compete("U", &["C", "B"], "coord"))
            .expect_err("other");
        assert!(matches!(err, Error::OtherCompetition { .. }), "{err}");
    }

    #[test]
    fn a_lane_that_built_one_candidate_may_not_build_its_rival() {
        let mut p = Play::default();
        p.set(set("A", State::Claimed, "lane-a", "executor", "gpt-5"))
            .set(set("B", State::Claimed, "lane-b", "executor", "gemini-2.5"))
            .ok(compete("T", &["A", "B"], "coord"));
        let err = p.refuse(set("B", State::Building, "lane-a", "executor", "gpt-5"));
        assert!(matches!(err, Error::RivalBuilder { .. }), "{err}");
        p.allow(set(
            "B",
            State::Building,
            "lane-b",
            "executor",
            "gemini-2.5",
        ));
    }

    fn session(options: &[&str], status: &str, model: &str) -> Deliberated {
        Deliberated {
            session_type: SessionType::Design,
            options: options.iter().map(|s| (*s).to_owned()).collect(),
            status: status.into(),
            value: Some("A".into()),
            judge: VerdictBy {
                lane: "lane-judge".into(),
                model: model.into(),
            },
            record: crate::board::DeliberationRef {
                id: "design-1-0123456789ab".into(),
                record_sha256: "0".repeat(64),
                reference: None,
            },
        }
    }

    fn select_by(d: Deliberated) -> Request {
        Request::Select {
            task: "T".into(),
            actor: actor(&d.judge.lane, "reviewer", &d.judge.model),
            choice: Choice::Deliberation(d),
            reason: None,
        }
    }

    #[test]
    fn a_design_session_over_the_remaining_candidates_selects_with_its_judge() {
        let p = Play::competition();
        let events = p
            .try_do(select_by(session(
                &["B", "A"],
                "recommendation",
                "qwen3-32b",
            )))
            .expect("selected");
        let Event::Competition(c) = &events[0] else {
            panic!("the competition event comes first")
        };
        assert_eq!(c.winner.as_deref(), Some("A"));
        assert_eq!(
            c.verdict_by.as_ref().map(|v| v.lane.as_str()),
            Some("lane-judge")
        );
        assert_eq!(
            c.deliberation.as_ref().map(|d| d.id.as_str()),
            Some("design-1-0123456789ab")
        );
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn control_a_session_of_another_kind_verdict_options_or_judge_family_is_refused() {
        let p = Play::competition();
        let refuse = |d: Deliberated| p.try_do(select_by(d)).expect_err("refused");
        let mut review = session(&["A", "B"], "recommendation", "qwen3-32b");
        review.session_type = SessionType::Review;
        assert_eq!(refuse(review), Error::DeliberationType("review".into()));
        assert_eq!(
            refuse(session(&["A", "B"], "abstention", "qwen3-32b")),
            Error::DeliberationVerdict("abstention".into())
        );
        let err = refuse(session(&["A", "B", "C"], "recommendation", "qwen3-32b"));
        assert!(matches!(err, Error::DeliberationOptions { .. }), "{err}");
        let err = refuse(session(&["A", "B"], "recommendation", "gemini-3-pro"));
        assert!(matches!(err, Error::SameFamily { .. }), "{err}");
        let mut other = select_by(session(&["A", "B"], "recommendation", "qwen3-32b"));
        if let Request::Select { actor: a, .. } = &mut other {
            a.lane = "someone-else".into();
        }
        let err = p.try_do(other).expect_err("not the judge");
        assert!(matches!(err, Error::DeliberationJudge { .. }), "{err}");
        assert!(err.is_input());
    }

    #[test]
    fn select_picks_one_winner_and_the_losers_never_move_again() {
        let mut p = Play::competition();
        // Not a candidate; a builder's lane; a builder's family.
        let err = p
            .try_do(select("T", Some("Z"), "rev", "claude-opus-4"))
            .expect_err("z");
        assert!(matches!(err, Error::NotCandidate { .. }), "{err}");
        let err = p
            .try_do(select("T", Some("A"), "lane-b", "claude-opus-4"))
            .expect_err("b");
        assert!(matches!(err, Error::SelectorBuilt { .. }), "{err}");
        let err = p
            .try_do(select("T", Some("A"), "rev", "gemini-3"))
            .expect_err("fam");
        assert!(matches!(err, Error::SameFamily { .. }), "{err}");
        let events = p
            .try_do(select("T", Some("A"), "rev", "claude-opus-4"))
            .expect("ok");
        assert_eq!(
            events.len(),
            2,
            "SELECTED and one NOT-SELECTED in one write"
        );
        p.ok(select("T", Some("A"), "rev", "claude-opus-4"));
        assert_eq!(
            p.try_do(select("T", Some("B"), "rev", "claude-opus-4")),
            Err(Error::Decided("T".into()))
        );
        for state in [State::Building, State::UnderReview, State::Claimed] {
            let err = p.refuse(set("B", state, "lane-b", "executor", "gemini-2.5"));
            assert!(
                matches!(
                    err,
                    Error::Terminal {
                        state: State::NotSelected,
                        ..
                    }
                ),
                "{err}"
            );
        }
    }

    #[test]
    fn select_waits_for_every_candidate_to_be_ready() {
        let mut p = Play::default();
        p.set(set("A", State::Claimed, "lane-a", "executor", "gpt-5"))
            .set(set("A", State::Building, "lane-a", "executor", "gpt-5"))
            .set(checkpoint("A", "lane-a", "gpt-5"))
            .set(set("B", State::Claimed, "lane-b", "executor", "gemini-2.5"))
            .ok(compete("T", &["A", "B"], "coord"));
        let err = p
            .try_do(select("T", Some("A"), "rev", "claude-opus-4"))
            .expect_err("b");
        assert!(matches!(err, Error::NotReady { .. }), "{err}");
    }

    #[test]
    fn checker_unavailable_defers_without_a_winner_and_the_competition_stays_open() {
        let mut p = Play::competition();
        let events = p
            .try_do(select("T", None, "rev", "auto"))
            .expect("deferred");
        assert_eq!(events.len(), 1);
        let Event::Competition(e) = &events[0] else {
            panic!("a competition event")
        };
        assert_eq!(e.state, CompetitionState::Deferred);
        assert!(e.winner.is_none() && e.checker_unavailable);
        p.ok(select("T", None, "rev", "auto"));
        // Still undecided: the candidates cannot merge, a later checker can select.
        p.ok(select("T", Some("B"), "rev", "claude-opus-4"));
    }

    #[test]
    fn withdraw_needs_a_reason_and_a_coordinator_who_built_no_rival() {
        let mut p = Play::competition();
        let withdraw = |lane: &str, reason: &str| Request::Withdraw {
            task: "T".into(),
            item: "B".into(),
            actor: actor(lane, "coordinator", "gpt-5"),
            reason: reason.into(),
        };
        assert_eq!(p.try_do(withdraw("coord", " ")), Err(Error::ReasonRequired));
        let err = p.try_do(withdraw("lane-a", "gave up")).expect_err("rival");
        assert!(matches!(err, Error::WithdrawerBuiltRival { .. }), "{err}");
        let events = p.try_do(withdraw("coord", "gave up")).expect("ok");
        assert_eq!(events.len(), 2);
        p.ok(withdraw("coord", "gave up"));
        let err = p.refuse(set(
            "B",
            State::UnderReview,
            "coord",
            "coordinator",
            "gpt-5",
        ));
        assert!(matches!(
            err,
            Error::Terminal {
                state: State::Withdrawn,
                ..
            }
        ));
        // One candidate remains: it can be selected, and nothing more can be withdrawn.
        let err = p
            .try_do(Request::Withdraw {
                task: "T".into(),
                item: "A".into(),
                actor: actor("coord", "coordinator", "gpt-5"),
                reason: "no".into(),
            })
            .expect_err("last one");
        assert_eq!(err, Error::TooFewRemaining("T".into()));
        p.ok(select("T", Some("A"), "rev", "claude-opus-4"));
    }

    #[test]
    fn start_review_refuses_a_builder_as_reviewer() {
        let p = Play::checkpointed();
        let start = |lane: &str, model: Option<&str>| Request::StartReview {
            item: "A".into(),
            target_lane: lane.into(),
            target_model: model.map(str::to_owned),
            actor: actor("coord", "coordinator", "gpt-5"),
            lanes: [("dead-rev".to_owned(), false)].into_iter().collect(),
        };
        let err = p.try_do(start("dead-rev", None)).expect_err("dead");
        assert_eq!(err, Error::DeadLane("dead-rev".into()));
        let err = p.try_do(start("lane-a", None)).expect_err("builder");
        assert!(matches!(err, Error::TargetBuilt { .. }), "{err}");
        let err = p.try_do(start("rev", Some("gpt-4o"))).expect_err("family");
        assert!(matches!(err, Error::SameFamily { .. }), "{err}");
        p.try_do(start("rev", Some("claude-opus-4"))).expect("ok");
    }

    #[test]
    fn control_an_empty_lane_or_an_id_with_spaces_is_refused_input() {
        let p = Play::default();
        let err = p.refuse(set("A B", State::Claimed, "lane-a", "executor", "gpt-5"));
        assert!(err.is_input(), "{err}");
        let err = p.refuse(set("A", State::Claimed, "", "executor", "gpt-5"));
        assert!(err.is_input(), "{err}");
        assert!(!Error::NoEvidence.is_input());
    }

    #[test]
    fn every_history_decide_writes_validates() {
        let mut p = Play::competition();
        p.ok(Request::Withdraw {
            task: "T".into(),
            item: "B".into(),
            actor: actor("coord", "coordinator", "gpt-5"),
            reason: "stale".into(),
        });
        p.ok(select("T", Some("A"), "rev", "claude-opus-4"));
        assert_eq!(validate(&p.0), Ok(()));
        let p = Play::verified(true);
        assert_eq!(validate(&p.0), Ok(()));
    }

    #[test]
    fn control_a_history_with_a_skipped_state_or_an_undecided_loser_does_not_validate() {
        let p = Play::checkpointed();
        let mut skipped = p.0.clone();
        skipped.remove(1);
        assert_eq!(
            validate(&skipped),
            Err((
                1,
                "A: CLAIMED -> CHECKPOINT-READY is not a board transition".into()
            ))
        );
        let mut loser = p.0.clone();
        let mut event = ItemEvent::new(TS, "A", State::NotSelected, &actor("x", "reviewer", "m"));
        event.task_id = Some("T".into());
        loser.push(Event::Item(event));
        assert!(validate(&loser).is_err());
    }

    #[test]
    fn events_round_trip_through_json_with_the_reference_field_names() {
        let p = Play::competition();
        let mut p2 = p.clone();
        p2.ok(select("T", Some("A"), "rev", "claude-opus-4"));
        let text = serde_json::to_string(&p2.0).unwrap();
        assert!(text.contains(r#""state":"CHECKPOINT-READY""#), "{text}");
        assert!(text.contains(r#""kind":"competition""#), "{text}");
        assert!(text.contains(r#""state":"NOT-SELECTED""#), "{text}");
        assert!(
            text.contains(r#""evidence_record":{"ref":"refs/hpp/evidence/"#),
            "{text}"
        );
        let back: Vec<Event> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, p2.0);
    }
}
