//! Open file descriptors: how many this process may hold (`ulimit -n`), the table the kernel
//! keeps of them, sized once before any thread shares it, and how many a walk of the worktree
//! may hold at once.
//!
//! Laptops run with low limits (256 is macOS's default soft limit, 1,024 Linux desktops'), and
//! `git status` works at 64: a walk holds handles for the directories from the root down to
//! the one it reads (bounded by the tree's depth and capped by [`KEEP`]), never one per entry.
//!
//! The table matters for speed as much as the limit does. The kernel grows a process's table by
//! doubling it, and while other threads share the table each doubling waits for an RCU grace
//! period (milliseconds). A process starts with the table its parent had: bash holds fd 255, so
//! its children start with 256 slots; Python's `subprocess` (`close_fds=True`) and Node start
//! theirs with 64. [`size_table`] grows it to [`TABLE`] slots once, while the process is still
//! one thread, so a command costs the same whoever spawned it.

use std::os::fd::AsFd;

use nix::fcntl::{FcntlArg, OFlag, fcntl, open};
use nix::sys::resource::{Resource, getrlimit};
use nix::sys::stat::Mode;

/// The slots [`size_table`] gives the descriptor table: bash's children start with as many,
/// and everything a command opens at once fits in them.
pub const TABLE: u64 = 256;

/// Descriptors left for everything but a walk's directory handles: the standard streams, the
/// repository's files gix opens, the ignore files read, files a parent left open to us.
const RESERVED: u64 = 24;

/// The most ancestors of the directory it reads that a walk keeps open (besides that directory
/// itself): half at the top of the path, half just above the directory. Going down costs one
/// open a level at any depth; going back up to a directory whose handle was let go reopens it
/// from the deepest ancestor kept, one component at a time, as `lstat` of a full path costs the
/// kernel a lookup a component.
pub const KEEP: usize = 8;

