//! Many machines, one history: clones of one bare remote writing records between fetches.
//! A plain `git pull` never fails on the records (they are staged under `refs/hpp-remote/`);
//! logs whose entries commute merge themselves on `git hpp fetch`; a diverged loop is settled
//! by `git hpp event reconcile` with both sides kept reachable; Hop's accepted chain re-lands
//! the other side's landings. The convergence test runs three clones in a seeded random order,
//! one round of it through `git daemon` on 127.0.0.1.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{GitDaemon, HOP, Run, Sandbox};

const LOOP_REF: &str = "refs/hpp/loops/feature";

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// A bare remote with the sandbox's `main`, and `n` clones of it with `remote setup --apply`.
struct Machines {
    sandbox: Sandbox,
    remote: PathBuf,
    clones: Vec<PathBuf>,
}

impl Machines {
    fn new(n: usize) -> Self {
        let sandbox = Sandbox::repo();
        let remote = sandbox.path("remote.git");
        sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
        sandbox.git(["push", "-q", text(&remote), "main"]);
        let clones = (0..n)
            .map(|i| {
                let dir = sandbox.path(&format!("m{i}"));
                sandbox.git(["clone", "-q", text(&remote), text(&dir)]);
                sandbox.hpp_in(&dir, &["remote", "setup", "--apply"]).ok();
                dir
            })
            .collect();
        Machines {
            sandbox,
            remote,
            clones,
        }
    }

    fn hpp(&self, m: usize, args: &[&str]) -> Run {
        self.sandbox.hpp_in(&self.clones[m], args)
    }

    fn git(&self, m: usize, args: &[&str]) -> String {
        self.sandbox.git_in(&self.clones[m], args)
    }

    /// `git hpp fetch` then `git hpp push` on machine `m`, whatever they report.
    fn sync(&self, m: usize) {
        let fetched = self.hpp(m, &["fetch"]);
        assert!(matches!(fetched.code, 0 | 1), "fetch on m{m}:\n{fetched}");
        let pushed = self.hpp(m, &["push"]);
        assert!(matches!(pushed.code, 0 | 2), "push on m{m}:\n{pushed}");
    }

    /// Each machine's `refs/hpp/` as `<id> <ref>` lines.
    fn records(&self, m: usize) -> String {
        self.git(
            m,
            &[
                "for-each-ref",
                "--format=%(objectname) %(refname)",
                "refs/hpp/",
            ],
        )
    }

    fn append(&self, m: usize, who: &str) {
        self.hpp(
            m,
            &[
                "event",
                "append",
                "--type",
                "work_started",
                "--loop",
                "feature",
                "--data",
                &format!(r#"{{"who":"{who}","work":"W","maker":"agent-{who}"}}"#),
            ],
        )
        .ok();
    }

    /// Makes `refs/hpp/loops/feature` diverge: m0 and m1 each start it; m1 publishes first.
    /// Returns (m0's tip, m1's tip).
    fn diverged_loop(&self) -> (String, String) {
        self.append(0, "zero");
        self.append(1, "one");
        self.hpp(1, &["push"]).ok();
        (
            self.git(0, &["rev-parse", LOOP_REF]),
            self.git(1, &["rev-parse", LOOP_REF]),
        )
    }
}

/// The payloads of every entry commit (no merges) of `log` on machine `m`, file `file`.
fn entries(machines: &Machines, m: usize, log: &str, file: &str) -> Vec<Value> {
    let listed = machines.git(m, &["rev-list", "--no-merges", log]);
    listed
        .lines()
        .map(|commit| {
            let body = machines.git(m, &["show", &format!("{commit}:{file}")]);
            serde_json::from_str(&body).expect("an entry is JSON")
        })
        .collect()
}

fn is_ancestor(machines: &Machines, m: usize, ancestor: &str, descendant: &str) -> bool {
    machines
        .sandbox
        .command("git", &machines.clones[m])
        .args(["merge-base", "--is-ancestor", ancestor, descendant])
        .status()
        .expect("git runs")
        .success()
}

/// Every file under `dir` (relative), recursively; none when it does not exist.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.map(|e| e.expect("a readable entry")) {
            if entry.file_type().expect("a file type").is_dir() {
                stack.push(entry.path());
            } else {
                found.push(entry.path().display().to_string());
            }
        }
    }
    found
}

#[test]
fn records_new_to_a_clone_are_taken_in_as_packed_refs_that_git_reads_and_appends_build_on() {
    let machines = Machines::new(2);
    for work in ["a", "b", "c"] {
        machines
            .sandbox
            .start_loop_in(&machines.clones[1], work)
            .ok();
    }
    machines.hpp(1, &["push"]).ok();
    let fetched = machines.hpp(0, &["fetch"]);
    assert_eq!(fetched.code, 0, "{fetched}");
    for work in ["a", "b", "c"] {
        let name = format!("refs/hpp/loops/{work}");
        assert_eq!(
            machines.git(0, &["rev-parse", &name]),
            machines.git(1, &["rev-parse", &name]),
            "{name} was taken in"
        );
    }
    let git_dir = machines.clones[0].join(".git");
    assert_eq!(
        files_under(&git_dir.join("refs/hpp")),
        Vec::<String>::new(),
        "no loose ref and no lock file was left for a record"
    );
    let packed = std::fs::read_to_string(git_dir.join("packed-refs")).expect("packed-refs");
    assert!(packed.contains(" refs/hpp/loops/b\n"), "{packed}");
    // git reads what was written, and the next append moves the packed ref forward.
    machines.git(0, &["fsck", "--connectivity-only", "--no-dangling"]);
    let appended = machines.hpp(
        0,
        &[
            "evidence",
            "run",
            "--id",
            "check",
            "--loop",
            "b",
            "--record-event",
            "--",
            "true",
        ],
    );
    assert_eq!(appended.code, 0, "{appended}");
    assert_eq!(
        machines.git(0, &["rev-parse", "refs/hpp/loops/b~1"]),
        machines.git(1, &["rev-parse", "refs/hpp/loops/b"]),
        "the append built on the fetched record"
    );
}

