//! The one text-table renderer of the toolkit: the simulator's reports (`shingled_sim::report`)
//! and the benchmarks' tables (`shingled-bench`: the store benches' `Table` and the drive
//! benches' comparison with the papers) all print through [`render`].
//!
//! A table is a header row, a rule and the data rows; cells are separated by two spaces and
//! padded to their column's width (left- or right-aligned). Each user keeps its own layout
//! through [`Column`] and [`Style`], so its output is byte for byte what it printed before the
//! renderers were merged.

/// How a column's cells are aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Padded on the right.
    Left,
    /// Padded on the left.
    Right,
}

/// How wide a column is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// The widest of the header and the cells, and at least `min`.
    Auto {
        /// Smallest width.
        min: usize,
    },
    /// Exactly this many characters: shorter cells are padded, longer ones overflow.
    Fixed(usize),
}

/// One column's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// Alignment of the header and the cells.
    pub align: Align,
    /// Width.
    pub width: Width,
}

impl Column {
    /// Left-aligned, as wide as its widest cell.
    pub const LEFT: Column = Column { align: Align::Left, width: Width::Auto { min: 0 } };
    /// Right-aligned, as wide as its widest cell.
    pub const RIGHT: Column = Column { align: Align::Right, width: Width::Auto { min: 0 } };

    /// Left-aligned, exactly `n` characters wide.
    pub const fn left(n: usize) -> Column {
        Column { align: Align::Left, width: Width::Fixed(n) }
    }

    /// Right-aligned, exactly `n` characters wide.
    pub const fn right(n: usize) -> Column {
        Column { align: Align::Right, width: Width::Fixed(n) }
    }
}

/// How cells are measured for [`Width::Auto`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// UTF-8 bytes (a cell with multi-byte characters gets more room than it shows).
    Bytes,
    /// Characters.
    Chars,
}

/// The line under the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Each column's width in dashes, laid out like a row.
    PerColumn,
    /// One run of this many dashes.
    Dashes(usize),
}

/// Table-wide layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// How [`Width::Auto`] columns measure their cells (padding always counts characters).
    pub measure: Measure,
    /// Trailing spaces are removed from every line.
    pub trim_end: bool,
    /// The rule under the header.
    pub rule: Rule,
}

impl Default for Style {
    fn default() -> Self {
        Style { measure: Measure::Chars, trim_end: false, rule: Rule::PerColumn }
    }
}

/// The first column left-aligned, the others right-aligned, all as wide as their widest cell.
pub fn first_left_rest_right(n: usize) -> Vec<Column> {
    (0..n).map(|i| if i == 0 { Column::LEFT } else { Column::RIGHT }).collect()
}

/// Renders `header`, the rule and `rows` (each row at most `columns.len()` cells), one line
/// each, every line ending in `\n`.
pub fn render<S: AsRef<str>>(columns: &[Column], header: &[&str], rows: &[Vec<S>], style: &Style) -> String {
    let measure = |s: &str| match style.measure {
        Measure::Bytes => s.len(),
        Measure::Chars => s.chars().count(),
    };
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, col)| match col.width {
            Width::Fixed(n) => n,
            Width::Auto { min } => {
                let cells = rows.iter().filter_map(|r| r.get(i)).map(|c| measure(c.as_ref()));
                header.get(i).map_or(0, |h| measure(h)).max(min).max(cells.max().unwrap_or(0))
            }
        })
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let start = out.len();
        for (i, c) in cells.enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let pad = widths[i].saturating_sub(c.chars().count());
            match columns[i].align {
                Align::Left => {
                    out.push_str(c);
                    out.extend(std::iter::repeat_n(' ', pad));
                }
                Align::Right => {
                    out.extend(std::iter::repeat_n(' ', pad));
                    out.push_str(c);
                }
            }
        }
        if style.trim_end {
            let keep = out[start..].trim_end().len();
            out.truncate(start + keep);
        }
        out.push('\n');
    };
    line(&mut out, &mut header.iter().copied());
    match style.rule {
        Rule::PerColumn => {
            let dashes: Vec<String> = widths.iter().map(|&n| "-".repeat(n)).collect();
            line(&mut out, &mut dashes.iter().map(String::as_str));
        }
        Rule::Dashes(n) => {
            out.push_str(&"-".repeat(n));
            out.push('\n');
        }
    }
    for r in rows {
        line(&mut out, &mut r.iter().map(|c| c.as_ref()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_column_left_the_rest_right() {
        let rows = vec![vec!["a".to_string(), "1".into()], vec!["bbb".into(), "22".into()]];
        let t = render(&first_left_rest_right(2), &["name", "n"], &rows, &Style::default());
        assert_eq!(t, "name   n\n----  --\na      1\nbbb   22\n");
        let trimmed = render(
            &[Column::LEFT, Column::LEFT],
            &["x", "y"],
            &[vec!["a", ""]],
            &Style { trim_end: true, ..Style::default() },
        );
        assert_eq!(trimmed, "x  y\n-  -\na\n");
    }

    #[test]
    fn fixed_widths_overflow_and_bytes_count_multibyte_cells() {
        let style = Style { measure: Measure::Bytes, trim_end: false, rule: Rule::Dashes(6) };
        let cols =
            [Column { align: Align::Left, width: Width::Auto { min: 2 } }, Column::right(3), Column::left(0)];
        let t = render(&cols, &["w", "n", "s"], &[vec!["µ", "1234", "x"]], &style);
        assert_eq!(t, "w     n  s\n------\nµ   1234  x\n");
    }
}
