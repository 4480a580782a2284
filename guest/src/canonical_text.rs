//! The canonical form of JSON text, written straight from the text, without a tree.
//!
//! Why: a tool call's fingerprint is a hash of its arguments' canonical form (`stableStringify`,
//! spec/tool-loop.md §1.1). Reading the arguments into a [`Json`](crate::json::Json) tree first,
//! allocating every object, and then writing the tree back out was the largest part of a
//! decision. Most arguments are plain JSON as `JSON.stringify` writes it: string literals already
//! in canonical form, keys without escapes, no duplicate keys. For those, [`CanonicalText`]
//! copies the text into canonical order in one pass: literals are copied as they are, and each
//! object's members are moved into key order only when they are not in it already.
//!
//! Anything outside that common case makes it **give up** (return `None`): an escape
//! `JSON.stringify` would not write (`\/`, `\u0041`, surrogates), a key with an escape, a
//! duplicate key, nesting deeper than [`MAX_DEPTH`], or text that is not JSON at all. The caller
//! then takes the tree path ([`crate::json::parse`] and [`crate::digest::write_canonical`]),
//! which has every rule and the exact error messages. Giving up is always correct, so this
//! module only has to be right about what it accepts; the tests and the `canonical_fingerprint`
//! fuzz target hold its output to the tree path's, byte for byte.

use std::cmp::Ordering;
use std::ops::Range;

use crate::bytes::{copy_short, push_bytes};
use crate::digest::write_number;
use crate::json::{canonical_escape_len, cmp_utf16, find_special, MAX_DEPTH};

/// One member of an object being written: its key (source range of the key's body, which has
/// no escapes) and its `"key":value` segment (range in the output).
#[derive(Debug, Clone)]
struct Member {
    /// The key's first eight bytes, big-endian and zero-padded, when they are all ASCII (keys
    /// cannot hold a NUL byte, so padding sorts a shorter key first); `None` otherwise. Two
    /// such prefixes that differ order their keys as UTF-16 does, so most comparisons of a
    /// sort are one integer comparison.
    prefix: Option<u64>,
    key: Range<usize>,
    segment: Range<usize>,
}

impl Member {
    fn new(key_text: &[u8], key: Range<usize>, segment: Range<usize>) -> Self {
        // `copy_short`, not a loop or `copy_from_slice`: on wasm32 a copy of unknown length is a
        // `memory.copy` call, and every loop header an interruption check.
        let n = key_text.len().min(8);
        let mut buf = [0u8; 8];
        copy_short(&mut buf[..n], &key_text[..n]);
        let word = u64::from_be_bytes(buf);
        let prefix = (word & 0x8080_8080_8080_8080 == 0).then_some(word);
        Member { prefix, key, segment }
    }
}

/// Objects with at most this many members are put in order by insertion sort.
const SMALL_OBJECT: usize = 24;

/// Scratch kept between writes; larger buffers are dropped before the next write.
pub const KEEP_BYTES: usize = 64 * 1024;

/// A canonical writer with reusable buffers: once warm, writing allocates nothing (for texts of
/// up to [`KEEP_BYTES`]).
#[derive(Debug, Default, Clone)]
pub struct CanonicalText {
    out: Vec<u8>,
    members: Vec<Member>,
    body: Vec<u8>,
    /// Source ranges of the texts a result's `content[]` contributes ([`CanonicalText::write_result`]).
    texts: Vec<Range<usize>>,
}

/// What [`CanonicalText::write`] found.
#[derive(Debug, PartialEq, Eq)]
pub struct Written<'o, 't> {
    /// The canonical text.
    pub canonical: &'o [u8],
    /// The prefix given to [`CanonicalText::write_after`] followed by the canonical text, in one
    /// buffer: what a digest hashes in one call.
    pub prefixed: &'o [u8],
    /// The value of the top-level member `action` when the text is an object with a string
    /// `action` (what `process` polls and `message` sends are recognised by).
    pub action: Option<&'t str>,
}

/// What [`CanonicalText::write_result`] found.
#[derive(Debug, PartialEq, Eq)]
pub struct WrittenResult<'o> {
    /// What the default outcome rule hashes: `{"details":…,"text":…}` for an object result, the
    /// canonical result itself otherwise.
    pub canonical: &'o [u8],
    /// The prefix given to [`CanonicalText::write_result_after`] followed by `canonical`.
    pub prefixed: &'o [u8],
    /// The result's `details` may have a `status` member (judged conservatively: the bytes
    /// `"status":` occur in its canonical text). Exec outcomes and the loop veto read it, so a
    /// caller that has no rule for it takes the tree path.
    pub status: bool,
}

