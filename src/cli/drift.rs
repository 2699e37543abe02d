//! The snapshot is not the commit: a record binds the workspace tree (tracked and untracked
//! files that are not ignored), and `git hpp verify` looks a commit up by its own tree. When the
//! two differ, the commands that record or show a tree say which paths differ and the two ways
//! out, instead of letting `verify` find nothing later.

use hpp_store::{Store, TreeId};

use crate::cli::exit::CliError;

/// How many differing paths a note names before it counts the rest.
const NAMED: usize = 5;

/// A one-line note when `tree` (a snapshot) is not HEAD's tree, naming the paths that differ;
/// `None` when they are the same, or when there is no HEAD commit to compare with. `what` names
/// the record (`this attestation`, `this evidence`, `the loop's gates`).
pub fn note(store: &Store, tree: &str, what: &str) -> Result<Option<String>, CliError> {
    let Some(head) = store.head_commit()? else {
        return Ok(None);
    };
    let Some(snapshot) = TreeId::parse(tree) else {
        return Ok(None);
    };
    let committed = store.commit_tree(&head)?;
    if committed == snapshot {
        return Ok(None);
    }
    let paths = store.changed_paths(&committed, &snapshot)?;
    if paths.is_empty() {
        return Ok(None);
    }
    let mut named = paths
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > NAMED {
        named.push_str(&format!(" and {} more", paths.len() - NAMED));
    }
    let verb = if paths.len() == 1 {
        "differs"
    } else {
        "differ"
    };
    Ok(Some(format!(
        "the workspace is not HEAD's tree: {named} {verb} (untracked or not committed), so {what} is of a tree no commit has yet and `git hpp verify` of HEAD will not find it; commit them and run again, or leave them out (.gitignore) and run again"
    )))
}
