//! Criterion sensitivity, run for real (CONCEPTS.md "criterion sensitivity"): the criterion
//! command runs on a fresh copy of the workspace, first clean, then once per mutant, and the
//! `hpp.mutation/v1` record is stored at `refs/hpp/evidence/<id>-<stamp>[-N]` (tree
//! `record.json`).
//!
//! Every copy lives in a temporary directory outside the workspace and holds the files git
//! sees there (tracked, plus untracked ones no ignore rule matches), minus
//! [`mutation::UNTOUCHED_DIRS`]; the user's tree is only read. The command runs inside the copy,
//! in the directory matching the current one, so its paths must be relative. Mutants run in
//! parallel, up to `jobs` at a time. Nothing here prints: progress goes through a callback.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::num::NonZeroUsize;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use time::OffsetDateTime;

use super::bundle::EvidenceId;
use crate::process;
use hpp_core::evidence::RECORD_FILE;
use hpp_core::mutation::{
    self, Applied, CleanRun, Header, Mutant, MutantResult, MutationRecord, Outcome, RunVerdict,
};
use hpp_core::secrets;
use hpp_store::{self as store, Content, Store, refs};

/// Why a mutation run was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command is empty.
    #[error("evidence mutate needs a command after --")]
    EmptyCommand,
    /// The command line carries something secret-shaped.
    #[error(
        "the command line looks like it carries a secret; pass it through the environment instead"
    )]
    Secret,
    /// A bad timeout.
    #[error("timeout must be a positive, finite number of seconds, at most 86400")]
    Timeout,
    /// A bare repository has no workspace.
    #[error("evidence mutate needs a worktree: this repository is bare")]
    Bare,
    /// The current directory is not inside the worktree (for instance inside `.git`).
    #[error("run evidence mutate from inside the worktree, not from {}", cwd.display())]
    CwdOutside {
        /// The current directory.
        cwd: PathBuf,
    },
    /// A mutants-file or `--generate` input is refused.
    #[error(transparent)]
    Mutation(#[from] mutation::Error),
    /// A `--generate` path is absolute and not inside the workspace.
    #[error("{path} is outside the workspace: give a path relative to the workspace")]
    Outside {
        /// The path, as given.
        path: String,
    },
    /// A mutated file is reached through a symbolic link.
    #[error("{path} is reached through a symlink ({link}); mutate the file it points to")]
    Symlink {
        /// The file.
        path: String,
        /// The component that is a link.
        link: String,
    },
    /// A mutated file does not exist or is not a regular file.
    #[error("mutant file not found: {path}")]
    NotFound {
        /// The file.
        path: String,
    },
    /// A mutated file is not UTF-8 text.
    #[error("{path} is not UTF-8 text")]
    NotText {
        /// The file.
        path: String,
    },
    /// An argument names a place in the workspace by an absolute path, so the command would
    /// read the user's tree instead of the copy.
    #[error(
        "the command names {arg} by an absolute path inside the workspace; it runs inside a copy, so give paths relative to the workspace"
    )]
    AbsoluteInCommand {
        /// The argument.
        arg: String,
    },
    /// The temporary directory is inside the workspace, so copies would land in it.
    #[error("the temporary directory {} is inside the workspace; point TMPDIR elsewhere", dir.display())]
    TempInside {
        /// The temporary directory.
        dir: PathBuf,
    },
    /// Reading the user's tree or writing a copy failed.
    #[error("could not {what} {}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The runner failed in a way that is not a verdict.
    #[error("running the command failed: {0}")]
    Process(#[source] process::Error),
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A request to measure a criterion's sensitivity.
pub struct MutateRequest {
    /// The record's id.
    pub id: EvidenceId,
    /// The criterion command, as an argv; run in the copy.
    pub command: Vec<String>,
    /// The declared mutants: the file's name as given and its parsed JSON.
    pub declared: Option<(String, Value)>,
    /// Sources to generate mutants from, as given (relative to `cwd`).
    pub generate: Vec<String>,
    /// Seconds before a run's process group is killed.
    pub timeout_s: f64,
    /// How many mutants run at once.
    pub jobs: NonZeroUsize,
    /// The current directory: mutant files are relative to it, and the command runs in the
    /// matching directory of each copy.
    pub cwd: PathBuf,
    /// The directory copies are made in (the system's temporary directory).
    pub temp_dir: PathBuf,
}

/// What the run reports while it goes, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// The clean run starts.
    Clean,
    /// The mutants start: this many will run (not-applied ones are not counted).
    Mutants {
        /// How many.
        total: usize,
    },
    /// One mutant finished.
    Finished {
        /// Its id.
        id: &'a str,
        /// What became of it.
        outcome: Outcome,
    },
}

