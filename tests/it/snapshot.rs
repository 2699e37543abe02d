//! `git hpp snapshot`: the tree `git add -A && git write-tree` writes with a copy of the index,
//! computed without touching the index or HEAD.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use crate::harness::Sandbox;

/// Returns the tree git writes for the workspace with a throwaway copy of the index:
/// `cp .git/index $T; GIT_INDEX_FILE=$T git add -A; GIT_INDEX_FILE=$T git write-tree`.
pub(crate) fn git_tree(sandbox: &Sandbox) -> String {
    git_tree_at(sandbox, &sandbox.root)
}

/// [`git_tree`] of the worktree at `root` (a linked worktree has an index of its own).
fn git_tree_at(sandbox: &Sandbox, root: &Path) -> String {
    let copy = tempfile::tempdir().expect("a temporary directory can be created");
    let index = copy.path().join("index");
    let real = root.join(sandbox.git_in(root, &["rev-parse", "--git-path", "index"]));
    if real.exists() {
        std::fs::copy(&real, &index).expect("the index can be copied");
        // Keep the index's mtime: git decides which entries are racily clean by comparing file
        // mtimes with the index's own. A fresh mtime on the copy would make git trust the stat of
        // a file rewritten in the same clock tick as the index, and miss that change.
        let mtime = std::fs::metadata(&real)
            .and_then(|m| m.modified())
            .expect("the index has an mtime");
        std::fs::File::options()
            .write(true)
            .open(&index)
            .and_then(|f| f.set_modified(mtime))
            .expect("the copy's mtime can be set");
    }
    let git = |args: &[&str]| {
        let out = sandbox
            .command("git", root)
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?} with a copied index failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("git prints UTF-8 here")
            .trim_end()
            .to_owned()
    };
    git(&["add", "-A"]);
    git(&["write-tree"])
}

/// Returns the tree `git hpp snapshot` prints, checking the human and JSON forms agree.
fn hpp_tree(sandbox: &Sandbox) -> String {
    let human = sandbox.hpp(["snapshot"]).ok();
    let json = sandbox.hpp(["snapshot", "--json"]).json(0);
    let tree = json["tree"]
        .as_str()
        .expect("snapshot --json has a tree string")
        .to_owned();
    assert_eq!(
        human.trim_end(),
        tree,
        "human and JSON output name one tree"
    );
    assert_eq!(tree.len(), 40, "a sha1 tree id: {tree}");
    tree
}

/// Writes `text` at `rel` under `root`, creating parent directories.
fn write(root: &Path, rel: impl AsRef<Path>, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a file has a parent"))
        .expect("the sandbox is writable");
    std::fs::write(path, text).expect("the sandbox is writable");
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .expect("permissions can be set in the sandbox");
}

/// The names `git ls-tree -r` lists in `tree` (quoted as git quotes them).
fn names(sandbox: &Sandbox, tree: &str) -> Vec<String> {
    sandbox
        .git(["ls-tree", "-r", "--name-only", tree])
        .lines()
        .map(str::to_owned)
        .collect()
}

const NON_UTF8_NAME: &[u8] = b"bad\xffname.txt";

/// Adds, as the submodule `path`, a new repository `upstream` with one commit.
fn add_submodule(sandbox: &Sandbox, path: &str) {
    let upstream = sandbox.path("upstream");
    std::fs::create_dir_all(&upstream).expect("the sandbox is writable");
    sandbox.git_in(&upstream, &["init", "-q", "-b", "main"]);
    write(&upstream, "lib.txt", "library v1\n");
    sandbox.git_in(&upstream, &["add", "lib.txt"]);
    sandbox.git_in(&upstream, &["commit", "-q", "-m", "lib v1"]);
    let upstream = upstream.to_str().expect("sandbox paths are UTF-8");
    sandbox.git([
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        upstream,
        path,
    ]);
}

/// Checks that the snapshot is the tree git writes, and returns it with the names it lists.
fn snapshot_is_gits_and_names(sandbox: &Sandbox) -> (String, Vec<String>) {
    let expected = git_tree(sandbox);
    assert_eq!(hpp_tree(sandbox), expected);
    let listed = names(sandbox, &expected);
    (expected, listed)
}

/// Asserts that `listed` names every path of `present` and none of `absent`.
fn assert_names(listed: &[String], present: &[&str], absent: &[&str]) {
    for name in present {
        assert!(listed.iter().any(|n| n == name), "{name} in {listed:?}");
    }
    for name in absent {
        assert!(
            !listed.iter().any(|n| n == name),
            "{name} not in {listed:?}"
        );
    }
}

/// The files of the rich workspace that its ignore rules (at every level) leave out.
const RICH_IGNORED: &[&str] = &[
    "debug.log",
    "a/other.log",
    "a/secret.txt",
    "a/b/data.bin",
    "a/b/deep/x.tmp",
    "build/out.txt",
    "excluded-by-info.txt",
    "scratch.tmp",
];

