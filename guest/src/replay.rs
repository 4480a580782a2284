//! Replay: trace lines in, decision lines out (docs/spec/trace-format.md).
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
        let mut batch = Lines::default();
        let keys = self.config.lone_keys();
        let mut unreadable = None;
        for (i, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
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
        let _ = write!(out, "{{\"line\":{n},\"kind\":\"{}\",\"action\":", e.kind());
        match e {
            Event::ToolCall(call) => write_tool_verdict(&self.check_tool_call(call)?, out),
            Event::ToolResult(call, outcome) => match self.record_tool_outcome(call, *outcome)? {
                OutcomeVerdict::Recorded => out.push_str("\"recorded\""),
                OutcomeVerdict::Ignored => out.push_str("\"ignored\""),
                OutcomeVerdict::Abort { detector, count, message } => {
                    let _ =
                        write!(out, "\"abort\",\"detector\":\"{}\",\"count\":{count},\"message\":", detector.as_str());
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
                    let _ = write!(out, "\"suppress\",\"cooldown_until_ms\":{cooldown_until_ms},\"budget\":\"{b}\"");
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

fn write_tool_verdict(v: &ToolVerdict, out: &mut String) {
    let action = match v.action {
        ToolAction::Allow => return out.push_str("\"allow\""),
        ToolAction::Warn => "warn",
        ToolAction::Block => "block",
    };
    let detector = v.detector.map_or("", |d| d.as_str());
    let _ = write!(out, "\"{action}\",\"detector\":\"{detector}\",\"count\":{},\"message\":", v.count);
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
