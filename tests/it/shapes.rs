//! Repositories shaped like real ones, at the limits laptops run with (issue 60): 600 and 2,000
//! sibling directories (a package index, a types or fonts collection), 250 levels deep, a
//! mid-size mixed tree like github/linguist's, and an untracked file far bigger than any
//! buffer. Open descriptors grow with the depth of a tree, never its width, so the README's
//! first day runs at `ulimit -n 64` (set on the child, so the test is deterministic), as
//! `git status` does; memory stays bounded by a constant whatever the largest file; every
//! snapshot is the tree `git add -A && git write-tree` gives.

use std::path::Path;

use crate::harness::{Run, Sandbox};
use crate::own_repo;

/// Writes `dirs` sibling directories `pkg-<i>/` under `root`, each with `files` small files,
/// and beside them a few untracked ones (new directories among them).
fn wide(root: &Path, dirs: usize, files: usize) {
    for d in 0..dirs {
        let dir = root.join(format!("pkg-{d:04}"));
        std::fs::create_dir_all(&dir).expect("writable");
        for f in 0..files {
            std::fs::write(dir.join(format!("f{f}.txt")), format!("{d} {f}\n")).expect("writable");
        }
    }
}

/// A chain `levels` directories deep (`l0/l1/...`), a file at each level.
fn deep(root: &Path, levels: usize) {
    let mut dir = root.to_path_buf();
    for level in 0..levels {
        dir.push(format!("l{level}"));
        std::fs::create_dir_all(&dir).expect("writable");
        std::fs::write(dir.join("f.txt"), format!("{level}\n")).expect("writable");
    }
}

/// About 3,500 files in about 1,000 directories, the shape of github/linguist: a `samples/`
/// directory of 540 languages side by side with a few files each, a `lib/` tree four levels
/// deep, and a flat `test/` directory of 400 files.
fn mixed(root: &Path) {
    for lang in 0..540 {
        let dir = root.join(format!("samples/Lang{lang}"));
        std::fs::create_dir_all(&dir).expect("writable");
        for f in 0..(1 + lang % 7) {
            std::fs::write(dir.join(format!("sample{f}.ext")), format!("{lang}/{f}\n"))
                .expect("writable");
        }
    }
    for a in 0..8 {
        for b in 0..8 {
            for c in 0..6 {
                let dir = root.join(format!("lib/a{a}/b{b}/c{c}"));
                std::fs::create_dir_all(&dir).expect("writable");
                for f in 0..3 {
                    std::fs::write(dir.join(format!("m{f}.rb")), format!("{a}{b}{c}{f}\n"))
                        .expect("writable");
                }
            }
        }
    }
    std::fs::create_dir_all(root.join("test")).expect("writable");
    for f in 0..400 {
        std::fs::write(root.join(format!("test/t{f}.rb")), format!("{f}\n")).expect("writable");
    }
}

/// Commits everything under the sandbox's worktree, then changes it the way work does: one
/// tracked file modified, one deleted, untracked files in a new directory and an old one.
fn commit_and_work(sandbox: &Sandbox, changed: &str, deleted: &str, old_dir: &str) {
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "The tree"]);
    std::fs::write(sandbox.root.join(changed), "changed\n").expect("writable");
    std::fs::remove_file(sandbox.root.join(deleted)).expect("removable");
    std::fs::create_dir_all(sandbox.root.join("new/inner")).expect("writable");
    std::fs::write(sandbox.root.join("new/inner/added.txt"), "new\n").expect("writable");
    std::fs::write(sandbox.root.join(old_dir).join("untracked.txt"), "u\n").expect("writable");
}

/// Runs `script` with bash in the worktree, its descriptor limit (soft and hard) set first.
fn at_limit(sandbox: &Sandbox, limit: u32, script: &str) -> Run {
    let out = sandbox
        .command("bash", &sandbox.root)
        .args([
            "--noprofile",
            "--norc",
            "-c",
            &format!("ulimit -n {limit} && {script}"),
        ])
        .output()
        .expect("bash runs");
    Run::from_output(&out)
}

/// Asserts that `git hpp snapshot` at `ulimit -n 64` gives git's tree, and `git status` works
/// at the same limit.
fn snapshots_at_64_as_git_adds(sandbox: &Sandbox) {
    let git_status = at_limit(sandbox, 64, "git status --porcelain >/dev/null");
    assert_eq!(git_status.code, 0, "git itself works at 64: {git_status}");
    let ours = at_limit(sandbox, 64, "git hpp snapshot").ok();
    assert_eq!(ours.trim(), crate::snapshot::git_tree(sandbox));
}

#[test]
fn two_thousand_sibling_directories_snapshot_at_ulimit_64_as_git_adds_them() {
    let sandbox = Sandbox::repo();
    wide(&sandbox.root, 2_000, 2);
    commit_and_work(&sandbox, "pkg-0007/f0.txt", "pkg-1999/f1.txt", "pkg-1000");
    snapshots_at_64_as_git_adds(&sandbox);
}