/// Builds the rich workspace: ignore rules at every level, modes, symlinks, odd names, a
/// deleted, a modified, a staged and a force-added tracked file, and a submodule whose HEAD moved.
fn rich_workspace() -> Sandbox {
    let sandbox = Sandbox::repo();
    let root = sandbox.root.clone();

    // A submodule, committed, whose HEAD then moves.
    add_submodule(&sandbox, "sub");

    // Tracked files: one to delete, one to modify, one ignored but force-added.
    write(&root, "gone.txt", "soon deleted\n");
    write(&root, "forced.log", "tracked although ignored\n");
    write(&root, "a/tracked.txt", "tracked v1\n");
    sandbox.git(["add", "gone.txt", "a/tracked.txt"]);
    sandbox.git(["add", "-f", "forced.log"]);
    sandbox.git(["commit", "-q", "-m", "tracked files and submodule"]);

    let sub = root.join("sub");
    write(&sub, "lib.txt", "library v2\n");
    sandbox.git_in(&sub, &["commit", "-q", "-a", "-m", "lib v2"]);

    // Ignore rules at several levels, info/exclude and core.excludesFile outside the worktree.
    write(&root, ".gitignore", "*.log\nbuild/\n");
    write(&root, "a/.gitignore", "!keep.log\nsecret.txt\n");
    write(&root, "a/b/.gitignore", "*.bin\n");
    write(&root, ".git/info/exclude", "excluded-by-info.txt\n");
    let global = sandbox.path("outside-excludes");
    std::fs::write(&global, "*.tmp\n").expect("the sandbox is writable");
    sandbox.git([
        "config",
        "core.excludesFile",
        global.to_str().expect("sandbox paths are UTF-8"),
    ]);
    for ignored in RICH_IGNORED {
        write(&root, ignored, "ignored\n");
    }
    write(&root, "a/keep.log", "kept by a negation\n");
    write(&root, "a/b/c.txt", "nested\n");

    // Modes, links, an empty directory and awkward names.
    write(&root, "run.sh", "#!/bin/sh\necho hi\n");
    chmod(&root.join("run.sh"), 0o755);
    symlink("README", root.join("link")).expect("symlinks can be made");
    symlink("does/not/exist", root.join("dangling")).expect("symlinks can be made");
    std::fs::create_dir_all(root.join("empty/inner")).expect("the sandbox is writable");
    write(&root, "--option", "looks like a flag\n");
    write(&root, "-n", "looks like a flag too\n");
    write(&root, "with space ünïcode ✓.txt", "spaces and unicode\n");
    std::fs::write(root.join(OsStr::from_bytes(NON_UTF8_NAME)), "not utf-8\n")
        .expect("the sandbox accepts non-UTF-8 names");

    // Changes to tracked files: deleted, modified, force-added and modified, staged then edited.
    std::fs::remove_file(root.join("gone.txt")).expect("the file exists");
    write(&root, "README", "hello, modified\n");
    write(&root, "forced.log", "tracked although ignored, modified\n");
    write(&root, "staged.txt", "staged\n");
    sandbox.git(["add", "staged.txt"]);
    write(&root, "staged.txt", "staged, then edited\n");
    sandbox
}

#[test]
fn the_snapshot_of_a_rich_workspace_is_the_tree_git_add_all_writes() {
    let sandbox = rich_workspace();
    // The workspace really exercises each rule (otherwise equality proves little).
    let (expected, listed) = snapshot_is_gits_and_names(&sandbox);
    assert_names(
        &listed,
        &[
            ".gitignore",
            "a/.gitignore",
            "a/keep.log",
            "a/b/c.txt",
            "a/tracked.txt",
            "forced.log",
            "run.sh",
            "link",
            "dangling",
            "--option",
            "-n",
            "staged.txt",
            "sub",
            "README",
        ],
        &[&["gone.txt"], RICH_IGNORED].concat(),
    );
    assert!(
        !listed.iter().any(|n| n.starts_with("empty")),
        "an empty directory is not stored: {listed:?}"
    );
    assert!(
        listed.iter().any(|n| n.contains("\\377")),
        "git stores the non-UTF-8 name: {listed:?}"
    );
    assert!(
        listed.iter().any(|n| n.contains("with space")),
        "the unicode name is stored: {listed:?}"
    );

    // Modes and the submodule's moved HEAD, as git recorded them.
    let entry = |path: &str| sandbox.git(["ls-tree", &expected, "--", path]);
    assert!(
        entry("run.sh").starts_with("100755 blob"),
        "{}",
        entry("run.sh")
    );
    assert!(
        entry("link").starts_with("120000 blob"),
        "{}",
        entry("link")
    );
    let sub_head = sandbox.git_in(&sandbox.root.join("sub"), &["rev-parse", "HEAD"]);
    assert_eq!(entry("sub"), format!("160000 commit {sub_head}\tsub"));
    let committed = sandbox.git(["rev-parse", "HEAD:sub"]);
    assert_ne!(
        committed, sub_head,
        "the submodule's HEAD moved after the commit"
    );
}

#[test]
fn the_snapshot_follows_mode_and_type_changes() {
    let sandbox = rich_workspace();
    let root = sandbox.root.clone();
    let first = hpp_tree(&sandbox);
    assert_eq!(first, git_tree(&sandbox));

    chmod(&root.join("a/b/c.txt"), 0o755);
    let executable = hpp_tree(&sandbox);
    assert_eq!(executable, git_tree(&sandbox));
    assert_ne!(executable, first, "chmod +x changes the tree");

    std::fs::remove_file(root.join("a/tracked.txt")).expect("the file exists");
    symlink("../README", root.join("a/tracked.txt")).expect("symlinks can be made");
    let linked = hpp_tree(&sandbox);
    assert_eq!(linked, git_tree(&sandbox));
    assert_ne!(linked, executable, "a file turned symlink changes the tree");
    let entry = sandbox.git(["ls-tree", &linked, "--", "a/tracked.txt"]);
    assert!(entry.starts_with("120000 blob"), "{entry}");

    chmod(&root.join("run.sh"), 0o644);
    let plain = hpp_tree(&sandbox);
    assert_eq!(plain, git_tree(&sandbox));
    assert_ne!(plain, linked, "chmod -x changes the tree");
}