/// A git on this machine older than 2.41, whose `git fetch` has no `--porcelain`: Debian
/// 12's, beside the newer one CI puts first on PATH. `None` when there is none.
fn git_without_fetch_porcelain() -> Option<PathBuf> {
    ["/usr/bin/git", "/bin/git"].into_iter().find_map(|path| {
        let out = std::process::Command::new(path)
            .arg("--version")
            .output()
            .ok()?;
        let version = String::from_utf8_lossy(&out.stdout);
        let mut numbers = version
            .trim()
            .strip_prefix("git version ")?
            .split('.')
            .map(|n| n.parse::<u32>().unwrap_or(0));
        let (major, minor) = (numbers.next()?, numbers.next()?);
        ((major, minor) < (2, 41)).then(|| PathBuf::from(path))
    })
}

#[test]
fn a_git_whose_fetch_has_no_porcelain_report_stages_and_takes_in_the_same_records() {
    let Some(old_git) = git_without_fetch_porcelain() else {
        eprintln!("skipped: no git older than 2.41 on this machine to fetch with");
        return;
    };
    let machines = Machines::new(2);
    for work in ["a", "b"] {
        machines
            .sandbox
            .start_loop_in(&machines.clones[1], work)
            .ok();
    }
    machines.hpp(1, &["push"]).ok();
    // That git, and nothing else named git, comes first on PATH.
    let shim = machines.sandbox.path("old-git");
    std::fs::create_dir_all(&shim).expect("a directory for the old git");
    std::os::unix::fs::symlink(&old_git, shim.join("git")).expect("a link to the old git");
    let mut path = vec![shim];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").expect("PATH is set"),
    ));
    let mut fetch = machines
        .sandbox
        .hpp_command(&machines.clones[0], &["fetch", "--json"]);
    fetch.env("PATH", std::env::join_paths(path).expect("PATH joins"));
    let fetched = Run::from_output(&fetch.output().expect("git-hpp runs")).json(0);
    let updated: Vec<&str> = fetched["updated"]
        .as_array()
        .expect("updated is a list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        updated,
        ["refs/hpp/loops/a", "refs/hpp/loops/b"],
        "{fetched}"
    );
    for work in ["a", "b"] {
        let name = format!("refs/hpp/loops/{work}");
        assert_eq!(
            machines.git(0, &["rev-parse", &name]),
            machines.git(1, &["rev-parse", &name])
        );
    }
}

#[test]
fn control_a_fetch_of_nothing_new_reports_every_staged_record_up_to_date() {
    let machines = Machines::new(2);
    machines
        .sandbox
        .start_loop_in(&machines.clones[1], "a")
        .ok();
    machines.hpp(1, &["push"]).ok();
    let first = machines.hpp(0, &["fetch", "--json"]).json(0);
    assert_eq!(first["updated"], serde_json::json!(["refs/hpp/loops/a"]));
    // A second fetch moves no staging ref: git reports it unchanged, and it is still read.
    let again = machines.hpp(0, &["fetch", "--json"]).json(0);
    assert_eq!(again["updated"], serde_json::json!([]), "{again}");
    assert_eq!(again["up_to_date"], 1, "{again}");
}

#[test]
fn a_plain_git_pull_succeeds_with_a_diverged_loop_on_the_remote() {
    let machines = Machines::new(2);
    let (zero, one) = machines.diverged_loop();
    // m1 also moves main on, so the pull has something to bring.
    std::fs::write(machines.clones[1].join("NEWS"), "one\n").expect("writable");
    machines.git(1, &["add", "NEWS"]);
    machines.git(1, &["commit", "-q", "-m", "news"]);
    machines.git(1, &["push", "-q", "origin", "main"]);

    let pulled = machines
        .sandbox
        .command("git", &machines.clones[0])
        .args(["pull", "-q", "--ff-only"])
        .output()
        .expect("git runs");
    assert!(
        pulled.status.success(),
        "git pull failed:\n{}",
        Run::from_output(&pulled)
    );
    assert!(machines.clones[0].join("NEWS").exists(), "the pull merged");
    assert_eq!(
        machines.git(0, &["rev-parse", LOOP_REF]),
        zero,
        "the local loop is untouched"
    );
    assert_eq!(
        machines.git(0, &["rev-parse", "refs/hpp-remote/origin/loops/feature"]),
        one,
        "the remote's loop is staged"
    );
}

#[test]
fn control_the_old_refspec_breaks_a_plain_pull_and_remote_setup_replaces_it() {
    let machines = Machines::new(2);
    machines.diverged_loop();
    // What `remote setup` wrote before records were staged.
    machines.git(
        0,
        &[
            "config",
            "--add",
            "remote.origin.fetch",
            "refs/hpp/*:refs/hpp/*",
        ],
    );
    let pull = |m: &Machines| {
        m.sandbox
            .command("git", &m.clones[0])
            .args(["pull", "-q", "--ff-only"])
            .output()
            .expect("git runs")
    };
    let broken = pull(&machines);
    assert!(
        !broken.status.success(),
        "a diverged record fails a plain pull under the old refspec"
    );
    let setup = machines
        .hpp(0, &["remote", "setup", "--apply", "--json"])
        .json(0);
    assert_eq!(setup["steps"][0]["action"], "unset", "{setup}");
    assert_eq!(setup["steps"][0]["value"], "refs/hpp/*:refs/hpp/*");
    let fetch = machines.git(0, &["config", "--get-all", "remote.origin.fetch"]);
    assert!(
        !fetch.lines().any(|l| l == "refs/hpp/*:refs/hpp/*"),
        "{fetch}"
    );
    assert!(
        fetch
            .lines()
            .any(|l| l == "+refs/hpp/*:refs/hpp-remote/origin/*"),
        "{fetch}"
    );
    let fixed = pull(&machines);
    assert!(fixed.status.success(), "{}", Run::from_output(&fixed));
}

