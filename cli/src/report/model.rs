//! The report's data: per session, what each call was and what the guard decided on it under
//! each config; and the overview summed from the sessions.
//!
//! Why a view beside the transcripts report's rows: a row keeps counts and the first finding,
//! enough for a table, but the page shows every call on a timeline and what the model would
//! have read. The view is built in the worker that replayed the session, from the same decision
//! lines, and keeps only what the page shows: one verdict letter per call, and (only for a
//! session the guard touched) the calls' excerpts, bounded in length and in number.

use std::collections::{BTreeMap, HashMap};

use loopguard_transcripts::{EventKind, Outcome, SessionRow, SessionTrace, TraceEvent};
use serde::{Deserialize, Serialize};

/// Characters kept of a call's arguments or outcome (a tool output can be megabytes).
pub const EXCERPT_CHARS: usize = 240;
/// Characters kept of a message the model would have read.
pub const MESSAGE_CHARS: usize = 600;
/// Calls of one session whose excerpts are kept: the first ones, then only calls with a
/// verdict, up to twice this. The timeline still has a mark for every call.
pub const DETAIL_CALLS: usize = 1_000;
/// Distinct tool names counted one by one; later names are summed under [`OTHER_TOOLS`].
pub const TOOL_NAMES: usize = 1_000;
/// The overview's name for the tools beyond [`TOOL_NAMES`].
pub const OTHER_TOOLS: &str = "(other tools)";

/// Verdict letters of the timeline: allow, warn, block, ended (an abort on the call's result).
pub const ALLOW: u8 = b'a';
const WARN: u8 = b'w';
const BLOCK: u8 = b'b';
const ENDED: u8 = b'e';

/// A tool's decisions under one config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ToolCounts {
    /// Calls.
    pub calls: u64,
    /// Warn decisions.
    pub warnings: u64,
    /// Block decisions.
    pub blocks: u64,
    /// Aborts on its results.
    pub aborts: u64,
}

/// One session as the page shows it.
#[derive(Debug, Clone, Default)]
pub struct SessionView {
    /// Per config, per tool.
    pub tools: Vec<BTreeMap<String, ToolCounts>>,
    /// The calls, for a session with any verdict other than allow under any config.
    pub detail: Option<SessionDetail>,
}

/// The calls of a session the guard touched: serialized into the page, parsed when opened.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionDetail {
    /// Per config, one verdict letter per call (`a`, `w`, `b`, `e`), call 1 first.
    pub verdicts: Vec<String>,
    /// The messages the verdicts refer to, each once.
    pub messages: Vec<String>,
    /// The calls whose excerpts are kept.
    pub calls: Vec<CallDetail>,
}

/// One call, its excerpts and its verdict under each config.
#[derive(Debug, Clone, Serialize)]
pub struct CallDetail {
    /// 1-based index of the call in its session.
    pub call: u32,
    /// The tool as written in the transcript.
    pub tool: String,
    /// The arguments (compact JSON), cut to [`EXCERPT_CHARS`].
    pub args: String,
    /// The outcome (compact JSON), cut to [`EXCERPT_CHARS`]; none without a result.
    pub outcome: Option<String>,
    /// Whether the outcome is an error.
    pub error: bool,
    /// Per config: the verdict's detector, count and message (an index into
    /// [`SessionDetail::messages`]); none for allow.
    pub verdicts: Vec<Option<Marked>>,
}

/// A verdict other than allow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Marked {
    /// `warn`, `block` or `abort`.
    pub action: String,
    /// The detector.
    pub detector: String,
    /// The detector's count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The message the model would have read (index into the session's messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<u32>,
}

/// The fields of a decision line the page shows (docs/spec/trace-format.md).
#[derive(Deserialize)]
struct Line {
    line: usize,
    action: String,
    #[serde(default)]
    detector: Option<String>,
    #[serde(default)]
    count: Option<u64>,
    #[serde(default)]
    message: Option<String>,
}

