//! The evidence gate's criteria under the Stop hook's budget.
//!
//! A Stop hook has a deadline (the `timeout` its wiring declares; past it the host goes on as
//! if it had not asked). A criterion that cannot finish inside the budget must never let the
//! turn end as if it passed, so each criterion runs as its own `git hpp evidence run`, in its
//! own process group, detached from the hook: the gate waits for it as long as the budget
//! allows, and past that leaves it running and answers "still running". The run records its
//! evidence bundle when it ends; the next stop answers from that evidence.
//!
//! Per criterion, in order: the newest bundle of its id (`stop-criterion-<n>`) for the same
//! command and the workspace tree as it is now answers without a run; else a run still going
//! for that tree is waited for; else one is started. Criteria run one after another: one still
//! running leaves the later ones for the next stop. What is running is kept under
//! `<git dir>/hpp-cache/evidence-gate/<n>.json` (its pid, tree, command and start).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use hpp_core::evidence::{Bundle, Verdict};
use hpp_store::{Store, TreeId, refs};

/// The budget when `hpp.evidenceGate.budgetSeconds` says nothing: 8 minutes, inside the 9 the
/// hook script gives git-hpp and the 10 its wiring declares.
pub const BUDGET: Duration = Duration::from_secs(480);

/// How long one criterion run may take before its process group is killed, in seconds.
pub const RUN_TIMEOUT_S: u64 = 3600;

/// How one criterion stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judged {
    /// Its bundle for this tree passed.
    Passed,
    /// Its bundle for this tree did not pass: the verdict and the output's last lines.
    Failed(String),
    /// A run for this tree is still going (started at this time).
    Running(String),
    /// Not started: an earlier criterion is still running.
    Waiting,
    /// It could not be run: why.
    Broken(String),
}

/// What is kept of a run in the background.
#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    pid: i32,
    tree: String,
    command: Vec<String>,
    started_at: String,
}

/// Judges `criteria` (in order, numbered from 1) for the workspace as it is, spending at most
/// `budget` waiting; `exe` is the git-hpp binary that runs each one.
pub fn judge(
    store: &Store,
    criteria: &[Vec<String>],
    budget: Duration,
    exe: &Path,
) -> Result<Vec<Judged>, hpp_store::Error> {
    let deadline = Instant::now() + budget;
    let tree = store.snapshot()?;
    let dir = store.common_dir().join("hpp-cache").join("evidence-gate");
    let root = store
        .workdir()
        .ok_or(hpp_store::Error::Bare {
            what: "the evidence gate".to_owned(),
            needs: "worktree",
        })?
        .to_path_buf();
    let mut out = Vec::new();
    let mut blocked = false;
    for (i, command) in criteria.iter().enumerate() {
        let n = i + 1;
        if blocked {
            out.push(Judged::Waiting);
            continue;
        }
        if let Some(judged) = recorded(store, n, command, &tree)? {
            out.push(judged);
            continue;
        }
        let marker = dir.join(format!("{n}.json"));
        let pending = read_pending(&marker)
            .filter(|p| p.tree == tree.as_str() && p.command == *command && alive(p.pid));
        let pending = match pending {
            Some(p) => p,
            None => match start(exe, &root, n, command, &tree, &marker) {
                Ok(p) => p,
                Err(why) => {
                    out.push(Judged::Broken(why));
                    continue;
                }
            },
        };
        while alive(pending.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if alive(pending.pid) {
            out.push(Judged::Running(pending.started_at));
            blocked = true;
            continue;
        }
        let _ = std::fs::remove_file(&marker);
        out.push(recorded(store, n, command, &tree)?.unwrap_or_else(|| {
            Judged::Broken("its run ended without recording evidence".to_owned())
        }));
    }
    Ok(out)
}

/// The criteria still running in the background, by number, and when each started.
pub fn running(store: &Store) -> Vec<(usize, String)> {
    let dir = store.common_dir().join("hpp-cache").join("evidence-gate");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(usize, String)> = entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let n = path.file_stem()?.to_str()?.parse().ok()?;
            let pending = read_pending(&path)?;
            alive(pending.pid).then_some((n, pending.started_at))
        })
        .collect();
    out.sort();
    out
}

/// The id criterion `n` records under.
pub fn id(n: usize) -> String {
    format!("stop-criterion-{n}")
}

/// The newest bundle of criterion `n`, when it is for `command` on `tree`.
fn recorded(
    store: &Store,
    n: usize,
    command: &[String],
    tree: &TreeId,
) -> Result<Option<Judged>, hpp_store::Error> {
    let prefix = refs::evidence(&format!("{}-", id(n)));
    let Some((newest, _)) = store.list(&prefix)?.into_iter().max() else {
        return Ok(None);
    };
    let Some(bytes) = store.read_file(&newest, hpp_core::evidence::RECORD_FILE)? else {
        return Ok(None);
    };
    let Ok(bundle) = serde_json::from_slice::<Bundle>(&bytes) else {
        return Ok(None);
    };
    let same_tree = bundle
        .snapshot
        .as_ref()
        .is_some_and(|s| s.tree == tree.as_str());
    if bundle.command != command || !same_tree {
        return Ok(None);
    }
    Ok(Some(if bundle.verdict == Verdict::Passed {
        Judged::Passed
    } else {
        let tail = bundle
            .output_tail
            .as_ref()
            .map(|t| t.last_lines(3).join(" / "))
            .unwrap_or_default();
        Judged::Failed(if tail.is_empty() {
            bundle.verdict.to_string()
        } else {
            format!("{}: {tail}", bundle.verdict)
        })
    }))
}

fn read_pending(path: &Path) -> Option<Pending> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Tells whether the process `pid` still runs (a zombie of ours counts as ended).
fn alive(pid: i32) -> bool {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    let pid = nix::unistd::Pid::from_raw(pid);
    // Our own child that ended is reaped here; another process's is not ours to wait for.
    if let Ok(status) = waitpid(pid, Some(WaitPidFlag::WNOHANG))
        && status != WaitStatus::StillAlive
    {
        return false;
    }
    nix::sys::signal::kill(pid, None).is_ok()
}

/// Starts criterion `n` in its own process group, its output in a log beside its marker.
fn start(
    exe: &Path,
    root: &Path,
    n: usize,
    command: &[String],
    tree: &TreeId,
    marker: &PathBuf,
) -> Result<Pending, String> {
    use std::os::unix::process::CommandExt as _;
    let dir = marker.parent().ok_or("no cache directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let log = std::fs::File::create(dir.join(format!("{n}.log")))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let child = Command::new(exe)
        .args(["evidence", "run", "--id", &id(n), "--timeout"])
        .arg(RUN_TIMEOUT_S.to_string())
        .arg("--")
        .args(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("git-hpp evidence run cannot start: {e}"))?;
    let pending = Pending {
        pid: child.id() as i32,
        tree: tree.to_string(),
        command: command.to_vec(),
        started_at: hpp_core::timestamp::rfc3339(time::OffsetDateTime::now_utc()),
    };
    let bytes = serde_json::to_vec(&pending).map_err(|e| e.to_string())?;
    std::fs::write(marker, bytes).map_err(|e| format!("{}: {e}", marker.display()))?;
    // Not waited for here: `alive` reaps it when it ends while this process still runs, and
    // it outlives this process when the budget runs out (dropping a `Child` neither waits nor
    // kills).
    drop(child);
    Ok(pending)
}
