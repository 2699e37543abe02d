//! The evals the application runs (CONCEPTS.md "pass@k"): the built-in controls against the real
//! code on throwaway repositories, and command cases through the bounded runner. The suite, its
//! pass@k arithmetic and its gates are [`hpp_core::evals`].

pub mod controls;
pub mod runner;