/// Gives up: the tree path decides.
struct GiveUp;

type Step = Result<(), GiveUp>;

impl CanonicalText {
    /// The canonical form of `text`, or `None` when the text is outside the common case (see the
    /// module docs) and the tree path must decide, errors included.
    pub fn write<'o, 't>(&'o mut self, text: &'t str) -> Option<Written<'o, 't>> {
        self.write_after(&[], text)
    }

    /// [`CanonicalText::write`] into a buffer that starts with the concatenated `prefix` (a
    /// digest's tag and the like). Why: a digest then hashes one contiguous buffer in one call,
    /// instead of streaming pieces that blake3 copies into its block buffer one by one.
    pub fn write_after<'o, 't, const N: usize>(
        &'o mut self,
        prefix: &[&[u8]; N],
        text: &'t str,
    ) -> Option<Written<'o, 't>> {
        let start = self.start(prefix);
        let mut r = Reader { s: text.as_bytes(), src: text, i: 0, action: None };
        r.ws();
        r.value(self, 0).ok()?;
        r.ws();
        if r.i != r.s.len() {
            return None;
        }
        Some(Written { canonical: &self.out[start..], prefixed: &self.out, action: r.action })
    }

    /// Clears the buffers and writes `prefix`; returns where the canonical text starts.
    ///
    /// Buffers that grew past [`KEEP_BYTES`] for one large text are let go here, so that a
    /// gateway does not keep megabytes of scratch for the rest of its life after one big result.
    ///
    /// The prefix is an array, so that writing it is unrolled (no loop, no interruption check).
    fn start<const N: usize>(&mut self, prefix: &[&[u8]; N]) -> usize {
        if self.out.capacity() > KEEP_BYTES || self.body.capacity() > KEEP_BYTES {
            *self = Self::default();
        }
        self.out.clear();
        self.members.clear();
        self.texts.clear();
        for p in prefix {
            push_bytes(&mut self.out, p);
        }
        self.out.len()
    }

    /// The hash input of a tool result under the default outcome rule (spec/tool-loop.md §1.3,
    /// steps 2, 3 and 8): for an object, `{"details":D,"text":T}` where D is the canonical
    /// `details` (`{}` unless it is an object) and T the `text` of every `content[]` entry with
    /// a string `type` and a string `text`, joined with `\n` and trimmed; for anything else, the
    /// canonical result. Written straight from the text, without a tree.
    ///
    /// Besides the cases where [`CanonicalText::write`] gives up, this gives up on a duplicate
    /// `details`, `content`, `type` or `text` key (the last one would win), and when trimming
    /// could change the joined text: the first text starts, or the last text ends, with
    /// whitespace, an escape or a non-ASCII character, or one of them is empty.
    pub fn write_result<'o>(&'o mut self, text: &str) -> Option<WrittenResult<'o>> {
        self.write_result_after(&[], text)
    }

    /// [`CanonicalText::write_result`] after `prefix`, as [`CanonicalText::write_after`].
    pub fn write_result_after<'o, const N: usize>(
        &'o mut self,
        prefix: &[&[u8]; N],
        text: &str,
    ) -> Option<WrittenResult<'o>> {
        let start = self.start(prefix);
        let mut r = Reader { s: text.as_bytes(), src: text, i: 0, action: None };
        r.ws();
        let status = if r.s.get(r.i) == Some(&b'{') {
            r.result(self).ok()?
        } else {
            r.value(self, 0).ok()?;
            false
        };
        r.ws();
        if r.i != r.s.len() {
            return None;
        }
        Some(WrittenResult { canonical: &self.out[start..], prefixed: &self.out, status })
    }
}

/// Whether a text whose literal body is `body` keeps its first character under `trim()`: it
/// starts with a printable ASCII character (not a space, not an escape). Conservative.
fn keeps_start(body: &[u8]) -> bool {
    matches!(body.first(), Some(&b) if b > b' ' && b < 0x80 && b != b'\\')
}

