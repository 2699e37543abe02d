//! `hop check` and `hop propose`: the agent's checkpointed checks and frozen proposals.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{
    AttemptId, CHECK_SCHEMA, CheckId, CheckRun, CommitId, Error, Hop, Kind, Launch, Loaded, Parent,
    Proposed, Role, StateId, Store, TreeId, WorktreeRun, now_rfc3339, stamp,
};
use crate::process;
use hpp_store::{Checkout, refs};

impl Hop<'_> {
    /// Checks that `launch` is the agent launch of `id` and returns the state.
    fn launched(&self, id: &StateId, launch: &Launch) -> Result<Loaded, Error> {
        let loaded = self.load(id)?;
        launch.matches(&loaded.state)?;
        Ok(loaded)
    }

    /// Runs `argv` in a disposable detached worktree of `commit` and removes it afterwards,
    /// keeping the tree the run left there (what an evidence bundle records as `after`).
    pub(super) fn run_in_worktree(
        &self,
        commit: &CommitId,
        dir: &Path,
        argv: &[String],
        env: &[(String, String)],
        timeout: Duration,
    ) -> Result<WorktreeRun, Error> {
        if argv.is_empty() {
            return Err(Error::EmptyCommand);
        }
        self.store.add_worktree(dir, Checkout::Detached(commit))?;
        let mut env = env.to_vec();
        env.push(("HOP_WORKSPACE".into(), dir.display().to_string()));
        let started = time::OffsetDateTime::now_utc();
        let clock = std::time::Instant::now();
        let result = process::run_bounded(&process::Request {
            argv,
            cwd: dir,
            timeout,
            stdin: None,
            env: &env,
        });
        let after = Store::snapshot_of(dir).ok();
        let removed = self.store.remove_worktree(dir, true);
        let run = match result {
            Ok(done) => WorktreeRun {
                out: (done.exit_code, done.stdout.clone(), done.stderr.clone()),
                duration: done.duration,
                finished: Some(done),
                started,
                after,
                timeout,
            },
            Err(e @ process::Error::CouldNotStart { .. }) => WorktreeRun {
                out: (None, Vec::new(), e.to_string().into_bytes()),
                finished: None,
                duration: clock.elapsed(),
                started,
                after,
                timeout,
            },
            Err(e) => return Err(e.into()),
        };
        removed?;
        Ok(run)
    }

    /// Records a run as an `hpp.evidence/v1` bundle of the tree it tested, so the harness's
    /// gates, `evidence verify` and attestations see hop's checks like any other evidence.
    fn record_evidence(
        &self,
        id: &str,
        tested: &Loaded,
        argv: &[String],
        run: &WorktreeRun,
    ) -> Result<String, Error> {
        let tree = tested.state.tree.clone();
        let (record_ref, _) = crate::evidence::record_external(
            self.store,
            crate::evidence::ExternalRun {
                id: id.parse().expect("hop's evidence ids are valid"),
                command: argv,
                base_commit: Some(tested.commit.to_string()),
                started_at: run.started,
                timeout_s: run.timeout.as_secs_f64(),
                finished: run.finished.as_ref(),
                duration: run.duration,
                snapshot: hpp_core::evidence::Snapshot {
                    after: run
                        .after
                        .as_ref()
                        .map_or_else(|| tree.clone(), ToString::to_string),
                    tree,
                },
                signing: self.signing.as_ref(),
            },
        )?;
        Ok(record_ref)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_check(
        &self,
        id: &CheckId,
        state: &StateId,
        tested: &Loaded,
        attempt: Option<&AttemptId>,
        argv: &[String],
        run: WorktreeRun,
        purpose: &str,
    ) -> Result<CheckRun, Error> {
        let evidence = self.record_evidence(&format!("hop-{purpose}"), tested, argv, &run)?;
        let (exit_code, stdout, stderr) = run.out;
        let run = CheckRun {
            id: id.clone(),
            state: state.clone(),
            checkpoint: tested.state.id.clone(),
            tree: tested.state.tree.clone(),
            command: argv.to_vec(),
            exit_code,
            passed: exit_code == Some(0),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            evidence: Some(evidence.clone()),
        };
        let record = json!({
            "schema": CHECK_SCHEMA,
            "id": id,
            "purpose": purpose,
            "state": state,
            "checkpoint": tested.state.id,
            "attempt": attempt,
            "tree": tested.state.tree,
            "command": argv,
            "exit_code": exit_code,
            "passed": run.passed,
            "evidence": evidence,
            "created_at": now_rfc3339(),
        });
        let tree = TreeId::parse(&tested.state.tree)
            .ok_or_else(|| Error::BadTree(tested.state.id.to_string()))?;
        self.store.create_blobs(
            &Self::check_ref(id),
            &[
                ("check.json", &hpp_core::record::canonical_json(&record)),
                ("stdout", &stdout),
                ("stderr", &stderr),
            ],
            Some(("snapshot", &tree)),
            &format!("hop: check {id} of {}", tested.state.id),
        )?;
        Ok(run)
    }

    /// `hop check STATE -- COMMAND`: checkpoints the attempt, runs the command in a disposable
    /// worktree of that exact checkpoint (so live edits cannot change what is tested), records
    /// the run whatever its outcome, and returns it.
    pub fn check(
        &self,
        id: &StateId,
        launch: &Launch,
        argv: &[String],
        timeout: Duration,
    ) -> Result<CheckRun, Error> {
        super::refuse_bad_command(argv)?;
        let state = self.launched(id, launch)?;
        let attempt = self.attempt_of(&state)?;
        let checkpoint = self.checkpoint(&attempt)?;
        let (ms, e) = stamp();
        let check_id = CheckId::new(ms, e);
        let dir = self.hop_dir.join("checks").join(check_id.as_str());
        let env = vec![
            ("HOP_ROOT".into(), self.root.display().to_string()),
            ("HOP_STATE_ID".into(), id.to_string()),
            ("HOP_TASK_ID".into(), launch.task.clone()),
            ("HOP_ATTEMPT_ID".into(), launch.attempt.clone()),
        ];
        let out = self.run_in_worktree(&checkpoint.commit, &dir, argv, &env, timeout)?;
        self.record_check(
            &check_id,
            id,
            &checkpoint,
            Some(&attempt),
            argv,
            out,
            "check",
        )
    }

    /// Returns the check records whose tested tree is `tree`.
    pub(super) fn checks_for(&self, tree: &str) -> Result<Vec<Value>, Error> {
        let mut out = Vec::new();
        for (_name, commit) in self.store.list(refs::HOP_CHECKS_PREFIX)? {
            let Some(bytes) = self.store.read_commit_file(&commit, "check.json")? else {
                continue;
            };
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes)
                && value.get("tree").and_then(Value::as_str) == Some(tree)
            {
                out.push(value);
            }
        }
        Ok(out)
    }

    /// `hop propose`: freezes the live workspace's tree as a proposal.
    pub fn propose(
        &self,
        id: &StateId,
        launch: &Launch,
        summary: Option<String>,
    ) -> Result<Proposed, Error> {
        let state = self.launched(id, launch)?;
        let attempt = self.attempt_of(&state)?;
        let head = self.attempt_head(&attempt)?;
        let tree = Store::snapshot_of(&self.live_workspace(&attempt)?)?;
        let base = head
            .state
            .base
            .clone()
            .ok_or_else(|| Error::NoAttempt(head.state.id.to_string()))?;
        let proposal = self.append(
            &head,
            Kind::Proposal,
            &tree,
            vec![Parent {
                role: Role::CanonicalAnchor,
                state: base,
            }],
            &[],
            summary,
        )?;
        Ok(Proposed {
            checks: self.checks_for(&proposal.state.tree)?,
            state: proposal,
        })
    }
}