#[test]
fn the_snapshot_leaves_the_index_and_head_alone() {
    let sandbox = rich_workspace();
    let index = sandbox.root.join(".git/index");
    let before = std::fs::read(&index).expect("the index exists");
    let head = sandbox.git(["rev-parse", "HEAD"]);
    let branch = sandbox.git(["symbolic-ref", "HEAD"]);
    let _ = hpp_tree(&sandbox);
    assert!(
        std::fs::read(&index).expect("the index still exists") == before,
        "the index bytes are unchanged"
    );
    assert_eq!(sandbox.git(["rev-parse", "HEAD"]), head);
    assert_eq!(sandbox.git(["symbolic-ref", "HEAD"]), branch);
}

#[test]
fn a_repository_without_an_index_gets_a_snapshot_and_still_no_index() {
    let sandbox = Sandbox::empty();
    sandbox.git(["init", "-q", "-b", "main"]);
    write(&sandbox.root, "first.txt", "first\n");
    write(&sandbox.root, "dir/second.txt", "second\n");
    let index = sandbox.root.join(".git/index");
    assert!(!index.exists(), "a fresh repository has no index");
    let tree = hpp_tree(&sandbox);
    assert!(!index.exists(), "the snapshot did not create an index");
    assert_eq!(tree, git_tree(&sandbox));
    assert_eq!(names(&sandbox, &tree), ["dir/second.txt", "first.txt"]);
}

#[test]
fn a_subdirectory_snapshots_the_whole_workspace() {
    let sandbox = rich_workspace();
    let expected = git_tree(&sandbox);
    let deep = sandbox.root.join("a/b");
    let out = sandbox.hpp_in(&deep, &["snapshot"]).ok();
    assert_eq!(out.trim_end(), expected);
}

#[test]
fn control_changing_one_file_changes_the_snapshot() {
    let sandbox = rich_workspace();
    let before = hpp_tree(&sandbox);
    assert_eq!(before, git_tree(&sandbox));
    // Same length, so only the content (not the size) tells the difference.
    write(&sandbox.root, "a/b/c.txt", "NESTED\n");
    let after = hpp_tree(&sandbox);
    assert_ne!(after, before, "a content change must change the tree");
    assert_eq!(after, git_tree(&sandbox));
}

#[test]
fn a_submodule_that_is_not_checked_out_keeps_its_recorded_gitlink() {
    let sandbox = Sandbox::repo();
    add_submodule(&sandbox, "sub");
    sandbox.git(["commit", "-q", "-m", "sub"]);
    // A plain clone leaves sub/ empty; deinit does the same in place.
    let clone = sandbox.path("clone");
    sandbox.git([
        "clone",
        "-q",
        sandbox.root.to_str().expect("utf-8"),
        clone.to_str().expect("utf-8"),
    ]);
    let head_tree = sandbox.git_in(&clone, &["rev-parse", "HEAD^{tree}"]);
    let snapshot = sandbox.hpp_in(&clone, &["snapshot"]).ok();
    assert_eq!(snapshot.trim_end(), head_tree);
    sandbox.git(["submodule", "deinit", "-q", "-f", "sub"]);
    assert_eq!(hpp_tree(&sandbox), git_tree(&sandbox));
}

#[test]
fn with_core_filemode_false_the_executable_bit_on_disk_is_ignored_as_git_does() {
    let sandbox = Sandbox::repo();
    write(&sandbox.root, "tracked.sh", "echo x\n");
    chmod(&sandbox.root.join("tracked.sh"), 0o755);
    sandbox.git(["add", "tracked.sh"]);
    sandbox.git(["commit", "-q", "-m", "exec"]);
    sandbox.git(["config", "core.fileMode", "false"]);
    chmod(&sandbox.root.join("tracked.sh"), 0o644);
    write(&sandbox.root, "tracked.sh", "echo y\n");
    write(&sandbox.root, "new.sh", "echo new\n");
    chmod(&sandbox.root.join("new.sh"), 0o755);
    let tree = hpp_tree(&sandbox);
    assert_eq!(tree, git_tree(&sandbox));
    let listing = sandbox.git_in(&sandbox.root, &["ls-tree", &tree]);
    assert!(
        listing.contains("100755 blob") && listing.contains("tracked.sh"),
        "{listing}"
    );
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("100644") && l.ends_with("new.sh")),
        "{listing}"
    );
}

#[test]
fn a_file_executable_by_its_group_only_is_stored_as_100644_as_git_does() {
    let sandbox = Sandbox::repo();
    write(&sandbox.root, "group-x.sh", "echo group\n");
    chmod(&sandbox.root.join("group-x.sh"), 0o654);
    write(&sandbox.root, "owner-x.sh", "echo owner\n");
    chmod(&sandbox.root.join("owner-x.sh"), 0o744);
    let tree = snapshot_is_gits(&sandbox);
    let entry = |path: &str| sandbox.git(["ls-tree", &tree, "--", path]);
    assert!(
        entry("group-x.sh").starts_with("100644 blob"),
        "{}",
        entry("group-x.sh")
    );
    assert!(
        entry("owner-x.sh").starts_with("100755 blob"),
        "{}",
        entry("owner-x.sh")
    );
}

