//! A commit as a log's walk reads it: its parents, its tree and its committer time, read from
//! its headers once (a fetched board's 10,000 commits in the decoding threads, `fresh`; a
//! loose or packed commit of any log's walk, `log`).

use gix::ObjectId;

/// A commit as a log's read asks for it: its parents, its tree and its committer time.
pub(crate) type Shape = (Parents, ObjectId, i64);

/// A commit's parents, held inline up to two (a log's commits have one, its merges two).
pub(crate) type Parents = smallvec::SmallVec<[ObjectId; 2]>;

/// A commit's parents, tree and committer time, in one pass over its headers (tree, parents,
/// author, committer), where asking for each parses from the start again: this runs once per
/// commit of a long log.
pub(crate) fn shape_of(
    tokens: gix::objs::CommitRefIter<'_>,
    name: &str,
    id: ObjectId,
) -> Result<Shape, super::Error> {
    let (mut tree, mut parents, mut time) = (None, Parents::new(), 0);
    for token in tokens {
        match token {
            Ok(gix::objs::commit::ref_iter::Token::Tree { id }) => tree = Some(id),
            Ok(gix::objs::commit::ref_iter::Token::Parent { id }) => parents.push(id),
            Ok(gix::objs::commit::ref_iter::Token::Author { .. }) => {}
            Ok(gix::objs::commit::ref_iter::Token::Committer { signature }) => {
                time = signature.time().map_or(0, |t| t.seconds);
                break;
            }
            Ok(_) | Err(_) => break,
        }
    }
    // A commit names its tree first; one that does not is not a commit git wrote.
    let tree = tree.ok_or_else(|| super::Error::NotACommit {
        name: name.to_owned(),
        id: Some(id.to_string()),
    })?;
    Ok((parents, tree, time))
}

/// [`shape_of`] the commit `bytes`, for the headers git writes (a tree, its parents, an author,
/// and a committer dated in seconds and an offset) read with a few byte searches; any other
/// form is left to gix's parser, which reads them all. gix parses the author's and the
/// committer's whole signatures: 3,300 instructions a commit, a tenth of what decoding a
/// fetched board costs.
pub(crate) fn shape_of_bytes(
    bytes: &[u8],
    hash: gix::hash::Kind,
    name: &str,
    id: ObjectId,
) -> Result<Shape, super::Error> {
    match plain_shape(bytes, hash) {
        Some(shape) => Ok(shape),
        None => shape_of(gix::objs::CommitRefIter::from_bytes(bytes, hash), name, id),
    }
}

/// The shape of a commit whose headers are in git's plain form, or `None`.
fn plain_shape(bytes: &[u8], hash: gix::hash::Kind) -> Option<Shape> {
    /// The value of the header `key` that `rest` starts with; `rest` moves past its line.
    fn header<'a>(rest: &mut &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
        let line = rest.strip_prefix(key)?;
        let end = memchr::memchr(b'\n', line)?;
        *rest = &line[end + 1..];
        Some(&line[..end])
    }
    let id = |hex: &[u8]| ObjectId::from_hex(hex).ok().filter(|id| id.kind() == hash);
    let mut rest = bytes;
    let tree = id(header(&mut rest, b"tree ")?)?;
    let mut parents = Parents::new();
    while let Some(parent) = header(&mut rest, b"parent ") {
        parents.push(id(parent)?);
    }
    header(&mut rest, b"author ")?;
    let committer = header(&mut rest, b"committer ")?;
    // `name <email> seconds offset`, with one bracket of each kind.
    let close = memchr::memrchr(b'>', committer)?;
    let one = |b| memchr::memchr(b, committer) == memchr::memrchr(b, committer);
    if memchr::memchr(b'>', committer) != Some(close) || !one(b'<') {
        return None;
    }
    let date = std::str::from_utf8(&committer[close + 1..]).ok()?;
    let (seconds, offset) = date.strip_prefix(' ')?.split_once(' ')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let offset_ok =
        offset.len() == 5 && matches!(offset.as_bytes()[0], b'+' | b'-') && digits(&offset[1..]);
    if !offset_ok || !digits(seconds) {
        return None;
    }
    Some((parents, tree, seconds.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit's bytes with these headers' lines between the tree and the message.
    fn commit_bytes(parents: &[&str], author: &str, committer: &str) -> Vec<u8> {
        let mut text = format!("tree {}\n", "a".repeat(40));
        for parent in parents {
            text.push_str(&format!("parent {parent}\n"));
        }
        text.push_str(&format!(
            "author {author}\ncommitter {committer}\n\nmessage\n"
        ));
        text.into_bytes()
    }

    /// What gix's own parser makes of `bytes`.
    fn gix_shape(bytes: &[u8]) -> Option<Shape> {
        let tokens = gix::objs::CommitRefIter::from_bytes(bytes, gix::hash::Kind::Sha1);
        shape_of(tokens, "", ObjectId::null(gix::hash::Kind::Sha1)).ok()
    }

    fn quick(bytes: &[u8]) -> Option<Shape> {
        shape_of_bytes(
            bytes,
            gix::hash::Kind::Sha1,
            "",
            ObjectId::null(gix::hash::Kind::Sha1),
        )
        .ok()
    }

    #[test]
    fn plain_commit_headers_read_as_gix_reads_them() {
        let who = "A U Thor <a@example.com> 1700000000 +0530";
        let (b, c) = ("b".repeat(40), "c".repeat(40));
        let mut commits = vec![
            commit_bytes(&[], who, who),
            commit_bytes(&[&b], who, "C O <c@example.com> 1700000123 -0800"),
            commit_bytes(&[&b, &c], who, who),
        ];
        // And commits the store wrote: a log of three.
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (store, tip) = crate::testing::appended_log(dir.path(), "refs/hpp/test", 3);
        let mut at = Some(tip.oid());
        while let Some(id) = at {
            let commit = store.repo.find_commit(id).unwrap();
            at = commit.parent_ids().next().map(|p| p.detach());
            commits.push(commit.data.clone());
        }
        for bytes in &commits {
            let plain = plain_shape(bytes, gix::hash::Kind::Sha1);
            assert!(plain.is_some(), "{}", String::from_utf8_lossy(bytes));
            assert_eq!(
                plain,
                gix_shape(bytes),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert_eq!(
            gix_shape(&commits[2]).unwrap().0.len(),
            2,
            "a merge's two parents"
        );
    }

    #[test]
    fn control_other_header_forms_are_left_to_gix() {
        let who = "A U Thor <a@example.com> 1700000000 +0000";
        let odd = [
            // An email with a bracket in it, a date before 1970, no offset, no author.
            commit_bytes(&[], who, "C <c>d@example.com> 1700000000 +0000"),
            commit_bytes(&[], who, "C <c@example.com> -100 +0000"),
            commit_bytes(&[], who, "C <c@example.com> 1700000000"),
            format!("tree {}\ncommitter {who}\n\nm\n", "a".repeat(40)).into_bytes(),
            // A parent that is not an id, and a tree of another hash's length.
            commit_bytes(&["not-hex"], who, who),
            commit_bytes(&[], who, who)[..5].to_vec(),
            format!("tree {}\nauthor {who}\ncommitter {who}\n", "a".repeat(64)).into_bytes(),
        ];
        for bytes in &odd {
            assert_eq!(
                plain_shape(bytes, gix::hash::Kind::Sha1),
                None,
                "{}",
                String::from_utf8_lossy(bytes)
            );
            assert_eq!(
                quick(bytes),
                gix_shape(bytes),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