#[test]
fn a_diverged_loop_is_reported_and_reconcile_keeps_both_sides_reachable() {
    let machines = Machines::new(2);
    let (zero, one) = machines.diverged_loop();
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(1);
    assert_eq!(fetched["diverged"][0]["ref"], LOOP_REF, "{fetched}");
    let next = fetched["diverged"][0]["next"]
        .as_str()
        .expect("a next step");
    assert!(
        next.contains("git hpp event reconcile --loop feature --keep ours"),
        "{next}"
    );
    assert_eq!(machines.git(0, &["rev-parse", LOOP_REF]), zero);

    let done = machines
        .hpp(
            0,
            &[
                "event",
                "reconcile",
                "--loop",
                "feature",
                "--keep",
                "ours",
                "--json",
            ],
        )
        .json(0);
    let join = done["commit"].as_str().expect("a join").to_owned();
    assert_eq!(machines.git(0, &["rev-parse", LOOP_REF]), join);
    assert!(is_ancestor(&machines, 0, &zero, &join), "ours is reachable");
    assert!(
        is_ancestor(&machines, 0, &one, &join),
        "theirs is reachable"
    );
    let preserved = format!("refs/hpp/preserved/loops/feature/{one}");
    assert_eq!(machines.git(0, &["rev-parse", &preserved]), one);
    let record: Value =
        serde_json::from_str(&machines.git(0, &["show", &format!("{join}:reconcile.json")]))
            .expect("the join records the choice");
    assert_eq!(record["schema"], "hpp.loop-reconcile/v1");
    assert_eq!(record["keep"], "ours");
    assert_eq!(record["kept"], zero.as_str());
    assert_eq!(record["preserved"], one.as_str());

    // The loop is ours, intact, and takes the next event on the join.
    let verified = machines
        .hpp(0, &["event", "verify", "--loop", "feature", "--json"])
        .json(0);
    assert_eq!(verified["status"], "intact", "{verified}");
    assert_eq!(verified["events"], 1);
    let log = machines.hpp(0, &["event", "log", "--loop", "feature"]).ok();
    assert!(
        log.contains("zero") || log.contains("work_started"),
        "{log}"
    );
    let exported = machines
        .hpp(0, &["event", "export", "--loop", "feature"])
        .ok();
    assert_eq!(
        exported.lines().count(),
        1,
        "one event, the join is no event"
    );
    assert!(exported.contains("\"who\":\"zero\""), "{exported}");
    machines
        .hpp(
            0,
            &[
                "evidence",
                "run",
                "--id",
                "tests",
                "--loop",
                "feature",
                "--artifact",
                "out/*.txt",
                "--record-event",
                "--",
                "sh",
                "-c",
                "mkdir -p out; echo ok > out/r.txt",
            ],
        )
        .ok();
    let verified = machines
        .hpp(0, &["event", "verify", "--loop", "feature", "--json"])
        .json(0);
    assert_eq!(verified["status"], "intact", "{verified}");
    assert_eq!(verified["events"], 2, "the next event went on the join");

    // Forward on the remote too: a plain push, no force; the other machine fast-forwards.
    let tip = machines.git(0, &["rev-parse", LOOP_REF]);
    assert!(is_ancestor(&machines, 0, &join, &tip));
    machines.hpp(0, &["push"]).ok();
    let taken = machines.hpp(1, &["fetch", "--json"]).json(0);
    assert!(
        taken["updated"]
            .as_array()
            .expect("a list")
            .iter()
            .any(|r| r == LOOP_REF),
        "{taken}"
    );
    assert_eq!(machines.git(1, &["rev-parse", LOOP_REF]), tip);
    let on_one = machines
        .hpp(1, &["event", "verify", "--loop", "feature", "--json"])
        .json(0);
    assert_eq!(on_one["status"], "intact");
    machines.hpp(1, &["doctor"]).ok();
}

#[test]
fn reconcile_keeping_theirs_makes_the_remote_history_the_loop() {
    let machines = Machines::new(2);
    let (zero, one) = machines.diverged_loop();
    let fetched = machines.hpp(0, &["fetch"]).exit(1);
    assert!(
        fetched.stdout.contains("diverged: refs/hpp/loops/feature"),
        "{fetched}"
    );
    machines
        .hpp(
            0,
            &[
                "event",
                "reconcile",
                "--loop",
                "feature",
                "--keep",
                "theirs",
            ],
        )
        .ok();
    let exported = machines
        .hpp(0, &["event", "export", "--loop", "feature"])
        .ok();
    assert!(exported.contains("\"who\":\"one\""), "{exported}");
    let tip = machines.git(0, &["rev-parse", LOOP_REF]);
    assert!(is_ancestor(&machines, 0, &zero, &tip));
    assert!(is_ancestor(&machines, 0, &one, &tip));
    assert_eq!(
        machines.git(
            0,
            &[
                "rev-parse",
                &format!("refs/hpp/preserved/loops/feature/{zero}")
            ]
        ),
        zero
    );
}

