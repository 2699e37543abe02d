//! A graph drawn as inline SVG: a small layered layout, deterministic, no script.
//!
//! Nodes are placed in columns by the longest path that reaches them (edges between nodes of
//! the same kind, and edges that close a cycle, do not push a node right), ordered in each
//! column by the mean row of their predecessors, then by id. Forward edges are curves from the
//! right of one node to the left of the next; edges within a column are arcs on its left side;
//! edges back to an earlier column run under the drawing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::escape;
use hpp_core::graph::Graph;

const ROW: i64 = 38;
const NODE_H: i64 = 26;
const GAP: i64 = 90;
const MARGIN: i64 = 24;
const CHAR_W: i64 = 7;
const LEGEND: i64 = 22;
/// Columns per band before a long chain wraps.
const WRAP: usize = 5;
const BAND_GAP: i64 = 30;
/// Above this many edges the relation is shown by colour (with a legend) instead of a label.
const LABELLED_EDGES: usize = 12;

/// Node fills by kind, given to kinds in sorted order.
const PALETTE: [&str; 8] = [
    "#e8f1fb", "#eaf7ea", "#fdf1e3", "#f3eafa", "#fbe9ec", "#e6f6f6", "#f7f5dc", "#eeeeee",
];

/// Edge colours by relation family (the part before `:`), given in sorted order.
const INK: [&str; 6] = [
    "#2f6db5", "#3b8a3e", "#b8641a", "#7a43a8", "#b3324a", "#22807f",
];

fn node_width(label: &str) -> i64 {
    let chars = i64::try_from(label.chars().count()).unwrap_or(i64::MAX / 16);
    (chars * CHAR_W + 20).max(72)
}

/// The height of a line of edge label text, and the width of one of its characters.
const LABEL_LINE: i64 = 12;
const LABEL_CHAR_W: i64 = 6;

/// Returns the baseline at or below `y` where `label`, centred on `x`, overlaps no label in
/// `placed`, and records it there.
fn free_line(placed: &mut Vec<(i64, i64, i64)>, x: i64, y: i64, label: &str) -> i64 {
    // Labels are centred on `x` (text-anchor: middle).
    let width = i64::try_from(label.chars().count()).unwrap_or(i64::MAX / 16) * LABEL_CHAR_W;
    let (left, right) = (x - width / 2, x + width / 2);
    let mut line = y;
    while placed
        .iter()
        .any(|&(l, r, at)| l < right && left < r && (at - line).abs() < LABEL_LINE)
    {
        line += LABEL_LINE;
    }
    placed.push((left, right, line));
    line
}

/// Returns the columns of the graph: each node's rank.
fn ranks(graph: &Graph) -> BTreeMap<&str, usize> {
    let kind: BTreeMap<&str, &str> = graph
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.kind.as_str()))
        .collect();
    let kinds: BTreeSet<&str> = kind.values().copied().collect();
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &graph.edges {
        let same_kind = kinds.len() > 1 && kind.get(e.from.as_str()) == kind.get(e.to.as_str());
        if !same_kind && e.from != e.to {
            out.entry(e.from.as_str()).or_default().push(e.to.as_str());
        }
    }
    // Depth-first from each node in id order; an edge to a node still on the stack closes a
    // cycle and is dropped, so what remains is acyclic.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    let mut kept: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for start in kind.keys() {
        if state.contains_key(start) {
            continue;
        }
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        state.insert(start, 1);
        while let Some((node, next)) = stack.pop() {
            let targets = out.get(node).map(Vec::as_slice).unwrap_or_default();
            if let Some(&to) = targets.get(next) {
                stack.push((node, next + 1));
                match state.get(to) {
                    None => {
                        kept.entry(node).or_default().push(to);
                        state.insert(to, 1);
                        stack.push((to, 0));
                    }
                    Some(2) => kept.entry(node).or_default().push(to),
                    Some(_) => {}
                }
            } else {
                state.insert(node, 2);
                order.push(node);
            }
        }
    }
    let mut rank: BTreeMap<&str, usize> = kind.keys().map(|k| (*k, 0)).collect();
    for node in order.iter().rev() {
        let here = rank[node];
        for to in kept.get(node).map(Vec::as_slice).unwrap_or_default() {
            let r = rank.get_mut(to).expect("a kept edge names a node");
            *r = (*r).max(here + 1);
        }
    }
    rank
}