/// The soft limit on open files (`ulimit -n`), `None` when there is none or it cannot be read.
pub fn limit() -> Option<u64> {
    let (soft, _hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    (soft != nix::sys::resource::RLIM_INFINITY).then_some(soft)
}

/// Grows this process's descriptor table to [`TABLE`] slots (fewer under a lower limit), by
/// duplicating a descriptor onto the last slot and closing it again. Call it first thing, while
/// the process is one thread: the kernel never shrinks a table, and growing one no other thread
/// shares costs no grace period.
pub fn size_table() {
    let slots = limit().map_or(TABLE, |soft| soft.min(TABLE));
    let Some(last) = slots.checked_sub(1).and_then(|l| i32::try_from(l).ok()) else {
        return;
    };
    if last < 3 {
        return;
    }
    // Any descriptor will do; "/" is always there, and a path handle reads nothing.
    let Ok(root) = open(
        "/",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    // Nothing to do when it fails: the table then grows as it would have.
    if let Ok(high) = fcntl(root.as_fd(), FcntlArg::F_DUPFD_CLOEXEC(last)) {
        let _ = nix::unistd::close(high);
    }
}

/// The most threads that read the worktree's directories at once.
pub(crate) const MAX_WALKERS: usize = 4;

/// How the untracked walk spends its descriptors: how many threads read directories at once,
/// and how many ancestors each keeps open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WalkPlan {
    pub walkers: usize,
    pub keep: usize,
}

/// The cores this process may run on (one when that cannot be read).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// The walk's plan under the soft limit `limit` (`None`: no limit) for `wanted` threads: each
/// thread's chain holds `keep` ancestors, the directory it reads and, for a moment, the next
/// one it opens, and all of them fit within the table [`size_table`] made (or the limit, when
/// lower) less what else the process holds. Threads are given up before ancestors are: under a
/// low limit the walk is one thread with the window it had alone.
pub(crate) fn walk_plan(limit: Option<u64>, wanted: usize) -> WalkPlan {
    let slots = limit.map_or(TABLE, |soft| soft.min(TABLE));
    let spare = usize::try_from(slots.saturating_sub(RESERVED)).unwrap_or(usize::MAX);
    let whole = KEEP + 2;
    let walkers = (spare / whole).clamp(1, wanted.max(1));
    let keep = if walkers > 1 {
        KEEP
    } else {
        spare.saturating_sub(2).clamp(1, KEEP)
    };
    WalkPlan { walkers, keep }
}

/// Whether `errno` says this process (or the system) has no descriptor left to open.
pub(crate) fn exhausted(errno: nix::errno::Errno) -> bool {
    matches!(errno, nix::errno::Errno::EMFILE | nix::errno::Errno::ENFILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ancestors a walk of one thread keeps under `limit`.
    fn walk_keep(limit: Option<u64>) -> usize {
        walk_plan(limit, 1).keep
    }

    #[test]
    fn a_walk_stays_within_the_table_and_the_limit() {
        for limit in [
            None,
            Some(32),
            Some(64),
            Some(256),
            Some(1024),
            Some(1 << 20),
        ] {
            let keep = walk_keep(limit);
            let room = limit.map_or(TABLE, |l| l.min(TABLE)) - RESERVED;
            assert!((keep + 2) as u64 <= room, "{keep} under {limit:?}");
            assert!((1..=KEEP).contains(&keep));
        }
        assert_eq!(
            walk_keep(Some(64)),
            KEEP,
            "64 is room enough for the whole window"
        );
    }

    #[test]
    fn the_walkers_together_stay_within_the_table_and_the_limit() {
        for limit in [
            None,
            Some(32),
            Some(64),
            Some(100),
            Some(256),
            Some(1 << 20),
        ] {
            for wanted in 1..=MAX_WALKERS {
                let plan = walk_plan(limit, wanted);
                let room = limit.map_or(TABLE, |l| l.min(TABLE)) - RESERVED;
                let held = plan.walkers * (plan.keep + 2);
                assert!(held as u64 <= room, "{plan:?} under {limit:?}");
                assert!((1..=wanted).contains(&plan.walkers), "{plan:?}");
            }
        }
        assert_eq!(
            walk_plan(Some(64), 4),
            WalkPlan {
                walkers: 4,
                keep: KEEP
            }
        );
        assert_eq!(
            walk_plan(Some(64), 2),
            WalkPlan {
                walkers: 2,
                keep: KEEP
            }
        );
        assert_eq!(
            walk_plan(None, 2),
            WalkPlan {
                walkers: 2,
                keep: KEEP
            }
        );
    }

    #[test]
    fn control_a_low_limit_gives_up_threads_before_ancestors() {
        assert_eq!(
            walk_plan(Some(40), 4),
            WalkPlan {
                walkers: 1,
                keep: KEEP
            }
        );
        assert_eq!(
            walk_plan(Some(30), 4),
            WalkPlan {
                walkers: 1,
                keep: 4
            }
        );
        assert_eq!(
            walk_plan(Some(8), 4),
            WalkPlan {
                walkers: 1,
                keep: 1
            }
        );
    }

    #[test]
    fn control_a_limit_too_low_for_any_walk_still_keeps_one_ancestor_and_will_be_refused() {
        assert_eq!(walk_keep(Some(8)), 1);
        assert_eq!(walk_keep(Some(26)), 1);
        assert_eq!(walk_keep(Some(27)), 1);
        assert_eq!(walk_keep(Some(28)), 2);
    }

    /// The descriptor table's size, as Linux reports it (`FDSize` in `/proc/self/status`).
    fn table_size() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("FDSize:"))?;
        line["FDSize:".len()..].trim().parse().ok()
    }

    #[test]
    fn the_table_is_sized_without_holding_a_descriptor() {
        size_table();
        let Some(size) = table_size() else {
            return; // not Linux: nothing reports the table's size
        };
        let wanted = limit().map_or(TABLE, |l| l.min(TABLE));
        assert!(size >= wanted, "the table has {size} slots, not {wanted}");
        let last = wanted - 1;
        assert!(
            !std::path::Path::new(&format!("/proc/self/fd/{last}")).exists(),
            "the duplicate on slot {last} was closed again"
        );
    }

    #[test]
    fn exhaustion_is_told_from_other_failures() {
        assert!(exhausted(nix::errno::Errno::EMFILE));
        assert!(exhausted(nix::errno::Errno::ENFILE));
        assert!(!exhausted(nix::errno::Errno::ENOENT));
    }
}