/// Whether a text whose literal body is `body` keeps its last character under `trim()`: it ends
/// with a printable ASCII character that is not part of an escape (no backslash in the last six
/// bytes, the length of the longest escape). Conservative.
fn keeps_end(body: &[u8]) -> bool {
    matches!(body.last(), Some(&b) if b > b' ' && b < 0x80) && !body[body.len().saturating_sub(6)..].contains(&b'\\')
}

struct Reader<'t> {
    s: &'t [u8],
    src: &'t str,
    i: usize,
    /// The top-level `action` string, when found.
    action: Option<&'t str>,
}

impl<'t> Reader<'t> {
    #[inline(always)]
    fn ws(&mut self) {
        // Compact JSON (`JSON.stringify`'s) has no whitespace: one test, then out of line.
        if let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.skip_ws();
        }
    }

    #[cold]
    #[inline(never)]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, w: &mut CanonicalText, depth: usize) -> Step {
        match self.s.get(self.i) {
            Some(b'{') => self.object(w, depth + 1),
            Some(b'[') => self.array(w, depth + 1),
            Some(b'"') => {
                // A literal the reader keeps is its own canonical text, quotes included.
                let (body, _) = self.string()?;
                push_bytes(&mut w.out, &self.s[body.start - 1..body.end + 1]);
                Ok(())
            }
            Some(b't') => self.word(w, b"true"),
            Some(b'f') => self.word(w, b"false"),
            Some(b'n') => self.word(w, b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(w),
            _ => Err(GiveUp),
        }
    }

    fn word(&mut self, w: &mut CanonicalText, word: &[u8]) -> Step {
        if !self.s[self.i..].starts_with(word) {
            return Err(GiveUp);
        }
        self.i += word.len();
        push_bytes(&mut w.out, word);
        Ok(())
    }

    fn array(&mut self, w: &mut CanonicalText, depth: usize) -> Step {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        self.i += 1;
        w.out.push(b'[');
        self.ws();
        if self.eat(b']') {
            w.out.push(b']');
            return Ok(());
        }
        loop {
            self.ws();
            self.value(w, depth)?;
            self.ws();
            if self.eat(b',') {
                w.out.push(b',');
            } else if self.eat(b']') {
                w.out.push(b']');
                return Ok(());
            } else {
                return Err(GiveUp);
            }
        }
    }

    fn object(&mut self, w: &mut CanonicalText, depth: usize) -> Step {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        self.i += 1;
        w.out.push(b'{');
        self.ws();
        if self.eat(b'}') {
            w.out.push(b'}');
            return Ok(());
        }
        let base = w.members.len();
        let body_start = w.out.len();
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(GiveUp);
            }
            let (key, escaped) = self.string()?;
            if escaped {
                return Err(GiveUp); // keys are compared unescaped: leave escaped ones to the tree
            }
            self.ws();
            if !self.eat(b':') {
                return Err(GiveUp);
            }
            self.ws();
            if w.out.len() > body_start {
                w.out.push(b',');
            }
            let seg_start = w.out.len();
            push_bytes(&mut w.out, &self.s[key.start - 1..key.end + 1]);
            w.out.push(b':');
            if self.s.get(self.i) == Some(&b'"') {
                // A string value, read here rather than by a call to `value` (the most common
                // member, and the call cost as much as reading it); numbers likewise below.
                let (body, escaped) = self.string()?;
                push_bytes(&mut w.out, &self.s[body.start - 1..body.end + 1]);
                if depth == 1 && &self.s[key.clone()] == b"action" {
                    // A top-level string `action` without escapes is its own text; one with
                    // escapes would need decoding, so the tree path handles it.
                    if escaped {
                        return Err(GiveUp);
                    }
                    self.action = Some(&self.src[body]);
                }
            } else if let Some(b'-' | b'0'..=b'9') = self.s.get(self.i) {
                self.number(w)?;
            } else {
                self.value(w, depth)?;
            }
            w.members.push(Member::new(&self.s[key.clone()], key, seg_start..w.out.len()));
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if !self.eat(b'}') {
                return Err(GiveUp);
            }
            self.order(w, base, body_start)?;
            w.members.truncate(base);
            w.out.push(b'}');
            return Ok(());
        }
    }

    /// Skips a value, checking it as [`Reader::value`] does.
    fn skip(&mut self, w: &mut CanonicalText, depth: usize) -> Step {
        let at = w.out.len();
        self.value(w, depth)?;
        w.out.truncate(at);
        Ok(())
    }

    /// Reads a member's key and its colon; escaped keys give up. Inlined: its callers read a
    /// result's few members, and the call cost as much as the read.
    #[inline(always)]
    fn key(&mut self) -> Result<Range<usize>, GiveUp> {
        self.ws();
        if self.s.get(self.i) != Some(&b'"') {
            return Err(GiveUp);
        }
        let (key, escaped) = self.string()?;
        self.ws();
        if escaped || !self.eat(b':') {
            return Err(GiveUp);
        }
        self.ws();
        Ok(key)
    }

    /// After a member or an element: `,` (true, more follow) or `close` (false).
    fn next(&mut self, close: u8) -> Result<bool, GiveUp> {
        self.ws();
        if self.eat(b',') {
            Ok(true)
        } else if self.eat(close) {
            Ok(false)
        } else {
            Err(GiveUp)
        }
    }

    /// The result object (at its `{`): see [`CanonicalText::write_result`]. Returns whether
    /// `details` may have a `status`.
    fn result(&mut self, w: &mut CanonicalText) -> Result<bool, GiveUp> {
        self.i += 1;
        push_bytes(&mut w.out, b"{\"details\":");
        let head = w.out.len();
        let (mut details, mut content) = (false, false);
        self.ws();
        let mut more = !self.eat(b'}');
        while more {
            let key = self.key()?;
            match &self.s[key] {
                b"details" if details => return Err(GiveUp),
                b"details" => {
                    details = true;
                    // Written in place (nothing else is kept in `out` until the end); a details
                    // that is not an object counts as `{}`.
                    if self.s.get(self.i) == Some(&b'{') {
                        self.value(w, 1)?;
                    } else {
                        self.skip(w, 1)?;
                    }
                }
                b"content" if content => return Err(GiveUp),
                b"content" => {
                    content = true;
                    if self.s.get(self.i) == Some(&b'[') {
                        self.content(w, 2)?;
                    } else {
                        self.skip(w, 1)?;
                    }
                }
                _ => self.skip(w, 1)?,
            }
            more = self.next(b'}')?;
        }
        if w.out.len() == head {
            push_bytes(&mut w.out, b"{}");
        }
        let status = w.out[head..].windows(9).any(|win| win == b"\"status\":");
        if let (Some(first), Some(last)) = (w.texts.first(), w.texts.last()) {
            if !keeps_start(&self.s[first.clone()]) || !keeps_end(&self.s[last.clone()]) {
                return Err(GiveUp);
            }
        }
        push_bytes(&mut w.out, b",\"text\":\"");
        for (n, t) in w.texts.iter().enumerate() {
            if n > 0 {
                push_bytes(&mut w.out, b"\\n");
            }
            w.out.extend_from_slice(&self.s[t.clone()]);
        }
        push_bytes(&mut w.out, b"\"}");
        Ok(status)
    }

    /// A result's `content` array (at its `[`): collects the texts of its entries.
    fn content(&mut self, w: &mut CanonicalText, depth: usize) -> Step {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        self.i += 1;
        self.ws();
        let mut more = !self.eat(b']');
        while more {
            self.ws();
            if self.s.get(self.i) == Some(&b'{') {
                self.content_entry(w, depth + 1)?;
            } else {
                self.skip(w, depth)?;
            }
            more = self.next(b']')?;
        }
        Ok(())
    }

    /// One `content[]` entry (at its `{`): its text counts when both `type` and `text` are
    /// strings.
    fn content_entry(&mut self, w: &mut CanonicalText, depth: usize) -> Step {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        self.i += 1;
        let (mut typed, mut text): (Option<bool>, Option<Option<Range<usize>>>) = (None, None);
        self.ws();
        let mut more = !self.eat(b'}');
        while more {
            let key = self.key()?;
            let is_string = self.s.get(self.i) == Some(&b'"');
            match &self.s[key] {
                b"type" if typed.is_some() => return Err(GiveUp),
                b"text" if text.is_some() => return Err(GiveUp),
                b"type" if is_string => {
                    self.string()?;
                    typed = Some(true);
                }
                b"text" if is_string => text = Some(Some(self.string()?.0)),
                b"type" => {
                    self.skip(w, depth)?;
                    typed = Some(false);
                }
                b"text" => {
                    self.skip(w, depth)?;
                    text = Some(None);
                }
                _ => self.skip(w, depth)?,
            }
            more = self.next(b'}')?;
        }
        if let (Some(true), Some(Some(body))) = (typed, text) {
            w.texts.push(body);
        }
        Ok(())
    }

    /// Puts the members `base..` (written from `body_start` on) into key order, unless they are
    /// already in it. Duplicate keys give up (JSON.parse keeps the last; the tree does that).
    fn order(&self, w: &mut CanonicalText, base: usize, body_start: usize) -> Step {
        let key = |m: &Member| &self.src[m.key.clone()];
        // Inlined into both sorts: most comparisons are one integer comparison, and a call per
        // comparison (with its interruption check in the component) cost more than that.
        #[inline(always)]
        fn by_key(src: &str, a: &Member, b: &Member) -> Ordering {
            match (a.prefix, b.prefix) {
                (Some(x), Some(y)) if x != y => x.cmp(&y),
                _ => cmp_utf16(&src[a.key.clone()], &src[b.key.clone()]),
            }
        }
        let cmp = |a: &Member, b: &Member| by_key(self.src, a, b);
        let members = &mut w.members[base..];
        if members.len() <= SMALL_OBJECT {
            // Insertion sort: one pass when the members are in order already, and a duplicate
            // key meets its twin on the way (a key stops at the first one not greater).
            let mut moved = false;
            for i in 1..members.len() {
                let mut j = i;
                while j > 0 {
                    match cmp(&members[j - 1], &members[j]) {
                        Ordering::Less => break,
                        Ordering::Equal => return Err(GiveUp),
                        Ordering::Greater => {
                            members.swap(j - 1, j);
                            moved = true;
                            j -= 1;
                        }
                    }
                }
            }
            if !moved {
                return Ok(());
            }
        } else {
            if members.windows(2).all(|p| cmp(&p[0], &p[1]).is_lt()) {
                return Ok(());
            }
            members.sort_unstable_by(cmp);
            if members.windows(2).any(|p| key(&p[0]) == key(&p[1])) {
                return Err(GiveUp);
            }
        }
        w.body.clear();
        w.body.extend_from_slice(&w.out[body_start..]);
        w.out.truncate(body_start);
        for (n, m) in members.iter().enumerate() {
            if n > 0 {
                w.out.push(b',');
            }
            push_bytes(&mut w.out, &w.body[m.segment.start - body_start..m.segment.end - body_start]);
        }
        Ok(())
    }

    /// Reads a string literal and returns the source range of its body, when that body is
    /// exactly what `JSON.stringify` writes for it (the same test as the tree reader's), and
    /// whether it has escapes.
    #[inline(always)]
    fn string(&mut self) -> Result<(Range<usize>, bool), GiveUp> {
        self.i += 1;
        let start = self.i;
        // Most literals have no escape: their first special byte is the closing quote. That
        // case takes no loop (in the component, a loop header costs an interruption check).
        let end = start + find_special(&self.s[start..]);
        if self.s.get(end) == Some(&b'"') {
            self.i = end + 1;
            return Ok((start..end, false));
        }
        self.string_rest(start, end)
    }

    /// [`Reader::string`] from its first special byte that is not the closing quote.
    ///
    /// In the component: one loop that either scans sixteen bytes or handles the special byte
    /// the last scan found, with no calls. Results with many lines have an escape (`\n`) every
    /// few dozen bytes, and a scan call per escape cost more than the scan.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline(never)]
    fn string_rest(&mut self, start: usize, at: usize) -> Result<(Range<usize>, bool), GiveUp> {
        use crate::json::{find_special_short, specials16};
        let (s, n) = (self.s, self.s.len());
        // `p` is where the next scan starts; `found` is a special byte's offset from `p`.
        let (mut p, mut escaped) = (at, false);
        loop {
            let found = if p + 16 <= n {
                match specials16(&s[p..p + 16]) {
                    0 => {
                        p += 16;
                        continue;
                    }
                    mask => mask.trailing_zeros() as usize,
                }
            } else {
                find_special_short(&s[p..])
            };
            let at = p + found;
            match s.get(at) {
                Some(b'"') => {
                    self.i = at + 1;
                    return Ok((start..at, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    p = at + canonical_escape_len(&s[at..]).ok_or(GiveUp)?;
                }
                _ => return Err(GiveUp), // unterminated, or a raw control character
            }
        }
    }

    /// [`Reader::string`] from its first special byte that is not the closing quote.
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    #[inline(never)]
    fn string_rest(&mut self, start: usize, at: usize) -> Result<(Range<usize>, bool), GiveUp> {
        self.i = at;
        let mut escaped = false;
        loop {
            self.i += find_special(&self.s[self.i..]);
            match self.s.get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    return Ok((start..self.i - 1, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    // Only the escapes `JSON.stringify` writes are kept.
                    self.i += canonical_escape_len(&self.s[self.i..]).ok_or(GiveUp)?;
                }
                _ => return Err(GiveUp), // unterminated, or a raw control character
            }
        }
    }

    /// A number. Integers of up to 15 digits without a leading zero (what ids, counts and
    /// durations are) are their own canonical text and are copied as they are, their digits
    /// found eight at a time; everything else takes [`Reader::number_rest`].
    #[inline(always)]
    fn number(&mut self, w: &mut CanonicalText) -> Step {
        let start = self.i;
        let first = start + usize::from(self.s.get(start) == Some(&b'-'));
        if let Some(b'1'..=b'9') = self.s.get(first) {
            let end = first + leading_digits(&self.s[first..]);
            if end - first <= 15 && !matches!(self.s.get(end), Some(b'.' | b'e' | b'E')) {
                self.i = end;
                push_bytes(&mut w.out, &self.s[start..end]);
                return Ok(());
            }
        }
        self.number_rest(w)
    }

    /// [`Reader::number`] past its common case.
    #[inline(never)]
    fn number_rest(&mut self, w: &mut CanonicalText) -> Step {
        let start = self.i;
        self.eat(b'-');
        match self.s.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(GiveUp),
        }
        let mut plain = true;
        if self.eat(b'.') {
            plain = false;
            if !matches!(self.s.get(self.i), Some(b'0'..=b'9')) {
                return Err(GiveUp);
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.s.get(self.i) {
            plain = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.s.get(self.i) {
                self.i += 1;
            }
            if !matches!(self.s.get(self.i), Some(b'0'..=b'9')) {
                return Err(GiveUp);
            }
            self.digits();
        }
        let text = &self.src[start..self.i];
        let digits = text.strip_prefix('-').unwrap_or(text);
        if plain && digits.len() <= 15 {
            // An integer below 10^15 is exact as a double and JS prints its digits; `-0` is `0`.
            let text = if digits == "0" { digits } else { text };
            push_bytes(&mut w.out, text.as_bytes());
            return Ok(());
        }
        let n: f64 = text.parse().map_err(|_| GiveUp)?;
        if !n.is_finite() {
            return Err(GiveUp); // written as a quoted string: rare, leave it to the tree
        }
        write_number(n, &mut w.out);
        Ok(())
    }

    fn digits(&mut self) {
        self.i += leading_digits(&self.s[self.i..]);
    }
}

/// How many ASCII digits `s` starts with: eight bytes per step. A byte is a digit when it is
/// `'0'` to `'9'` after `^ '0'` (0 to 9); adding 0x76 sets the high bit of a byte from 10 up,
/// and bytes from 0x80 are flagged by their own high bit. A carry only flags bytes above
/// (later than) a true hit, so the lowest flagged byte is exact.
#[inline(always)]
fn leading_digits(s: &[u8]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while i + 8 <= s.len() {
        let mut b = [0u8; 8];
        b.copy_from_slice(&s[i..i + 8]);
        let y = u64::from_le_bytes(b) ^ (LO * u64::from(b'0'));
        let flagged = (y.wrapping_add(LO * 0x76) | y) & HI;
        if flagged != 0 {
            return i + (flagged.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(b'0'..=b'9') = s.get(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::canonical;
    use crate::json::parse;

    /// The tree path's canonical text, or None when the text is not JSON.
    fn tree(text: &str) -> Option<String> {
        parse(text).ok().map(|v| canonical(&v))
    }

    fn fast(text: &str) -> Option<String> {
        let mut w = CanonicalText::default();
        w.write(text).map(|r| String::from_utf8(r.canonical.to_vec()).expect("canonical text is UTF-8"))
    }

    #[test]
    fn common_arguments_are_written_without_the_tree_and_agree_with_it() {
        let cases = [
            r#"{"path":"/a/b.rs","command":"cargo test -- --nocapture","timeout_ms":120000,"env":{"RUST_LOG":"debug","CI":"false"},"step":3}"#,
            r#" { "b" : [ 1 , 2.50, -0, 1e21, 0.1, -7, 123456789012345678 ] , "a" : { "z" : null , "y" : true , "x" : false } } "#,
            r#"{"text":"line one\nline \"two\"\t\\ \u001f é 😀"}"#,
            "\"raw \u{2028} line separator\"",
            r#"[[],{},[{}],"",0]"#,
            r#""just a string""#,
            "-0",
            "1E+2",
            "{\"é\":1,\"e\":2,\"😀\":3,\"\u{ffff}\":4}",
            r#"{"":1," ":2}"#,
        ];
        for text in cases {
            assert_eq!(fast(text), tree(text), "text {text}");
            assert!(fast(text).is_some(), "the common case gave up: {text}");
        }
    }

    #[test]
    fn scratch_from_one_large_text_is_let_go_at_the_next_write() {
        let mut w = CanonicalText::default();
        let large = format!("{{\"b\":\"{}\",\"a\":1}}", "x".repeat(4 * KEEP_BYTES));
        assert!(w.write(&large).is_some());
        assert!(w.out.capacity() > KEEP_BYTES);
        assert_eq!(w.write(r#"{"b":2,"a":1}"#).map(|r| r.canonical.to_vec()), Some(br#"{"a":1,"b":2}"#.to_vec()));
        assert!(w.out.capacity() <= KEEP_BYTES && w.body.capacity() <= KEEP_BYTES);
    }

    /// Every escape, canonical or not, and every raw control byte at every position of literals
    /// up to 70 bytes long, so that each crosses the scanner's sixteen-byte steps; with a second
    /// escape some bytes later, and cut short (unterminated). The writer agrees with the tree
    /// or gives up, and never gives up on text `JSON.stringify` writes.
    #[test]
    fn literals_with_escapes_anywhere_agree_with_the_tree() {
        let escapes = [
            r"\n",
            r#"\""#,
            r"\\",
            r"\t",
            r"\u001f",
            r"\u0000",
            r"\/",
            r"\u0041",
            r"\u00E9",
            r"\ud83d\ude00",
            "\u{1}",
            r"\x",
        ];
        for len in [0, 1, 14, 15, 16, 17, 31, 32, 33, 47, 48, 70] {
            for at in 0..=len {
                for (k, e) in escapes.iter().enumerate() {
                    let second = escapes[(k + at) % escapes.len()];
                    let body = format!("{}{e}{}{second}{}", "a".repeat(at), "b".repeat(k), "c".repeat(len - at));
                    // The first six are what `JSON.stringify` writes.
                    let canonical = k < 6 && (k + at) % escapes.len() < 6;
                    for text in [format!("\"{body}\""), format!("{{\"k\":\"{body}\",\"a\":1}}"), format!("[\"{body}")] {
                        let (f, t) = (fast(&text), tree(&text));
                        assert!(f.is_none() || f == t, "text {text:?}: writer {f:?}, tree {t:?}");
                        if canonical && !text.starts_with('[') {
                            assert!(f.is_some(), "gave up on {text:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn leading_digits_stop_at_the_first_byte_that_is_not_a_digit() {
        for n in 0..20 {
            for stop in [b'/', b':', b'.', b'e', b',', b'}', 0x80, 0xB0, 0xFF, 0x00, b' '] {
                let mut s = vec![b'7'; n];
                s.push(stop);
                s.extend_from_slice(b"123456789");
                assert_eq!(leading_digits(&s), n, "{n} digits then {stop:#x}");
                assert_eq!(leading_digits(&s[..n]), n, "{n} digits to the end");
            }
        }
        // Every byte value, in every position of the first word.
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut s = *b"0123456789";
                s[at] = b;
                let want = if b.is_ascii_digit() { 10 } else { at };
                assert_eq!(leading_digits(&s), want, "byte {b:#x} at {at}");
            }
        }
    }

    #[test]
    fn keys_sort_by_utf16_code_units_not_bytes() {
        // U+1F600 is written as the surrogates D83D DE00 in UTF-16, so it sorts before U+FF61,
        // although its UTF-8 bytes (F0 ..) sort after U+FF61's (EF ..).
        let text = "{\"\u{FF61}\":2,\"\u{1F600}\":1}";
        assert_eq!(fast(text).as_deref(), Some("{\"\u{1F600}\":1,\"\u{FF61}\":2}"));
        assert_eq!(fast(text), tree(text));
    }

    #[test]
    fn it_gives_up_where_the_tree_has_rules_of_its_own() {
        for text in [
            r#"{"a":1,"a":2}"#,                                  // duplicate key: the last one wins
            r#"{"b":1,"c":2,"a":3,"c":4}"#,                      // the same, out of order
            r#"{"key_long_1":1,"key_long_2":2,"key_long_1":3}"#, // twins past the 8-byte prefix
            r#"{"a\n":1}"#,                                      // escaped key
            r#""a\/b""#,                                         // escape JSON.stringify does not write
            r#""\u0041""#,                                       // same
            r#""\u000A""#,                                       // upper-case hex
            r#""\ud83d\ude00""#,                                 // surrogate pair
            r#""\ud800""#,                                       // lone surrogate: removed
            "1e400",                                             // Infinity: written as a string
            r#"{"action":"po\u0001ll"}"#,                        // an escaped top-level action
        ] {
            assert_eq!(fast(text), None, "text {text}");
            assert!(tree(text).is_some(), "the tree reads {text}");
        }
    }

    #[test]
    fn objects_small_and_large_are_ordered_as_the_tree_orders_them() {
        // Insertion sort up to SMALL_OBJECT members, the library sort above: every size around
        // the limit, in order, reversed and shuffled, with and without a duplicate key.
        for n in [0, 1, 2, 3, SMALL_OBJECT - 1, SMALL_OBJECT, SMALL_OBJECT + 1, 60] {
            let keys: Vec<String> = (0..n).map(|i| format!("k{:02}{}", (i * 7) % 61, "é".repeat(i % 3))).collect();
            let orders: [Vec<usize>; 3] =
                [(0..n).collect(), (0..n).rev().collect(), (0..n).map(|i| (i * 7 + 3) % n.max(1)).collect()];
            for order in orders {
                let distinct: std::collections::HashSet<_> = order.iter().collect();
                assert_eq!(distinct.len(), n, "a permutation");
                let members: Vec<String> = order.iter().map(|&i| format!(r#""{}":{i}"#, keys[i])).collect();
                let text = format!("{{{}}}", members.join(","));
                assert_eq!(fast(&text), tree(&text), "{text}");
                assert!(fast(&text).is_some(), "{text}");
                if n > 1 {
                    let twin = format!("{{{},{}}}", members.join(","), members[n / 2]);
                    assert_eq!(fast(&twin), None, "a duplicate key gives up: {twin}");
                }
            }
        }
    }

    #[test]
    fn it_gives_up_on_text_that_is_not_json() {
        for text in [
            "",
            "{",
            "[1,]",
            r#"{"a"}"#,
            r#"{"a":1,}"#,
            "01",
            "1.",
            "-",
            "tru",
            "\"x",
            "\"\u{1}\"",
            "[1] 2",
            "{1:2}",
            "nul",
            "1e",
            "[1 2]",
            r#"{"a":1 "b":2}"#,
            &format!("{}1{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1)),
        ] {
            assert_eq!(fast(text), None, "text {text:?}");
            assert_eq!(tree(text), None, "text {text:?}");
        }
    }

    #[test]
    fn the_top_level_action_is_found() {
        let mut w = CanonicalText::default();
        assert_eq!(w.write(r#"{"sessionId":"x","action":"poll"}"#).and_then(|r| r.action), Some("poll"));
        assert_eq!(w.write(r#"{"nested":{"action":"poll"}}"#).and_then(|r| r.action), None);
        assert_eq!(w.write(r#"{"action":7}"#).and_then(|r| r.action), None);
        assert_eq!(w.write(r#"["action"]"#).and_then(|r| r.action), None);
    }

    #[test]
    fn deep_but_allowed_nesting_agrees_with_the_tree() {
        let text = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(fast(&text), tree(&text));
        assert!(fast(&text).is_some());
    }
}
