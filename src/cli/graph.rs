//! `git hpp graph`: a graph view of the manifest, as JSON or Mermaid.

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use hpp_core::graph::{self, View};
use hpp_core::manifest::Manifest;
use hpp_store::Store;

/// How a graph or a map is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Pretty, sorted-key JSON
    Json,
    /// A Mermaid flowchart
    Mermaid,
}

/// Draw a graph view of the manifest
///
/// Projects hpp.manifest.json (the global --manifest, else the repository's, else the built-in
/// one; outside a repository the built-in one) as nodes sorted by id and edges sorted by
/// (from, to, relation), so the same manifest gives the same bytes in any order. Views:
/// capability (hosts, modules, capabilities, bundles), operational (the loop's states and gates),
/// agent (maker, checker, human gate), evidence, code (modules and their components); the view
/// must be declared in the manifest's `maps`. Exits 0; refuses (exit 2) an unknown or undeclared
/// view, or a manifest without the blocks the view reads. Reads no refs.
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// View: capability, operational, agent, evidence or code
    #[arg(long, value_name = "VIEW")]
    view: View,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// Returns the manifest in force, without needing a repository: `--manifest FILE`, else the
/// repository's `hpp.manifest.json`, else (also outside any repository) the built-in one.
pub fn manifest_anywhere(ctx: &Ctx) -> Result<Manifest, CliError> {
    match Store::discover(ctx.cwd()) {
        Ok(_) => ctx.manifest(),
        Err(outside) => match ctx.manifest() {
            // Ctx::manifest opens the repository only when no --manifest was given; the same
            // failure as our own discovery means exactly that, so the built-in manifest applies.
            Err(e) if e.message == outside.to_string() => Ok(Manifest::built_in()),
            other => other,
        },
    }
}

/// Renders a graph as the chosen format.
pub fn render(
    format: Format,
    json: &impl serde::Serialize,
    graph: &graph::Graph,
) -> Result<Outcome, CliError> {
    Ok(match format {
        Format::Json => Outcome::json(json, Exit::Ok),
        Format::Mermaid => Outcome::raw(graph::to_mermaid(graph, &[])?.into_bytes()),
    })
}

/// Runs `git hpp graph`.
pub fn dispatch(ctx: &Ctx, args: GraphArgs) -> Result<Outcome, CliError> {
    let manifest = manifest_anywhere(ctx)?;
    graph::require_declared(manifest.value(), args.view.as_str())?;
    let built = graph::build(manifest.value(), args.view)?;
    render(args.format, &built, &built.graph)
}
