//! Health probes: the manifest's monitors, measured. A monitor that declares
//! `"probe": {"command": [argv...], "timeout_s"?: N}` is run by `git hpp monitor probe`, and each
//! run is a signal appended to `refs/hpp/monitors/<id>` (`signal.json`,
//! `hpp.monitor-signal/v1`: when, whether it passed, its exit code and duration). A monitor's
//! `last_signal` is then the time of its newest passing signal, which `map monitor` and the
//! atlas project against `--now`: without probes every monitor stays `unknown`.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use hpp_core::record::canonical_json;
use hpp_store::{self as store, NewRecord, Store};

use crate::process;

/// The blob of each signal commit.
pub const FILE: &str = "signal.json";

/// Its schema.
pub const SCHEMA: &str = "hpp.monitor-signal/v1";

/// The ref of a monitor's signals.
pub fn signals_ref(id: &str) -> String {
    format!("{}monitors/{id}", store::refs::PREFIX)
}

/// One probe's run.
#[derive(Debug, Clone, Serialize)]
pub struct Probed {
    /// The monitor.
    pub id: String,
    /// Whether the probe passed (exit 0 in time).
    pub ok: bool,
    /// Its exit code, if it ended.
    pub exit_code: Option<i32>,
    /// When it ran, Unix seconds.
    pub at: i64,
}

/// Why probing failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A monitor's probe is not `{"command": [strings...]}`.
    #[error(
        "monitor {0}: probe must be {{\"command\": [program, args...]}} with an optional timeout_s"
    )]
    BadProbe(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The probe could not be run at all (not a refusal: the operating system).
    #[error(transparent)]
    Process(#[from] process::Error),
}

/// Runs the probe of every monitor in `monitors` (or those named in `only`) from `root`, at
/// `now`, recording each signal. Monitors without a probe are skipped.
pub fn probe(
    store: &Store,
    root: &Path,
    monitors: &Value,
    only: &[String],
    now: i64,
) -> Result<Vec<Probed>, Error> {
    let mut out = Vec::new();
    for monitor in monitors.as_array().into_iter().flatten() {
        let id = monitor["id"].as_str().unwrap_or_default().to_owned();
        if id.is_empty() || !only.is_empty() && !only.contains(&id) {
            continue;
        }
        let Some(probe) = monitor.get("probe") else {
            continue;
        };
        let argv: Vec<String> = probe
            .get("command")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_owned)).collect())
            .ok_or_else(|| Error::BadProbe(id.clone()))?;
        let timeout = probe.get("timeout_s").and_then(Value::as_u64).unwrap_or(60);
        let ran = process::run_bounded(&process::Request {
            argv: &argv,
            cwd: root,
            timeout: Duration::from_secs(timeout.clamp(1, 3600)),
            stdin: None,
            env: &[],
        });
        let (ok, exit_code, duration) = match ran {
            Ok(f) => (
                f.exit_code == Some(0),
                f.exit_code,
                f.duration.as_secs_f64(),
            ),
            Err(process::Error::CouldNotStart { .. }) => (false, None, 0.0),
            Err(e) => return Err(e.into()),
        };
        let record = json!({
            "schema": SCHEMA,
            "id": id,
            "at": now,
            "ok": ok,
            "exit_code": exit_code,
            "duration_s": (duration * 1000.0).round() / 1000.0,
        });
        let bytes = canonical_json(&record);
        let message = format!("hpp monitor {id}: {}\n", if ok { "ok" } else { "failed" });
        store.append_retrying(
            &signals_ref(&id),
            &NewRecord {
                file: FILE,
                bytes: &bytes,
                message: &message,
            },
        )?;
        out.push(Probed {
            id,
            ok,
            exit_code,
            at: now,
        });
    }
    Ok(out)
}

/// The monitors with `last_signal` filled in from their recorded signals (the newest passing
/// one), where the declaration gives none.
pub fn with_signals(store: &Store, monitors: &Value) -> Result<Value, store::Error> {
    let mut out = monitors.clone();
    for monitor in out.as_array_mut().into_iter().flatten() {
        if monitor.get("last_signal").is_some() {
            continue;
        }
        let Some(id) = monitor["id"].as_str().map(str::to_owned) else {
            continue;
        };
        let log = store.read_log(&signals_ref(&id), FILE)?;
        let last = log
            .entries
            .iter()
            .rev()
            .filter_map(|(_, bytes)| serde_json::from_slice::<Value>(bytes).ok())
            .find(|s| s["ok"] == true)
            .and_then(|s| s["at"].as_i64());
        if let Some(at) = last {
            monitor["last_signal"] = json!(at);
        }
    }
    Ok(out)
}