// The snapshot's own stat cache (under .git/hpp-cache/snapshot/): whatever it holds, every
// snapshot is the tree git writes, and the user's index is never written.

/// Snapshots the workspace, checks that the user's index is byte for byte what it was and that
/// the tree is the one git writes (and complete in the object database), and returns it.
#[track_caller]
fn snapshot_is_gits(sandbox: &Sandbox) -> String {
    let index = sandbox.root.join(".git/index");
    let before = std::fs::read(&index).ok();
    let tree = hpp_tree(sandbox);
    assert!(
        std::fs::read(&index).ok() == before,
        "the snapshot left the user's index byte for byte as it was"
    );
    // Before git writes the same objects again.
    assert_complete(sandbox, &tree);
    assert_eq!(tree, git_tree(sandbox), "the snapshot is git's tree");
    tree
}

/// Asserts that every object `tree` reaches is in the object database.
#[track_caller]
fn assert_complete(sandbox: &Sandbox, tree: &str) {
    let listing = sandbox.git(["ls-tree", "-r", "-t", tree]);
    for line in listing.lines() {
        let mut fields = line.split_whitespace();
        let (kind, id) = (fields.nth(1), fields.next());
        if let (Some("blob" | "tree"), Some(id)) = (kind, id) {
            sandbox.git(["cat-file", "-e", id]);
        }
    }
}

/// Waits until every file written so far is older than the fence of a snapshot started now (its
/// start less two seconds, in whole seconds), so what that snapshot learns is trusted next.
fn settle() {
    std::thread::sleep(std::time::Duration::from_secs(3));
}

/// The snapshot caches of the repository (one per index).
fn cache_files(sandbox: &Sandbox) -> Vec<std::path::PathBuf> {
    let dir = sandbox.root.join(".git/hpp-cache/snapshot");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Writes `text` at `rel` and sets its mtime to `mtime` (size and mtime then say nothing of
/// the content).
fn write_with_mtime(root: &Path, rel: &str, text: &str, mtime: std::time::SystemTime) {
    write(root, rel, text);
    std::fs::File::options()
        .write(true)
        .open(root.join(rel))
        .and_then(|f| f.set_modified(mtime))
        .expect("the mtime can be set");
}

fn mtime(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("the file has an mtime")
}

/// A repository with three committed files in two directories.
fn three_files() -> Sandbox {
    let sandbox = Sandbox::repo();
    write(&sandbox.root, "a/one.txt", "one\n");
    write(&sandbox.root, "a/two.txt", "two\n");
    write(&sandbox.root, "b/three.txt", "three\n");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "three files"]);
    sandbox
}

#[test]
fn after_a_first_snapshot_each_further_change_is_seen() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    write(&root, "a/one.txt", "one, modified\n");
    write(&root, "new.txt", "untracked\n");
    settle();
    let first = snapshot_is_gits(&sandbox);
    assert_eq!(cache_files(&sandbox).len(), 1, "the snapshot kept a cache");

    // The modified and the untracked file now come from the cache; one more change is read.
    write(&root, "b/three.txt", "three, modified\n");
    let second = snapshot_is_gits(&sandbox);
    assert_ne!(second, first);
    write(&root, "a/one.txt", "one, modified twice\n");
    let third = snapshot_is_gits(&sandbox);
    assert_ne!(third, second);
    settle();
    assert_eq!(
        snapshot_is_gits(&sandbox),
        third,
        "from the cache, the same tree"
    );
    std::fs::remove_file(root.join("new.txt")).expect("the file exists");
    let fourth = snapshot_is_gits(&sandbox);
    assert!(!names(&sandbox, &fourth).contains(&"new.txt".to_owned()));
    std::fs::remove_file(root.join("a/one.txt")).expect("the file exists");
    let fifth = snapshot_is_gits(&sandbox);
    assert!(!names(&sandbox, &fifth).contains(&"a/one.txt".to_owned()));
}

#[test]
fn an_mtime_only_touch_keeps_the_tree() {
    let sandbox = three_files();
    let clean = snapshot_is_gits(&sandbox);
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for rel in ["a/one.txt", "b/three.txt"] {
        std::fs::File::options()
            .write(true)
            .open(sandbox.root.join(rel))
            .and_then(|f| f.set_modified(past))
            .expect("the mtime can be set");
    }
    assert_eq!(
        snapshot_is_gits(&sandbox),
        clean,
        "a touch changes no content"
    );
    settle();
    assert_eq!(
        snapshot_is_gits(&sandbox),
        clean,
        "nor does it from the cache"
    );
    write(&sandbox.root, "b/three.txt", "three, now modified\n");
    assert_ne!(snapshot_is_gits(&sandbox), clean);
}

/// Sleeps until just past the start of the next second of the clock.
fn wait_for_next_second() {
    let into = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970")
        .subsec_nanos();
    let left = 1_000_000_000 - u64::from(into);
    std::thread::sleep(std::time::Duration::from_nanos(left + 10_000_000));
}

fn ctime_secs(path: &Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("the file exists").ctime()
}