/// Draws `graph` as one `<svg>` element; `key` makes its marker id unique in the page and
/// `title` names it for screen readers.
pub fn draw(graph: &Graph, key: &str, title: &str) -> String {
    if graph.nodes.is_empty() {
        return String::new();
    }
    let rank = ranks(graph);
    let columns = rank.values().copied().max().unwrap_or(0) + 1;
    let mut preds: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &graph.edges {
        preds
            .entry(e.to.as_str())
            .or_default()
            .push(e.from.as_str());
    }
    let labels: BTreeMap<&str, &str> = graph
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.label.as_str()))
        .collect();
    let mut row: BTreeMap<&str, i64> = BTreeMap::new();
    let mut column_nodes: Vec<Vec<&str>> = vec![Vec::new(); columns];
    for (c, slot) in column_nodes.iter_mut().enumerate() {
        let mut members: Vec<(i64, &str)> = rank
            .iter()
            .filter(|(_, r)| **r == c)
            .map(|(id, _)| {
                let placed: Vec<i64> = preds
                    .get(id)
                    .into_iter()
                    .flatten()
                    .filter_map(|p| row.get(p).copied())
                    .collect();
                let key = if placed.is_empty() {
                    i64::MAX
                } else {
                    placed.iter().sum::<i64>() * 1000 / i64::try_from(placed.len()).unwrap_or(1)
                };
                (key, *id)
            })
            .collect();
        members.sort();
        for (i, (_, id)) in members.iter().enumerate() {
            row.insert(id, i64::try_from(i).unwrap_or(0));
        }
        *slot = members.into_iter().map(|(_, id)| id).collect();
    }
    // A long chain wraps: column c goes to band c / WRAP, slot c % WRAP, like lines of text.
    let slots = columns.min(WRAP);
    let bands = i64::try_from(columns.div_ceil(WRAP)).unwrap_or(1);
    let mut widths = vec![72; slots];
    for (c, ids) in column_nodes.iter().enumerate() {
        for id in ids {
            widths[c % WRAP] = widths[c % WRAP].max(node_width(labels[id]));
        }
    }
    let mut x_of_slot = Vec::with_capacity(slots);
    let mut x = MARGIN + 60;
    for w in &widths {
        x_of_slot.push(x);
        x += w + GAP;
    }
    let tallest = column_nodes.iter().map(Vec::len).max().unwrap_or(1);
    let body_h = i64::try_from(tallest).unwrap_or(1) * ROW;
    let bands_h = bands * body_h + (bands - 1) * BAND_GAP;
    let back_edges = graph
        .edges
        .iter()
        .filter(|e| rank[e.to.as_str()] < rank[e.from.as_str()])
        .count();
    let height = MARGIN * 2 + LEGEND + bands_h + if back_edges > 0 { 70 } else { 0 };
    let width = x - GAP + MARGIN + 40;
    // Columns are centred vertically so short ones sit in the middle.
    let pos = |id: &str| -> (i64, i64, i64) {
        let c = rank[id];
        let len = i64::try_from(column_nodes[c].len()).unwrap_or(1);
        let offset = (body_h - len * ROW) / 2;
        let band = i64::try_from(c / WRAP).unwrap_or(0);
        let y = MARGIN + LEGEND + band * (body_h + BAND_GAP) + offset + row[id] * ROW + ROW / 2;
        (x_of_slot[c % WRAP], y, node_width(labels[id]))
    };
    let kinds: BTreeSet<&str> = graph.nodes.iter().map(|n| n.kind.as_str()).collect();
    let fill: BTreeMap<&str, &str> = kinds
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, PALETTE[i % PALETTE.len()]))
        .collect();
    let families: BTreeSet<&str> = graph
        .edges
        .iter()
        .map(|e| e.relation.split(':').next().unwrap_or_default())
        .collect();
    let ink: BTreeMap<&str, &str> = families
        .iter()
        .enumerate()
        .map(|(i, f)| (*f, INK[i % INK.len()]))
        .collect();

    let legend_w: i64 = ink.keys().map(|f| 30 + node_width(f)).sum::<i64>() + MARGIN * 2;
    let width = width.max(legend_w);
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg role=\"img\" width=\"{width}\" height=\"{height}\" style=\"max-width:100%;height:auto\" viewBox=\"0 0 {width} {height}\"><title>{}</title>",
        escape(title)
    );
    let mut labels_svg = String::new();
    // Edge labels already placed, as (left, right, baseline): a label that would overlap one is
    // moved down a line until it overlaps none.
    let mut placed: Vec<(i64, i64, i64)> = Vec::new();
    for e in &graph.edges {
        let (x1, y1, w1) = pos(&e.from);
        let (x2, y2, w2) = pos(&e.to);
        let colour = ink[e.relation.split(':').next().unwrap_or_default()];
        let (r1, r2) = (rank[e.from.as_str()], rank[e.to.as_str()]);
        let (path, lx, ly) = if r2 > r1 {
            let (sx, tx) = (x1 + w1, x2);
            let mid = (sx + tx) / 2;
            // A wrapped edge runs back to the next band's start: pull its ends outwards.
            let (c1, c2) = (mid.max(sx + 40), mid.min(tx - 40));
            (
                format!("M{sx},{y1} C{c1},{y1} {c2},{y2} {tx},{y2}"),
                mid,
                (y1 + y2) / 2,
            )
        } else if r2 == r1 {
            let bend = x1 - 30 - (y2 - y1).abs() / 6;
            (
                format!("M{x1},{y1} C{bend},{y1} {bend},{y2} {x2},{y2}"),
                bend + 10,
                (y1 + y2) / 2,
            )
        } else {
            let low = MARGIN + LEGEND + bands_h + 40;
            let (sx, tx) = (x1 + w1 / 2, x2 + w2 / 2);
            (
                format!(
                    "M{sx},{} C{sx},{low} {tx},{low} {tx},{}",
                    y1 + NODE_H / 2,
                    y2 + NODE_H / 2
                ),
                (sx + tx) / 2,
                low - 8,
            )
        };
        let _ = write!(
            svg,
            "<path d=\"{path}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.3\" marker-end=\"url(#arrow-{key})\"><title>{} {} {}</title></path>",
            escape(labels[e.from.as_str()]),
            escape(&e.relation),
            escape(labels[e.to.as_str()])
        );
        if graph.edges.len() > LABELLED_EDGES {
            continue;
        }
        let ly = free_line(&mut placed, lx, ly, &e.relation);
        let _ = write!(
            labels_svg,
            "<text class=\"edge\" x=\"{lx}\" y=\"{ly}\" fill=\"{colour}\">{}</text>",
            escape(&e.relation)
        );
    }
    let _ = write!(
        svg,
        "<defs><marker id=\"arrow-{key}\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>",
    );
    for n in &graph.nodes {
        let (x, y, w) = pos(&n.id);
        let _ = write!(
            svg,
            "<g class=\"node\"><rect x=\"{x}\" y=\"{}\" width=\"{w}\" height=\"{NODE_H}\" rx=\"6\" fill=\"{}\" stroke=\"#8a94a6\"/><text x=\"{}\" y=\"{}\">{}</text><title>{} ({})</title></g>",
            y - NODE_H / 2,
            fill[n.kind.as_str()],
            x + w / 2,
            y + 4,
            escape(&n.label),
            escape(&n.id),
            escape(&n.kind)
        );
    }
    svg.push_str(&labels_svg);
    let mut lx = MARGIN;
    for (family, colour) in &ink {
        let _ = write!(
            svg,
            "<rect x=\"{lx}\" y=\"6\" width=\"14\" height=\"4\" fill=\"{colour}\"/><text class=\"legend\" x=\"{}\" y=\"12\">{}</text>",
            lx + 18,
            escape(family)
        );
        lx += 30 + node_width(family);
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpp_core::graph::{edge, node};

    #[test]
    fn a_chain_spreads_over_columns_and_a_cycle_does_not_loop() {
        let graph = Graph::new(
            vec![
                node("a", "r", "a"),
                node("b", "r", "b"),
                node("c", "r", "c"),
            ],
            vec![
                edge("a", "b", "x"),
                edge("b", "c", "y"),
                edge("c", "a", "z"),
            ],
        );
        let r = ranks(&graph);
        assert_eq!((r["a"], r["b"], r["c"]), (0, 1, 2));
        assert!(draw(&graph, "k", "t").starts_with("<svg"));
    }

    #[test]
    fn labels_that_would_overlap_are_moved_apart_and_others_stay() {
        let mut placed = Vec::new();
        assert_eq!(free_line(&mut placed, 100, 50, "owns:alive"), 50);
        assert_eq!(free_line(&mut placed, 110, 50, "reads"), 50 + LABEL_LINE);
        assert_eq!(
            free_line(&mut placed, 105, 52, "writes"),
            52 + 2 * LABEL_LINE
        );
        assert_eq!(
            free_line(&mut placed, 400, 50, "far away"),
            50,
            "no overlap, no move"
        );
    }

    #[test]
    fn control_labels_are_escaped_in_the_drawing() {
        let graph = Graph::new(vec![node("a", "k", "<script>")], vec![]);
        let svg = draw(&graph, "k", "t");
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
    }
}