impl SessionView {
    /// The view of `trace` from its rows and decision lines (one string per config).
    pub fn new(trace: &SessionTrace, rows: &[SessionRow], decisions: &[String]) -> SessionView {
        let calls = trace.events.iter().filter(|e| e.event.kind() == EventKind::ToolCall).count();
        let mut letters: Vec<Vec<u8>> = decisions.iter().map(|_| vec![ALLOW; calls]).collect();
        // Per config, call index → its verdict: only the non-allow ones, so small.
        let mut marks: Vec<Marks> = Vec::new();
        let mut tools: Vec<BTreeMap<String, ToolCounts>> = Vec::new();
        for (c, text) in decisions.iter().enumerate() {
            let mut mine = HashMap::new();
            let mut counts: BTreeMap<String, ToolCounts> = BTreeMap::new();
            for e in trace.events.iter().filter(|e| e.event.kind() == EventKind::ToolCall) {
                counts.entry(tool_of(e)).or_default().calls += 1;
            }
            // Only a verdict carries a detector: allow and recorded lines are skipped unparsed.
            for line in text.lines().filter(|l| l.contains("\"detector\"")) {
                let Ok(d) = serde_json::from_str::<Line>(line) else { continue };
                let Some(e) = trace.events.get(d.line.wrapping_sub(1)) else { continue };
                let Some(call) = e.reference.call_index.filter(|i| (1..=calls).contains(&(*i as usize))) else {
                    continue;
                };
                let tally = counts.entry(tool_of(e)).or_default();
                let letter = match (e.event.kind(), d.action.as_str()) {
                    (EventKind::ToolCall, "warn") => (WARN, &mut tally.warnings),
                    (EventKind::ToolCall, "block") => (BLOCK, &mut tally.blocks),
                    (EventKind::ToolResult, "abort") => (ENDED, &mut tally.aborts),
                    _ => continue,
                };
                *letter.1 += 1;
                letters[c][call as usize - 1] = letter.0;
                let message = d.message.map(|m| excerpt(&m, MESSAGE_CHARS));
                mine.insert(call, (d.detector.unwrap_or_default(), d.count, message));
            }
            marks.push(mine);
            tools.push(counts);
        }
        let touched = rows.iter().any(|r| r.warnings + r.blocks + r.aborts > 0) || marks.iter().any(|m| !m.is_empty());
        let detail = touched.then(|| detail(trace, letters, &marks));
        SessionView { tools, detail }
    }
}

fn tool_of(e: &loopguard_transcripts::ImportedEvent) -> String {
    match (&e.reference.tool, &e.event) {
        (Some(t), _) => t.clone(),
        (None, TraceEvent::ToolCall(c)) => c.tool.clone(),
        (None, TraceEvent::ToolResult(r)) => r.tool.clone(),
        (None, TraceEvent::Compaction(_)) => String::new(),
    }
}

/// Per call index, a verdict other than allow: its detector, count and message.
type Marks = HashMap<u32, (String, Option<u64>, Option<String>)>;