/// What a mutation run recorded.
#[derive(Debug, Clone)]
pub struct MutateOutcome {
    /// The record, as stored (with `record_ref` and `record_sha256`).
    pub record: MutationRecord,
    /// The ref it was stored at.
    pub record_ref: String,
}

/// A mutant ready to run: its mutated text, or `None` when it did not apply.
struct Planned {
    mutant: Mutant,
    applied: Option<Applied>,
}

/// Runs the clean control and every mutant, and stores the record. Everything that can be
/// refused is refused before anything runs.
pub fn mutate(
    store: &Store,
    request: &MutateRequest,
    progress: &(dyn Fn(Progress<'_>) + Sync),
) -> Result<MutateOutcome, Error> {
    if request.declared.is_none() && request.generate.is_empty() {
        return Err(mutation::Error::NothingToMutate.into());
    }
    if request.command.first().is_none_or(String::is_empty) {
        return Err(Error::EmptyCommand);
    }
    if secrets::command_line_carries_secret(&request.command) {
        return Err(Error::Secret);
    }
    let timeout = process::valid_timeout(request.timeout_s).map_err(|_| Error::Timeout)?;
    let root = store.workdir().ok_or(Error::Bare)?;
    let root = canonical(root)?;
    let cwd = canonical(&request.cwd)?;
    let cwd_rel = cwd
        .strip_prefix(&root)
        .ok()
        .filter(|rel| {
            !rel.components()
                .any(|c| mutation::UNTOUCHED_DIRS.iter().any(|d| c.as_os_str() == *d))
        })
        .ok_or_else(|| Error::CwdOutside { cwd: cwd.clone() })?
        .to_path_buf();
    for arg in &request.command {
        let value = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
        for candidate in [arg.as_str(), value] {
            if Path::new(candidate).is_absolute() && lexically_inside(Path::new(candidate), &root) {
                return Err(Error::AbsoluteInCommand { arg: arg.clone() });
            }
        }
    }
    let temp_dir = canonical(&request.temp_dir)?;
    if temp_dir.starts_with(&root) {
        return Err(Error::TempInside { dir: temp_dir });
    }

    let mut sources = BTreeMap::new();
    let mut mutants = Vec::new();
    if let Some((name, document)) = &request.declared {
        for mutant in mutation::parse_mutants(name, document)? {
            read_source(&cwd, &mutant.file, &mut sources)?;
            mutants.push(mutant);
        }
    }
    for given in &request.generate {
        let file = relative_to(&cwd, given)?;
        let file = mutation::check_path(&file)?;
        read_source(&cwd, &file, &mut sources)?;
        mutants.extend(mutation::generate(&file, &sources[&file])?);
    }
    mutation::check_unique(&mutants)?;
    let plan: Vec<Planned> = mutants
        .into_iter()
        .map(|mutant| Planned {
            applied: mutation::apply(&sources[&mutant.file], &mutant),
            mutant,
        })
        .collect();

    let files = store.worktree_files()?;
    let base_commit = store.head_commit()?.map(|c| c.to_string());
    let (started_at, stamp) = utc_stamp(OffsetDateTime::now_utc());
    let workspace = Workspace {
        root: &root,
        cwd_rel: &cwd_rel,
        files: &files,
        temp_dir: &temp_dir,
        command: &request.command,
        timeout,
    };

    progress(Progress::Clean);
    let clean = workspace.run_clean()?;
    let results = if clean.verdict == RunVerdict::Passed {
        workspace.run_mutants(&plan, request.jobs, progress)
    } else {
        Vec::new()
    };
    let header = Header {
        id: request.id.to_string(),
        command: request.command.clone(),
        base_commit,
        started_at,
        timeout_s: request.timeout_s,
    };
    let record = MutationRecord::assemble(&header, &clean, &results);
    let (record_ref, record) = store_record(store, &request.id, &stamp, record)?;
    Ok(MutateOutcome { record, record_ref })
}

fn canonical(path: &Path) -> Result<PathBuf, Error> {
    fs::canonicalize(path).map_err(|source| Error::Io {
        what: "resolve",
        path: path.to_owned(),
        source,
    })
}

/// Tells whether `path` is `root` or under it, without touching the disk.
fn lexically_inside(path: &Path, root: &Path) -> bool {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal.starts_with(root)
}

/// Turns a `--generate` path into one relative to `cwd` (an absolute path must lie inside it).
fn relative_to(cwd: &Path, given: &str) -> Result<String, Error> {
    let path = Path::new(given);
    if !path.is_absolute() {
        return Ok(given.to_owned());
    }
    path.strip_prefix(cwd)
        .ok()
        .and_then(Path::to_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::Outside {
            path: given.to_owned(),
        })
}

/// Reads a mutated file once, refusing one reached through a symlink, missing, or not text.
fn read_source(
    cwd: &Path,
    file: &str,
    sources: &mut BTreeMap<String, String>,
) -> Result<(), Error> {
    if sources.contains_key(file) {
        return Ok(());
    }
    let mut path = cwd.to_path_buf();
    for part in file.split('/') {
        path.push(part);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(Error::Symlink {
                    path: file.to_owned(),
                    link: path
                        .strip_prefix(cwd)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                });
            }
            Ok(_) => {}
            Err(_) => {
                return Err(Error::NotFound {
                    path: file.to_owned(),
                });
            }
        }
    }
    if !path.is_file() {
        return Err(Error::NotFound {
            path: file.to_owned(),
        });
    }
    let bytes = fs::read(&path).map_err(|source| Error::Io {
        what: "read",
        path: path.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|_| Error::NotText {
        path: file.to_owned(),
    })?;
    sources.insert(file.to_owned(), text);
    Ok(())
}

/// Where copies come from and what runs in them.
struct Workspace<'a> {
    root: &'a Path,
    cwd_rel: &'a Path,
    files: &'a [PathBuf],
    temp_dir: &'a Path,
    command: &'a [String],
    timeout: Duration,
}

