//! `hop start` to a ready worktree and `hop land` of a small proposal on a 50,000-file
//! repository, next to `git worktree add` on the same repository (being built).

fn main() {}