#[test]
fn a_tree_250_levels_deep_snapshots_at_ulimit_64_as_git_adds_it() {
    let sandbox = Sandbox::repo();
    deep(&sandbox.root, 250);
    let deepest = (0..250)
        .map(|l| format!("l{l}"))
        .collect::<Vec<_>>()
        .join("/");
    let middle = (0..120)
        .map(|l| format!("l{l}"))
        .collect::<Vec<_>>()
        .join("/");
    commit_and_work(
        &sandbox,
        &format!("{deepest}/f.txt"),
        &format!("{middle}/f.txt"),
        &deepest,
    );
    snapshots_at_64_as_git_adds(&sandbox);
}

#[test]
fn a_mid_size_mixed_tree_snapshots_at_ulimit_64_as_git_adds_it() {
    let sandbox = Sandbox::repo();
    mixed(&sandbox.root);
    let files = sandbox.git(["ls-files", "--others"]).lines().count();
    assert!((3_300..3_800).contains(&files), "{files} files");
    commit_and_work(
        &sandbox,
        "lib/a3/b4/c5/m1.rb",
        "samples/Lang300/sample0.ext",
        "samples/Lang12",
    );
    snapshots_at_64_as_git_adds(&sandbox);
}

/// The README's first day (tests/it/own_repo.rs runs it as written) in a repository of `dirs`
/// sibling directories, every line at `ulimit -n 64`: `status`, `snapshot`, `event append`,
/// `evidence run` and `attest create` among them, and the push, the clone and the fetch.
fn first_day_at_64(dirs: usize) {
    let sandbox = own_repo::own_repository();
    wide(&sandbox.root, dirs, 2);
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "The packages"]);
    let script = format!(
        "ulimit -n 64\ngit hpp snapshot\ngit hpp status\n{}",
        own_repo::block()
    );
    let done = own_repo::run(&sandbox, &script);
    assert_eq!(done.code, 0, "{done}");
    for needle in [
        "+ git hpp snapshot",
        "+ git hpp evidence run",
        "+ git hpp attest create",
        "+ git hpp event append --type verified",
        "+ git hpp verify HEAD",
    ] {
        assert!(
            done.stderr.contains(needle),
            "{needle} did not run:\n{done}"
        );
    }
    assert!(!done.stderr.contains("too many open files"), "{done}");
}

#[test]
fn the_first_day_runs_at_ulimit_64_beside_2000_sibling_directories() {
    first_day_at_64(2_000);
}

#[test]
fn the_first_day_runs_at_ulimit_64_beside_600_sibling_directories() {
    first_day_at_64(600);
}

#[test]
fn control_at_a_limit_too_low_for_anything_the_refusal_names_the_limit_and_writes_nothing() {
    let sandbox = Sandbox::repo();
    wide(&sandbox.root, 50, 2);
    commit_and_work(&sandbox, "pkg-0007/f0.txt", "pkg-0049/f1.txt", "pkg-0010");
    let before = sandbox.hpp_refs();
    for script in [
        "git hpp snapshot",
        "git hpp event append --type work_started --work ITEM-1 --maker agent-a",
    ] {
        // bash and git themselves start at 6; git-hpp's walk does not.
        let refused = at_limit(&sandbox, 6, script);
        let reason = refused.refused();
        assert!(
            reason.contains("too many open files (the limit is 6, see `ulimit -n`)"),
            "{script}: {reason}"
        );
        assert!(!reason.contains("internal error"), "{reason}");
    }
    assert_eq!(sandbox.hpp_refs(), before, "nothing was written");
}

/// Writes `mib` MiB of bytes that do not compress to nothing (a 64 KiB pseudo-random block,
/// repeated) to `path`, a piece at a time.
fn big_file(path: &Path, mib: usize) {
    use std::io::Write as _;
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let block: Vec<u8> = (0..64 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("writable"));
    for _ in 0..mib * 16 {
        file.write_all(&block).expect("writable");
    }
    file.flush().expect("writable");
}

/// `git hpp snapshot` with its data segment (the heap) limited to `mib` MiB.
fn snapshot_within(sandbox: &Sandbox, mib: usize) -> Run {
    at_limit(
        sandbox,
        1024,
        &format!("ulimit -d {} && exec git hpp snapshot", mib * 1024),
    )
}

#[test]
fn an_untracked_file_bigger_than_the_heap_allowed_is_snapshotted_as_git_adds_it() {
    let sandbox = Sandbox::repo();
    big_file(&sandbox.root.join("model.bin"), 96);
    // 96 MiB of file through a 48 MiB heap: only streamed can it fit.
    let tree = snapshot_within(&sandbox, 48).ok();
    assert_eq!(tree.trim(), crate::snapshot::git_tree(&sandbox));
    // Again, with the blob already stored: hashed in pieces, not written twice.
    std::fs::remove_dir_all(sandbox.root.join(".git/hpp-cache")).expect("the cache is there");
    let again = snapshot_within(&sandbox, 48).ok();
    assert_eq!(again, tree);
}