#[test]
fn control_reconcile_refuses_a_loop_that_has_not_diverged() {
    let machines = Machines::new(2);
    machines.append(0, "zero");
    machines.hpp(0, &["push"]).ok();
    machines.hpp(0, &["fetch"]).ok();
    let before = machines.records(0);
    let refused = machines
        .hpp(
            0,
            &["event", "reconcile", "--loop", "feature", "--keep", "ours"],
        )
        .refused();
    assert_eq!(
        refused,
        "loop feature has not diverged from origin's: both sides are the same"
    );
    let unstaged = machines
        .hpp(
            1,
            &["event", "reconcile", "--loop", "feature", "--keep", "ours"],
        )
        .refused();
    assert_eq!(unstaged, "loop feature has no events here");
    machines.append(1, "one");
    let nothing = machines
        .hpp(
            1,
            &["event", "reconcile", "--loop", "feature", "--keep", "ours"],
        )
        .refused();
    assert_eq!(
        nothing,
        "nothing of loop feature is staged from origin: run `git hpp fetch origin` first"
    );
    assert_eq!(machines.records(0), before, "nothing written");
}

fn claim(machines: &Machines, m: usize, item: &str) -> Run {
    machines.hpp(
        m,
        &[
            "board",
            "claim",
            item,
            "--lane",
            &format!("lane-{m}"),
            "--model",
            "gpt-5",
        ],
    )
}

fn board_items(machines: &Machines, m: usize) -> Vec<String> {
    let status = machines.hpp(m, &["board", "status"]).json(0);
    let mut items: Vec<String> = status
        .as_array()
        .expect("a list")
        .iter()
        .map(|i| i["item_id"].as_str().expect("an item").to_owned())
        .collect();
    items.sort();
    items
}

/// Writes `n` board claims on machine `m`'s board with `git fast-import`, in the shape of the
/// claim `board claim` wrote last there (items `bulk-<i>`, one lane each); the `bad`th entry's
/// blob is not JSON. Returns the new tip.
fn bulk_claims(machines: &Machines, m: usize, n: usize, bad: Option<usize>) -> String {
    let template: Value =
        serde_json::from_str(&machines.git(m, &["show", "refs/hpp/board/log:events.json"]))
            .expect("a board write is JSON");
    let base = machines.git(m, &["rev-parse", "refs/hpp/board/log"]);
    let mut stream = String::new();
    for i in 0..n {
        let mut write = template.clone();
        write["events"][0]["item_id"] = Value::from(format!("bulk-{i:04}"));
        write["events"][0]["lane_id"] = Value::from(format!("bulk-lane-{i:04}"));
        let blob = if Some(i) == bad {
            "{not json".to_owned()
        } else {
            serde_json::to_string(&write).expect("JSON")
        };
        let message = format!("hpp board: bulk-{i:04} CLAIMED\n\nHpp-Writer: bulk-{i}\n");
        let seconds = 1_780_000_000 + i;
        stream.push_str(&format!(
            "commit refs/hpp/board/log\ncommitter Bulk <bulk@example.com> {seconds} +0000\ndata {}\n{message}",
            message.len()
        ));
        if i == 0 {
            stream.push_str(&format!("from {base}\n"));
        }
        stream.push_str(&format!(
            "deleteall\nM 100644 inline events.json\ndata {}\n{blob}\n",
            blob.len()
        ));
    }
    machines
        .sandbox
        .git_fed_in(&machines.clones[m], &["fast-import", "--quiet"], &stream);
    machines.git(m, &["rev-parse", "refs/hpp/board/log"])
}

#[test]
fn a_long_fetched_board_is_read_from_the_pack_git_wrote_and_every_entry_is_checked() {
    let machines = Machines::new(2);
    claim(&machines, 1, "first").ok();
    // More entries than are read one by one before the fetch's pack is decoded whole.
    let tip = bulk_claims(&machines, 1, 400, None);
    machines.sandbox.git_in(
        &machines.clones[1],
        &["push", "-q", "origin", "refs/hpp/board/log"],
    );
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(0);
    assert_eq!(
        fetched["updated"],
        serde_json::json!(["refs/hpp/board/log"]),
        "{fetched}"
    );
    assert_eq!(machines.git(0, &["rev-parse", "refs/hpp/board/log"]), tip);
    let items = board_items(&machines, 0);
    assert_eq!(items.len(), 401, "every entry read");
    assert!(items.contains(&"bulk-0399".to_owned()));
}

#[test]
fn control_a_long_fetched_board_with_one_entry_that_does_not_read_is_not_taken_in() {
    let machines = Machines::new(2);
    claim(&machines, 1, "first").ok();
    let first = machines.git(1, &["rev-parse", "refs/hpp/board/log"]);
    machines.hpp(1, &["push"]).ok();
    machines.hpp(0, &["fetch"]).ok();
    // The broken entry sits past the point where the fetch's pack is decoded whole.
    bulk_claims(&machines, 1, 400, Some(350));
    machines.sandbox.git_in(
        &machines.clones[1],
        &["push", "-q", "origin", "refs/hpp/board/log"],
    );
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(1);
    let diverged = &fetched["diverged"][0];
    assert_eq!(diverged["ref"], "refs/hpp/board/log", "{fetched}");
    assert!(
        diverged["reason"]
            .as_str()
            .is_some_and(|r| r.contains("does not read")),
        "{fetched}"
    );
    assert_eq!(
        machines.git(0, &["rev-parse", "refs/hpp/board/log"]),
        first,
        "the board did not move"
    );
}

