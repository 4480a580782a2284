//! Outcome hashing under the `openclaw-2026.9` profile (tests/oracle/NOTES.md §2.5–§2.7), one
//! named case per rule. Which outcomes hash alike, which are no-progress and which carry a
//! failure identity is what the 2026.9.6 package's `recordToolCallOutcome` returned for the same
//! inputs (its `resultHash`, `noProgress` and `failureIdentityHash`, compared in Node).

use loopguard_policy::config::profile::OPENCLAW_2026_9;
use loopguard_policy::json::{parse_with, Json, LoneKeys};
use loopguard_policy::tool_loop::outcome::{hash_outcome_with, Hashing};
use loopguard_policy::tool_loop::{HashedOutcome, Outcome};

fn j(s: &str) -> Json<'_> {
    parse_with(s, LoneKeys::Distinct).expect("valid JSON")
}

fn how() -> Hashing<'static> {
    Hashing { rules: &OPENCLAW_2026_9.tool, send_tools: &[] }
}

fn result(tool: &str, result: &str) -> HashedOutcome {
    hash_outcome_with(tool, None, Outcome::Result(&j(result)), &how()).expect("a hash")
}

fn error(tool: &str, err: &str) -> HashedOutcome {
    hash_outcome_with(tool, None, Outcome::Error(&j(err)), &how()).expect("a hash")
}

/// §2.6 item 6: every `write` with `changed: false` is one no-progress outcome.
#[test]
fn unchanged_writes_are_one_no_progress_outcome() {
    let a = result("write", r#"{"content":[{"type":"text","text":"Wrote a"}],"details":{"changed":false,"bytes":1}}"#);
    let b = result("write", r#"{"content":[{"type":"text","text":"x"}],"details":{"changed":false}}"#);
    assert_eq!(a.digest, b.digest);
    assert!(a.no_progress);
    assert_ne!(result("write", r#"{"details":{"changed":true}}"#).digest, a.digest);
    assert_ne!(result("edit", r#"{"details":{"changed":false}}"#).digest, a.digest, "only `write`");
}

/// §2.6 item 1: an error is a no-progress outcome.
#[test]
fn errors_are_no_progress() {
    assert!(error("grep", r#""boom""#).no_progress);
    assert!(!result("grep", r#"{"details":{}}"#).no_progress);
}

fn failed(out: &str, code: &str, extra: &str) -> String {
    let out = serde_json::to_string(out).expect("a JSON string");
    format!(
        r#"{{"content":[{{"type":"text","text":{out}}}],"details":{{"status":"failed","exitCode":{code},"aggregated":{out}{extra}}}}}"#
    )
}

/// §2.6 item 5: terminal exec failures whose output differs only in volatile parts differ in
/// their hash but share their failure identity; other commands with the same failure too.
#[test]
fn terminal_exec_failures_share_an_identity_across_volatile_output() {
    let a =
        result("exec", &failed("error at 2026-01-01T10:22:33Z: build failed (attempt 2, took 12ms, pid 77)", "1", ""));
    let b =
        result("exec", &failed("error at 2026-01-02T11:00:00Z: build failed (attempt 5, took 900ms, pid 12)", "1", ""));
    assert_ne!(a.digest, b.digest);
    assert!(a.failure.is_some());
    assert_eq!(a.failure, b.failure);
    // Not terminal failures: success, the bare exit message, a timeout, a non-number code.
    assert_eq!(result("exec", &failed("x", "0", "")).failure, None);
    assert_eq!(result("exec", &failed("(Command exited with code 2)", "2", "")).failure, None);
    assert_eq!(result("exec", &failed("x", "1", r#","timedOut":true"#)).failure, None);
    assert_eq!(result("exec", &failed("x", r#""1""#, "")).failure, None);
    // Blank aggregated output falls back to the text.
    let text_only = result(
        "exec",
        r#"{"details":{"status":"completed","exitCode":3,"aggregated":"  "},"content":[{"type":"text","text":"oops"}]}"#,
    );
    assert!(text_only.failure.is_some());
}

/// §2.6 item 7: `conversations_send` results are sends (volatile ids stripped, text dropped).
#[test]
fn conversation_sends_strip_their_ids() {
    let send = |id: &str| {
        result(
            "conversations_send",
            &format!(
                r#"{{"content":[{{"type":"text","text":"sent {id}"}}],"details":{{"status":"sent","messageId":"{id}"}}}}"#
            ),
        )
    };
    assert_eq!(send("1").digest, send("2").digest);
}

/// §2.7: the random id of an untrusted-content block does not change the outcome.
#[test]
fn untrusted_marker_ids_do_not_change_outcomes() {
    let fetch = |id: &str| {
        let text = format!(
            "<<<EXTERNAL_UNTRUSTED_CONTENT id=\"{id}\">>>\nbody\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=\"{id}\">>>"
        );
        result(
            "web_fetch",
            &format!(r#"{{"content":[{{"type":"text","text":{}}}]}}"#, serde_json::to_string(&text).unwrap()),
        )
    };
    assert_eq!(fetch("0123456789abcdef").digest, fetch("fedcba9876543210").digest);
}

/// §2.7: lone surrogates are kept: they stop the trim of a text, and they tell texts and errors
/// apart; an object error's canonical text spells them out.
#[test]
fn lone_surrogates_are_kept_in_outcomes() {
    let text = |t: &str| result("read", &format!(r#"{{"content":[{{"type":"text","text":"{t}"}}]}}"#)).digest;
    assert_eq!(text(r" \ud800 x "), text(r"\ud800 x"));
    assert_ne!(text(r"x\ud800"), text("x"));
    assert_ne!(error("grep", r#""bad \ud800""#).digest, error("grep", r#""bad ""#).digest);
    assert_eq!(error("grep", r#"{"m":"bad\udfff"}"#).digest, error("grep", r#""{\"m\":\"bad\\udfff\"}""#).digest);
}

/// NOTES §2.7: no `update_plan` shape in 2026.9.6: a plan whose step changes is another outcome.
#[test]
fn update_plan_is_hashed_as_it_is() {
    let plan = |step: &str| {
        result("update_plan", &format!(r#"{{"content":[{{"type":"text","text":"Plan updated"}}],"details":{{"plan":[{{"step":"{step}","status":"pending"}}]}}}}"#)).digest
    };
    assert_ne!(plan("a"), plan("b"));
}
