//! reStructuredText simple tables: each body row is a unit of its own, read under the table's
//! header row (Pillow 10.0's "Removed | Use instead" table of constants, one constant per row).

/// A simple table found at a border line: its header (the text of the rows above the second
/// border, when there are three), the spans of its body rows (a line whose first column is blank
/// continues the row above) and the index of the line after its last border.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct SimpleTable {
    pub(super) header: Option<String>,
    pub(super) rows: Vec<(usize, usize)>,
    pub(super) end: usize,
}

/// A border of a simple table: runs of `=` separated by spaces (two columns at least).
pub(super) fn is_border(trimmed: &str) -> bool {
    trimmed.starts_with("===")
        && trimmed.contains(' ')
        && trimmed.chars().all(|c| c == '=' || c == ' ')
}

/// The simple table whose top border is line `at` of `lines` (byte offset, text), if the
/// borders close it.
pub(super) fn simple_table(lines: &[(usize, &str)], at: usize) -> Option<SimpleTable> {
    let (_, top) = lines.get(at)?;
    if !is_border(top.trim()) {
        return None;
    }
    let indent = top.len() - top.trim_start().len();
    // Where the first column ends: the first space of the border.
    let first_width = top.trim().find(' ')?;
    let border_at = |i: usize| lines.get(i).is_some_and(|(_, l)| is_border(l.trim()));
    let second = (at + 1..lines.len()).find(|&i| border_at(i))?;
    // A third border closes a table with a header; else the second closes it.
    let body_follows = lines
        .get(second + 1)
        .is_some_and(|(_, l)| !l.trim().is_empty() && !is_border(l.trim()));
    let third = body_follows
        .then(|| (second + 1..lines.len()).find(|&i| border_at(i)))
        .flatten();
    let (header, body, end) = match third {
        Some(third) => {
            let header = lines[at + 1..second]
                .iter()
                .map(|(_, l)| l.trim())
                .collect::<Vec<_>>()
                .join(" ");
            (Some(super::collapse(&header)), second + 1..third, third + 1)
        }
        None => (None, at + 1..second, second + 1),
    };
    let mut rows: Vec<(usize, usize)> = Vec::new();
    for &(offset, line) in &lines[body] {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let first_cell = line.get(indent..(indent + first_width).min(line.len()));
        let continues = first_cell.is_none_or(|cell| cell.trim().is_empty());
        let start = offset + line.len() - line.trim_start().len();
        let stop = offset + line.trim_end().len();
        match rows.last_mut() {
            Some(row) if continues => row.1 = stop,
            _ => rows.push((start, stop)),
        }
    }
    Some(SimpleTable { header, rows, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_under_a_header_and_continuation_lines() {
        let body = "=======  =====\nRemoved  Use instead\n=======  =====\n``A``    ``B``\n``C``    ``D`` or\n         ``E``\n=======  =====\nafter\n";
        let lines = super::super::lines_with_offsets(body);
        let table = simple_table(&lines, 0).expect("a table");
        assert_eq!(table.header.as_deref(), Some("Removed Use instead"));
        let rows: Vec<&str> = table.rows.iter().map(|(s, e)| &body[*s..*e]).collect();
        assert_eq!(
            rows,
            ["``A``    ``B``", "``C``    ``D`` or\n         ``E``"]
        );
        assert_eq!(lines[table.end].1, "after");
        // Without a header: two borders.
        let body = "=====  =====\n``A``  ``B``\n=====  =====\n";
        let lines = super::super::lines_with_offsets(body);
        let table = simple_table(&lines, 0).expect("a table");
        assert_eq!(table.header, None);
        assert_eq!(table.rows.len(), 1);
        assert!(simple_table(&lines, 1).is_none(), "a row is no border");
    }
}
