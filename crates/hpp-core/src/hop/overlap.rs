//! The landing overlap rule: a proposal may land only when none of the paths it changed
//! collides with a path accepted since its base.
//!
//! Two paths collide when they are equal, when one is a directory of the other (a file `a`
//! against `a/b`), or when they differ only in letter case (`README` against `Readme`, also as
//! directories), since they cannot coexist on a case-insensitive filesystem. A rename is a
//! deletion plus an addition, so it contributes both of its paths. The rule is conservative on
//! purpose: it blocks even where a textual merge would succeed.

use std::collections::{BTreeMap, BTreeSet};

/// Returns the sorted paths, from both sides, that take part in a collision; empty when the
/// proposal may land.
///
/// ```
/// use hpp_core::hop::overlap::overlapping;
/// let p = ["src/a.rs".to_owned()];
/// let q = ["SRC/A.rs".to_owned(), "docs/x.md".to_owned()];
/// assert_eq!(overlapping(&p, &q), ["SRC/A.rs", "src/a.rs"]);
/// ```
pub fn overlapping(proposal: &[String], accepted: &[String]) -> Vec<String> {
    // Folded path -> the accepted paths with that folded form; and folded directory -> the
    // accepted paths under it.
    let mut exact: BTreeMap<String, Vec<&String>> = BTreeMap::new();
    let mut under: BTreeMap<String, Vec<&String>> = BTreeMap::new();
    for path in accepted {
        let folded = path.to_lowercase();
        for dir in ancestors(&folded) {
            under.entry(dir.to_owned()).or_default().push(path);
        }
        exact.entry(folded).or_default().push(path);
    }
    let mut out = BTreeSet::new();
    for path in proposal {
        let folded = path.to_lowercase();
        let mut hits: Vec<&String> = Vec::new();
        hits.extend(exact.get(&folded).into_iter().flatten());
        hits.extend(under.get(&folded).into_iter().flatten());
        for dir in ancestors(&folded) {
            hits.extend(exact.get(dir).into_iter().flatten());
        }
        if !hits.is_empty() {
            out.insert(path.clone());
            out.extend(hits.into_iter().cloned());
        }
    }
    out.into_iter().collect()
}

/// The proper directory prefixes of a path: `a/b/c` gives `a`, `a/b`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| (*p).to_owned()).collect()
    }

    #[test]
    fn disjoint_changes_do_not_overlap() {
        assert!(
            overlapping(
                &v(&["a.txt", "src/x.rs"]),
                &v(&["b.txt", "src/y.rs", "srcx"])
            )
            .is_empty()
        );
    }

    #[test]
    fn shared_paths_overlap() {
        assert_eq!(
            overlapping(&v(&["a.txt", "b.txt"]), &v(&["b.txt"])),
            ["b.txt"]
        );
    }

    #[test]
    fn a_rename_counts_both_paths() {
        // The proposal renamed old.txt to new.txt; accepted work edited old.txt.
        assert_eq!(
            overlapping(&v(&["new.txt", "old.txt"]), &v(&["old.txt"])),
            ["old.txt"]
        );
    }

    #[test]
    fn a_file_against_a_directory_overlaps_either_way() {
        assert_eq!(
            overlapping(&v(&["docs"]), &v(&["docs/a.md"])),
            ["docs", "docs/a.md"]
        );
        assert_eq!(
            overlapping(&v(&["docs/a/b.md"]), &v(&["docs/a"])),
            ["docs/a", "docs/a/b.md"]
        );
    }

    #[test]
    fn case_only_differences_overlap() {
        assert_eq!(
            overlapping(&v(&["Readme.md"]), &v(&["README.md"])),
            ["README.md", "Readme.md"]
        );
        assert_eq!(
            overlapping(&v(&["Docs/x"]), &v(&["docs/y", "DOCS"])),
            ["DOCS", "Docs/x"]
        );
    }

    #[test]
    fn control_a_prefix_that_is_not_a_directory_does_not_overlap() {
        assert!(overlapping(&v(&["ab"]), &v(&["a"])).is_empty());
        assert!(overlapping(&v(&["a.txt"]), &v(&["a.txt.orig"])).is_empty());
        assert!(!overlapping(&v(&["a"]), &v(&["a"])).is_empty());
    }
}
