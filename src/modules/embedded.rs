//! The modules compiled into the binary: every file under this crate's `modules/` directory at
//! build time (see `build.rs`), with its executable bit. With the built-in manifest, install,
//! init and the doctor read module files from here, and verify them against the embedded
//! `CHECKSUMS.txt` exactly as they verify a directory on disk.

use super::{CHECKSUMS_FILE, Entry};
use crate::record::sha256_hex;

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
        let value: serde_json::Value =
            serde_json::from_str(crate::manifest::BUILT_IN).expect("the built-in manifest parses");
        let validated = crate::manifest::validate(&value).expect("it validates");
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

    #[test]
    fn control_a_directory_prefix_is_not_a_module() {
        assert!(has_dir("modules/lane-kit"));
        assert!(!has_dir("modules/lane"));
        assert!(!has_dir("modules/lane-kit/"));
        assert!(file("modules/lane-kit", "no-such-file").is_none());
    }
}
