//! Outcome hashing (`hashToolOutcome`, docs/spec/tool-loop.md §1.3 and §1.4), one named case per rule.

use loopguard_policy::canonical::canonical;
use loopguard_policy::digest::Digest;
use loopguard_policy::json::{parse, Json};
use loopguard_policy::tool_loop::openclaw::unknown_tool::extract_unknown_tool_name;
use loopguard_policy::tool_loop::outcome::{hash_outcome, plan_shape};
use loopguard_policy::tool_loop::Outcome;

fn j(s: &str) -> Json<'_> {
    parse(s).expect("valid JSON")
}

fn result_hash(tool: &str, params: &str, result: &str) -> Option<Digest> {
    let params = j(params);
    hash_outcome(tool, params.get("action").and_then(Json::as_str), Outcome::Result(&j(result)), &[]).map(|h| h.digest)
}

fn same(tool: &str, params: &str, a: &str, b: &str) -> bool {
    result_hash(tool, params, a) == result_hash(tool, params, b)
}

#[test]
fn errors_hash_their_formatted_text() {
    let e = |s: &str| hash_outcome("t", None, Outcome::Error(&j(s)), &[]).unwrap().digest;
    assert_eq!(e("5"), e("\"5\""), "the error 5 and the error \"5\" hash the same");
    assert_eq!(e(r#"{"b":1,"a":2}"#), e(r#""{\"a\":2,\"b\":1}""#), "object error = its canonical text");
    assert_eq!(e("null"), e("\"null\""));
    assert_eq!(e("true"), e("\"true\""));
    assert_ne!(e("\" x\""), e("\"x\""), "error strings are not trimmed");
    // An error never equals a result with the same text.
    assert_ne!(Some(e("\"x\"")), result_hash("t", "null", "\"x\""));
}

#[test]
fn unknown_tool_names_are_extracted_like_openclaw() {
    let cases = [
        ("Unknown tool: browser_open", Some("browser_open")),
        ("unknown tool \"Web.Search\" requested", Some("web.search")),
        ("ERROR UNKNOWN TOOL:   'fetch-url'", Some("fetch-url")),
        ("Tool foo_bar not found", Some("foo_bar")),
        ("tool 'x1' is not available right now", Some("x1")),
        ("Tool foo is broken", None),
        ("unknown tool:", None),
        ("unknown tools: a", None),
        ("", None),
        ("   ", None),
        ("the tool \"grep\"  NOT FOUND", Some("grep")),
        ("unknown tool x and tool y not found", Some("x")),
    ];
    for (text, want) in cases {
        assert_eq!(extract_unknown_tool_name(text).as_deref(), want, "{text:?}");
    }
    let h = hash_outcome("browser_open", None, Outcome::Error(&j("\"Unknown tool: browser_open\"")), &[]);
    assert_eq!(h.unwrap().unknown_tool.as_deref(), Some("browser_open"));
}

#[test]
fn non_object_results_hash_whole_and_null_is_a_value() {
    assert!(result_hash("t", "{}", "null").is_some());
    assert_ne!(result_hash("t", "{}", "null"), result_hash("t", "{}", "\"null\""));
    assert!(same("t", "{}", "[1,2.0]", "[1,2]"));
}

#[test]
fn loop_veto_has_no_hash_but_other_blocks_do() {
    let veto = r#"{"content":[{"type":"text","text":"CRITICAL"}],"details":{"status":"blocked","deniedReason":"tool-loop","reason":"x"}}"#;
    assert_eq!(result_hash("read", "{}", veto), None);
    let approval = r#"{"details":{"status":"blocked","deniedReason":"approval"}}"#;
    assert!(result_hash("read", "{}", approval).is_some());
}

#[test]
fn exec_hashes_only_progress_fields() {
    let p = r#"{"command":"make"}"#;
    // running: only status and tail.
    assert!(same(
        "exec",
        p,
        r#"{"content":[{"type":"text","text":"a"}],"details":{"status":"running","tail":"t","pid":1,"sessionId":"s1","startedAt":1}}"#,
        r#"{"content":[{"type":"text","text":"b"}],"details":{"status":"running","tail":"t","pid":2,"sessionId":"s2","startedAt":2}}"#
    ));
    assert!(!same(
        "exec",
        p,
        r#"{"details":{"status":"running","tail":"t"}}"#,
        r#"{"details":{"status":"running","tail":"u"}}"#
    ));
    assert!(same(
        "exec",
        p,
        r#"{"details":{"status":"running","tail":5}}"#,
        r#"{"details":{"status":"running","tail":""}}"#
    ));
    // completed: status, exitCode, timedOut, output (aggregated trimmed, else text).
    assert!(same(
        "exec",
        p,
        r#"{"details":{"status":"completed","exitCode":0,"aggregated":" ok \n","durationMs":5,"cwd":"/a","pid":1}}"#,
        r#"{"details":{"status":"completed","exitCode":0,"aggregated":"ok","durationMs":9,"cwd":"/b","pid":2}}"#
    ));
    assert!(same(
        "exec",
        p,
        r#"{"content":[{"type":"text","text":"ok"}],"details":{"status":"failed","exitCode":1,"aggregated":"   "}}"#,
        r#"{"content":[{"type":"text","text":" ok "}],"details":{"status":"failed","exitCode":1}}"#
    ));
    assert!(!same(
        "exec",
        p,
        r#"{"details":{"status":"completed","exitCode":0}}"#,
        r#"{"details":{"status":"completed","exitCode":1}}"#
    ));
    assert!(
        same(
            "exec",
            p,
            r#"{"details":{"status":"completed","exitCode":"0"}}"#,
            r#"{"details":{"status":"completed"}}"#
        ),
        "a non-number exitCode is null"
    );
    assert!(same(
        "exec",
        p,
        r#"{"details":{"status":"completed","timedOut":"yes"}}"#,
        r#"{"details":{"status":"completed","timedOut":false}}"#
    ));
    assert!(!same(
        "exec",
        p,
        r#"{"details":{"status":"completed","timedOut":true}}"#,
        r#"{"details":{"status":"completed"}}"#
    ));
    // approval states.
    assert!(same(
        "exec",
        p,
        r#"{"details":{"status":"approval-pending","reason":"r","host":"h","command":"c","extra":1}}"#,
        r#"{"details":{"status":"approval-pending","reason":"r","host":"h","command":"c","extra":2}}"#
    ));
    // Other statuses fall through to the generic {details, text} hash.
    assert!(!same("exec", p, r#"{"details":{"status":"weird","pid":1}}"#, r#"{"details":{"status":"weird","pid":2}}"#));
    // Only the tool named exec gets these rules.
    assert!(!same(
        "bash",
        p,
        r#"{"details":{"status":"running","tail":"t","pid":1}}"#,
        r#"{"details":{"status":"running","tail":"t","pid":2}}"#
    ));
}

#[test]
fn process_poll_and_log_shapes() {
    let poll = r#"{"action":"poll","sessionId":"a"}"#;
    assert!(same(
        "process",
        poll,
        r#"{"details":{"status":"running","aggregated":"x","startedAt":1}}"#,
        r#"{"details":{"status":"running","aggregated":"x","startedAt":2}}"#
    ));
    assert!(!same(
        "process",
        poll,
        r#"{"details":{"status":"running","aggregated":"x"}}"#,
        r#"{"details":{"status":"running","aggregated":"y"}}"#
    ));
    // `?? null`: missing and null are the same; status stays undefined vs null distinct.
    assert!(same("process", poll, r#"{"details":{"exitCode":null}}"#, r#"{"details":{}}"#));
    assert!(
        !same("process", poll, r#"{"details":{"status":null}}"#, r#"{"details":{}}"#),
        "status is taken as is, so undefined and null differ"
    );
    let log = r#"{"action":"log"}"#;
    assert!(same(
        "process",
        log,
        r#"{"details":{"totalLines":3,"offset":1}}"#,
        r#"{"details":{"totalLines":3,"offset":2}}"#
    ));
    assert!(!same("process", log, r#"{"details":{"totalLines":3}}"#, r#"{"details":{"totalLines":4}}"#));
    // Other actions use the generic hash.
    assert!(!same("process", r#"{"action":"kill"}"#, r#"{"details":{"a":1}}"#, r#"{"details":{"a":2}}"#));
}

#[test]
fn sends_strip_volatile_ids_and_drop_text() {
    let send = r#"{"action":"send","to":"c1","message":"hi"}"#;
    assert!(same(
        "message",
        send,
        r#"{"content":[{"type":"text","text":"sent 1"}],"details":{"ok":true,"messageId":"m1","ts":1,"result":{"message_id":5,"createdAt":"x"}}}"#,
        r#"{"content":[{"type":"text","text":"sent 2"}],"details":{"ok":true,"messageId":"m2","ts":2,"result":{"message_id":6,"createdAt":"y"}}}"#
    ));
    // A delivery object loses its id; another object keeps it.
    assert!(same(
        "sessions_send",
        "{}",
        r#"{"details":{"message":{"id":"a","text":"hi","direction":"outbound"}}}"#,
        r#"{"details":{"message":{"id":"b","text":"hi","direction":"outbound"}}}"#
    ));
    assert!(!same(
        "sessions_send",
        "{}",
        r#"{"details":{"message":{"id":"a","text":"hi"}}}"#,
        r#"{"details":{"message":{"id":"b","text":"hi"}}}"#
    ));
    assert!(same(
        "sessions_send",
        "{}",
        r#"{"details":[{"id":"a","text":"t","conversation":{}}]}"#,
        r#"{"details":[{"id":"b","text":"t","conversation":{}}]}"#
    ));
    // Non-send message actions and case variants are not sends.
    assert!(!same(
        "message",
        r#"{"action":"Send"}"#,
        r#"{"details":{"messageId":"m1"}}"#,
        r#"{"details":{"messageId":"m2"}}"#
    ));
    assert!(!same(
        "message",
        r#"{"action":"read"}"#,
        r#"{"details":{"messageId":"m1"}}"#,
        r#"{"details":{"messageId":"m2"}}"#
    ));
    // Operator-listed send tools.
    let tg =
        |r: &str| hash_outcome("telegram", None, Outcome::Result(&j(r)), &["telegram".to_string()]).unwrap().digest;
    assert_eq!(tg(r#"{"details":{"messageId":1}}"#), tg(r#"{"details":{"messageId":2}}"#));
    assert_ne!(
        result_hash("telegram", "{}", r#"{"details":{"messageId":1}}"#),
        result_hash("telegram", "{}", r#"{"details":{"messageId":2}}"#)
    );
}

#[test]
fn update_plan_hashes_the_shape() {
    assert!(same(
        "update_plan",
        "{}",
        r#"{"content":[{"type":"text","text":"a"}],"details":{"plan":[{"step":"Read the code","status":"done"}],"explanation":"x"}}"#,
        r#"{"content":[{"type":"text","text":"b"}],"details":{"plan":[{"step":"Write tests","status":"done"}],"explanation":"y"}}"#
    ));
    assert!(!same(
        "update_plan",
        "{}",
        r#"{"details":{"plan":[{"step":"a","status":"pending"}]}}"#,
        r#"{"details":{"plan":[{"step":"a","status":"done"}]}}"#
    ));
    let shape = plan_shape(&j(r#"{"plan":[1,{"step":"  ","status":3},{"step":"x","status":"ok"}],"explanation":" "}"#));
    assert_eq!(
        canonical(&shape),
        r#"{"hasExplanation":false,"planLength":3,"statuses":[null,null,"ok"],"stepPresence":[false,false,true]}"#
    );
    assert_eq!(plan_shape(&j("[1]")), j("[1]"), "non-objects pass through");
    assert_eq!(
        canonical(&plan_shape(&j(r#"{"plan":"x"}"#))),
        r#"{"hasExplanation":false,"planLength":0,"statuses":[],"stepPresence":[]}"#
    );
}

#[test]
fn generic_hash_uses_details_and_trimmed_text() {
    let r = r#"{"content":[{"type":"text","text":" a"},{"type":"image","text":"b "},{"text":"c"},{"type":"text"}],"details":{"k":1}}"#;
    let r2 = r#"{"content":[{"type":"x","text":"a\nb"}],"details":{"k":1},"other":2}"#;
    assert!(same("read", "{}", r, r2), "texts of typed entries joined with \\n and trimmed; other keys ignored");
    assert!(same("read", "{}", r#"{"details":5}"#, r#"{"details":{}}"#), "non-object details read as {{}}");
    assert!(!same("read", "{}", r#"{"details":{"k":1}}"#, r#"{"details":{"k":2}}"#));
}

#[test]
fn a_text_hashes_the_same_however_its_escapes_are_written() {
    // One entry written with canonical escapes, with other escapes, with padding to trim, and
    // split over two entries: all the same text.
    let forms = [
        r#"{"content":[{"type":"text","text":"ok\nA/\u001f"}]}"#,
        r#"{"content":[{"type":"text","text":"ok\u000a\u0041\/\u001F"}]}"#,
        r#"{"content":[{"type":"text","text":"\t ok\nA/\u001f \n"}]}"#,
        r#"{"content":[{"type":"text","text":"ok"},{"type":"text","text":"A/\u001f"}]}"#,
    ];
    for f in &forms[1..] {
        assert!(same("read", "{}", forms[0], f), "{f}");
    }
    assert!(!same("read", "{}", forms[0], r#"{"content":[{"type":"text","text":"ok\nA/\u001e"}]}"#));
}