/// Racily clean: a file written, snapshotted at once, and rewritten in the same second with the
/// same size and the same mtime (its own, or an old one set back) has the stat the snapshot
/// recorded. A snapshot in a later second must still read it: the cache's fence says the
/// recorded stat was too recent to vouch for the content.
#[test]
fn a_same_size_rewrite_in_the_second_of_a_snapshot_is_seen_by_a_later_one() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    let path = root.join("a/one.txt");
    let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    // The index is older than all that follows, so only the cache can vouch for a stat.
    settle();
    for (case, old_mtime) in [("own mtime", false), ("old mtime set back", true)] {
        let mut seen_in_one_second = false;
        for attempt in 0..4 {
            wait_for_next_second();
            write(
                &root,
                "a/one.txt",
                &format!(
                    "{attempt} first
"
                ),
            );
            if old_mtime {
                write_with_mtime(
                    &root,
                    "a/one.txt",
                    &format!(
                        "{attempt} first
"
                    ),
                    long_ago,
                );
            }
            let (mtime_then, ctime_then) = (mtime(&path), ctime_secs(&path));
            write(
                &root,
                "fresh.txt",
                &format!(
                    "{attempt} aaaa
"
                ),
            );
            let fresh_mtime = mtime(&root.join("fresh.txt"));
            let first = sandbox.hpp(["snapshot"]).ok();
            write_with_mtime(
                &root,
                "a/one.txt",
                &format!(
                    "{attempt} other
"
                ),
                mtime_then,
            );
            write_with_mtime(
                &root,
                "fresh.txt",
                &format!(
                    "{attempt} bbbb
"
                ),
                fresh_mtime,
            );
            if ctime_secs(&path) != ctime_then {
                continue; // the second ended on the way: try again from the next one
            }
            seen_in_one_second = true;
            std::thread::sleep(std::time::Duration::from_millis(1_100));
            let second = snapshot_is_gits(&sandbox);
            assert_ne!(second, first.trim_end(), "{case}: the new content is seen");
            let entry = sandbox.git(["ls-tree", &second, "--", "a/one.txt"]);
            let blob = entry.split_whitespace().nth(2).expect("an entry has an id");
            assert_eq!(
                sandbox.git(["cat-file", "-p", blob]),
                format!("{attempt} other"),
                "{case}"
            );
            break;
        }
        assert!(seen_in_one_second, "{case}: no attempt fit in one second");
    }
}

/// The user's index is racily clean too: a file staged and rewritten (same size) in the second
/// the index was written has the stat the index recorded. git reads it, and so must a snapshot
/// whose cache knows other files.
#[test]
fn a_file_rewritten_in_the_second_the_index_was_written_is_seen() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    let path = root.join("a/one.txt");
    write(
        &root,
        "b/three.txt",
        "three, modified
",
    );
    settle();
    snapshot_is_gits(&sandbox);
    let mut seen_in_one_second = false;
    for attempt in 0..4 {
        wait_for_next_second();
        write(
            &root,
            "a/one.txt",
            &format!(
                "{attempt} staged
"
            ),
        );
        sandbox.git(["add", "a/one.txt"]);
        write(
            &root,
            "a/one.txt",
            &format!(
                "{attempt} edited
"
            ),
        );
        let index_mtime = mtime(&root.join(".git/index"));
        let second_of = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH)
                .expect("after 1970")
                .as_secs()
        };
        if second_of(index_mtime) != second_of(mtime(&path))
            || i64::try_from(second_of(index_mtime)) != Ok(ctime_secs(&path))
        {
            continue;
        }
        seen_in_one_second = true;
        std::thread::sleep(std::time::Duration::from_millis(1_100));
        let tree = snapshot_is_gits(&sandbox);
        let entry = sandbox.git(["ls-tree", &tree, "--", "a/one.txt"]);
        let blob = entry.split_whitespace().nth(2).expect("an entry has an id");
        assert_eq!(
            sandbox.git(["cat-file", "-p", blob]),
            format!("{attempt} edited")
        );
        break;
    }
    assert!(seen_in_one_second, "no attempt fit in one second");
}

#[test]
fn control_with_core_trustctime_false_a_stale_cache_entry_is_trusted_and_differs_from_git() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    sandbox.git(["config", "core.trustctime", "false"]);
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    write_with_mtime(&root, "a/one.txt", "bbbb\n", old);
    settle();
    let first = snapshot_is_gits(&sandbox);
    // The same rewrite as above, but git is told not to look at ctimes: the file's stat is
    // what the cache recorded, so the cache's blob is trusted and the file is not read again.
    // That is a stale entry, and comparing with git is what shows it.
    write_with_mtime(&root, "a/one.txt", "cccc\n", old);
    let stale = hpp_tree(&sandbox);
    assert_eq!(stale, first, "the cache was trusted: the file was not read");
    assert_ne!(
        stale,
        git_tree(&sandbox),
        "a stale entry gives another tree than git's, and the comparison catches it"
    );
}

#[test]
fn the_index_changing_under_the_cache_is_followed() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    sandbox.git(["checkout", "-q", "-b", "other"]);
    write(&root, "a/two.txt", "two on other\n");
    write(&root, "c/only-on-other.txt", "other\n");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "other"]);
    sandbox.git(["checkout", "-q", "main"]);

    write(&root, "a/one.txt", "one, modified\n");
    write(&root, "b/three.txt", "three, modified\n");
    write(&root, "new.txt", "untracked\n");
    settle();
    snapshot_is_gits(&sandbox);
    sandbox.git(["add", "a/one.txt"]);
    snapshot_is_gits(&sandbox);
    sandbox.git(["add", "new.txt"]);
    snapshot_is_gits(&sandbox);
    sandbox.git(["commit", "-q", "-m", "one and new"]);
    snapshot_is_gits(&sandbox);
    sandbox.git(["reset", "-q", "--mixed", "HEAD~1"]);
    snapshot_is_gits(&sandbox);
    settle();
    snapshot_is_gits(&sandbox);
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "everything"]);
    let on_main = snapshot_is_gits(&sandbox);
    sandbox.git(["checkout", "-q", "other"]);
    let on_other = snapshot_is_gits(&sandbox);
    assert_ne!(on_other, on_main);
    assert_eq!(on_other, sandbox.git(["rev-parse", "HEAD^{tree}"]));
    write(&root, "c/only-on-other.txt", "other, modified\n");
    settle();
    snapshot_is_gits(&sandbox);
    sandbox.git(["checkout", "-q", "-f", "main"]);
    assert_eq!(snapshot_is_gits(&sandbox), on_main);
}

