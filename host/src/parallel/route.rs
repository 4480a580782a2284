//! Which worker a trace line goes to.
//!
//! Tool events (`tool_call`, `tool_result`, `compaction`) touch only the state of their session,
//! so they are sharded by session. Bot and group events go to one worker, the *global lane*:
//! the bot guard's prune clock is process-wide (one conversation's late timestamps change what a
//! prune left of another's), so no finer key is safe for every trace. Anything else (a malformed
//! line, an unknown kind, a missing session) also goes to the global lane: the policy refuses it,
//! and where it went does not matter.
//!
//! Two events of one session must get one key here: the routing key is the session as the policy
//! reads it (escapes decoded) with every lone UTF-16 surrogate dropped, which is at least as
//! coarse as the policy's own equality whether or not it keeps lone surrogates (it drops them
//! today). A `kind` or `session` given twice with different values is [`Route::Ambiguous`]. The
//! scanner reads only the top-level members and skips every other value without building it, and
//! stops once both are read and the rest of the line cannot name either again, so that routing
//! costs a small fraction of a decision. A line that is malformed only after its `kind` and
//! `session` therefore goes to that session's worker, which refuses it as any worker would.

use std::borrow::Cow;

/// Where one trace line goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    /// Spaces, tabs and carriage returns only: no decision, no state.
    Blank,
    /// A tool event of this session.
    Session(Cow<'a, str>),
    /// Bot and group events, and lines the policy will refuse.
    Global,
    /// A line whose `kind` or `session` appears twice with different values: which one the
    /// policy takes is its own rule (and may depend on lone surrogates in the keys), so such a
    /// trace is replayed on one gateway from here on.
    Ambiguous,
}

/// Routes one line (without its `\n`; valid UTF-8).
pub(crate) fn route(line: &str) -> Route<'_> {
    usual_head(line).unwrap_or_else(|| scan(line))
}

/// The route of a line that starts as the traces gateways write it, `{"kind":"…","session":"…"`
/// without spaces or escapes, and whose rest cannot name either again: the route [`scan`] gives
/// it, read without the scanner (routing is the thread that reads the trace's share of
/// `--jobs N`: the scanner's string reads were ~5 % of that thread on the bench's tool trace).
/// `None` for any other line.
fn usual_head(line: &str) -> Option<Route<'_>> {
    let rest = line.strip_prefix("{\"kind\":\"")?;
    let (kind, rest) = plain_string(rest)?;
    let (session, rest) = plain_string(rest.strip_prefix(",\"session\":\"")?)?;
    if may_name_again(rest.as_bytes()) {
        return None;
    }
    Some(match kind {
        "tool_call" | "tool_result" | "compaction" => Route::Session(Cow::Borrowed(session)),
        _ => Route::Global,
    })
}

/// The text before the first `"` of `s` and what follows that quote, if no `\` comes first.
fn plain_string(s: &str) -> Option<(&str, &str)> {
    let end = memchr::memchr2(b'"', b'\\', s.as_bytes())?;
    (s.as_bytes()[end] == b'"').then(|| (&s[..end], &s[end + 1..]))
}

/// Routes one line with the scanner.
fn scan(line: &str) -> Route<'_> {
    let mut s = Scan { b: line.as_bytes(), src: line, i: 0 };
    s.ws();
    if s.i == s.b.len() {
        return Route::Blank;
    }
    s.top().unwrap_or(Route::Global)
}

/// The worker of a session among `workers`: a fixed hash, so that every run routes alike.
pub(crate) fn worker_of(session: &str, workers: usize) -> usize {
    // FNV-1a, then a splitmix64 finish so that keys differing in one digit spread evenly.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in session.as_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h % workers.max(1) as u64) as usize
}

struct Scan<'a> {
    b: &'a [u8],
    src: &'a str,
    i: usize,
}

/// A top-level member's value, as far as routing cares.
#[derive(PartialEq)]
enum Value<'a> {
    Str(Cow<'a, str>),
    Other,
}

/// The value of a member that may be given more than once.
#[derive(Default)]
struct Member<'a> {
    value: Option<Value<'a>>,
    conflict: bool,
}

impl<'a> Member<'a> {
    fn set(&mut self, v: Value<'a>) {
        match &self.value {
            Some(old) if *old != v => self.conflict = true,
            Some(_) => {}
            None => self.value = Some(v),
        }
    }

