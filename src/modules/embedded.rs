//! The modules compiled into the binary: every file under this crate's `modules/` directory at
//! build time (see `build.rs`), with its executable bit. With the built-in manifest, install,
//! init and the doctor read module files from here, and verify them against the embedded
//! `CHECKSUMS.txt` exactly as they verify a directory on disk.

use super::{CHECKSUMS_FILE, Entry};
use hpp_core::record::sha256_hex;

/// One embedded file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedFile {
    /// Its path from the crate root, `/`-separated (`modules/<id>/...`).
    pub path: &'static str,
    /// Its bytes.
    pub bytes: &'static [u8],
    /// Whether it was executable when the binary was built (hook scripts are).
    pub executable: bool,
}

include!(concat!(env!("OUT_DIR"), "/embedded_modules.rs"));

/// Returns the embedded files under `dir` (a module's path, as the manifest declares it), each
/// with its path relative to `dir`.
pub fn under(dir: &str) -> impl Iterator<Item = (&'static str, &'static EmbeddedFile)> + '_ {
    FILES.iter().filter_map(move |file| {
        file.path
            .strip_prefix(dir)
            .and_then(|rest| rest.strip_prefix('/'))
            .map(|relative| (relative, file))
    })
}

/// Tells whether any file is embedded under `dir`.
pub fn has_dir(dir: &str) -> bool {
    under(dir).next().is_some()
}

/// Returns the embedded file at `relative` inside `dir`.
pub fn file(dir: &str, relative: &str) -> Option<&'static EmbeddedFile> {
    under(dir)
        .find(|(path, _)| *path == relative)
        .map(|(_, f)| f)
}

/// Lists the embedded files under `dir` (except its `CHECKSUMS.txt`) with their sha256, sorted
/// by path: the embedded counterpart of [`super::files::scan`].
pub fn scan(dir: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = under(dir)
        .filter(|(path, _)| *path != CHECKSUMS_FILE)
        .map(|(path, file)| Entry {
            path: path.to_owned(),
            sha256: sha256_hex(file.bytes),
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_module_is_embedded_with_its_inventory() {
        let value: serde_json::Value = serde_json::from_str(hpp_core::manifest::BUILT_IN)
            .expect("the built-in manifest parses");
        let validated = hpp_core::manifest::validate(&value).expect("it validates");
        for module in &validated.modules {
            let inventory = file(&module.path, CHECKSUMS_FILE).expect("an embedded inventory");
            let listed = super::super::parse(std::str::from_utf8(inventory.bytes).expect("UTF-8"))
                .expect("it parses");
            let verification = super::super::verify(&listed, &scan(&module.path));
            assert!(
                verification.is_intact(),
                "{}: {}",
                module.id,
                verification.describe()
            );
            for hook in validated.hooks_of(&module.id) {
                let script = file(&module.path, &hook.script).expect("the hook script is embedded");
                assert!(script.executable, "{} is executable", hook.script);
            }
        }
    }

    /// Every file under this crate's `modules/` directory now: path from the crate root, bytes,
    /// executable bit.
    fn on_disk() -> Vec<(String, Vec<u8>, bool)> {
        use std::os::unix::fs::PermissionsExt;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        let mut pending = vec![root.join("modules")];
        while let Some(dir) = pending.pop() {
            for item in std::fs::read_dir(&dir).expect("modules/ is readable") {
                let path = item.expect("an entry").path();
                if path.is_dir() {
                    pending.push(path);
                    continue;
                }
                let meta = std::fs::metadata(&path).expect("a file");
                out.push((
                    path.strip_prefix(root)
                        .expect("under the root")
                        .to_str()
                        .expect("UTF-8")
                        .to_owned(),
                    std::fs::read(&path).expect("readable"),
                    meta.permissions().mode() & 0o111 != 0,
                ));
            }
        }
        out.sort();
        out
    }

    /// The paths where `files` and the embedded copy differ (absent, bytes or executable bit).
    fn differences(files: &[(String, Vec<u8>, bool)]) -> Vec<String> {
        let mut out: Vec<String> = files
            .iter()
            .filter(|(path, bytes, executable)| {
                !FILES.iter().any(|f| {
                    f.path == path && f.bytes == bytes.as_slice() && f.executable == *executable
                })
            })
            .map(|(path, _, _)| path.clone())
            .collect();
        out.extend(
            FILES
                .iter()
                .filter(|f| !files.iter().any(|(path, _, _)| path == f.path))
                .map(|f| f.path.to_owned()),
        );
        out
    }

    #[test]
    fn the_embedded_copy_is_the_modules_directory_on_disk() {
        let differences = differences(&on_disk());
        assert!(
            differences.is_empty(),
            "rebuild: the binary embeds stale modules: {differences:?}"
        );
    }

    #[test]
    fn control_a_changed_added_removed_or_unexecutable_file_is_a_difference() {
        let mut files = on_disk();
        let script = files
            .iter()
            .position(|(p, _, x)| *x && p.ends_with(".sh"))
            .expect("a hook script");
        files[script].2 = false;
        files[0].1.push(b'\n');
        let removed = files.pop().expect("a file").0;
        files.push(("modules/operator-kit/extra.md".into(), Vec::new(), false));
        let mut found = differences(&files);
        found.sort();
        let mut expected = vec![
            files[script].0.clone(),
            files[0].0.clone(),
            "modules/operator-kit/extra.md".to_owned(),
            removed,
        ];
        expected.sort();
        expected.dedup();
        assert_eq!(found, expected);
    }

    #[test]
    fn control_a_directory_prefix_is_not_a_module() {
        assert!(has_dir("modules/lane-kit"));
        assert!(!has_dir("modules/lane"));
        assert!(!has_dir("modules/lane-kit/"));
        assert!(file("modules/lane-kit", "no-such-file").is_none());
    }
}
