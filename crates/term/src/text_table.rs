//! Plain-text tables, laid out by `comfy-table`: no borders, columns two spaces apart, names
//! left-aligned and figures right-aligned, every cell under its header however long a row's
//! name (a `per-class:<path>` row included), and the same text whatever the terminal (no
//! wrapping to its width: tests and pipes read what a person sees). A ratio is printed one
//! way everywhere: a percentage with two decimals ([`percent`]).

pub use comfy_table::Table;
use comfy_table::{CellAlignment, ContentArrangement, presets};

/// A ratio as a percentage with two decimals (`0.8423` → `84.23%`): the one form of every
/// ratio a table prints.
pub fn percent(ratio: f64) -> String {
    format!("{:.2}%", 100.0 * ratio)
}

/// A table with no borders whose layout ignores the terminal's width, with `header` as its
/// first line (none when empty).
pub fn new_table<S: ToString>(header: &[S]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    if !header.is_empty() {
        t.set_header(header.iter().map(ToString::to_string).collect::<Vec<_>>());
    }
    t
}

/// `t`'s text, every line indented by `indent` spaces and ending in a newline (no trailing
/// spaces): the columns listed in `left` left-aligned, the others right-aligned, two spaces
/// between columns.
pub fn render(t: &mut Table, indent: u16, left: &[usize]) -> String {
    for (i, c) in t.column_iter_mut().enumerate() {
        c.set_padding((if i == 0 { indent } else { 1 }, 1));
        c.set_cell_alignment(if left.contains(&i) {
            CellAlignment::Left
        } else {
            CellAlignment::Right
        });
    }
    let mut s = t.trim_fmt();
    s.push('\n');
    s
}

/// `header` over `rows`, the first `left` columns left-aligned: [`new_table`] then [`render`].
pub fn text_table(
    header: &[&str],
    left: usize,
    rows: impl IntoIterator<Item = Vec<String>>,
) -> String {
    let mut t = new_table(header);
    t.add_rows(rows);
    render(&mut t, 0, &(0..left).collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_sit_under_their_header_whatever_the_name() {
        let text = text_table(
            &["policy", "success"],
            1,
            [
                vec!["closest".into(), percent(0.8423)],
                vec![
                    "per-class:/a/very/long/path/table.yaml".into(),
                    percent(1.0),
                ],
            ],
        );
        let lines: Vec<&str> = text.lines().collect();
        let end = lines[0].len();
        assert!(
            lines.iter().all(|l| l.len() == end && !l.ends_with(' ')),
            "{text}"
        );
        assert!(
            lines[1].ends_with("84.23%") && lines[2].ends_with("100.00%"),
            "{text}"
        );
        assert!(text.ends_with('\n'));
    }
}
