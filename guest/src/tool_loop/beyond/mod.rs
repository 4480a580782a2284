//! The detectors beyond OpenClaw (docs/spec/beyond.md): loopguard's own rules for the loops
//! real agents make, run after OpenClaw's on every call of a session.
//!
//! | detector | what it sees | file |
//! |---|---|---|
//! | `same_error` | the same error again and again | [`same_error`] |
//! | `same_result` | the same result again (a poll, a re-run, a search finding nothing) | [`same_result`] |
//! | `cycle` | the same lap of calls with the same outcomes | [`lap_cycle`] |
//! | `growing_args` | arguments that grow by repeating themselves | [`growing_args`] |
//! | `ladder` | a blocked call sent again and again: the run ends | [`ladder`] |
//!
//! Every detector has the same shape, `check(&Look, &Settings) -> Option<Finding>`, over the
//! session's [`trail`] ([`look::Look`]: the call seen exactly, up to cosmetics and by its aim).
//! [`streak`] is the no-progress streak two of them share; [`sketch`] is a call's aim.
//!
//! Why after and not instead: with no preset and no detector named ([`Detection::is_on`] false)
//! nothing here runs, so every profile decides exactly as OpenClaw does. When they are on,
//! OpenClaw's block stands; otherwise the first block of [`DETECTORS`] (in that order) replaces an
//! allow or a warning, and their first warning replaces an allow. The [`ladder`] then turns the
//! repeated block of a blocked call into the end of the run.
//!
//! Principle: count only positive evidence that nothing changes. The same call answered the same
//! way is strong evidence and may block; other arguments with the same answer is weak evidence
//! and warns long before it blocks; an answer that carries no information is not evidence.

pub mod growing_args;
pub mod ladder;
pub mod lap_cycle;
pub mod look;
pub mod same_error;
pub mod same_result;
pub mod sketch;
pub mod streak;
pub mod trail;

use std::borrow::Cow;

use look::{Call, Look};
use sketch::Sketch;
use trail::{Entry, Out, Trail};

use crate::config::detection::Detection;
use crate::config::volatile::reads_as_error;
use crate::digest::{key_digest, tag};
use crate::input::json_value_with;
use crate::json::{Json, LoneKeys};
use crate::tool_loop::decision::{Detector, Finding, OutcomeVerdict, ToolAction, ToolVerdict};
use crate::tool_loop::facts::{Args, CallFacts, ToolCall};
use crate::tool_loop::outcome::Outcome;

/// The detectors with a `check`, by the name decision lines give them, in the order their
/// findings are joined.
pub const DETECTORS: &[&str] = &["same_error", "same_result", "cycle", "growing_args"];

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
    let given = parse_args(call.args);
    let parsed = given.as_deref();
    let arg = parsed.and_then(growing_args::longest_string);
    if d.growing_args.is_some() {
        let grew = match (trail.last_arg(), arg) {
            (Some((tool, prev)), Some(cur)) => tool == facts.tool_id && growing_args::grows(prev, cur),
            _ => false,
        };
        trail.growth = if grew { trail.growth.saturating_add(1) } else { 0 };
        trail.set_last_arg(facts.tool_id, arg);
    }
    let sketch = parsed.map(Sketch::of).unwrap_or_default();
    let fold = look::fold(facts.tool_id, parsed);
    let payload = look::payload(parsed);
    let this = Call { tool: call.tool, tool_id: facts.tool_id, args: facts.args, fold, sketch, payload };
    let look = Look { entries: trail.entries(), call: this, growth: trail.growth };
    let found = [
        d.same_error.and_then(|s| same_error::check(&look, &s)),
        d.same_result.and_then(|s| same_result::check(&look, &s)),
        d.cycle.and_then(|s| lap_cycle::check(&look, &s)),
        d.growing_args.and_then(|s| growing_args::check(&look, &s)),
    ];
    let base = weigh(base, &look);
    let mut verdict = join(base, found.into_iter().flatten().collect());
    if let Some(n) = d.ladder {
        if let Some(end) = ladder::after_call(trail, fold, call.tool, &verdict, n) {
            verdict = end;
        }
    }
    let out = if verdict.action == ToolAction::Block { Out::Blocked } else { Out::Pending };
    let entry = Entry { tool: facts.tool_id, args: facts.args, fold, sketch, out };
    trail.push(entry, d.history_size);
    verdict
}

