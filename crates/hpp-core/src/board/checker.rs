//! The checker router (CONCEPTS.md "maker and checker"): given the maker's provider and the
//! agent CLIs found on PATH, pick the first preferred provider that is not the maker's.
//!
//! Detection (looking at PATH) happens at the edge; this module only decides.

use serde::Serialize;

/// A provider and the commands that run its agent CLI, in the order they are tried.
pub const PROVIDERS: &[(&str, &[&str])] = &[
    ("codex", &["codex"]),
    ("cursor", &["agent", "cursor-agent", "cursor"]),
    ("gemini", &["gemini"]),
    ("claude", &["claude"]),
];

/// The maker when none is named.
pub const DEFAULT_MAKER: &str = "claude";

/// The preference order when none is given.
pub const DEFAULT_PREFER: &str = "codex,gemini,cursor,claude";

/// An unknown provider name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider {0:?}: expected codex, cursor, gemini or claude")]
pub struct UnknownProvider(pub String);

/// Returns the commands of `provider`, or refuses an unknown one.
pub fn commands(provider: &str) -> Result<&'static [&'static str], UnknownProvider> {
    PROVIDERS
        .iter()
        .find(|(name, _)| *name == provider)
        .map(|(_, cmds)| *cmds)
        .ok_or_else(|| UnknownProvider(provider.to_owned()))
}

/// Parses `--prefer` (comma-separated providers), refusing unknown ones and dropping repeats.
pub fn parse_prefer(list: &str) -> Result<Vec<String>, UnknownProvider> {
    let mut out: Vec<String> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let name = name.to_lowercase();
        commands(&name)?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// The router's answer, as the reference prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// `ok` when a checker was found, else `warn`.
    pub status: &'static str,
    /// The maker's provider.
    pub maker: String,
    /// The checker's provider, if any.
    pub checker: Option<String>,
    /// The command that runs it, if any.
    pub command: Option<String>,
    /// Every provider detected on PATH, in the order codex, cursor, gemini, claude.
    pub available: Vec<String>,
    /// One sentence for the reader.
    pub note: String,
}

/// Picks the checker: the first provider of `prefer` that is not `maker` and has a command in
/// `found` (provider, command), which lists what is on PATH.
pub fn route(maker: &str, prefer: &[String], found: &[(String, String)]) -> Route {
    let available: Vec<String> = found.iter().map(|(p, _)| p.clone()).collect();
    let pick = prefer
        .iter()
        .filter(|p| p.as_str() != maker)
        .find_map(|p| found.iter().find(|(q, _)| q == p));
    match pick {
        Some((provider, command)) => Route {
            status: "ok",
            maker: maker.to_owned(),
            checker: Some(provider.clone()),
            command: Some(command.clone()),
            available,
            note: format!(
                "checker {provider} ({command}) is another provider than the maker {maker}"
            ),
        },
        None => Route {
            status: "warn",
            maker: maker.to_owned(),
            checker: None,
            command: None,
            available,
            note: format!(
                "no agent CLI of another provider than {maker} is on PATH: install one of {} or review by hand",
                prefer
                    .iter()
                    .filter(|p| p.as_str() != maker)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    #[test]
    fn the_first_preferred_provider_other_than_the_maker_is_picked() {
        let prefer = parse_prefer(DEFAULT_PREFER).unwrap();
        let route = route(
            "codex",
            &prefer,
            &found(&[
                ("codex", "codex"),
                ("cursor", "cursor-agent"),
                ("claude", "claude"),
            ]),
        );
        assert_eq!(route.status, "ok");
        assert_eq!(route.checker.as_deref(), Some("cursor"));
        assert_eq!(route.command.as_deref(), Some("cursor-agent"));
    }

    #[test]
    fn control_only_the_maker_on_path_finds_no_checker() {
        let prefer = parse_prefer(DEFAULT_PREFER).unwrap();
        let route = route("claude", &prefer, &found(&[("claude", "claude")]));
        assert_eq!(route.status, "warn");
        assert_eq!(route.checker, None);
        assert!(parse_prefer("codex,grok").is_err());
    }
}