#[test]
fn a_corrupt_or_unwritable_cache_costs_nothing_but_time() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    write(&root, "a/one.txt", "one, modified\n");
    write(&root, "new.txt", "untracked\n");
    settle();
    let tree = snapshot_is_gits(&sandbox);
    let files = cache_files(&sandbox);
    assert_eq!(files.len(), 1, "one cache: {files:?}");
    let cache = &files[0];
    let good = std::fs::read(cache).expect("the cache is readable");
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    for bad in [
        flipped,
        good[..good.len() / 3].to_vec(),
        Vec::new(),
        b"not a cache at all\n".to_vec(),
    ] {
        std::fs::write(cache, &bad).expect("the cache is writable");
        assert_eq!(snapshot_is_gits(&sandbox), tree);
    }
    // A cache directory that cannot be written (a file is in its way).
    let dir = root.join(".git/hpp-cache/snapshot");
    std::fs::remove_dir_all(&dir).expect("the cache directory exists");
    std::fs::write(&dir, "in the way\n").expect("the git directory is writable");
    write(&root, "b/three.txt", "three, modified\n");
    let changed = snapshot_is_gits(&sandbox);
    assert_ne!(changed, tree);
    std::fs::remove_file(&dir).expect("the file exists");
}

#[test]
fn a_cache_whose_tree_was_pruned_is_not_trusted() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    write(&root, "a/one.txt", "one, modified\n");
    write(&root, "new.txt", "untracked\n");
    settle();
    let tree = snapshot_is_gits(&sandbox);
    // The snapshot's tree and blobs are unreachable: gc may prune them.
    sandbox.git(["prune", "--expire=now"]);
    assert!(
        sandbox
            .command("git", &root)
            .args(["cat-file", "-e", &tree])
            .status()
            .is_ok_and(|s| !s.success()),
        "the tree was pruned"
    );
    assert_eq!(snapshot_is_gits(&sandbox), tree, "written again, whole");
}

#[test]
fn a_tracked_file_that_becomes_ignored_stays_until_it_leaves_the_index() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    write(&root, "build.log", "log v1\n");
    sandbox.git(["add", "build.log"]);
    sandbox.git(["commit", "-q", "-m", "a log"]);
    write(&root, "build.log", "log v2, modified\n");
    settle();
    let tracked = snapshot_is_gits(&sandbox);
    assert!(names(&sandbox, &tracked).contains(&"build.log".to_owned()));
    write(&root, ".gitignore", "*.log\n");
    let ignored = snapshot_is_gits(&sandbox);
    assert!(
        names(&sandbox, &ignored).contains(&"build.log".to_owned()),
        "a tracked file stays although ignored"
    );
    sandbox.git(["rm", "-q", "--cached", "build.log"]);
    let untracked = snapshot_is_gits(&sandbox);
    assert!(
        !names(&sandbox, &untracked).contains(&"build.log".to_owned()),
        "out of the index, an ignored file is not in the snapshot"
    );
    settle();
    assert_eq!(snapshot_is_gits(&sandbox), untracked);
}

#[test]
fn a_change_of_attributes_is_applied_to_files_the_cache_knows() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    write(&root, "a/one.txt", "one\r\nmodified\r\n");
    write(&root, "crlf.txt", "a\r\nb\r\n");
    settle();
    let raw = snapshot_is_gits(&sandbox);
    write(&root, ".gitattributes", "*.txt text\n");
    let normalized = snapshot_is_gits(&sandbox);
    assert_ne!(normalized, raw, "the text attribute turns CRLF into LF");
    settle();
    assert_eq!(snapshot_is_gits(&sandbox), normalized);
    write(&root, ".gitattributes", "*.txt -text\n");
    snapshot_is_gits(&sandbox);
    settle();
    snapshot_is_gits(&sandbox);
    // Attributes from outside the worktree, and a config change, count too.
    write(&root, ".git/info/attributes", "crlf.txt text\n");
    snapshot_is_gits(&sandbox);
    sandbox.git(["config", "core.autocrlf", "input"]);
    snapshot_is_gits(&sandbox);
}

#[test]
fn the_rich_workspace_from_the_cache_is_still_gits_tree() {
    let sandbox = rich_workspace();
    settle();
    let first = snapshot_is_gits(&sandbox);
    assert_eq!(snapshot_is_gits(&sandbox), first);
    write(&sandbox.root, "a/b/c.txt", "NESTED\n");
    symlink("README", sandbox.root.join("a/another-link")).expect("symlinks can be made");
    chmod(&sandbox.root.join("run.sh"), 0o644);
    let changed = snapshot_is_gits(&sandbox);
    assert_ne!(changed, first);
    settle();
    assert_eq!(snapshot_is_gits(&sandbox), changed);
}