/// The calls of a touched session, with their excerpts.
fn detail(trace: &SessionTrace, letters: Vec<Vec<u8>>, marks: &[Marks]) -> SessionDetail {
    let mut messages: Vec<String> = Vec::new();
    let mut known: HashMap<String, u32> = HashMap::new();
    let mut calls: Vec<CallDetail> = Vec::new();
    let mut at: HashMap<u32, usize> = HashMap::new();
    for e in &trace.events {
        let Some(call) = e.reference.call_index else { continue };
        match &e.event {
            TraceEvent::ToolCall(c) => {
                let marked = letters.iter().any(|l| l.get(call as usize - 1).is_some_and(|v| *v != ALLOW));
                if calls.len() >= 2 * DETAIL_CALLS || (calls.len() >= DETAIL_CALLS && !marked) {
                    continue;
                }
                at.insert(call, calls.len());
                calls.push(CallDetail {
                    call,
                    tool: tool_of(e),
                    args: excerpt(&c.args.to_string(), EXCERPT_CHARS),
                    outcome: None,
                    error: false,
                    verdicts: Vec::new(),
                });
            }
            TraceEvent::ToolResult(r) => {
                let Some(&i) = at.get(&call) else { continue };
                let (value, error) = match &r.outcome {
                    Outcome::Result(v) => (v, false),
                    Outcome::Error(v) => (v, true),
                };
                let text = value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string());
                calls[i].outcome = Some(excerpt(&text, EXCERPT_CHARS));
                calls[i].error = error;
            }
            TraceEvent::Compaction(_) => {}
        }
    }
    for c in &mut calls {
        c.verdicts = marks
            .iter()
            .zip(&letters)
            .map(|(m, l)| {
                let (detector, count, message) = m.get(&c.call)?;
                let action = match l[c.call as usize - 1] {
                    WARN => "warn",
                    BLOCK => "block",
                    _ => "abort",
                };
                let message = message.as_ref().map(|text| {
                    *known.entry(text.clone()).or_insert_with(|| {
                        messages.push(text.clone());
                        messages.len() as u32 - 1
                    })
                });
                Some(Marked { action: action.into(), detector: detector.clone(), count: *count, message })
            })
            .collect();
    }
    // The letters are ASCII.
    let verdicts = letters.into_iter().map(|l| String::from_utf8(l).unwrap_or_default()).collect();
    SessionDetail { verdicts, messages, calls }
}

/// `text` cut to `max` characters, with `…` when cut.
pub fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The overview of one config: the transcripts report's summary plus what the rows and views
/// add (calls from the first block on, per tool).
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Calls from each blocked session's first block to its end, summed: what a block that
    /// stopped the loop would have saved.
    pub saved_calls: u64,
    /// Per tool (at most [`TOOL_NAMES`] names and [`OTHER_TOOLS`]).
    pub tools: BTreeMap<String, ToolCounts>,
}

impl Overview {
    /// Sums config `c` over the rows and views.
    pub fn new(rows: &[SessionRow], views: &[SessionView], c: usize) -> Overview {
        let mut o = Overview::default();
        for r in rows {
            if let Some(first) = &r.first_block {
                o.saved_calls += r.tool_calls.saturating_sub(u64::from(first.call)) + 1;
            }
        }
        for (name, n) in views.iter().filter_map(|v| v.tools.get(c)).flatten() {
            let key =
                if o.tools.len() < TOOL_NAMES || o.tools.contains_key(name) { name.as_str() } else { OTHER_TOOLS };
            let t = o.tools.entry(key.to_string()).or_default();
            t.calls += n.calls;
            t.warnings += n.warnings;
            t.blocks += n.blocks;
            t.aborts += n.aborts;
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_cuts_at_a_character_and_says_so() {
        assert_eq!(excerpt("héllo wörld", 7), "héllo w…");
        assert_eq!(excerpt("short", 7), "short");
        assert_eq!(excerpt("exactly7", 8), "exactly7");
    }

    #[test]
    fn the_tools_beyond_the_cap_are_summed_under_one_name() {
        let view = |name: String| SessionView {
            tools: vec![BTreeMap::from([(name, ToolCounts { calls: 2, warnings: 1, blocks: 0, aborts: 0 })])],
            detail: None,
        };
        let views: Vec<SessionView> = (0..TOOL_NAMES + 5).map(|i| view(format!("tool{i:05}"))).collect();
        let o = Overview::new(&[], &views, 0);
        assert_eq!(o.tools.len(), TOOL_NAMES + 1);
        assert_eq!(o.tools[OTHER_TOOLS], ToolCounts { calls: 10, warnings: 5, blocks: 0, aborts: 0 });
    }
}
