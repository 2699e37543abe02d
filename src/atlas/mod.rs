//! The atlas: one self-contained static HTML page of every graph view, the lane and monitor
//! maps, the loops, the recent records, the lane board, the House Sessions and Hop's states
//! (`git hpp atlas --html OUT.html`).
//!
//! CONCEPTS.md "module", "gate", "lane", "monitor": the page gathers their graph views and maps.
//! Each section is labelled with the command that reproduces it and the sha256 of the canonical
//! JSON of the source it was projected from. The page has inline CSS and inline SVG drawings and
//! nothing else: no script, no font, no image, no link to anything outside itself; the same
//! inputs (and the same `--now`) give the same bytes. [`render`] is pure; [`collect`] reads
//! the records under `refs/hpp/`.
//!
//! ```
//! use git_hpp::atlas::{Atlas, Section, render};
//! let page = render(&Atlas { now: 1000, verdicts: Vec::new(), signatures: String::new(), sections: vec![Section::note("s", "Empty", "git hpp loops", "0", "nothing yet")] });
//! assert!(page.contains("git hpp loops"));
//! ```

pub mod collect;
pub mod svg;

pub use collect::collect;

use std::fmt::Write;

use hpp_core::graph::Graph;

/// A table: column headings and rows of cells (plain text, escaped when drawn).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// What the table lists.
    pub caption: String,
    /// The column headings.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<Vec<String>>,
}

/// One section of the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The anchor id (letters, digits and `-`).
    pub id: String,
    /// The heading.
    pub title: String,
    /// The command that reproduces what the section shows.
    pub command: String,
    /// The sha256 of the canonical JSON of the section's source.
    pub source_sha256: String,
    /// A sentence under the heading.
    pub note: String,
    /// The graph to draw, if any.
    pub graph: Option<Graph>,
    /// Tables under the drawing.
    pub tables: Vec<Table>,
}

impl Section {
    /// Returns a section with only a note.
    pub fn note(id: &str, title: &str, command: &str, sha256: &str, note: &str) -> Self {
        Self {
            id: id.to_owned(),
            title: title.to_owned(),
            command: command.to_owned(),
            source_sha256: sha256.to_owned(),
            note: note.to_owned(),
            graph: None,
            tables: Vec::new(),
        }
    }
}

/// Whether one commit a reader asks about (HEAD, a protected branch) verifies, as `git hpp
/// verify` answers it: the page opens with these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// What is asked about: `HEAD`, `main`, ...
    pub subject: String,
    /// The commit it names (full id).
    pub commit: String,
    /// Whether it verifies.
    pub verified: bool,
    /// Why, in a sentence: who approved it, or what is missing.
    pub why: String,
}

/// The whole page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atlas {
    /// The clock the maps were projected against, Unix seconds.
    pub now: i64,
    /// HEAD and each protected branch, verified or not and why: the page's first screen.
    pub verdicts: Vec<Verdict>,
    /// The signature rule the verdicts were reached under, in a sentence.
    pub signatures: String,
    /// The sections, in page order.
    pub sections: Vec<Section>,
}

/// Returns `text` escaped for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

