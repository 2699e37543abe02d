//! The Python reference harness itself, for tests that run both tools on one repository: the
//! pinned release from PyPI, installed once into a virtual environment under
//! `target/python-harness/` (a lock file keeps parallel tests to one install), then reused.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{Run, Sandbox};

/// The package and version every test runs.
pub const PACKAGE: &str = "house-party-protocol";
/// The pinned release.
pub const VERSION: &str = "2.11.1";

/// Writes `line` straight to the process's stderr, past the test harness's capture: a skip is
/// never silent.
#[expect(
    clippy::disallowed_methods,
    reason = "a skip is reported past the test harness's capture"
)]
fn loud(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The reference's `hpp` executable, installed on first use; `None` (with a loud `SKIPPED:`
/// line) only when PyPI cannot be reached or there is no Python to make a virtual environment.
/// Any other failed install panics: that is a breakage, never a skip.
pub fn reference(test: &str) -> Option<PathBuf> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BIN.get_or_init(install) {
        Ok(bin) => Some(bin.clone()),
        Err(why) => {
            loud(&format!(
                "SKIPPED: {test}: the reference {PACKAGE}=={VERSION} is not installable here ({why})"
            ));
            None
        }
    }
}

fn install() -> Result<PathBuf, String> {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory holds tmp/")
        .join("python-harness");
    std::fs::create_dir_all(&cache).expect("target/python-harness can be created");
    let venv = cache.join(format!("{PACKAGE}-{VERSION}"));
    let bin = venv.join("bin/hpp");
    let marker = venv.join(".installed");
    let lock = File::create(cache.join("install.lock")).expect("the lock file can be created");
    lock.lock().expect("the install lock is taken");
    // A venv's scripts name its own path: one copied from another target directory (with
    // the marker it wrote there) does not run here, so it is installed again.
    let result = if std::fs::read_to_string(&marker).ok() == Some(marked(&venv)) {
        Ok(bin)
    } else {
        let _ = std::fs::remove_dir_all(&venv);
        fresh(&venv, &bin, &marker)
    };
    lock.unlock().expect("the install lock is released");
    result
}

/// What the marker of a venv installed at `venv` says.
fn marked(venv: &Path) -> String {
    format!("{PACKAGE}=={VERSION}\n{}\n", venv.display())
}

fn fresh(venv: &Path, bin: &Path, marker: &Path) -> Result<PathBuf, String> {
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(venv)
        .output()
        .map_err(|e| format!("python3 does not run: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv failed: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    let out = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--timeout",
            "30",
            "--retries",
            "1",
        ])
        .arg(format!("{PACKAGE}=={VERSION}"))
        .output()
        .expect("the virtual environment's pip runs");
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let unreachable = [
            "NewConnectionError",
            "ConnectTimeout",
            "ReadTimeout",
            "Temporary failure in name resolution",
            "Network is unreachable",
            "Max retries exceeded",
            "No matching distribution found",
        ]
        .iter()
        .any(|sign| said.contains(sign));
        let _ = std::fs::remove_dir_all(venv);
        assert!(
            unreachable,
            "pip install {PACKAGE}=={VERSION} failed with PyPI reachable (a breakage):\n{}",
            Run::from_output(&out)
        );
        return Err("PyPI cannot be reached".to_owned());
    }
    assert!(bin.exists(), "the package installs an `hpp` command");
    std::fs::write(marker, marked(venv)).expect("the marker is written");
    loud(&format!(
        "python harness: installed {PACKAGE}=={VERSION} (cached for later runs)"
    ));
    Ok(bin.to_path_buf())
}

impl Sandbox {
    /// Runs the reference's `hpp` (from [`reference`]) in `cwd`, in the sandbox's environment.
    pub fn reference_in(&self, bin: &Path, cwd: &Path, args: &[&str]) -> Run {
        let out = self
            .command(bin.to_str().expect("a UTF-8 path"), cwd)
            .args(args)
            .output()
            .expect("the reference runs");
        Run::from_output(&out)
    }
}
