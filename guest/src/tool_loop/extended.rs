//! The detectors beyond OpenClaw, run after OpenClaw's on every call of a session: how a call
//! and its outcome enter the [`Trail`] and how their findings join OpenClaw's verdict.
//!
//! Why after and not instead: with no preset and no detector named ([`Detection::is_on`] false)
//! nothing here runs, so every profile decides exactly as OpenClaw does. When they are on,
//! OpenClaw's block stands; otherwise the first block of [`same_error`], [`same_result`],
//! [`lap_cycle`] and [`growing_args`] (in that order) replaces an allow or a warning, and their
//! first warning replaces an allow. The [`ladder`] then counts blocks in a row and ends the run
//! through the outcome's `abort` verdict.

use super::decision::{Finding, OutcomeVerdict, ToolAction, ToolVerdict};
use super::facts::{Args, CallFacts, ToolCall};
use super::outcome::Outcome;
use super::sketch::Sketch;
use super::trail::{Entry, Out, Trail};
use super::{growing_args, ladder, lap_cycle, same_error, same_result};
use crate::config::detection::Detection;
use crate::config::volatile::reads_as_error;
use crate::digest::{key_digest, name_id, tag};
use crate::input::json_value_with;
use crate::json::{Json, LoneKeys};

/// Joins the detectors' findings on `call` with OpenClaw's `base` verdict and records the call.
pub fn check(
    d: &Detection,
    trail: &mut Trail,
    call: &ToolCall<'_>,
    facts: &CallFacts,
    base: ToolVerdict,
) -> ToolVerdict {
    if !d.is_on() {
        return base;
    }
    trail.begin(facts.run, d.scope);
    let owned;
    let parsed = match call.args {
        Args::Value(v) => Some(v),
        Args::Text(t) => {
            owned = json_value_with(t, "call.args-json", LoneKeys::Merge).ok();
            owned.as_ref()
        }
    };
    let arg = parsed.and_then(growing_args::longest_string);
    if d.growing_args.is_some() {
        let grew = match (trail.last_arg(), arg) {
            (Some((tool, prev)), Some(cur)) => tool == facts.tool_id && growing_args::grows(prev, cur),
            _ => false,
        };
        trail.growth = if grew { trail.growth.saturating_add(1) } else { 0 };
        trail.set_last_arg(facts.tool_id, arg);
    }
    let aim = parsed.map(Sketch::of).unwrap_or_default();
    let findings = findings(d, trail, call.tool, facts, &aim);
    let verdict = join(base, findings);
    ladder::after_call(trail, verdict.action, verdict.action != ToolAction::Allow);
    let entry = Entry { tool: facts.tool_id, args: facts.args, sketch: aim, out: Out::Pending, exact: 0 };
    trail.push(entry, d.history_size);
    verdict
}

/// Records the outcome class of `call`; the ladder's abort when blocks were ignored.
pub fn outcome(
    d: &Detection,
    trail: &mut Trail,
    call: &ToolCall<'_>,
    facts: &CallFacts,
    outcome: Outcome<'_>,
    base: OutcomeVerdict,
) -> OutcomeVerdict {
    if !d.is_on() {
        return base;
    }
    trail.begin(facts.run, d.scope);
    let owned;
    let parsed = match call.args {
        Args::Value(v) => Some(v),
        Args::Text(t) => {
            owned = json_value_with(t, "call.args-json", LoneKeys::Merge).ok();
            owned.as_ref()
        }
    };
    let mut args = Vec::new();
    if let Some(v) = parsed {
        strings(v, &mut args);
    }
    let (out, exact) = classify(d, outcome, &args);
    trail.attach(&facts.args, out, exact);
    if matches!(base, OutcomeVerdict::Abort { .. }) {
        return base;
    }
    d.ladder.and_then(|n| ladder::on_outcome(trail, n)).unwrap_or(base)
}

fn findings(d: &Detection, trail: &Trail, tool: &str, facts: &CallFacts, aim: &Sketch) -> Vec<Finding> {
    let es = trail.entries();
    [
        d.same_error.and_then(|t| same_error::check(es, tool, facts.tool_id, aim, &t)),
        d.same_result.and_then(|t| same_result::check(es, tool, facts.tool_id, aim, &t)),
        d.cycle.and_then(|c| lap_cycle::check(es, &facts.args, &c)),
        d.growing_args.and_then(|t| growing_args::check(tool, facts.tool_id, trail.growth, &t)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// OpenClaw's block stands; then the first block found; then OpenClaw's warning; then the first
/// warning found.
fn join(base: ToolVerdict, found: Vec<Finding>) -> ToolVerdict {
    if base.action == ToolAction::Block {
        return base;
    }
    let pick = found.iter().find(|f| f.critical).or_else(|| match base.action {
        ToolAction::Warn => None,
        _ => found.first(),
    });
    let Some(f) = pick else { return base };
    ToolVerdict {
        action: if f.critical { ToolAction::Block } else { ToolAction::Warn },
        detector: Some(f.detector),
        count: f.count,
        message: Some(f.message.clone()),
        notify: !f.critical,
    }
}

/// The class of an outcome: infrastructure errors, errors by class, empty results, nothing
/// found, or the result with volatile fields stripped; for an error, also the id of its text
/// with volatile fields stripped (0 otherwise).
pub fn classify(d: &Detection, outcome: Outcome<'_>, args: &[&str]) -> (Out, u64) {
    let (v, error) = match outcome {
        Outcome::Result(v) => (v, false),
        Outcome::Error(v) => (v, true),
    };
    let mut text = String::new();
    text_of(v, &mut text);
    let rules = &d.rules;
    if error || reads_as_error(&text) {
        if rules.is_infrastructure(&text) {
            return (Out::Infrastructure, 0);
        }
        let class = key_digest(tag::ERROR, &[b"class", rules.error_class(&text, args).as_bytes()]);
        return (Out::Error(class), name_id(&rules.strip_volatile(&text)).max(1));
    }
    let out = if text.trim().is_empty() {
        Out::Neutral
    } else if rules.is_nothing_found(&text) {
        Out::Nothing
    } else {
        Out::Result(key_digest(tag::RESULT, &[b"stripped", rules.strip_volatile(&text).as_bytes()]))
    };
    (out, 0)
}

/// The text of an outcome: its string and number leaves, one per line, without `type` tags.
fn text_of(v: &Json<'_>, out: &mut String) {
    match v {
        Json::Str(s) => {
            out.push_str(s.as_str());
            out.push('\n');
        }
        Json::Num(n) => {
            out.push_str(&n.to_string());
            out.push('\n');
        }
        Json::Arr(items) => items.iter().for_each(|i| text_of(i, out)),
        Json::Obj(members) => members.iter().filter(|(k, _)| k.as_str() != "type").for_each(|(_, v)| text_of(v, out)),
        _ => {}
    }
}

/// The string leaves of the arguments.
fn strings<'a>(v: &'a Json<'a>, out: &mut Vec<&'a str>) {
    match v {
        Json::Str(s) => out.push(s.as_str()),
        Json::Arr(items) => items.iter().for_each(|i| strings(i, out)),
        Json::Obj(members) => members.iter().for_each(|(_, v)| strings(v, out)),
        _ => {}
    }
}
