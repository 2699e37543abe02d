//! Table rendering for the coverage example: a module of a crate named `coverage-example`,
//! compiled as `mod render;` in its lib.rs. Run with:
//!
//!     cargo nextest run --profile ci   # junit written to target/nextest/ci/junit.xml
//!
//! Each test cites the criterion it checks in the comments directly above it.

/// Renders rows as a pipe table, every column padded to its widest cell.
pub fn render(rows: &[Vec<&str>]) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| cell.replace('|', "\\|")).collect())
        .collect();
    let columns = cells.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| cells.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &cells {
        let padded: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(c, width)| format!("{:width$}", row.get(c).map_or("", String::as_str)))
            .collect();
        out.push_str(&format!("| {} |\n", padded.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    /// Short cells are padded to the widest one in their column.
    /// [spec: render/column-width]
    #[test]
    fn pads_every_column_to_its_widest_cell() {
        let table = render(&[vec!["id", "name"], vec!["1", "Ada"]]);
        assert_eq!(table, "| id | name |\n| 1  | Ada  |\n");
    }

    // [spec: render/pipe-escape]
    #[test]
    #[allow(clippy::needless_raw_string_hashes)]
    fn escapes_a_pipe_inside_a_cell() {
        assert_eq!(render(&[vec!["a|b"]]), r#"| a\|b |"#.to_owned() + "\n");
    }
}
