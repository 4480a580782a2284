//! Replay: trace lines in, decision lines out (spec/trace-format.md).
//!
//! The guest owns both formats, so every host (Rust, Node, Python, the wasmtime CLI) prints
//! byte-identical decisions: hosts only move text. A batch of lines is parsed and checked in full
//! before any event is applied, so a bad line fails the batch without half-applying it.

use crate::bot_loop::{BotDecision, Budget};
use crate::canonical::write_string;
use crate::error::PolicyError;
use crate::gateway::Gateway;
use crate::group::{GroupStart, GroupStep};
use crate::js::is_js_space;
use crate::json::len_until;
use crate::tool_loop::{CompactionVerdict, OutcomeVerdict, ToolAction, ToolVerdict};
use crate::trace::{self, Event, Lines};
use std::fmt::Write as _;

/// Replays a whole trace on a fresh gateway built from `config`.
pub fn replay(config: &str, trace: &str) -> Result<String, PolicyError> {
    Gateway::from_config(config)?.apply_events(trace, 1)
}

impl Gateway {
    /// Applies JSON Lines events; `first_line` numbers the first line. Returns the decisions.
    pub fn apply_events(&mut self, text: &str, first_line: u32) -> Result<String, PolicyError> {
        // Sized for lines of ~128 bytes (at most 4,096 of them, ~1.6 MB, whatever the batch), so
        // that a replay chunk of shorter ones grows once or not at all: growing (each time a
        // copy of everything read so far) was ~0.2 k instructions of a bot event (callgrind).
        let mut batch = Lines::with_capacity((text.len() / 128 + 1).min(4096));
        let keys = self.config.lone_keys();
        let mut unreadable = None;
        for (i, line) in lines(text).enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            // Not `js_trim(line).is_empty()`: that scans from both ends, this stops at a line's
            // first `{` (~0.15 k instructions a bot event in replay, callgrind).
            if line.chars().all(is_js_space) {
                continue;
            }
            let n = first_line.saturating_add(i as u32);
            if let Err(e) = batch.read(line, n, keys) {
                unreadable = Some(e);
                break;
            }
        }
        // The lines read before an unreadable one are checked first: the error is the first bad
        // line's, whatever is wrong with it.
        let mut events = Vec::with_capacity(batch.len());
        for (n, v) in batch.iter() {
            events.push((n, trace::event(v, n)?));
        }
        if let Some(e) = unreadable {
            return Err(e);
        }
        let mut out = String::with_capacity(events.len() * 64);
        for (n, e) in &events {
            self.apply(*n, e, &mut out)?;
        }
        Ok(out)
    }

    /// Applies one event and writes its decision line. The trace reader checked every field and
    /// read the arguments, so the one fallible decision (a bot message's timestamp) cannot fail
    /// here.
    fn apply(&mut self, n: u32, e: &Event<'_>, out: &mut String) -> Result<(), PolicyError> {
        // Every decision line starts so: pieces and itoa instead of `write!`, whose formatting
        // machinery was ~0.7 k instructions of a bot event's ~25 k in replay (callgrind).
        out.push_str("{\"line\":");
        out.push_str(itoa::Buffer::new().format(n));
        out.push_str(",\"kind\":\"");
        out.push_str(e.kind());
        out.push_str("\",\"action\":");
        match e {
            Event::ToolCall(call) => write_tool_verdict(&self.check_tool_call(call)?, out),
            Event::ToolResult(call, outcome) => match self.record_tool_outcome(call, *outcome)? {
                OutcomeVerdict::Recorded => out.push_str("\"recorded\""),
                OutcomeVerdict::Ignored => out.push_str("\"ignored\""),
                OutcomeVerdict::Abort { count, message } => {
                    let _ = write!(
                        out,
                        "\"abort\",\"detector\":\"compaction_loop_persisted\",\"count\":{count},\"message\":"
                    );
                    write_string(&message, out);
                }
            },
            Event::Compaction { session, run, agent } => match self.compaction_retried(session, *run, *agent) {
                CompactionVerdict::Armed(r) => {
                    let _ = write!(out, "\"armed\",\"remaining\":{r}");
                }
                CompactionVerdict::Disabled => out.push_str("\"disabled\""),
            },
            Event::BotMessage(m) => match self.check_bot_message(m)? {
                BotDecision::Allow => out.push_str("\"allow\""),
                BotDecision::Suppress { cooldown_until_ms, budget } => {
                    let b = match budget {
                        Budget::Pair => "pair",
                        Budget::Burst => "burst",
                    };
                    // Pieces, not `write!`: a suppression was ~1.2 k instructions with it, ~7 % of
                    // the bench's bot trace (callgrind).
                    out.push_str("\"suppress\",\"cooldown_until_ms\":");
                    out.push_str(itoa::Buffer::new().format(cooldown_until_ms));
                    out.push_str(",\"budget\":\"");
                    out.push_str(b);
                    out.push('"');
                }
            },
            Event::GroupMessage(m) => match self.start_group_thread(m) {
                GroupStart::Round { round, participants } => write_round(round, &participants, out),
                GroupStart::Legacy { participants } => {
                    out.push_str("\"legacy\",\"participants\":");
                    write_list(&participants, out);
                }
                GroupStart::None => out.push_str("\"none\""),
            },
            Event::GroupReplies(t, replies) => write_step(&self.finish_group_round(t, replies), out),
            Event::GroupCancel(t) => write_step(&self.cancel_group_thread(t), out),
        }
        out.push_str("}\n");
        Ok(())
    }
}

/// `text.split('\n')`, with the line ends found eight bytes at a time ([`len_until`]).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let r = rest?;
        let end = len_until(r.as_bytes(), b'\n');
        // `end` is at a newline (ASCII, so a char boundary) or the end of the text.
        rest = r.get(end + 1..);
        Some(&r[..end])
    })
}

fn write_tool_verdict(v: &ToolVerdict, out: &mut String) {
    let action = match v.action {
        ToolAction::Allow => return out.push_str("\"allow\""),
        ToolAction::Warn => "warn",
        ToolAction::Block => "block",
    };
    // Pieces, not `write!` (as for every decision line's start): a warning is ~11 % of the
    // bench's tool trace.
    out.push('"');
    out.push_str(action);
    out.push_str("\",\"detector\":\"");
    out.push_str(v.detector.map_or("", |d| d.as_str()));
    out.push_str("\",\"count\":");
    out.push_str(itoa::Buffer::new().format(v.count));
    out.push_str(",\"message\":");
    write_string(v.message.as_deref().unwrap_or(""), out);
    if v.action == ToolAction::Warn {
        out.push_str(if v.notify { ",\"notify\":true" } else { ",\"notify\":false" });
    }
}

fn write_round(round: u32, participants: &[String], out: &mut String) {
    let _ = write!(out, "\"round\",\"round\":{round},\"participants\":");
    write_list(participants, out);
}

fn write_step(step: &GroupStep, out: &mut String) {
    match step {
        GroupStep::Round { round, participants } => write_round(*round, participants, out),
        GroupStep::Stop(reason) => {
            let _ = write!(out, "\"stop\",\"reason\":\"{}\"", reason.as_str());
        }
    }
}

fn write_list(items: &[String], out: &mut String) {
    out.push('[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(s, out);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_are_what_split_gives() {
        for text in ["", "\n", "a", "a\n", "\na\n\nb", "{\"k\":1}\r\n{\"k\":2}\n\n", &"é\n".repeat(20)] {
            assert_eq!(super::lines(text).collect::<Vec<_>>(), text.split('\n').collect::<Vec<_>>(), "{text:?}");
        }
    }
}