/// How one run in a copy ended.
struct Ran {
    verdict: RunVerdict,
    exit_code: Option<i32>,
    duration: Duration,
}

impl Workspace<'_> {
    /// Makes a fresh copy of the workspace; the directory is removed when the guard drops.
    fn copy(&self) -> Result<tempfile::TempDir, Error> {
        let dir = tempfile::Builder::new()
            .prefix("hpp-mutate-")
            .tempdir_in(self.temp_dir)
            .map_err(|source| Error::Io {
                what: "create a copy in",
                path: self.temp_dir.to_owned(),
                source,
            })?;
        let write_error = |path: &Path| {
            let path = path.to_owned();
            move |source| Error::Io {
                what: "copy",
                path,
                source,
            }
        };
        for rel in self.files {
            if rel
                .components()
                .any(|c| mutation::UNTOUCHED_DIRS.iter().any(|d| c.as_os_str() == *d))
            {
                continue;
            }
            let from = self.root.join(rel);
            // A tracked file deleted from the worktree is not part of it now.
            let Ok(meta) = fs::symlink_metadata(&from) else {
                continue;
            };
            let to = dir.path().join(rel);
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(write_error(parent))?;
            }
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&from).map_err(write_error(&from))?;
                std::os::unix::fs::symlink(target, &to).map_err(write_error(&to))?;
            } else if meta.is_file() {
                fs::copy(&from, &to).map_err(write_error(&from))?;
            }
        }
        let cwd = dir.path().join(self.cwd_rel);
        fs::create_dir_all(&cwd).map_err(write_error(&cwd))?;
        Ok(dir)
    }

    /// Runs the criterion in the copy.
    fn run_in(&self, copy: &Path) -> Result<Ran, process::Error> {
        let clock = Instant::now();
        let outcome = process::run_bounded(&process::Request {
            argv: self.command,
            cwd: &copy.join(self.cwd_rel),
            timeout: self.timeout,
            stdin: None,
            env: &[],
        });
        match outcome {
            Ok(finished) => Ok(Ran {
                verdict: if finished.timed_out {
                    RunVerdict::Timeout
                } else if finished.exit_code == Some(0) {
                    RunVerdict::Passed
                } else {
                    RunVerdict::Failed
                },
                exit_code: finished.exit_code,
                duration: finished.duration,
            }),
            Err(process::Error::CouldNotStart { .. }) => Ok(Ran {
                verdict: RunVerdict::CouldNotStart,
                exit_code: None,
                duration: clock.elapsed(),
            }),
            Err(e) => Err(e),
        }
    }

    fn run_clean(&self) -> Result<CleanRun, Error> {
        let copy = self.copy()?;
        let ran = self.run_in(copy.path()).map_err(Error::Process)?;
        Ok(CleanRun {
            verdict: ran.verdict,
            exit_code: ran.exit_code,
            duration_s: ran.duration.as_secs_f64(),
        })
    }

    /// Runs one applied mutant in its own copy. Failures to copy or run are an `error` outcome,
    /// not an abort: the other mutants still count.
    fn run_mutant(&self, mutant: &Mutant, applied: &Applied) -> MutantResult {
        let mut result = MutantResult {
            mutant: mutant.clone(),
            line: Some(applied.line),
            column: Some(applied.column),
            outcome: Outcome::Error,
            exit_code: None,
            note: None,
        };
        let copy = match self.copy() {
            Ok(copy) => copy,
            Err(e) => {
                result.note = Some(e.to_string());
                return result;
            }
        };
        let target = copy.path().join(self.cwd_rel).join(&mutant.file);
        if let Err(e) = fs::write(&target, &applied.text) {
            result.note = Some(format!("could not write the mutant: {e}"));
            return result;
        }
        match self.run_in(copy.path()) {
            Ok(ran) => {
                let (outcome, note) = mutation::classify(ran.verdict);
                result.outcome = outcome;
                result.exit_code = ran.exit_code;
                result.note = note.map(str::to_owned);
            }
            Err(e) => result.note = Some(e.to_string()),
        }
        result
    }

    /// Runs every applied mutant, `jobs` at a time, and returns the results in plan order.
    fn run_mutants(
        &self,
        plan: &[Planned],
        jobs: NonZeroUsize,
        progress: &(dyn Fn(Progress<'_>) + Sync),
    ) -> Vec<MutantResult> {
        let mut results: Vec<Option<MutantResult>> = plan
            .iter()
            .map(|p| {
                p.applied.is_none().then(|| MutantResult {
                    mutant: p.mutant.clone(),
                    line: None,
                    column: None,
                    outcome: Outcome::NotApplied,
                    exit_code: None,
                    note: Some("its find text is not where it says in the file".to_owned()),
                })
            })
            .collect();
        let todo: Vec<(usize, &Mutant, &Applied)> = plan
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.applied.as_ref().map(|a| (i, &p.mutant, a)))
            .collect();
        progress(Progress::Mutants { total: todo.len() });
        let next = AtomicUsize::new(0);
        let done = Mutex::new(Vec::with_capacity(todo.len()));
        let workers = jobs.get().min(todo.len());
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    while let Some((index, mutant, applied)) =
                        todo.get(next.fetch_add(1, Ordering::Relaxed))
                    {
                        let result = self.run_mutant(mutant, applied);
                        progress(Progress::Finished {
                            id: &mutant.id,
                            outcome: result.outcome,
                        });
                        done.lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push((*index, result));
                    }
                });
            }
        });
        for (index, result) in done
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            results[index] = Some(result);
        }
        results.into_iter().flatten().collect()
    }
}

/// The record's `started_at` and the stamp its ref name carries.
fn utc_stamp(now: OffsetDateTime) -> (String, String) {
    (
        hpp_core::timestamp::utc_seconds(now),
        hpp_core::timestamp::compact(now),
    )
}

/// Writes the record under the first free `<id>-<stamp>[-N]` name, as evidence bundles are.
fn store_record(
    store: &Store,
    id: &EvidenceId,
    stamp: &str,
    mut record: MutationRecord,
) -> Result<(String, MutationRecord), Error> {
    let mut sealed = None;
    let record_ref =
        store.create_first_free(&format!("{id}-{stamp}"), refs::evidence, |record_ref| {
            let bytes = record.seal(record_ref.to_owned());
            let name = record_ref
                .strip_prefix(refs::EVIDENCE_PREFIX)
                .unwrap_or(record_ref);
            let message = format!("hpp evidence mutate {name}: {}", record.verdict.as_str());
            sealed = Some(record.clone());
            Ok::<_, Error>((
                vec![(RECORD_FILE.to_owned(), Content::Bytes(bytes))],
                message,
            ))
        })?;
    Ok((record_ref, sealed.expect("a created record was built")))
}
