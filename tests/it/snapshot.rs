//! `git hpp snapshot`: the tree `git add -A && git write-tree` writes with a copy of the index,
//! computed without touching the index or HEAD.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use crate::harness::Sandbox;

/// Returns the tree git writes for the workspace with a throwaway copy of the index:
/// `cp .git/index $T; GIT_INDEX_FILE=$T git add -A; GIT_INDEX_FILE=$T git write-tree`.
fn git_tree(sandbox: &Sandbox) -> String {
    let copy = tempfile::tempdir().expect("a temporary directory can be created");
    let index = copy.path().join("index");
    let real = sandbox.root.join(".git/index");
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
            .command("git", &sandbox.root)
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

/// Builds the rich workspace: ignore rules at every level, modes, symlinks, odd names, a
/// deleted, a modified, a staged and a force-added tracked file, and a submodule whose HEAD moved.
fn rich_workspace() -> Sandbox {
    let sandbox = Sandbox::repo();
    let root = sandbox.root.clone();

    // A submodule, committed, whose HEAD then moves.
    let upstream = sandbox.path("upstream");
    std::fs::create_dir_all(&upstream).expect("the sandbox is writable");
    sandbox.git_in(&upstream, &["init", "-q", "-b", "main"]);
    write(&upstream, "lib.txt", "library v1\n");
    sandbox.git_in(&upstream, &["add", "lib.txt"]);
    sandbox.git_in(&upstream, &["commit", "-q", "-m", "lib v1"]);
    let upstream_str = upstream.to_str().expect("sandbox paths are UTF-8");
    sandbox.git_in(
        &root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream_str,
            "sub",
        ],
    );

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
    for ignored in [
        "debug.log",
        "a/other.log",
        "a/secret.txt",
        "a/b/data.bin",
        "a/b/deep/x.tmp",
        "build/out.txt",
        "excluded-by-info.txt",
        "scratch.tmp",
    ] {
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
    let expected = git_tree(&sandbox);
    assert_eq!(hpp_tree(&sandbox), expected);

    // The workspace really exercises each rule (otherwise equality proves little).
    let listed = names(&sandbox, &expected);
    for present in [
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
    ] {
        assert!(
            listed.iter().any(|n| n == present),
            "{present} in {listed:?}"
        );
    }
    for absent in [
        "gone.txt",
        "debug.log",
        "a/other.log",
        "a/secret.txt",
        "a/b/data.bin",
        "a/b/deep/x.tmp",
        "build/out.txt",
        "excluded-by-info.txt",
        "scratch.tmp",
    ] {
        assert!(
            !listed.iter().any(|n| n == absent),
            "{absent} in {listed:?}"
        );
    }
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
    let upstream = sandbox.path("upstream");
    sandbox.git([
        "init",
        "-q",
        "-b",
        "main",
        upstream.to_str().expect("utf-8"),
    ]);
    write(&upstream, "lib.txt", "lib\n");
    sandbox.git_in(&upstream, &["add", "lib.txt"]);
    sandbox.git_in(&upstream, &["commit", "-q", "-m", "lib"]);
    sandbox.git([
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        upstream.to_str().expect("utf-8"),
        "sub",
    ]);
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
