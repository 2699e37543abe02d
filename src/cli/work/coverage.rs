//! `git hpp work coverage`: join a spec's criteria to the tests that cite them and, given
//! JUnit reports, to the cases that ran.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::read_spec;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use hpp_core::coverage::{self, Citation, CoverageRun, ExecutionRun, Language, ReportFile};
use hpp_core::record::sha256_hex;

/// Directories a walk never enters: caches and build output, not test sources.
const SKIPPED_DIRS: [&str; 3] = ["__pycache__", "target", ".git"];

/// Arguments of `git hpp work coverage`.
#[derive(Debug, clap::Args)]
pub struct WorkCoverageArgs {
    /// WorkGraph spec whose criteria are measured
    #[arg(value_name = "SPEC")]
    spec: PathBuf,
    /// Test sources: .py or .rs files, or directories walked for both (can be repeated)
    #[arg(long, required = true, num_args = 1.., value_name = "PATH")]
    tests: Vec<PathBuf>,
    /// JUnit XML reports of the run: pytest --junitxml, cargo nextest (can be repeated)
    #[arg(long, num_args = 1.., value_name = "FILE")]
    junit: Vec<PathBuf>,
}

/// Prints hpp.spec-coverage/v1, or hpp.spec-execution/v1 with `--junit`; exits 0 when
/// complete, 1 when not.
pub fn cmd_work_coverage(ctx: &Ctx, args: &WorkCoverageArgs) -> Result<Outcome, CliError> {
    let graph = read_spec(ctx, &args.spec)?;
    let sources = read_sources(ctx, &args.tests)?;
    let mut citations: Vec<Citation> = Vec::new();
    for (name, (language, text)) in &sources {
        citations.extend(coverage::citations(*language, name, text)?);
    }
    if args.junit.is_empty() {
        let run = CoverageRun {
            coverage: coverage::coverage(&graph, &citations),
            sources: sources.len(),
        };
        let exit = if run.coverage.complete {
            Exit::Ok
        } else {
            Exit::Warn
        };
        return Ok(Outcome::json(&run, exit));
    }
    let mut cases = Vec::new();
    let mut reports = Vec::new();
    for path in &args.junit {
        let shown = path.display();
        let full = ctx.cwd().join(path);
        if !full.is_file() {
            return Err(CliError::refused(format!(
                "JUnit report not found: {shown}"
            )));
        }
        let bytes = std::fs::read(&full)
            .map_err(|e| CliError::refused(format!("cannot read JUnit report {shown}: {e}")))?;
        let read =
            coverage::read_junit(&bytes).map_err(|e| CliError::refused(format!("{shown}: {e}")))?;
        cases.extend(read);
        reports.push(ReportFile {
            file: shown.to_string(),
            sha256: sha256_hex(&bytes),
            mtime: mtime(&full, &shown.to_string())?,
        });
    }
    let mut source_mtimes = Vec::new();
    for name in coverage::citing_sources(&citations) {
        let when = mtime(&ctx.cwd().join(&name), &name)?;
        source_mtimes.push((name, when));
    }
    let report_mtimes: Vec<f64> = reports.iter().map(|r| r.mtime).collect();
    let stale = coverage::stale_sources(&source_mtimes, &report_mtimes);
    let execution = coverage::execution(&graph, &citations, &cases);
    let run = ExecutionRun::new(execution, reports, stale, sources.len());
    let exit = if run.complete { Exit::Ok } else { Exit::Warn };
    Ok(Outcome::json(&run, exit))
}

/// Reads every source named, or under a directory named: the universe of the answer, keyed by
/// its name as given (`/`-separated), with its language and text.
fn read_sources(
    ctx: &Ctx,
    paths: &[PathBuf],
) -> Result<BTreeMap<String, (Language, String)>, CliError> {
    let mut files: BTreeMap<String, (Language, PathBuf)> = BTreeMap::new();
    for raw in paths {
        let full = ctx.cwd().join(raw);
        let name = posix_name(raw);
        if full.is_dir() {
            walk(&full, &name, &mut files)?;
        } else if full.is_file() {
            let language = Language::of_path(&name).ok_or_else(|| {
                CliError::refused(format!(
                    "only Python or Rust test sources are read: {}",
                    raw.display()
                ))
            })?;
            files.insert(name, (language, full));
        } else {
            return Err(CliError::refused(format!(
                "test source not found: {}",
                raw.display()
            )));
        }
    }
    if files.is_empty() {
        return Err(CliError::refused(
            "no test source found: an empty universe covers nothing",
        ));
    }
    let mut sources = BTreeMap::new();
    for (name, (language, full)) in files {
        let bytes = std::fs::read(&full)
            .map_err(|e| CliError::refused(format!("cannot read test source {name}: {e}")))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| CliError::refused(format!("test source is not UTF-8: {name}")))?;
        sources.insert(name, (language, text));
    }
    Ok(sources)
}

/// Collects the `.py` and `.rs` files under `dir`, not following symlinked directories.
fn walk(
    dir: &Path,
    name: &str,
    files: &mut BTreeMap<String, (Language, PathBuf)>,
) -> Result<(), CliError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::refused(format!("cannot read directory {name}: {e}")))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| CliError::refused(format!("cannot read directory {name}: {e}")))?;
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let child = if name == "." {
            file_name.clone()
        } else {
            format!("{name}/{file_name}")
        };
        let kind = entry
            .file_type()
            .map_err(|e| CliError::refused(format!("cannot read {child}: {e}")))?;
        let path = entry.path();
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&file_name.as_str()) {
                walk(&path, &child, files)?;
            }
        } else if path.is_file()
            && let Some(language) = Language::of_path(&file_name)
        {
            files.insert(child, (language, path));
        }
    }
    Ok(())
}

/// Returns a path as the reference names it: `/`-separated, without `.` components.
fn posix_name(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut absolute = false;
    for component in path.components() {
        match component {
            Component::RootDir => absolute = true,
            Component::CurDir => {}
            Component::ParentDir => parts.push("..".to_owned()),
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::Prefix(prefix) => {
                parts.push(prefix.as_os_str().to_string_lossy().into_owned());
            }
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_owned(),
        (false, false) => joined,
    }
}

/// Returns a file's modification time in seconds since the epoch.
fn mtime(full: &Path, shown: &str) -> Result<f64, CliError> {
    let modified = std::fs::metadata(full)
        .and_then(|m| m.modified())
        .map_err(|e| CliError::refused(format!("cannot read the time of {shown}: {e}")))?;
    Ok(match modified.duration_since(UNIX_EPOCH) {
        Ok(since) => since.as_secs_f64(),
        Err(before) => -before.duration().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_posix_without_dot_components() {
        assert_eq!(posix_name(Path::new("./tests/./it/")), "tests/it");
        assert_eq!(posix_name(Path::new(".")), ".");
        assert_eq!(posix_name(Path::new("/a/b.py")), "/a/b.py");
    }

    #[test]
    fn control_parent_components_are_kept_not_collapsed() {
        // Only `.` components go; `..` changes the meaning of a path and must stay visible.
        assert_eq!(posix_name(Path::new("a/../b.py")), "a/../b.py");
        assert_ne!(posix_name(Path::new("a/../b.py")), "b.py");
    }
}
