//! The commit message of a hop state: a subject line, then one `Hop-*` trailer per field.
//!
//! ```text
//! hop: prompt P_01J...
//!
//! Hop-State: P_01J...
//! Hop-Task: T_...
//! Hop-Attempt: AT_...
//! Hop-Base: A_...
//! Hop-Agent: "codex"
//! Hop-Tree: <tree id>
//! Hop-Parent: run_parent A_...
//! Hop-Parent: canonical_anchor A_...
//! Hop-Prompt-Digest: sha256:...
//! Hop-Created: 2026-01-01T00:00:00Z
//! Hop-Digest: sha256:...
//! ```
//!
//! Free text (agent, summary) is written as a JSON string so that newlines and leading spaces
//! survive on one trailer line. The exact prompt bytes are never only here: they are a blob of
//! their own record (see `store::hop`), and the trailer carries their digest.

use super::Error;
use super::ids::StateId;
use super::states::{Parent, Role, State};

/// Returns the commit message carrying `state`, ending with its digest trailer.
pub fn render(state: &State) -> String {
    let mut subject = format!("hop: {} {}", state.kind(), state.id);
    if let Some(summary) = &state.summary
        && let Some(first) = summary.lines().find(|l| !l.trim().is_empty())
    {
        let short: String = first.trim().chars().take(72).collect();
        subject.push_str(": ");
        subject.push_str(&short);
    }
    let mut out = format!("{subject}\n\nHop-State: {}\n", state.id);
    let mut line = |key: &str, value: &str| {
        out.push_str(key);
        out.push_str(": ");
        out.push_str(value);
        out.push('\n');
    };
    if let Some(task) = &state.task {
        line("Hop-Task", task.as_str());
    }
    if let Some(attempt) = &state.attempt {
        line("Hop-Attempt", attempt.as_str());
    }
    if let Some(base) = &state.base {
        line("Hop-Base", base.as_str());
    }
    if let Some(agent) = &state.agent {
        line("Hop-Agent", &quote(agent));
    }
    line("Hop-Tree", &state.tree);
    for parent in &state.parents {
        line(
            "Hop-Parent",
            &format!("{} {}", parent.role.name(), parent.state),
        );
    }
    if let Some(digest) = &state.prompt_digest {
        line("Hop-Prompt-Digest", digest);
    }
    if let Some(summary) = &state.summary {
        line("Hop-Summary", &quote(summary));
    }
    line("Hop-Created", &state.created_at);
    line("Hop-Digest", &state.digest());
    out
}

fn quote(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises to JSON")
}

/// A state read back from a commit message, with the digest the message recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The state.
    pub state: State,
    /// The `Hop-Digest` trailer, if present.
    pub recorded_digest: Option<String>,
}

/// Reads a state from its commit message (other trailers, such as the store's writer, are
/// ignored).
pub fn parse(message: &str) -> Result<Parsed, Error> {
    let mut fields: Vec<(&str, &str)> = Vec::new();
    for line in message.lines() {
        if let Some((key, value)) = line.split_once(": ")
            && key.starts_with("Hop-")
        {
            fields.push((key, value));
        }
    }
    let one = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let id_text = one("Hop-State").ok_or(Error::NotAState)?;
    let id: StateId = id_text.parse()?;
    let bad = |trailer: &str, detail: String| Error::BadTrailer {
        id: id.to_string(),
        trailer: trailer.to_owned(),
        detail,
    };
    let unquote = |key: &str| -> Result<Option<String>, Error> {
        one(key)
            .map(|v| serde_json::from_str::<String>(v).map_err(|e| bad(key, e.to_string())))
            .transpose()
    };
    let mut parents = Vec::new();
    for (key, value) in &fields {
        if *key != "Hop-Parent" {
            continue;
        }
        let (role, state) = value
            .split_once(' ')
            .ok_or_else(|| bad(key, format!("{value:?} is not `<role> <state>`")))?;
        let role = Role::parse(role).ok_or_else(|| bad(key, format!("unknown role {role:?}")))?;
        parents.push(Parent {
            role,
            state: state.parse()?,
        });
    }
    let missing = |trailer: &'static str| Error::MissingTrailer {
        id: id.to_string(),
        trailer,
    };
    let state = State {
        task: one("Hop-Task").map(str::parse).transpose()?,
        attempt: one("Hop-Attempt").map(str::parse).transpose()?,
        base: one("Hop-Base").map(str::parse).transpose()?,
        agent: unquote("Hop-Agent")?,
        tree: one("Hop-Tree")
            .ok_or_else(|| missing("Hop-Tree"))?
            .to_owned(),
        parents,
        prompt_digest: one("Hop-Prompt-Digest").map(str::to_owned),
        summary: unquote("Hop-Summary")?,
        created_at: one("Hop-Created")
            .ok_or_else(|| missing("Hop-Created"))?
            .to_owned(),
        id,
    };
    Ok(Parsed {
        state,
        recorded_digest: one("Hop-Digest").map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hop::ids::{AttemptId, Kind, TaskId};
    use proptest::prelude::*;

    fn prompt(agent: &str, summary: Option<&str>) -> State {
        let anchor = StateId::new(Kind::Accepted, 1, [1; 8]);
        State {
            id: StateId::new(Kind::Prompt, 2, [2; 8]),
            task: Some(TaskId::new(2, [3; 8])),
            attempt: Some(AttemptId::new(2, [4; 8])),
            base: Some(anchor.clone()),
            agent: Some(agent.to_owned()),
            tree: "4b825dc642cb6eb9a060e54bf8d69288fbee4904".into(),
            parents: vec![
                Parent {
                    role: Role::RunParent,
                    state: anchor.clone(),
                },
                Parent {
                    role: Role::CanonicalAnchor,
                    state: anchor,
                },
            ],
            prompt_digest: Some("sha256:00".into()),
            summary: summary.map(str::to_owned),
            created_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_state_survives_its_commit_message() {
        let state = prompt("codex", Some("  two\nlines: here  "));
        let message = render(&state);
        let parsed = parse(&format!("{message}Hpp-Writer: 1-2-3\n")).unwrap();
        assert_eq!(parsed.state, state);
        assert_eq!(parsed.recorded_digest, Some(state.digest()));
    }

    proptest! {
        #[test]
        fn any_agent_and_summary_round_trip(agent in ".*", summary in ".*") {
            let state = prompt(&agent, Some(&summary));
            prop_assert_eq!(parse(&render(&state)).unwrap().state, state);
        }
    }

    #[test]
    fn control_a_message_without_state_or_with_a_bad_parent_is_refused() {
        assert_eq!(parse("plain commit\n"), Err(Error::NotAState));
        let state = prompt("a", None);
        let broken = render(&state).replace("run_parent", "sibling");
        assert!(matches!(parse(&broken), Err(Error::BadTrailer { .. })));
        let tampered = render(&state).replace("Hop-Tree", "Hop-Trees");
        assert!(matches!(
            parse(&tampered),
            Err(Error::MissingTrailer {
                trailer: "Hop-Tree",
                ..
            })
        ));
    }
}
