//! `hop diff`, `hop history` and `hop graph`: read the state graph under refs/hpp/hop/.

use super::out::{HopError, HopOutcome};
use super::{HopCtx, state_arg};
use crate::hop::{Against, Graph, GraphNode, Loaded};
use hpp_core::hop::{Kind, StateId};

/// Show the changes of a state
///
/// With one state: its changes against its parent (an attempt state's run_parent, an accepted
/// state's canonical_parent; the initial accepted state against the empty tree), or with --base
/// against the accepted state its attempt started from (what landing compares). With two
/// states: the changes from the first to the second. Prints the changed paths with git's
/// status letters (A, M, D, R, C, T), then the unified patch; --json has both. Reads
/// refs/hpp/hop/states/. Exit 1 for an unknown state.
#[derive(Debug, clap::Args)]
pub struct HopDiffArgs {
    /// The state (with two states, the older side)
    #[arg(value_parser = state_arg)]
    state: StateId,
    /// The newer side, to compare two states
    #[arg(value_parser = state_arg, value_name = "STATE")]
    other: Option<StateId>,
    /// Compare with the accepted state the attempt started from instead of the parent
    #[arg(long, conflicts_with = "other")]
    base: bool,
}

/// Show the accepted chain, newest first
///
/// Every accepted state from refs/hpp/hop/accepted back to the initial one (landings and undos
/// included), each with its tree and summary. Exit 1 when hop is not initialised.
#[derive(Debug, clap::Args)]
pub struct HopHistoryArgs {}

/// How `hop graph` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// One line per state: kind, id, parents with their roles, summary
    Text,
    /// A Mermaid flowchart (parent --role--> child)
    Mermaid,
}

/// Show the causal graph of every state
///
/// Every state pinned under refs/hpp/hop/states/, oldest first, with its kind, its parents and
/// their roles (run_parent, canonical_anchor, canonical_parent, proposal_parent,
/// integration_parent, reverts, restores) and its summary (a prompt's first line when it has
/// none). --format mermaid prints a Mermaid flowchart instead. Exit 0, or 1 on error.
#[derive(Debug, clap::Args)]
pub struct HopGraphArgs {
    /// Output format
    #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
    format: GraphFormat,
}

fn short(tree: &str) -> &str {
    tree.get(..12).unwrap_or(tree)
}

/// `hop diff`.
pub fn cmd_hop_diff(ctx: &HopCtx, args: &HopDiffArgs) -> Result<HopOutcome, HopError> {
    let hop = ctx.hop()?;
    let diff = match &args.other {
        // `hop diff OLD NEW`: the newer state, against the older one.
        Some(newer) => hop.diff(newer, &Against::State(args.state.clone()))?,
        None if args.base => hop.diff(&args.state, &Against::Base)?,
        None => hop.diff(&args.state, &Against::Parent)?,
    };
    let name = |id: &Option<StateId>| {
        id.as_ref()
            .map_or("the empty tree".into(), |i| i.to_string())
    };
    let mut human = format!(
        "{} -> {} ({}): {} path(s)\n",
        name(&diff.from.state),
        name(&diff.to.state),
        diff.against,
        diff.changes.len()
    );
    if let Some(summary) = &diff.to.summary {
        human.push_str(&format!("summary: {summary}\n"));
    }
    for change in &diff.changes {
        match &change.old_path {
            Some(old) => human.push_str(&format!(
                "{}{}\t{old}\t{}\n",
                change.status.letter(),
                change
                    .similarity
                    .map_or_else(String::new, |s| format!("{s:03}")),
                change.path
            )),
            None => human.push_str(&format!("{}\t{}\n", change.status.letter(), change.path)),
        }
    }
    if !diff.patch.is_empty() {
        human.push('\n');
        human.push_str(&diff.patch);
    }
    Ok(HopOutcome::ok(&diff, human))
}

fn history_line(l: &Loaded) -> String {
    format!(
        "{}  {}  {}  {}",
        l.state.id,
        short(&l.state.tree),
        l.state.created_at,
        l.state.summary.as_deref().unwrap_or("")
    )
    .trim_end()
    .to_owned()
}

