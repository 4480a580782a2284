//! A plain aligned text table for terminals.

/// Renders `header` and `rows` with columns padded to their widest cell (in characters), two
/// spaces apart, the last column unpadded.
pub(crate) fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            text.push_str(cell);
            if i + 1 < widths.len() {
                let pad = widths[i].saturating_sub(cell.chars().count());
                text.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for row in rows {
        line(&mut row.iter().map(String::as_str));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let t = super::render(&["A", "BB"], &[vec!["xxx".into(), "y".into()], vec!["z".into(), "".into()]]);
        assert_eq!(t, "A    BB\nxxx  y\nz\n");
    }
}
