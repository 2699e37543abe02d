//! The source languages the rulers read: Python and Rust, known by a file's extension.
//!
//! Spec coverage ([`crate::coverage`]) finds citations in test sources of both, and criterion
//! sensitivity ([`crate::mutation`]) tokenizes and mutates both; they name a file's language
//! with this one type. Pure: a path is a string here, nothing is read.
//!
//! ```
//! use hpp_core::language::Language;
//! assert_eq!(Language::of_path("tests/test_parse.py"), Some(Language::Python));
//! assert_eq!(Language::of_path("src/lib.rs"), Some(Language::Rust));
//! assert_eq!(Language::of_path("README.md"), None);
//! ```

/// A source language, by its file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Python 3 (`.py`): citations in docstrings; its own tokenizer and operator table.
    Python,
    /// Rust (`.rs`): citations in the comments above `#[test]` functions; its own tokenizer and
    /// operator table.
    Rust,
}

impl Language {
    /// Returns the language of `path` by its extension, or `None` for any other file.
    pub fn of_path(path: &str) -> Option<Self> {
        if path.ends_with(".py") {
            Some(Self::Python)
        } else if path.ends_with(".rs") {
            Some(Self::Rust)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Language;

    #[test]
    fn a_language_is_known_by_its_extension() {
        assert_eq!(Language::of_path("a/b.py"), Some(Language::Python));
        assert_eq!(Language::of_path("b.rs"), Some(Language::Rust));
    }

    #[test]
    fn control_other_files_and_look_alikes_have_no_language() {
        for path in ["x.pyc", "x.rsx", "x.py.txt", "py", "rs", "Makefile", ""] {
            assert_eq!(Language::of_path(path), None, "{path}");
        }
    }
}
