//! Model families: which provider a model name belongs to, so maker and checker can be kept
//! apart (CONCEPTS.md "maker and checker"; the reference's lane-kit folding rules).
//!
//! A name folds to a family by the first word that names a provider, else by the alphabetic
//! prefix of its last path segment. Words come from splitting on `/` and `.`, then on `-`, `_`
//! and `:`. `""`, `auto` and `default` name no model, so they have no family and a rule that
//! needs one refuses them.

/// The provider words and the family each one folds to.
const ALIASES: &[(&str, &str)] = &[
    ("gpt", "gpt"),
    ("codex", "gpt"),
    ("openai", "gpt"),
    ("chatgpt", "gpt"),
    ("claude", "claude"),
    ("anthropic", "claude"),
    ("sonnet", "claude"),
    ("opus", "claude"),
    ("haiku", "claude"),
    ("fable", "claude"),
    ("gemini", "gemini"),
    ("google", "gemini"),
];

/// The family of a model name, or `None` when the name does not name a model (`""`, `auto`,
/// `default`, or nothing alphabetic to fold).
///
/// ```
/// use hpp_core::family::model_family;
/// assert_eq!(model_family("anthropic/claude-3.5-sonnet").as_deref(), Some("claude"));
/// assert_eq!(model_family("o4-mini").as_deref(), Some("gpt"));
/// assert_eq!(model_family("grok-4").as_deref(), Some("grok"));
/// assert_eq!(model_family("auto"), None);
/// ```
pub fn model_family(name: &str) -> Option<String> {
    let lower = name.trim().to_lowercase();
    if matches!(lower.as_str(), "" | "auto" | "default") {
        return None;
    }
    let words = lower
        .split(['/', '.'])
        .flat_map(|token| token.split(['-', '_', ':']));
    for word in words {
        if let Some((_, family)) = ALIASES.iter().find(|(alias, _)| *alias == word) {
            return Some((*family).to_owned());
        }
        let mut chars = word.chars();
        if chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit()) {
            return Some("gpt".to_owned());
        }
    }
    let last = lower.rsplit('/').next().unwrap_or_default();
    let prefix: String = last.chars().take_while(char::is_ascii_alphabetic).collect();
    (!prefix.is_empty()).then_some(prefix)
}

/// Whether two model names fold to the same family. Names without a family are never the same
/// as anything: a rule that needs two distinct families must refuse them separately.
pub fn same_family(a: &str, b: &str) -> bool {
    matches!((model_family(a), model_family(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_words_fold_to_their_family() {
        for (name, family) in [
            ("gpt-5.1-codex", "gpt"),
            ("codex", "gpt"),
            ("openai/gpt-4o", "gpt"),
            ("o3", "gpt"),
            ("o4-mini", "gpt"),
            ("claude-opus-4-1", "claude"),
            ("Sonnet", "claude"),
            ("anthropic/claude-3.5-haiku", "claude"),
            ("gemini-2.5-pro", "gemini"),
            ("google/gemma-3", "gemini"),
            ("grok-4", "grok"),
            ("meta/llama-3.1-70b", "llama"),
            ("deepseek-r1", "deepseek"),
        ] {
            assert_eq!(model_family(name).as_deref(), Some(family), "{name}");
        }
    }

    #[test]
    fn control_names_that_name_no_model_have_no_family() {
        for name in ["", "  ", "auto", "AUTO", "default", "4.1", "openrouter/7b"] {
            assert_eq!(model_family(name), None, "{name:?}");
        }
        assert!(!same_family("auto", "auto"));
        assert!(same_family("sonnet", "claude-opus-4"));
        assert!(!same_family("sonnet", "gpt-5"));
    }
}
