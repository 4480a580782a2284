//! Small text rules copied from OpenClaw, so that names and times come out as its guard saw them.

/// JS `String.prototype.trim` whitespace (spec/tool-loop.md: not U+0085, but U+FEFF).
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// JS `trim()`.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// The tool name OpenClaw's guard uses for a call: `normalizeToolPolicyName(name || "tool")`
/// (2026.9.6 `tool-policy-shared`): trimmed, lowercased, and the aliases `bash` → `exec`,
/// `apply-patch` → `apply_patch`, `cron` → `automations` applied. The guard hashes this name into
/// `argsHash`, so a replay must use it too (spec/tool-loop.md: the host applies the aliases).
pub fn normalize_tool_name(raw: &str) -> String {
    let name = if raw.is_empty() { "tool" } else { raw };
    let lower = js_trim(name).to_lowercase();
    match lower.as_str() {
        "bash" => "exec".to_string(),
        "apply-patch" => "apply_patch".to_string(),
        "cron" => "automations".to_string(),
        _ => lower,
    }
}

/// Milliseconds since the epoch of an ISO-8601 UTC or offset timestamp as JS `toISOString`
/// writes it (`2026-12-01T20:07:57.166Z`); `None` for anything else.
pub(crate) fn parse_iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> { s.get(from..to)?.parse::<u32>().ok().map(i64::from) };
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let padded: String = frac[..digits].chars().chain("000".chars()).take(3).collect();
        millis = padded.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let (sign, hm) = match rest.as_bytes().first() {
                Some(b'+') => (1, &rest[1..]),
                Some(b'-') => (-1, &rest[1..]),
                _ => return None,
            };
            let (h, m) = hm.split_once(':').unwrap_or((hm.get(..2)?, hm.get(2..)?));
            sign * (h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?)
        }
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_min * 60;
    Some(secs * 1000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_iso_ms("2026-12-01T20:07:57.166Z"), Some(1_796_155_677_166));
        assert_eq!(parse_iso_ms("2026-12-01T21:07:57.166+01:00"), Some(1_796_155_677_166));
        assert_eq!(parse_iso_ms("2026-12-01T20:07:57Z"), Some(1_796_155_677_000));
        assert_eq!(parse_iso_ms("2026-12-01T20:07:57.1Z"), Some(1_796_155_677_100));
        assert_eq!(parse_iso_ms("yesterday"), None);
        assert_eq!(parse_iso_ms("2026-13-01T20:07:57Z"), None);
    }

    #[test]
    fn tool_names_as_the_guard_sees_them() {
        assert_eq!(normalize_tool_name("exec"), "exec");
        assert_eq!(normalize_tool_name(" Bash "), "exec");
        assert_eq!(normalize_tool_name("apply-patch"), "apply_patch");
        assert_eq!(normalize_tool_name("cron"), "automations");
        assert_eq!(normalize_tool_name("Read"), "read");
        assert_eq!(normalize_tool_name(""), "tool");
        assert_eq!(normalize_tool_name("\u{feff}x\u{85}"), "x\u{85}");
    }
}