/// Records the outcome class of `call`; the ladder's abort after it ended the run.
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
    let given = parse_args(call.args);
    let parsed = given.as_deref();
    let mut args = Vec::new();
    if let Some(v) = parsed {
        strings(v, &mut args);
    }
    trail.attach(&facts.args, classify(d, outcome, &args));
    if matches!(base, OutcomeVerdict::Abort { .. }) {
        return base;
    }
    ladder::on_outcome(trail).unwrap_or(base)
}

/// The call's arguments as JSON: as given, or read from their text (`None` when that is not
/// JSON: OpenClaw's layer has already named the error, and these detectors then see no aim).
fn parse_args<'a>(args: Args<'a>) -> Option<Cow<'a, Json<'a>>> {
    match args {
        Args::Value(v) => Some(Cow::Borrowed(v)),
        Args::Text(t) => json_value_with(t, "call.args-json", LoneKeys::Merge).ok().map(Cow::Owned),
    }
}

/// OpenClaw's warning on identical arguments alone (`generic_repeat`, before its block, which
/// needs identical outcomes) stands only with evidence that nothing changes: this call's two
/// newest outcomes are the same. Scrolling a file page by page (`scroll_down` ten times, a new
/// page each time) is progress, and under a preset it is not warned. OpenClaw's blocks, and its
/// warnings with no preset, are never touched.
fn weigh(base: ToolVerdict, look: &Look<'_>) -> ToolVerdict {
    if base.action != ToolAction::Warn || base.detector != Some(Detector::GenericRepeat) {
        return base;
    }
    let mut outs = look.entries.iter().rev().filter(|e| look.call.same_as(e) && !e.out.is_unknown()).map(|e| e.out);
    match (outs.next(), outs.next()) {
        (Some(a), Some(b)) if a != b => {
            ToolVerdict { action: ToolAction::Allow, detector: None, count: 0, message: None, notify: false }
        }
        _ => base,
    }
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

/// Fewer letters than this (markup and volatile fields set aside) and a result carries no
/// information of its own: `OK`, `True`, `Done`, an exit status around an empty output.
pub const QUIET_LETTERS: usize = 32;

/// Letters outside markup (`<returncode>`, `<v>`), counted up to [`QUIET_LETTERS`].
fn letters(text: &str) -> usize {
    let mut n = 0;
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag && c.is_alphabetic() => n += 1,
            _ => {}
        }
        if n >= QUIET_LETTERS {
            break;
        }
    }
    n
}

/// The class of an outcome: infrastructure errors, errors by class, empty results, nothing
/// found, quiet results, or the result with volatile fields stripped.
pub fn classify(d: &Detection, outcome: Outcome<'_>, args: &[&str]) -> Out {
    let (v, error) = match outcome {
        Outcome::Result(v) => (v, false),
        Outcome::Error(v) => (v, true),
    };
    let mut text = String::new();
    text_of(v, &mut text);
    let rules = &d.rules;
    if error || reads_as_error(&text) {
        if rules.is_infrastructure(&text) {
            return Out::Infrastructure;
        }
        // A failure that says nothing but "no" (grep's exit status 1 when nothing matched).
        if text.trim().is_empty() {
            return Out::Nothing;
        }
        return Out::Error(key_digest(tag::ERROR, &[b"class", rules.error_class(&text, args).as_bytes()]));
    }
    let out = if text.trim().is_empty() {
        Out::Neutral
    } else if rules.is_nothing_found(&text) {
        Out::Nothing
    } else {
        let stripped = rules.strip_volatile(&text);
        let digest = key_digest(tag::RESULT, &[b"stripped", stripped.as_bytes()]);
        if letters(&stripped) < QUIET_LETTERS {
            Out::Quiet(digest)
        } else {
            Out::Result(digest)
        }
    };
    out
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