    /// The route of a line whose `kind` member is `self`.
    fn route(self, session: Member<'a>) -> Option<Route<'a>> {
        if self.conflict || session.conflict {
            return Some(Route::Ambiguous);
        }
        match (self.value, session.value) {
            (Some(Value::Str(k)), Some(Value::Str(s))) if matches!(&*k, "tool_call" | "tool_result" | "compaction") => {
                Some(Route::Session(s))
            }
            _ => Some(Route::Global),
        }
    }
}

/// False if `rest` of a line cannot hold another `kind` or `session` key: neither appears
/// quoted, and no `\u` escape could spell one (a key's letters can be escaped no other way).
/// A line that might goes on being scanned, so the answer only has to err on the side of true.
///
/// This is what keeps routing cheap: once a tool event's `kind` and `session` are read (they
/// come first in the traces gateways write), its arguments and result are not scanned member by
/// member. Measured with callgrind on `replay --jobs 2` of the first 50,000 lines of the bench's
/// tool trace, with the strings found by memchr2 and the session set on foldhash: routing 3.8 k
/// -> 1.5 k instructions a line (a decision is ~27 k).
fn may_name_again(rest: &[u8]) -> bool {
    use memchr::memmem::Finder;
    static NAMES: std::sync::LazyLock<[Finder<'static>; 3]> =
        std::sync::LazyLock::new(|| [Finder::new("\"kind\""), Finder::new("\"session\""), Finder::new("\\u")]);
    NAMES.iter().any(|name| name.find(rest).is_some())
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek() == Some(c)).then(|| self.i += 1)
    }

    fn top(&mut self) -> Option<Route<'a>> {
        self.eat(b'{')?;
        let (mut kind, mut session) = (Member::default(), Member::default());
        self.ws();
        if self.eat(b'}').is_none() {
            loop {
                self.ws();
                let key = self.string()?;
                self.ws();
                self.eat(b':')?;
                self.ws();
                let slot = match &*key {
                    "kind" => Some(&mut kind),
                    "session" => Some(&mut session),
                    _ => None,
                };
                match slot {
                    Some(slot) if self.peek() == Some(b'"') => slot.set(Value::Str(self.string()?)),
                    Some(slot) => {
                        self.skip_value()?;
                        slot.set(Value::Other);
                    }
                    None => self.skip_value()?,
                }
                if kind.value.is_some() && session.value.is_some() && !may_name_again(&self.b[self.i..]) {
                    // The rest (the arguments, the result) cannot change the route: not read.
                    return kind.route(session);
                }
                self.ws();
                match self.peek()? {
                    b',' => self.i += 1,
                    b'}' => {
                        self.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.ws();
        if self.i != self.b.len() {
            return None;
        }
        kind.route(session)
    }

    /// Skips one value. Exact for valid JSON, which is all that matters: the policy refuses the rest.
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                let start = self.i;
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.i += 1;
                }
                (self.i > start).then_some(())
            }
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            let rest = self.b.get(self.i..)?;
            // memchr2, not a byte loop: skipping the arguments and results is most of routing,
            // and routing is the reading thread's share of `--jobs N` (its own code 575 -> 446 perf
            // samples on the bench's tool trace).
            let at = memchr::memchr2(b'"', b'\\', rest)?;
            self.i += at + 1;
            if rest[at] == b'"' {
                return Some(());
            }
            self.i += 1; // the escaped byte (`\"` must not end the string)
        }
    }

    /// Reads a string as the policy does: escapes decoded, lone surrogates dropped. A raw control
    /// character is kept: JSON does not allow one, so the policy refuses such a line wherever it
    /// goes (and if it did not, it would read the same text).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.i;
        self.i += memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
        if self.peek() == Some(b'"') {
            self.i += 1;
            return Some(Cow::Borrowed(&self.src[start..self.i - 1]));
        }
        let mut out = String::from(&self.src[start..self.i]);
        loop {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                _ => {
                    let run = self.i;
                    self.i += memchr::memchr2(b'"', b'\\', &self.b[self.i..])?;
                    out.push_str(&self.src[run..self.i]);
                }
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.b.get(self.i..self.i + 4)?;
        if !h.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        self.i += 4;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    }

    /// One escape after its backslash, as the guest's reader decodes it (`guest/src/json/parser.rs`).
    fn escape(&mut self, out: &mut String) -> Option<()> {
        let c = match self.peek()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                self.i += 1;
                let unit = self.hex4()?;
                if (0xD800..0xDC00).contains(&unit) && self.b[self.i..].starts_with(b"\\u") {
                    let save = self.i;
                    self.i += 2;
                    let low = self.hex4()?;
                    if (0xDC00..0xE000).contains(&low) {
                        out.extend(char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)));
                        return Some(());
                    }
                    self.i = save;
                }
                // A lone surrogate is not part of the text the policy keys by.
                out.extend(char::from_u32(unit));
                return Some(());
            }
            _ => return None,
        };
        self.i += 1;
        out.push(c);
        Some(())
    }
}

#[cfg(test)]
mod tests;