#[test]
fn board_entries_written_on_two_machines_merge_once_and_both_reach_the_same_merge() {
    let machines = Machines::new(2);
    claim(&machines, 0, "A").ok();
    claim(&machines, 1, "B").ok();
    claim(&machines, 1, "C").ok();
    machines.hpp(1, &["push"]).ok();
    // m0 cannot push its board: the remote's moved on.
    let refused = machines.hpp(0, &["push"]).exit(2);
    assert!(
        refused.stdout.contains("Next: `git hpp fetch origin`"),
        "{refused}"
    );
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(0);
    assert_eq!(fetched["merged"][0], "refs/hpp/board/log", "{fetched}");
    assert_eq!(board_items(&machines, 0), ["A", "B", "C"]);
    let merge = machines.git(0, &["rev-parse", "refs/hpp/board/log"]);
    assert_eq!(
        machines
            .git(0, &["rev-list", "--parents", "-n1", &merge])
            .split(' ')
            .count(),
        3,
        "a merge commit of the two tips"
    );
    // m1 merges the same two tips on its own before m0 pushes: the same commit.
    let alone = machines.hpp(1, &["fetch"]);
    assert_eq!(alone.code, 0, "{alone}");
    machines.hpp(0, &["push"]).ok();
    machines.hpp(1, &["fetch"]).ok();
    assert_eq!(machines.git(1, &["rev-parse", "refs/hpp/board/log"]), merge);
    assert_eq!(board_items(&machines, 1), ["A", "B", "C"]);
    let events = entries(&machines, 1, "refs/hpp/board/log", "events.json");
    assert_eq!(events.len(), 3, "each write once");
    // The log goes on from the merge on either machine.
    claim(&machines, 1, "D").ok();
    machines.hpp(1, &["push"]).ok();
    machines.hpp(0, &["fetch"]).ok();
    assert_eq!(board_items(&machines, 0), ["A", "B", "C", "D"]);
    machines.hpp(0, &["doctor"]).ok();
}

#[test]
fn control_two_machines_declaring_one_competition_is_reported_not_merged() {
    let machines = Machines::new(2);
    claim(&machines, 0, "X").ok();
    claim(&machines, 1, "Y").ok();
    for m in [0, 1, 0, 1] {
        machines.sync(m);
    }
    let compete = |m: usize| {
        machines
            .hpp(
                m,
                &[
                    "board", "compete", "--task", "T", "--items", "X,Y", "--lane", "coord",
                    "--model", "gpt-5",
                ],
            )
            .ok();
    };
    compete(0);
    compete(1);
    machines.hpp(1, &["push"]).ok();
    let before = machines.git(0, &["rev-parse", "refs/hpp/board/log"]);
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(1);
    assert_eq!(fetched["diverged"][0]["ref"], "refs/hpp/board/log");
    let reason = fetched["diverged"][0]["reason"].as_str().expect("a reason");
    assert!(reason.contains("do not compose"), "{reason}");
    assert!(reason.contains("competition T"), "{reason}");
    assert_eq!(
        machines.git(0, &["rev-parse", "refs/hpp/board/log"]),
        before,
        "the local board is kept"
    );
    machines.hpp(0, &["board", "status"]).json(0);
}

#[test]
fn gotchas_and_handoffs_from_two_machines_are_all_kept() {
    let machines = Machines::new(2);
    for (m, task) in [(0, "build zero"), (1, "build one")] {
        machines
            .hpp(
                m,
                &[
                    "gotcha",
                    "record",
                    "--task",
                    task,
                    "--message",
                    "error: connection reset by peer",
                    "--at",
                    "2026-01-01T00:00:00Z",
                ],
            )
            .ok();
        machines
            .hpp(
                m,
                &[
                    "handoff",
                    "write",
                    "--summary",
                    &format!("from {task}"),
                    "--next",
                    "go on",
                    "--verify-first",
                    "true",
                ],
            )
            .ok();
    }
    machines.hpp(1, &["push"]).ok();
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(0);
    let merged: Vec<&str> = fetched["merged"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        merged,
        ["refs/hpp/gotchas/failures", "refs/hpp/handoffs/solo"],
        "{fetched}"
    );
    let failures = entries(&machines, 0, "refs/hpp/gotchas/failures", "failure.json");
    let mut tasks: Vec<&str> = failures
        .iter()
        .map(|f| f["task_key"].as_str().expect("a task"))
        .collect();
    tasks.sort_unstable();
    assert_eq!(tasks, ["build one", "build zero"]);
    let handoffs = entries(&machines, 0, "refs/hpp/handoffs/solo", "handoff.json");
    assert_eq!(handoffs.len(), 2);
    // The newest handoff is one of the two, and reading it works through the merge.
    let shown = machines.hpp(0, &["handoff", "show", "--json"]).json(0);
    let summary = shown["handoff"]["state"]["summary"]
        .as_str()
        .expect("a summary");
    assert!(summary.starts_with("from build"), "{summary}");
    machines.hpp(0, &["push"]).ok();
    machines.hpp(1, &["fetch"]).ok();
    assert_eq!(machines.records(0), machines.records(1));
}

#[test]
fn heartbeats_from_two_machines_merge_and_a_close_stands_over_a_later_heartbeat() {
    let machines = Machines::new(2);
    machines
        .hpp(
            0,
            &[
                "lane",
                "start",
                "ui",
                "--role",
                "maker",
                "--model",
                "claude-sonnet-4",
                "--territory",
                "src/ui/",
            ],
        )
        .ok();
    machines.sync(0);
    machines.sync(1);
    machines.hpp(0, &["lane", "heartbeat", "ui"]).ok();
    machines.hpp(1, &["lane", "heartbeat", "ui"]).ok();
    machines.sync(1);
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(0);
    assert_eq!(fetched["merged"][0], "refs/hpp/lanes/ui", "{fetched}");
    let beats = machines.git(0, &["rev-list", "--no-merges", "refs/hpp/lanes/ui"]);
    assert_eq!(beats.lines().count(), 3, "the claim and both heartbeats");
    let listed = machines.hpp(0, &["lane", "list", "--json"]).json(0);
    assert_eq!(listed["lanes"][0]["status"], "open", "{listed}");
    machines.hpp(0, &["doctor"]).ok();

    // m0 closes the lane while m1 beats once more: the close stands on both.
    machines.sync(0);
    machines.sync(1);
    machines.hpp(0, &["lane", "close", "ui"]).ok();
    machines.hpp(1, &["lane", "heartbeat", "ui"]).ok();
    machines.sync(1);
    machines.sync(0);
    machines.sync(1);
    for m in 0..2 {
        let record: Value =
            serde_json::from_str(&machines.git(m, &["show", "refs/hpp/lanes/ui:lane.json"]))
                .expect("the standing record is JSON");
        assert_eq!(record["event"], "close", "m{m}: {record}");
    }
    assert_eq!(machines.records(0), machines.records(1));
}

