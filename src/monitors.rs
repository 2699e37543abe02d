//! Health probes: the manifest's monitors, measured. A monitor that declares
//! `"probe": {"command": [argv...], "timeout_s"?: N}` or `"probe": {"http": "http://...",
//! "timeout_s"?: N}` is run by `git hpp monitor probe` (health-kit's SessionStart hook runs the
//! ones that are due), and each run is a signal appended to `refs/hpp/monitors/<id>`
//! (`signal.json`, `hpp.monitor-signal/v1`: when, whether it passed, its exit code or http
//! status, and duration). A monitor's
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
    /// Whether the probe passed (a command: exit 0 in time; http: a 2xx answer in time).
    pub ok: bool,
    /// A command's exit code, if it ended.
    pub exit_code: Option<i32>,
    /// An http probe's status code, if it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// When it ran, Unix seconds.
    pub at: i64,
}

/// What [`probe`] did: the probes it ran, and the monitors it left because their newest
/// signal is younger than their cadence (with `due_only`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Probes {
    /// The probes run, in manifest order.
    pub probed: Vec<Probed>,
    /// Monitors not due yet.
    pub not_due: Vec<String>,
}

/// Why probing failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A monitor's probe is neither form, or one of its fields is malformed (the second field
    /// says which).
    #[error(
        "monitor {0}: probe must be {{\"command\": [program, args...]}} or {{\"http\": \"http://host[:port]/path\"}}, with an optional timeout_s ({1})"
    )]
    BadProbe(String, &'static str),
    /// An https probe: there is no TLS client here.
    #[error(
        "monitor {0}: https is not probed natively; use a command probe such as {{\"command\": [\"curl\", \"-fsS\", \"{1}\"]}}"
    )]
    Https(String, String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The probe could not be run at all (not a refusal: the operating system).
    #[error(transparent)]
    Process(#[from] process::Error),
}

/// How a monitor is probed.
enum Probe {
    /// Run this argv (no shell) from the worktree root; exit 0 passes.
    Command(Vec<String>),
    /// GET this plain-http URL; a 2xx answer passes.
    Http(String),
}

/// A monitor with a probe, read from its declaration.
struct Declared {
    id: String,
    probe: Probe,
    timeout: Duration,
    cadence: Option<i64>,
}

/// Reads the probes of `monitors` (or those named in `only`), every one before any runs, so a
/// malformed one refuses the whole run and nothing is recorded.
fn declared(monitors: &Value, only: &[String]) -> Result<Vec<Declared>, Error> {
    let mut out = Vec::new();
    for monitor in monitors.as_array().into_iter().flatten() {
        let id = monitor["id"].as_str().unwrap_or_default().to_owned();
        if id.is_empty() || !only.is_empty() && !only.contains(&id) {
            continue;
        }
        let Some(declared) = monitor.get("probe") else {
            continue;
        };
        let (probe, timeout) = read_probe(&id, declared)?;
        out.push(Declared {
            id,
            probe,
            timeout,
            cadence: monitor["cadence"].as_i64(),
        });
    }
    Ok(out)
}

/// The longest a probe may run, in seconds.
const MAX_PROBE_S: f64 = 3600.0;

/// Reads one monitor's `probe` object strictly: only `command`, `http` and `timeout_s`; a
/// command is a non-empty argv of strings whose program is named and which holds no NUL byte; an
/// http URL parses, with a host; `timeout_s` is a number of seconds above 0, at most 3600
/// (60 when left out). Anything else refuses the run, so nothing is recorded for a probe
/// that was never what it meant to be.
fn read_probe(id: &str, declared: &Value) -> Result<(Probe, Duration), Error> {
    let bad = |why| Error::BadProbe(id.to_owned(), why);
    let fields = declared.as_object().ok_or_else(|| bad("not an object"))?;
    if fields
        .keys()
        .any(|k| !matches!(k.as_str(), "command" | "http" | "timeout_s"))
    {
        return Err(bad("an unknown key"));
    }
    let probe = match (fields.get("command"), fields.get("http")) {
        (Some(argv), None) => {
            let argv: Vec<String> = argv
                .as_array()
                .filter(|a| !a.is_empty())
                .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_owned)).collect())
                .ok_or_else(|| bad("command is not a list of strings"))?;
            if argv[0].trim().is_empty() {
                return Err(bad("the command's program is empty"));
            }
            if argv.iter().any(|a| a.contains('\0')) {
                return Err(bad("the command holds a NUL byte"));
            }
            Probe::Command(argv)
        }
        (None, Some(Value::String(url))) if url.starts_with("https://") => {
            return Err(Error::Https(id.to_owned(), url.clone()));
        }
        (None, Some(Value::String(url))) if url.starts_with("http://") => {
            let parsed: ureq::http::Uri = url.parse().map_err(|_| bad("the URL does not parse"))?;
            if parsed.host().is_none_or(str::is_empty) {
                return Err(bad("the URL names no host"));
            }
            Probe::Http(url.clone())
        }
        (None, Some(_)) => return Err(bad("http is not an http:// URL")),
        (Some(_), Some(_)) => return Err(bad("both command and http")),
        (None, None) => return Err(bad("neither command nor http")),
    };
    let timeout = match fields.get("timeout_s") {
        None => Duration::from_secs(60),
        Some(value) => value
            .as_f64()
            .filter(|s| value.is_number() && s.is_finite() && *s > 0.0 && *s <= MAX_PROBE_S)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| bad("timeout_s must be a number of seconds above 0, at most 3600"))?,
    };
    Ok((probe, timeout))
}

