//! The review guard: git's view of a worktree before and after a checker ran.