#[test]
fn with_core_filemode_false_the_cache_keeps_the_recorded_mode() {
    let sandbox = Sandbox::repo();
    write(&sandbox.root, "tracked.sh", "echo x\n");
    chmod(&sandbox.root.join("tracked.sh"), 0o755);
    sandbox.git(["add", "tracked.sh"]);
    sandbox.git(["commit", "-q", "-m", "exec"]);
    sandbox.git(["config", "core.fileMode", "false"]);
    chmod(&sandbox.root.join("tracked.sh"), 0o644);
    write(&sandbox.root, "tracked.sh", "echo y\n");
    write(&sandbox.root, "new.sh", "echo new\n");
    chmod(&sandbox.root.join("new.sh"), 0o755);
    settle();
    let first = snapshot_is_gits(&sandbox);
    assert_eq!(snapshot_is_gits(&sandbox), first);
    sandbox.git(["config", "core.fileMode", "true"]);
    assert_ne!(
        snapshot_is_gits(&sandbox),
        first,
        "now the bits on disk count"
    );
}

#[test]
fn a_linked_worktree_keeps_a_cache_of_its_own() {
    let sandbox = three_files();
    let linked = sandbox.path("linked");
    sandbox.git([
        "worktree",
        "add",
        "-q",
        linked.to_str().expect("utf-8"),
        "-b",
        "side",
    ]);
    write(&sandbox.root, "a/one.txt", "one on main\n");
    write(&linked, "a/one.txt", "one on side\n");
    settle();
    let main_tree = snapshot_is_gits(&sandbox);
    let side = || {
        sandbox
            .hpp_in(&linked, &["snapshot"])
            .ok()
            .trim_end()
            .to_owned()
    };
    let side_tree = side();
    assert_eq!(side_tree, git_tree_at(&sandbox, &linked));
    assert_ne!(side_tree, main_tree);
    assert_eq!(cache_files(&sandbox).len(), 2, "one cache per index");
    assert_eq!(snapshot_is_gits(&sandbox), main_tree);
    assert_eq!(side(), side_tree);
    write(
        &linked,
        "b/three.txt",
        "three on side
",
    );
    assert_eq!(side(), git_tree_at(&sandbox, &linked));
}

#[test]
fn an_unmerged_index_is_refused_even_with_a_cache() {
    let sandbox = three_files();
    let root = sandbox.root.clone();
    sandbox.git(["checkout", "-q", "-b", "theirs"]);
    write(&root, "a/one.txt", "one, theirs\n");
    sandbox.git(["commit", "-q", "-a", "-m", "theirs"]);
    sandbox.git(["checkout", "-q", "main"]);
    write(&root, "a/one.txt", "one, ours\n");
    sandbox.git(["commit", "-q", "-a", "-m", "ours"]);
    write(&root, "b/three.txt", "three, modified\n");
    settle();
    snapshot_is_gits(&sandbox);
    // The merge leaves b/three.txt modified: the cache's entry for it is used, and the conflict
    // is still refused.
    let merge = sandbox
        .command("git", &root)
        .args(["merge", "-q", "theirs"])
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .output()
        .expect("git runs");
    assert!(!merge.status.success(), "the merge conflicts");
    let index = std::fs::read(root.join(".git/index")).expect("the index exists");
    let reason = sandbox.hpp(["snapshot"]).refused();
    assert!(
        reason.contains("a/one.txt") && reason.contains("unmerged"),
        "{reason}"
    );
    assert!(
        std::fs::read(root.join(".git/index")).expect("the index exists") == index,
        "a refused snapshot leaves the index alone"
    );
}

/// A workspace whose shapes changed under the index: a file become a directory, a directory
/// become a file, a directory reached through a symbolic link, a whole tracked subtree gone, an
/// ignored directory holding a force-added file beside ignored and negated ones, nested
/// repositories (a real one, and a directory whose `.git` is not one), a fifo, intent-to-add,
/// and a submodule whose checkout became a file.
fn reshaped_workspace() -> Sandbox {
    let sandbox = Sandbox::repo();
    let root = sandbox.root.clone();
    write(&root, "was-file", "a file\n");
    write(&root, "was-dir/one.txt", "one\n");
    write(&root, "linked/two.txt", "two\n");
    write(&root, "keep/x.txt", "kept\n");
    write(&root, "keep/deep/gone/y.txt", "gone\n");
    write(&root, "keep/deep/gone/z/w.txt", "gone too\n");
    write(&root, "keep/deep/stays.txt", "stays\n");
    write(&root, ".gitignore", "build/\n*.o\n");
    write(&root, "build/forced.txt", "force-added\n");
    write(&root, "build/.gitignore", "!wanted.o\n");
    sandbox.git(["add", "."]);
    sandbox.git(["add", "-f", "build/forced.txt", "build/.gitignore"]);
    add_submodule(&sandbox, "sub");
    sandbox.git(["commit", "-q", "-m", "shapes"]);

    std::fs::remove_file(root.join("was-file")).expect("the file exists");
    write(&root, "was-file/inside.txt", "now a directory\n");
    std::fs::remove_dir_all(root.join("was-dir")).expect("the directory exists");
    write(&root, "was-dir", "now a file\n");
    std::fs::rename(root.join("linked"), root.join("real")).expect("the directory exists");
    symlink("real", root.join("linked")).expect("symlinks can be made");
    std::fs::remove_dir_all(root.join("keep/deep/gone")).expect("the directory exists");
    write(&root, "build/forced.txt", "force-added, modified\n");
    write(&root, "build/new.txt", "ignored with its directory\n");
    write(
        &root,
        "build/wanted.o",
        "a negation inside an ignored directory\n",
    );
    write(&root, "top.o", "ignored\n");
    write(&root, "nested/lib.txt", "a nested repository\n");
    sandbox.git_in(&root.join("nested"), &["init", "-q", "-b", "main"]);
    sandbox.git_in(&root.join("nested"), &["add", "lib.txt"]);
    sandbox.git_in(&root.join("nested"), &["commit", "-q", "-m", "nested"]);
    write(&root, "fake/.git/junk", "not a repository\n");
    write(&root, "fake/real.txt", "beside a .git that is not one\n");
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(fifo.success(), "mkfifo makes a fifo");
    write(&root, "later.txt", "intent to add\n");
    sandbox.git(["add", "-N", "later.txt"]);
    sandbox.git([
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "deinit",
        "-q",
        "-f",
        "sub",
    ]);
    std::fs::remove_dir(root.join("sub")).expect("the deinitialised checkout is empty");
    write(&root, "sub", "a file where the submodule was\n");
    sandbox
}