/// Runs the probe of every monitor in `monitors` (or those named in `only`) from `root`, at
/// `now`, recording each signal. Monitors without a probe are skipped; with `due_only`, so is
/// one whose newest signal (passed or not) is younger than its `cadence`.
pub fn probe(
    store: &Store,
    root: &Path,
    monitors: &Value,
    only: &[String],
    now: i64,
    due_only: bool,
) -> Result<Probes, Error> {
    let mut out = Probes::default();
    for monitor in declared(monitors, only)? {
        let id = monitor.id;
        if due_only
            && let Some(cadence) = monitor.cadence
            && newest_signal(store, &id)?.is_some_and(|at| now - at < cadence)
        {
            out.not_due.push(id);
            continue;
        }
        let started = std::time::Instant::now();
        let (ok, exit_code, http_status) = match &monitor.probe {
            Probe::Command(argv) => match process::run_bounded(&process::Request {
                argv,
                cwd: root,
                timeout: monitor.timeout,
                stdin: None,
                env: &[],
            }) {
                Ok(f) => (f.exit_code == Some(0), f.exit_code, None),
                Err(process::Error::CouldNotStart { .. }) => (false, None, None),
                Err(e) => return Err(e.into()),
            },
            Probe::Http(url) => {
                let status = http_status(url, monitor.timeout);
                (
                    status.is_some_and(|s| (200..300).contains(&s)),
                    None,
                    status,
                )
            }
        };
        let duration = started.elapsed().as_secs_f64();
        let mut record = json!({
            "schema": SCHEMA,
            "id": id,
            "at": now,
            "ok": ok,
            "exit_code": exit_code,
            "duration_s": (duration * 1000.0).round() / 1000.0,
        });
        // The status only: the URL is the manifest's, and one with credentials in it must not
        // be copied into a record that is pushed.
        if let Probe::Http(_) = &monitor.probe {
            record["http_status"] = json!(http_status);
        }
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
        out.probed.push(Probed {
            id,
            ok,
            exit_code,
            http_status,
            at: now,
        });
    }
    Ok(out)
}

/// GETs `url` (plain http) within `timeout`: its status code, or `None` when nothing answered.
fn http_status(url: &str, timeout: Duration) -> Option<u16> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    agent.get(url).call().ok().map(|r| r.status().as_u16())
}

/// The time of a monitor's newest signal, passed or not.
fn newest_signal(store: &Store, id: &str) -> Result<Option<i64>, store::Error> {
    let log = store.read_log(&signals_ref(id), FILE)?;
    Ok(log
        .entries
        .last()
        .and_then(|(_, bytes)| serde_json::from_slice::<Value>(bytes).ok())
        .and_then(|s| s["at"].as_i64()))
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