/// `hop init` on m0, published and fetched by every other machine.
fn hop_init(machines: &Machines) {
    machines
        .sandbox
        .hop_in(&machines.clones[0], &["init", "--json"])
        .json(0);
    machines.hpp(0, &["push"]).ok();
    for m in 1..machines.clones.len() {
        machines.hpp(m, &["fetch"]).ok();
    }
}

/// Starts an attempt on machine `m`, writes `path`, proposes and lands it; returns the
/// proposal id.
fn hop_land(machines: &Machines, m: usize, path: &str, body: &str) -> String {
    let dir = &machines.clones[m];
    let started = machines
        .sandbox
        .hop_in(
            dir,
            &[
                "start",
                "--agent",
                "codex",
                &format!("write {path}"),
                "--json",
            ],
        )
        .json(0);
    let env = &started["data"]["env"];
    let workspace = PathBuf::from(env["HOP_WORKSPACE"].as_str().expect("a workspace"));
    let file = workspace.join(path);
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&file, body).expect("writable");
    let state = env["HOP_STATE_ID"].as_str().expect("a state");
    let mut agent = machines.sandbox.command(HOP, &workspace);
    agent.args(["propose", "--summary", path, state, "--json"]);
    for key in [
        "HOP_ROOT",
        "HOP_STATE_ID",
        "HOP_TASK_ID",
        "HOP_ATTEMPT_ID",
        "HOP_WORKSPACE",
    ] {
        agent.env(key, env[key].as_str().expect("a launch variable"));
    }
    let proposed = Run::from_output(&agent.output().expect("hop runs")).json(0);
    let proposal = proposed["data"]["state"]["id"]
        .as_str()
        .expect("a proposal")
        .to_owned();
    machines
        .sandbox
        .hop_in(dir, &["land", &proposal, "--json"])
        .json(0);
    proposal
}

fn accepted_files(machines: &Machines, m: usize) -> String {
    machines.git(
        m,
        &["ls-tree", "-r", "--name-only", "refs/hpp/hop/accepted"],
    )
}

#[test]
fn hop_landings_on_two_machines_are_relanded_and_both_reach_one_chain() {
    let machines = Machines::new(2);
    hop_init(&machines);
    let p0 = hop_land(&machines, 0, "zero.txt", "0\n");
    let p1 = hop_land(&machines, 1, "one.txt", "1\n");
    // The first landing after `hop init` starts the chain at the user's commit, so m1 joins
    // the remote's initial state on its fetch before its push.
    machines.sync(1);
    let theirs = machines.git(1, &["rev-parse", "refs/hpp/hop/accepted"]);
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(0);
    assert!(
        fetched["merged"]
            .as_array()
            .expect("a list")
            .iter()
            .any(|r| r == "refs/hpp/hop/accepted"),
        "{fetched}"
    );
    let files = accepted_files(&machines, 0);
    assert!(
        files.contains("zero.txt") && files.contains("one.txt"),
        "{files}"
    );
    let head = machines.git(0, &["rev-parse", "refs/hpp/hop/accepted"]);
    assert!(
        is_ancestor(&machines, 0, &theirs, &head),
        "theirs stays reachable"
    );
    machines.hpp(0, &["push"]).ok();
    machines.hpp(1, &["fetch"]).ok();
    assert_eq!(
        machines.git(1, &["rev-parse", "refs/hpp/hop/accepted"]),
        head
    );
    let history = machines
        .sandbox
        .hop_in(&machines.clones[1], &["history", "--json"])
        .json(0)
        .to_string();
    assert!(history.contains(&p0) && history.contains(&p1), "{history}");
    let doctor = machines
        .sandbox
        .hop_in(&machines.clones[1], &["doctor", "--json"])
        .json(0);
    assert_eq!(doctor["ok"], true, "{doctor}");
}

#[test]
fn control_overlapping_hop_landings_are_reported_and_the_local_chain_kept() {
    let machines = Machines::new(2);
    hop_init(&machines);
    hop_land(&machines, 0, "same.txt", "zero\n");
    hop_land(&machines, 1, "same.txt", "one\n");
    machines.sync(1);
    let before = machines.git(0, &["rev-parse", "refs/hpp/hop/accepted"]);
    let fetched = machines.hpp(0, &["fetch", "--json"]).json(1);
    assert_eq!(fetched["diverged"][0]["ref"], "refs/hpp/hop/accepted");
    let reason = fetched["diverged"][0]["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("overlaps") && reason.contains("same.txt"),
        "{reason}"
    );
    assert_eq!(
        machines.git(0, &["rev-parse", "refs/hpp/hop/accepted"]),
        before
    );
}

/// A small deterministic generator (xorshift), so a failing order can be replayed.
struct Order(u64);

impl Order {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % below as u64).expect("small")
    }
}

