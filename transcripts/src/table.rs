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

/// `n` and the noun, plural unless `n` is 1: `count(1, "session")` is "1 session".
pub(crate) fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn columns_line_up() {
        let t = super::render(&["A", "BB"], &[vec!["xxx".into(), "y".into()], vec!["z".into(), "".into()]]);
        assert_eq!(t, "A    BB\nxxx  y\nz\n");
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(super::count(1, "tool call"), "1 tool call");
        assert_eq!(super::count(0, "session"), "0 sessions");
        assert_eq!(super::count(2, "read error"), "2 read errors");
    }
}