#[test]
fn control_a_file_a_filter_converts_is_read_whole_and_does_not_fit_the_same_heap() {
    // git reads a file whole when a filter converts it, and so do we: the heap limit bites,
    // which shows it would bite a snapshot that read the plain file whole too.
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join(".gitattributes"), "*.bin text eol=crlf\n").expect("writable");
    sandbox.git(["add", ".gitattributes"]);
    sandbox.git(["commit", "-q", "-m", "Attributes"]);
    big_file(&sandbox.root.join("model.bin"), 96);
    let failed = snapshot_within(&sandbox, 48);
    assert_ne!(failed.code, 0, "{failed}");
    assert!(failed.stdout.is_empty(), "{failed}");
}

/// A token of a GitHub token's shape, built from filler so no test holds a real one.
fn github_token() -> String {
    let fill: String = "aB3dE5gH7jK9mN1pQ".chars().cycle().take(36).collect();
    format!("GITHUB_TOKEN=ghp_{fill}")
}

/// Writes a text log of about `mib` MiB to `path`, one numbered line after another, then
/// `last` as its last line.
fn big_log(path: &Path, mib: usize, last: &str) {
    use std::io::Write as _;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("writable"));
    let mut written = 0;
    let mut n = 0u64;
    while written < mib << 20 {
        let line = format!(
            "{n:>12} step finished in {} ms, nothing to report\n",
            n % 997
        );
        file.write_all(line.as_bytes()).expect("writable");
        written += line.len();
        n += 1;
    }
    writeln!(file, "{last}").expect("writable");
    file.flush().expect("writable");
}

/// `git hpp attest create` of the workspace, its heap limited to `mib` MiB.
fn attest_within(sandbox: &Sandbox, mib: usize, session: &str) -> Run {
    at_limit(
        sandbox,
        1024,
        &format!(
            "ulimit -d {} && exec git hpp {}",
            mib * 1024,
            crate::harness::attest_args(session, "approved").join(" ")
        ),
    )
}

fn with_spec() -> Sandbox {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\nThe tool logs.\n").expect("writable");
    sandbox.git(["add", "SPEC.md"]);
    sandbox.git(["commit", "-q", "-m", "The spec"]);
    sandbox
}

#[test]
fn control_a_secret_on_the_last_line_of_a_40_mib_untracked_log_is_found_within_a_48_mib_heap() {
    // Read whole, the log would cost its compressed and its inflated bytes at once, past the
    // heap: read in pieces, the secret at its very end is still found, and refused.
    let sandbox = with_spec();
    big_log(&sandbox.root.join("build.log"), 40, &github_token());
    let before = sandbox.hpp_refs();
    let reason = attest_within(&sandbox, 48, "review:1").refused();
    assert!(
        reason.contains("build.log looks like it holds a GitHub token"),
        "{reason}"
    );
    assert_eq!(sandbox.hpp_refs(), before, "nothing was written");
}

#[test]
fn a_secret_the_branch_already_holds_in_a_40_mib_log_is_not_refused_when_the_log_grows() {
    let sandbox = with_spec();
    let log = sandbox.root.join("build.log");
    big_log(&log, 40, &github_token());
    sandbox.git(["add", "build.log"]);
    sandbox.git([
        "commit",
        "-q",
        "-m",
        "The log, secret and all, is history already",
    ]);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"one more line\n"))
        .expect("appendable");
    // Both the branch's log and the workspace's are read in pieces, compared unit by unit.
    let run = attest_within(&sandbox, 48, "review:2");
    assert_eq!(run.code, 0, "{run}");
    assert!(
        sandbox.hpp_refs().contains("refs/hpp/attestations/"),
        "{run}"
    );
}

#[test]
fn a_96_mib_artifact_is_named_by_its_size_and_hashes_within_a_48_mib_heap() {
    let sandbox = Sandbox::repo();
    let make = "mkdir -p out && head -c 100663296 /dev/zero | tr '\\0' a > out/model.bin";
    let run = at_limit(
        &sandbox,
        1024,
        &format!(
            "ulimit -d 49152 && exec git hpp evidence run --id big --artifact 'out/*.bin' --json -- sh -c \"{make}\""
        ),
    );
    assert_eq!(run.code, 0, "{run}");
    let printed: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let file = &printed["artifacts"][0]["files"][0];
    assert_eq!(file["path"], "out/model.bin");
    assert_eq!(file["size"], 100_663_296);
    assert_eq!(file["blob"], sandbox.git(["hash-object", "out/model.bin"]));
    let record = printed["record_ref"]
        .as_str()
        .expect("the bundle's ref")
        .to_owned();
    let verified = at_limit(
        &sandbox,
        1024,
        &format!("ulimit -d 49152 && exec git hpp evidence verify {record}"),
    );
    assert_eq!(verified.code, 0, "{verified}");
}