#[test]
fn three_machines_writing_and_syncing_in_random_order_end_identical_with_every_entry_once() {
    let machines = Machines::new(3);
    hop_init(&machines);
    let seed = std::env::var("HPP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15_u64);
    let mut order = Order(seed);
    let mut claimed: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut handed: Vec<String> = Vec::new();
    let mut landed: Vec<String> = Vec::new();
    let rounds = 4;
    let daemon_round = 2;
    let daemon = GitDaemon::start(&machines.sandbox, &machines.sandbox.path(""));
    for round in 0..rounds {
        let url = if round == daemon_round {
            daemon.url("remote.git")
        } else {
            text(&machines.remote).to_owned()
        };
        for m in 0..3 {
            machines.git(m, &["remote", "set-url", "origin", &url]);
        }
        // Every machine writes, in a random order, between syncs in a random order.
        let mut steps: Vec<(usize, usize)> = (0..3)
            .flat_map(|m| (0..5).map(move |kind| (m, kind)))
            .collect();
        while !steps.is_empty() {
            let (m, kind) = steps.remove(order.next(steps.len()));
            let tag = format!("r{round}-m{m}");
            match kind {
                0 => {
                    let item = format!("item-{tag}");
                    claim(&machines, m, &item).ok();
                    claimed.push(item);
                }
                1 => {
                    let task = format!("task {tag}");
                    machines
                        .hpp(
                            m,
                            &[
                                "gotcha",
                                "record",
                                "--task",
                                &task,
                                "--message",
                                "error: connection reset by peer",
                                "--at",
                                "2026-01-01T00:00:00Z",
                            ],
                        )
                        .ok();
                    failed.push(task);
                }
                2 => {
                    let summary = format!("handoff {tag}");
                    machines
                        .hpp(
                            m,
                            &[
                                "handoff",
                                "write",
                                "--summary",
                                &summary,
                                "--next",
                                "on",
                                "--verify-first",
                                "true",
                            ],
                        )
                        .ok();
                    handed.push(summary);
                }
                3 => {
                    let path = format!("{tag}.txt");
                    hop_land(&machines, m, &path, &format!("{tag}\n"));
                    landed.push(path);
                }
                _ => machines.sync(order.next(3)),
            }
        }
    }
    // Settle: everyone fetches and pushes until nothing moves (twice round suffices: the
    // first pass gathers everything at the last machine, the second spreads it).
    for _ in 0..2 {
        for m in 0..3 {
            machines.sync(m);
        }
    }
    let remote = machines
        .sandbox
        .git(["ls-remote", text(&machines.remote), "refs/hpp/*"])
        .lines()
        .map(|l| l.replace('\t', " "))
        .collect::<Vec<_>>()
        .join("\n");
    for m in 0..3 {
        assert_eq!(machines.records(m), remote, "m{m} is the remote");
    }
    let mut items = board_items(&machines, 0);
    items.sort();
    claimed.sort();
    assert_eq!(items, claimed, "every claim once");
    let count = |values: Vec<Value>, pointer: &str| -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for v in values {
            let key = v
                .pointer(pointer)
                .and_then(Value::as_str)
                .expect("a string");
            *counts.entry(key.to_owned()).or_insert(0) += 1;
        }
        counts
    };
    let failures = count(
        entries(&machines, 1, "refs/hpp/gotchas/failures", "failure.json"),
        "/task_key",
    );
    assert_eq!(failures.len(), failed.len(), "{failures:?}");
    assert!(failures.values().all(|&n| n == 1), "{failures:?}");
    let handoffs = count(
        entries(&machines, 2, "refs/hpp/handoffs/solo", "handoff.json"),
        "/state/summary",
    );
    assert_eq!(handoffs.len(), handed.len(), "{handoffs:?}");
    assert!(handoffs.values().all(|&n| n == 1), "{handoffs:?}");
    let files = accepted_files(&machines, 0);
    for path in &landed {
        assert_eq!(
            files.lines().filter(|l| l == path).count(),
            1,
            "{path} landed: {files}"
        );
    }
    for m in 0..3 {
        machines.hpp(m, &["doctor"]).ok();
    }
}

impl Machines {
    /// On the remote, moves `refs/hpp/loops/feature` to a join of `kept` and `preserved` (both
    /// commits the remote holds) whose `reconcile.json` is `record`: what an adversary with push
    /// access to the remote can write with plain git. Returns the join.
    fn forge_join(&self, kept: &str, preserved: &str, record: &str) -> String {
        let git = |args: &[&str]| self.sandbox.git_in(&self.remote, args);
        let blob = self
            .sandbox
            .git_fed_in(&self.remote, &["hash-object", "-w", "--stdin"], record);
        let mut listing = git(&["ls-tree", kept]);
        listing.push_str(&format!("\n100644 blob {blob}\treconcile.json\n"));
        let tree = self.sandbox.git_fed_in(&self.remote, &["mktree"], &listing);
        let join = git(&[
            "commit-tree",
            &tree,
            "-p",
            kept,
            "-p",
            preserved,
            "-m",
            "hpp reconcile feature",
        ]);
        git(&["update-ref", LOOP_REF, &join]);
        join
    }
}

/// The `reconcile.json` `event reconcile` writes for a join of `kept` over `preserved`.
fn join_record(kept: &str, preserved: &str) -> String {
    format!(
        r#"{{"at":"2026-12-03T00:00:00Z","keep":"theirs","kept":"{kept}","loop":"feature","preserved":"{preserved}","preserved_ref":"refs/hpp/preserved/loops/feature/{preserved}","remote":"origin","schema":"hpp.loop-reconcile/v1"}}"#
    )
}

#[test]
fn a_remote_join_that_drops_this_side_preserves_it_and_says_so() {
    let machines = Machines::new(2);
    let (zero, one) = machines.diverged_loop();
    let _ = machines.hpp(0, &["fetch"]).exit(1);
    machines
        .hpp(
            0,
            &["event", "reconcile", "--loop", "feature", "--keep", "ours"],
        )
        .ok();
    machines.hpp(0, &["push"]).ok();
    let run = machines.hpp(1, &["fetch"]).ok();
    let preserved = format!("refs/hpp/preserved/loops/feature/{one}");
    assert!(
        run.contains(&format!("reconciled {LOOP_REF} on the remote")),
        "{run}"
    );
    assert!(run.contains(&format!("preserved at {preserved}")), "{run}");
    assert_eq!(machines.git(1, &["rev-parse", &preserved]), one);
    let exported = machines
        .hpp(1, &["event", "export", "--loop", "feature"])
        .ok();
    assert!(exported.contains("\"who\":\"zero\""), "{exported}");
    assert!(!zero.is_empty());
}