/// `hop history`.
pub fn cmd_hop_history(ctx: &HopCtx, _args: &HopHistoryArgs) -> Result<HopOutcome, HopError> {
    let history = ctx.hop()?.accepted_history()?;
    let human: Vec<String> = history.states.iter().map(history_line).collect();
    Ok(HopOutcome::ok(&history, human.join("\n")))
}

fn parents_text(node: &GraphNode) -> String {
    let parents: Vec<String> = node
        .loaded
        .state
        .parents
        .iter()
        .map(|p| format!("{}={}", p.role.name(), p.state))
        .collect();
    if parents.is_empty() {
        "-".into()
    } else {
        parents.join(" ")
    }
}

fn graph_text(graph: &Graph) -> String {
    let mut out = String::new();
    for node in &graph.states {
        let head = if graph.accepted.as_ref() == Some(&node.loaded.state.id) {
            "  (accepted head)"
        } else {
            ""
        };
        out.push_str(
            format!(
                "{:<10} {}  {}  {}{head}",
                node.loaded.kind.name(),
                node.loaded.state.id,
                parents_text(node),
                node.label.as_deref().unwrap_or("")
            )
            .trim_end(),
        );
        out.push('\n');
    }
    out
}

/// Escapes text for a quoted Mermaid label (`#` starts an entity, `"` ends the label).
fn mermaid_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Renders the graph as a Mermaid flowchart: one node per state (id, kind, label), one edge
/// per parent, labelled with its role, from the parent to the state.
pub fn graph_mermaid(graph: &Graph) -> String {
    let mut out = String::from("flowchart TD\n");
    for node in &graph.states {
        let id = &node.loaded.state.id;
        let mut label = format!("{id} · {}", node.loaded.kind.name());
        if let Some(text) = &node.label {
            label.push_str(&format!(": {text}"));
        }
        out.push_str(&format!("    {id}[\"{}\"]\n", mermaid_escape(&label)));
    }
    for node in &graph.states {
        for parent in &node.loaded.state.parents {
            out.push_str(&format!(
                "    {} -->|{}| {}\n",
                parent.state,
                parent.role.name(),
                node.loaded.state.id
            ));
        }
    }
    for kind in Kind::ALL {
        let members: Vec<String> = graph
            .states
            .iter()
            .filter(|n| n.loaded.kind == kind)
            .map(|n| n.loaded.state.id.to_string())
            .collect();
        if members.is_empty() {
            continue;
        }
        let style = match kind {
            Kind::Accepted => "fill:#d4edda,stroke:#28a745",
            Kind::Prompt => "fill:#e7f1ff,stroke:#0d6efd",
            Kind::Checkpoint => "fill:#f8f9fa,stroke:#6c757d",
            Kind::Proposal => "fill:#fff3cd,stroke:#ffc107",
            Kind::Failed => "fill:#f8d7da,stroke:#dc3545",
            Kind::Cancelled => "fill:#e2e3e5,stroke:#495057",
        };
        out.push_str(&format!("    classDef {} {style}\n", kind.name()));
        out.push_str(&format!(
            "    class {} {}\n",
            members.join(","),
            kind.name()
        ));
    }
    if let Some(head) = &graph.accepted {
        out.push_str(&format!("    style {head} stroke-width:3px\n"));
    }
    out
}

/// `hop graph`.
pub fn cmd_hop_graph(ctx: &HopCtx, args: &HopGraphArgs) -> Result<HopOutcome, HopError> {
    let graph = ctx.hop()?.graph()?;
    Ok(match args.format {
        GraphFormat::Text => HopOutcome::ok(&graph, graph_text(&graph)),
        GraphFormat::Mermaid => {
            let text = graph_mermaid(&graph);
            let mut data = serde_json::to_value(&graph).expect("a graph serialises to JSON");
            data["mermaid"] = serde_json::Value::String(text.clone());
            HopOutcome::ok(&data, text)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::mermaid_escape;

    #[test]
    fn labels_keep_plain_text() {
        assert_eq!(mermaid_escape("add reset emails"), "add reset emails");
    }

    #[test]
    fn control_quotes_hashes_and_newlines_cannot_break_a_label() {
        assert_eq!(
            mermaid_escape("say \"hi\" #1\n<b>"),
            "say #quot;hi#quot; #35;1 #lt;b#gt;"
        );
    }
}