const STYLE: &str = "
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 0; color: #1d2433; background: #f6f7f9; }
header { background: #1d2433; color: #fff; padding: 18px 28px; }
header h1 { margin: 0; font-size: 22px; }
header p { margin: 4px 0 0; color: #c9d1e0; }
nav { padding: 10px 28px; background: #e9ecf2; border-bottom: 1px solid #d5dae3; }
nav a { margin-right: 14px; color: #2f4f8f; text-decoration: none; }
main { padding: 8px 28px 40px; }
section { background: #fff; border: 1px solid #d5dae3; border-radius: 8px; margin: 18px 0; padding: 14px 18px; }
section h2 { margin: 0 0 6px; font-size: 18px; }
.meta { font: 12px/1.5 ui-monospace, 'SFMono-Regular', Menlo, monospace; color: #4a5568; overflow-wrap: anywhere; }
.meta code { background: #eef1f6; padding: 1px 5px; border-radius: 4px; }
.drawing { overflow-x: auto; margin: 10px 0; }
svg text { font: 12px system-ui, sans-serif; text-anchor: middle; fill: #1d2433; }
svg text.legend { text-anchor: start; font-size: 11px; }
svg text.edge { font-size: 10px; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
table { border-collapse: collapse; margin: 10px 0; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #d5dae3; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eef1f6; }
td.empty { color: #6b7280; font-style: italic; }
details summary { cursor: pointer; color: #2f4f8f; }
.scroll { overflow-x: auto; max-width: 100%; }
header { padding: 10px 28px; }
header h1 { font-size: 18px; }
.verdict { margin: 14px 28px 0; border-width: 2px; }
.verdict ul { list-style: none; margin: 6px 0; padding: 0; }
.verdict li { margin: 4px 0; padding: 6px 10px; border-radius: 6px; overflow-wrap: anywhere; }
.verdict li.ok { background: #e6f4ea; border-left: 5px solid #1e7b34; }
.verdict li.fail { background: #fdecea; border-left: 5px solid #b3261e; }
.verdict .mark { font-weight: 700; margin-right: 6px; }
.verdict li.ok .mark { color: #1e7b34; }
.verdict li.fail .mark { color: #b3261e; }
td.warn { background: #fdecea; color: #8a1c14; font-weight: 600; }
@media (max-width: 600px) {
  header, nav, main { padding-left: 12px; padding-right: 12px; }
  .verdict { margin: 10px 12px 0; }
  section { padding: 10px 10px; margin: 12px 0; }
  nav a { display: inline-block; margin: 2px 10px 2px 0; }
  /* Cards instead of wide tables: one block per row, each cell labelled by its column. */
  .scroll table, .scroll tbody, .scroll tr, .scroll td { display: block; width: 100%; box-sizing: border-box; }
  .scroll tr:first-child { display: none; }
  .scroll tr { border: 1px solid #d5dae3; border-radius: 6px; margin: 8px 0; padding: 4px 0; }
  .scroll td { border: none; padding: 2px 8px; overflow-wrap: anywhere; }
  .scroll td::before { content: attr(data-label) ': '; font-weight: 600; color: #4a5568; }
  .scroll td.empty::before { content: ''; }
}
";

/// How a table cell begins when the record it describes does not count (an unsigned record
/// where signatures are required); the page marks such cells.
pub const DOES_NOT_COUNT: &str = "does not count: ";

fn verdicts(out: &mut String, atlas: &Atlas) {
    out.push_str("<section id=\"verdict\" class=\"verdict\">\n<h2>Is it verified?</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"meta\">command: <code>git hpp verify COMMIT</code></p>"
    );
    if atlas.verdicts.is_empty() {
        out.push_str("<p>No commit yet: nothing to verify.</p>\n");
    }
    out.push_str("<ul>\n");
    for v in &atlas.verdicts {
        let (class, mark, word) = if v.verified {
            ("ok", "\u{2713}", "verified")
        } else {
            ("fail", "\u{2717}", "not verified")
        };
        let _ = writeln!(
            out,
            "<li class=\"{class}\"><span class=\"mark\">{mark}</span><strong>{}</strong> <code>{}</code> {word}: {}</li>",
            escape(&v.subject),
            escape(v.commit.get(..12).unwrap_or(&v.commit)),
            escape(&v.why)
        );
    }
    out.push_str("</ul>\n");
    if !atlas.signatures.is_empty() {
        let _ = writeln!(out, "<p>{}</p>", escape(&atlas.signatures));
    }
    out.push_str("</section>\n");
}

fn table(out: &mut String, t: &Table) {
    // A wide table scrolls inside its section instead of widening the page (a phone).
    let _ = write!(
        out,
        "<div class=\"scroll\"><table><caption>{}</caption><tr>",
        escape(&t.caption)
    );
    for c in &t.columns {
        let _ = write!(out, "<th>{}</th>", escape(c));
    }
    out.push_str("</tr>");
    if t.rows.is_empty() {
        let _ = write!(
            out,
            "<tr><td class=\"empty\" colspan=\"{}\">none</td></tr>",
            t.columns.len().max(1)
        );
    }
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let label = t.columns.get(i).map_or("", String::as_str);
            // A cell that says a record does not count is marked, not left neutral.
            let class = if cell.starts_with(DOES_NOT_COUNT) {
                " class=\"warn\""
            } else {
                ""
            };
            let _ = write!(
                out,
                "<td data-label=\"{}\"{class}>{}</td>",
                escape(label),
                escape(cell)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
}

fn edges_table(graph: &Graph) -> Table {
    let label = |id: &str| {
        graph
            .nodes
            .iter()
            .find(|n| n.id == id)
            .map_or_else(|| id.to_owned(), |n| n.label.clone())
    };
    Table {
        caption: format!("{} nodes, {} edges", graph.nodes.len(), graph.edges.len()),
        columns: vec!["from".into(), "relation".into(), "to".into()],
        rows: graph
            .edges
            .iter()
            .map(|e| vec![label(&e.from), e.relation.clone(), label(&e.to)])
            .collect(),
    }
}

/// Renders the page: deterministic, self-contained HTML with a trailing newline.
pub fn render(atlas: &Atlas) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>git hpp atlas</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<header><h1>git hpp atlas</h1>");
    let _ = writeln!(
        out,
        "<p>Projected at --now {} ({}). Each section names the command that reproduces it and the sha256 of its source.</p></header>",
        atlas.now,
        escape(&iso_utc(atlas.now))
    );
    // The first screen answers the first question; the index of sections waits, folded.
    verdicts(&mut out, atlas);
    out.push_str("<nav><details><summary>All sections</summary> ");
    for s in &atlas.sections {
        let _ = write!(
            out,
            "<a href=\"#{}\">{}</a>",
            escape(&s.id),
            escape(&s.title)
        );
    }
    out.push_str("</details></nav>\n<main>\n");
    for s in &atlas.sections {
        let _ = write!(
            out,
            "<section id=\"{}\">\n<h2>{}</h2>\n<p class=\"meta\">command: <code>{}</code><br>source sha256: <code>{}</code></p>\n",
            escape(&s.id),
            escape(&s.title),
            escape(&s.command),
            escape(&s.source_sha256)
        );
        if !s.note.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", escape(&s.note));
        }
        if let Some(graph) = &s.graph {
            let drawing = svg::draw(graph, &s.id, &s.title);
            if !drawing.is_empty() {
                // The manifest's views are the tool's, not the repository's: folded.
                let open = if s.id.starts_with("graph-") {
                    ""
                } else {
                    " open"
                };
                let _ = writeln!(
                    out,
                    "<details{open}><summary>drawing</summary><div class=\"drawing\">{drawing}</div></details>"
                );
            }
        }
        for t in &s.tables {
            table(&mut out, t);
            out.push('\n');
        }
        if let Some(graph) = &s.graph {
            out.push_str("<details><summary>edges as a table</summary>");
            table(&mut out, &edges_table(graph));
            out.push_str("</details>\n");
        }
        out.push_str("</section>\n");
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// Returns Unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (UTC), or the number itself when out of range.
pub fn iso_utc(seconds: i64) -> String {
    hpp_core::timestamp::unix_utc(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpp_core::graph::{edge, node};

    fn sample() -> Atlas {
        Atlas {
            now: 1000,
            verdicts: vec![Verdict {
                subject: "HEAD".into(),
                commit: "c".repeat(40),
                verified: false,
                why: "no attestation for its tree".into(),
            }],
            signatures: String::new(),
            sections: vec![Section {
                id: "graph-x".into(),
                title: "X <view>".into(),
                command: "git hpp graph --view x".into(),
                source_sha256: "ab".repeat(32),
                note: String::new(),
                graph: Some(Graph::new(
                    vec![node("a", "k", "A"), node("b", "j", "B")],
                    vec![edge("a", "b", "r")],
                )),
                tables: vec![Table {
                    caption: "t".into(),
                    columns: vec!["c".into()],
                    rows: vec![],
                }],
            }],
        }
    }

    #[test]
    fn the_page_names_each_command_and_hash_and_is_deterministic() {
        let page = render(&sample());
        assert_eq!(page, render(&sample()));
        assert!(page.contains("<code>git hpp graph --view x</code>"));
        assert!(page.contains(&"ab".repeat(32)));
        assert!(page.contains("X &lt;view&gt;"));
        assert!(page.contains("1970-01-01T00:16:40Z"));
        assert!(page.ends_with("</html>\n"));
    }

    /// The tables of a page not inside a `.scroll` box (each would widen a phone's page).
    fn unboxed_tables(page: &str) -> usize {
        page.matches("<table>").count() - page.matches("<div class=\"scroll\"><table>").count()
    }

    #[test]
    fn every_table_scrolls_in_its_own_box_and_a_phone_width_has_its_rules() {
        let page = render(&sample());
        assert!(page.contains("<table>"));
        assert_eq!(unboxed_tables(&page), 0);
        assert!(page.contains("@media (max-width: 600px)"));
        assert!(page.contains("overflow-wrap: anywhere"), "long hashes wrap");
        // The real check is scripts/atlas-layout.mjs in Chromium at 390 and 1400 px.
    }

    #[test]
    fn the_page_opens_with_the_verdict_before_any_section() {
        let page = render(&sample());
        let verdict = page.find("Is it verified?").expect("the verdict is there");
        let nav = page.find("<nav>").expect("the index is there");
        let first = page
            .find("<section id=\"graph-x\"")
            .expect("the section is there");
        assert!(verdict < nav && nav < first);
        assert!(page.contains("<li class=\"fail\">"));
        assert!(page.contains("<strong>HEAD</strong> <code>cccccccccccc</code> not verified"));
        // A manifest graph is folded; cards replace tables on a phone.
        assert!(page.contains("<details><summary>drawing</summary>"));
        assert!(page.contains("@media (max-width: 600px)"));
        assert!(
            page.contains("data-label=\"from\""),
            "each cell names its column"
        );
    }

    #[test]
    fn control_a_verified_head_is_marked_ok_and_a_cell_that_does_not_count_is_marked() {
        let mut atlas = sample();
        atlas.verdicts[0].verified = true;
        atlas.sections[0].tables[0].rows = vec![vec![format!("{DOES_NOT_COUNT}unsigned")]];
        let page = render(&atlas);
        assert!(page.contains("<li class=\"ok\">"));
        assert!(!page.contains("<li class=\"fail\">"));
        assert!(page.contains("class=\"warn\">does not count: unsigned"));
    }

    #[test]
    fn control_a_table_outside_its_box_is_counted() {
        let page = render(&sample()).replacen("<div class=\"scroll\"><table>", "<table>", 1);
        assert_eq!(unboxed_tables(&page), 1);
    }

    #[test]
    fn control_the_page_has_no_script_and_no_outside_reference() {
        let page = render(&sample());
        for banned in ["<script", "http://", "https://", "<link", "<img", "@import"] {
            assert!(!page.contains(banned), "{banned}");
        }
        let mut bad = sample();
        bad.sections[0].title = "<script>".into();
        assert!(!render(&bad).contains("<script>"));
    }
}