#[test]
fn control_a_forged_join_is_left_out_and_the_loop_stays() {
    let machines = Machines::new(2);
    let (zero, one) = machines.diverged_loop();
    // m0's history reaches the remote beside m1's loop, then a join over m1's tip that names
    // the wrong side as kept.
    machines.git(
        0,
        &[
            "push",
            "-q",
            text(&machines.remote),
            &format!("{LOOP_REF}:refs/forge/zero"),
        ],
    );
    machines.hpp(1, &["fetch"]).ok();
    machines.forge_join(&zero, &one, &join_record(&one, &zero));
    let before = machines.records(1);
    let run = machines.hpp(1, &["fetch"]).exit(1);
    assert!(
        run.stdout.contains(&format!("diverged: {LOOP_REF}")),
        "{run}"
    );
    assert!(
        run.stdout.contains("a join that is not a reconciliation"),
        "{run}"
    );
    assert_eq!(machines.records(1), before, "nothing moved");
    assert_eq!(machines.git(1, &["rev-parse", LOOP_REF]), one);

    // The same join, well formed, is taken with m1's side preserved (signatures are not
    // required here).
    machines.forge_join(&zero, &one, &join_record(&zero, &one));
    let run = machines.hpp(1, &["fetch"]).ok();
    assert!(
        run.contains(&format!(
            "preserved at refs/hpp/preserved/loops/feature/{one}"
        )),
        "{run}"
    );
}

#[test]
fn a_set_log_with_an_entry_that_does_not_read_is_left_out() {
    let machines = Machines::new(2);
    claim(&machines, 0, "A").ok();
    machines.hpp(0, &["push"]).ok();
    machines.hpp(1, &["fetch"]).ok();
    // On the remote, a child of the board with an empty entry.
    let board = "refs/hpp/board/log";
    let git = |args: &[&str]| machines.sandbox.git_in(&machines.remote, args);
    let blob = machines
        .sandbox
        .git_fed_in(&machines.remote, &["hash-object", "-w", "--stdin"], "");
    let tree = machines.sandbox.git_fed_in(
        &machines.remote,
        &["mktree"],
        &format!("100644 blob {blob}\tevents.json\n"),
    );
    let forged = git(&["commit-tree", &tree, "-p", board, "-m", "empty"]);
    git(&["update-ref", board, &forged]);
    let before = machines.records(1);
    let run = machines.hpp(1, &["fetch"]).exit(1);
    assert!(run.stdout.contains(&format!("diverged: {board}")), "{run}");
    assert!(run.stdout.contains("board does not read"), "{run}");
    assert_eq!(machines.records(1), before, "nothing moved");
    assert_eq!(board_items(&machines, 1), ["A"]);
}

#[test]
fn after_fetch_reports_a_diverged_loop_push_names_the_reconcile_not_another_fetch() {
    let machines = Machines::new(2);
    machines.diverged_loop();
    let fetched = machines.hpp(0, &["fetch"]).exit(1);
    assert!(
        fetched.stdout.contains("event reconcile --loop feature"),
        "{fetched}"
    );
    let pushed = machines.hpp(0, &["push"]).exit(2);
    assert!(
        pushed
            .stdout
            .contains("Next: `git hpp event reconcile --loop feature --keep ours`"),
        "{pushed}"
    );
    assert!(!pushed.stdout.contains("Next: `git hpp fetch"), "{pushed}");
}

#[test]
fn control_before_any_fetch_push_says_to_fetch_first() {
    let machines = Machines::new(2);
    machines.diverged_loop();
    let pushed = machines.hpp(0, &["push"]).exit(2);
    assert!(
        pushed.stdout.contains("Next: `git hpp fetch origin`"),
        "{pushed}"
    );
    assert!(!pushed.stdout.contains("event reconcile"), "{pushed}");
}

#[test]
fn a_fetch_from_a_remote_with_no_records_says_so_and_leaves_the_notes_alone() {
    let sandbox = Sandbox::repo().with_identity();
    let remote = sandbox.path("empty.git");
    sandbox.git_in(
        &sandbox.root,
        &["init", "-q", "--bare", remote.to_str().expect("UTF-8")],
    );
    sandbox.git(["remote", "add", "origin", remote.to_str().expect("UTF-8")]);
    // A note of our own, on HEAD, that no record backs: a rebuild would change it.
    sandbox.git([
        "notes",
        "--ref",
        "refs/notes/hpp",
        "add",
        "-m",
        "kept as it is",
        "HEAD",
    ]);
    let before = sandbox.git(["rev-parse", "refs/notes/hpp"]);
    let said = sandbox.hpp(["fetch", "origin"]).ok();
    assert!(said.contains("it holds no records"), "{said}");
    assert_eq!(
        sandbox.git(["rev-parse", "refs/notes/hpp"]),
        before,
        "the notes did not move"
    );
}

#[test]
fn control_a_fetch_from_a_remote_with_records_does_not_say_it_holds_none() {
    let sandbox = Sandbox::repo().with_identity();
    let remote = sandbox.path("full.git");
    sandbox.git_in(
        &sandbox.root,
        &["init", "-q", "--bare", remote.to_str().expect("UTF-8")],
    );
    sandbox.git(["remote", "add", "origin", remote.to_str().expect("UTF-8")]);
    sandbox.start_work().ok();
    sandbox.hpp(["push", "origin"]).ok();
    let said = sandbox.hpp(["fetch", "origin"]).ok();
    assert!(!said.contains("holds no records"), "{said}");
}
