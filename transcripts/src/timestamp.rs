//! Event times: the ISO-8601 timestamps OpenClaw writes, as milliseconds since the epoch.
//!
//! Not an OpenClaw rule (those are the policy's: `loopguard_policy::js`,
//! `loopguard_policy::config::profile::releases::normalize_tool_name`), only a parser. Kept
//! by hand rather than taken from `time` or `chrono`: their RFC 3339 parsers refuse inputs this
//! one has always read (an offset without a colon, `+0100`; a day past the month's end, which
//! rolls over as in the civil-day formula), so switching would change the times, and with them
//! the decisions, of transcripts that carry such stamps; the whole parser is 40 lines.

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
}
