//! Just enough WAVE (the WebAssembly Value Encoding the wasmtime CLI speaks) for `replay`:
//! string literals as arguments, and `ok("…")` / `err({…})` results back.

use std::fmt::Write as _;

/// A WAVE string literal (with quotes) for `text`.
pub fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8 + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Parses a WAVE string literal at the start of `s`; returns the text and the rest of `s`.
pub fn parse_string(s: &str) -> Result<(String, &str), String> {
    let body = s.strip_prefix('"').ok_or_else(|| format!("expected a string literal, found {s:.40}"))?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &body[i + 1..])),
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('"') => out.push('"'),
                Some('\'') => out.push('\''),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('u') => {
                    let rest = &body[i + 2..];
                    let close = rest.find('}').ok_or("unterminated \\u{…} escape")?;
                    let hex = rest.get(1..close).filter(|_| rest.starts_with('{')).ok_or("bad \\u escape")?;
                    let code = u32::from_str_radix(hex, 16).map_err(|e| format!("bad \\u{{{hex}}}: {e}"))?;
                    out.push(char::from_u32(code).ok_or_else(|| format!("\\u{{{hex}}} is not a char"))?);
                    for _ in 0..=close {
                        chars.next();
                    }
                }
                other => return Err(format!("unknown escape \\{other:?}")),
            },
            c => out.push(c),
        }
    }
    Err("unterminated string literal".into())
}

/// Decodes the printed value of a `result<string, policy-error>`: `Ok(text)` for `ok("…")`, and
/// `Err(raw)` with the raw printed value for anything else (an `err({…})`).
pub fn ok_string(printed: &str) -> Result<String, String> {
    let printed = printed.trim();
    let Some(inner) = printed.strip_prefix("ok(") else {
        return Err(printed.to_string());
    };
    let (text, rest) = parse_string(inner)?;
    if rest.trim() != ")" {
        return Err(format!("trailing text after the string: {rest:.40}"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_escape() {
        for text in ["", "plain", "q\"uote", "back\\slash", "line\nfeed\r\n", "tab\t", "bell\u{7}", "ünï\u{1F600}"] {
            let lit = string(text);
            let (back, rest) = parse_string(&lit).expect("parses");
            assert_eq!(back, text, "literal {lit}");
            assert_eq!(rest, "");
        }
    }

    #[test]
    fn decodes_ok_and_reports_err() {
        assert_eq!(ok_string("ok(\"a\\nb\\n\")\n"), Ok("a\nb\n".to_string()));
        assert!(ok_string("err({path: \"line 1\", reason: \"x\"})").is_err());
    }
}