#[test]
fn a_reshaped_workspace_snapshots_as_git_add_all_does() {
    let sandbox = reshaped_workspace();
    // Each shape is really there (otherwise equality proves little).
    let (expected, listed) = snapshot_is_gits_and_names(&sandbox);
    assert_names(
        &listed,
        &[
            "was-file/inside.txt",
            "was-dir",
            "linked",
            "real/two.txt",
            "keep/x.txt",
            "keep/deep/stays.txt",
            "build/forced.txt",
            "build/.gitignore",
            "nested",
            "fake/real.txt",
            "later.txt",
            "sub",
        ],
        &[
            "was-dir/one.txt",
            "linked/two.txt",
            "keep/deep/gone/y.txt",
            "keep/deep/gone/z/w.txt",
            "build/new.txt",
            "build/wanted.o",
            "top.o",
            "pipe",
            "fake/.git/junk",
        ],
    );
    let entry = |path: &str| sandbox.git(["ls-tree", &expected, "--", path]);
    assert!(
        entry("nested").starts_with("160000 commit"),
        "{}",
        entry("nested")
    );
    assert!(
        entry("linked").starts_with("120000 blob"),
        "{}",
        entry("linked")
    );
    assert!(entry("sub").starts_with("100644 blob"), "{}", entry("sub"));
}

#[test]
fn a_reshaped_workspace_snapshots_the_same_through_the_cache() {
    let sandbox = reshaped_workspace();
    let first = hpp_tree(&sandbox);
    settle();
    assert_eq!(hpp_tree(&sandbox), first);
    write(
        &sandbox.root,
        "keep/deep/stays.txt",
        "changed after the cache\n",
    );
    write(
        &sandbox.root,
        "was-file/second.txt",
        "a second untracked file\n",
    );
    let changed = hpp_tree(&sandbox);
    assert_ne!(changed, first, "the changes are seen through the cache");
    assert_eq!(changed, git_tree(&sandbox));
}

#[test]
fn on_a_name_folding_file_system_the_snapshot_is_still_gits() {
    // core.ignoreCase hands the walk to gix, which folds names as git does there.
    let sandbox = reshaped_workspace();
    sandbox.git(["config", "core.ignoreCase", "true"]);
    assert_eq!(hpp_tree(&sandbox), git_tree(&sandbox));
}

#[test]
fn control_a_file_behind_a_symlinked_directory_is_not_the_tracked_file() {
    // Same names, same bytes: only the leading symbolic link differs, and git stores the link.
    let sandbox = Sandbox::repo();
    write(&sandbox.root, "linked/two.txt", "two\n");
    sandbox.git(["add", "."]);
    sandbox.git(["commit", "-q", "-m", "dir"]);
    let before = hpp_tree(&sandbox);
    assert_eq!(before, git_tree(&sandbox));
    std::fs::rename(sandbox.root.join("linked"), sandbox.root.join("real"))
        .expect("the directory exists");
    symlink("real", sandbox.root.join("linked")).expect("symlinks can be made");
    let after = hpp_tree(&sandbox);
    assert_ne!(
        after, before,
        "the tracked file read through a link would keep the tree"
    );
    assert_eq!(after, git_tree(&sandbox));
}

#[test]
fn a_workspace_walked_on_several_threads_snapshots_as_git_add_all_does() {
    // 1,600 tracked files: the walk splits them over three threads, so directories (and a
    // deleted one) straddle the split.
    let sandbox = Sandbox::repo();
    let root = sandbox.root.clone();
    for d in 0..40 {
        for f in 0..40 {
            write(&root, format!("d{d:02}/f{f:02}.txt"), &format!("{d} {f}\n"));
        }
    }
    sandbox.git(["add", "."]);
    sandbox.git(["commit", "-q", "-m", "many files"]);
    let before = hpp_tree(&sandbox);
    assert_eq!(before, git_tree(&sandbox));
    for d in (0..40).step_by(3) {
        write(&root, format!("d{d:02}/f07.txt"), "changed\n");
        write(&root, format!("d{d:02}/new.txt"), "untracked\n");
    }
    for gone in ["d13", "d26", "d27"] {
        std::fs::remove_dir_all(root.join(gone)).expect("the directory exists");
    }
    let after = hpp_tree(&sandbox);
    assert_ne!(after, before, "the changes are seen");
    assert_eq!(after, git_tree(&sandbox));
}
