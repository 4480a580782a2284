//! The calls [`Gateway`] makes (the packed `-quick` functions, with `last-message` and
//! `last-error` for their text) against the plain WIT methods, through the real policy component:
//! same verdicts, same messages, same errors, same state; and a badly packed call is a
//! `policy-error` naming the length parameter, after which the gateway goes on working.

use serde_json::Value;

use super::{policy_error, Gateway};
use crate::bindings::loopguard::policy::types::{
    BotMessage, BotVerdict, OutcomeVerdict, ToolAction, ToolCall, ToolOutcome, ToolVerdict,
};
use crate::{Error, Policy, Result};

/// The interface's plain methods, one string per field: the reference the packed calls must match.
impl Gateway {
    fn plain_check(&mut self, c: &ToolCall) -> Result<ToolVerdict> {
        self.typed("check-tool-call", |s, g, h| g.call_check_tool_call(s, h, c))?.map_err(policy_error)
    }

    fn plain_outcome(&mut self, c: &ToolCall, o: &ToolOutcome) -> Result<OutcomeVerdict> {
        self.typed("record-tool-outcome", |s, g, h| g.call_record_tool_outcome(s, h, c, o))?.map_err(policy_error)
    }

    fn plain_bot(&mut self, m: &BotMessage) -> Result<BotVerdict> {
        self.typed("check-bot-message", |s, g, h| g.call_check_bot_message(s, h, m))?.map_err(policy_error)
    }
}

fn policy() -> Policy {
    let _ = crate::use_compile_cache(&loopguard_tests::workspace_root().join("target/wasmtime-cache"));
    Policy::embedded().expect("the embedded policy loads")
}

/// Two gateways with the same config: `.0` is driven through the plain methods, `.1` packed.
fn pair(policy: &Policy, config: &str) -> (Gateway, Gateway) {
    (policy.gateway(config).expect("config"), policy.gateway(config).expect("config"))
}

/// `Ok` values compared with `==`; errors by their text (path and reason).
fn same<T: PartialEq + std::fmt::Debug>(plain: Result<T>, packed: Result<T>, what: &str) {
    match (plain, packed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
        (a, b) => panic!("{what}: plain {a:?} but packed {b:?}"),
    }
}

fn assert_same_state(gws: &mut (Gateway, Gateway), what: &str) {
    let (a, b) = (gws.0.export_state().expect("export"), gws.1.export_state().expect("export"));
    assert!(a == b, "{what}: the plain and the packed gateway hold different state");
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn tool_call(e: &Value) -> ToolCall {
    ToolCall {
        session: text(e, "session").expect("session"),
        tool: text(e, "tool").expect("tool"),
        args_json: e.get("args").map_or_else(|| "null".into(), Value::to_string),
        run: text(e, "run"),
        agent: text(e, "agent"),
        call_id: text(e, "call_id"),
    }
}

#[test]
fn example_traces_decide_the_same_packed_and_plain() {
    let policy = policy();
    let (mut decided, mut aborted, mut blocked) = (0, 0, 0);
    for scenario in loopguard_tests::scenarios() {
        let config = std::fs::read_to_string(&scenario.config).expect("config file");
        let mut gws = pair(&policy, &config);
        let trace = std::fs::read_to_string(&scenario.trace).expect("trace file");
        for (i, line) in trace.lines().enumerate() {
            let what = format!("{} line {}", scenario.name, i + 1);
            let e: Value = serde_json::from_str(line).expect("trace line is JSON");
            match e["kind"].as_str().expect("kind") {
                "tool_call" => {
                    let c = tool_call(&e);
                    let v = gws.1.check_tool_call(&c);
                    blocked += usize::from(v.as_ref().is_ok_and(|v| v.action == ToolAction::Block));
                    same(gws.0.plain_check(&c), v, &what);
                }
                "tool_result" => {
                    let c = tool_call(&e);
                    let o = match e.get("error") {
                        Some(err) => ToolOutcome::Threw(err.to_string()),
                        None => ToolOutcome::Returned(e.get("result").map_or_else(|| "null".into(), Value::to_string)),
                    };
                    let v = gws.1.record_tool_outcome(&c, &o);
                    aborted += usize::from(matches!(v, Ok(OutcomeVerdict::Abort(_))));
                    same(gws.0.plain_outcome(&c, &o), v, &what);
                }
                "bot_message" => {
                    let m = BotMessage {
                        channel: text(&e, "channel").expect("channel"),
                        account: text(&e, "account").expect("account"),
                        conversation: text(&e, "conversation").expect("conversation"),
                        room: text(&e, "room"),
                        sender: text(&e, "sender").expect("sender"),
                        receiver: text(&e, "receiver").expect("receiver"),
                        ts_ms: e["ts_ms"].as_i64().expect("ts_ms"),
                        event_id: text(&e, "event_id"),
                    };
                    same(gws.0.plain_bot(&m), gws.1.check_bot_message(&m), &what);
                }
                "compaction" => {
                    let (s, r, a) = (text(&e, "session").expect("session"), text(&e, "run"), text(&e, "agent"));
                    for gw in [&mut gws.0, &mut gws.1] {
                        gw.compaction_retried(&s, r.as_deref(), a.as_deref()).expect("compaction");
                    }
                    continue;
                }
                _ => continue, // group events: no packed form
            }
            decided += 1;
        }
        assert_same_state(&mut gws, &scenario.name);
    }
    assert!(decided > 100, "the example traces hold tool calls, outcomes and bot messages ({decided})");
    // The messages of these come from `last-message`.
    assert!(blocked > 0 && aborted > 0, "the example traces block ({blocked}) and abort ({aborted})");
}

fn call(session: &str, tool: &str, args: &str, run: Option<&str>, agent: Option<&str>, id: Option<&str>) -> ToolCall {
    let own = |s: Option<&str>| s.map(str::to_string);
    ToolCall {
        session: session.into(),
        tool: tool.into(),
        args_json: args.into(),
        run: own(run),
        agent: own(agent),
        call_id: own(id),
    }
}

#[test]
fn hand_made_calls_decide_the_same_packed_and_plain() {
    let config = r#"{"tools":{"loopDetection":{"enabled":true}},
        "agents":{"list":[{"id":"ágent","tools":{"loopDetection":{"warningThreshold":3,"criticalThreshold":5}}}]}}"#;
    let calls = [
        call("s1", "read", r#"{"path":"/a"}"#, None, None, None),
        call("s1", "read", r#"{"path":"/a"}"#, Some("run-1"), Some("ágent"), Some("call-1")),
        call("", "", "null", Some(""), Some(""), Some("")),
        call("sé😀", "読む", r#"{"p":"ü€😀"}"#, Some("rün"), None, Some("c-é")),
        call("s2", "exec", r#"{"command":"ls"}"#, None, Some("ágent"), None),
        call("s2", "process", r#"{"action":"poll","sessionId":"x"}"#, Some("r"), None, Some("id")),
        call("s3", "read", "{not json", None, None, None),
        call("s3", "read", "  [1, 2, {\"a\": \"\\u00e9\"}]  ", None, Some("nobody"), None),
    ];
    let outcomes = [
        ToolOutcome::Returned(r#"{"content":"same"}"#.into()),
        ToolOutcome::Threw(r#""Unknown tool: read""#.into()),
        ToolOutcome::Returned("\"ü😀\"".into()),
        ToolOutcome::Returned("".into()), // malformed: an error, the same on both
        ToolOutcome::Threw("{\"code\":1}".into()),
    ];
    let policy = policy();
    let mut gws = pair(&policy, config);
    let mut fired = false;
    // Every call 12 times with rotating outcomes: enough repeats for the detectors to warn and block.
    for round in 0..12 {
        for (i, c) in calls.iter().enumerate() {
            let what = format!("round {round}, call {i}");
            let v = gws.1.check_tool_call(c);
            fired |= v.as_ref().is_ok_and(|v| v.action != ToolAction::Allow);
            same(gws.0.plain_check(c), v, &what);
            let o = &outcomes[(round + i) % outcomes.len()];
            same(gws.0.plain_outcome(c, o), gws.1.record_tool_outcome(c, o), &what);
        }
    }
    assert!(fired, "the repeats must make a detector fire");
    assert_same_state(&mut gws, "hand-made calls");
}

#[test]
fn hand_made_bot_messages_decide_the_same_packed_and_plain() {
    let config = r#"{"channels":{"discord":{"botLoopProtection":{"enabled":true,"maxEventsPerWindow":3}}}}"#;
    let m = |room: Option<&str>, event: Option<&str>, sender: &str, ts_ms: i64| BotMessage {
        channel: "discord".into(),
        account: "accöunt".into(),
        conversation: "c😀".into(),
        room: room.map(Into::into),
        sender: sender.into(),
        receiver: "bot-b".into(),
        ts_ms,
        event_id: event.map(Into::into),
    };
    let policy = policy();
    let mut gws = pair(&policy, config);
    let mut suppressed = false;
    for i in 0..40 {
        let (room, event) = match i % 4 {
            0 => (None, None),
            1 => (Some("rööm"), None),
            2 => (None, Some(format!("évt-{}", i / 2))), // every event id twice: a redelivery
            _ => (Some(""), Some(String::new())),
        };
        let msg = m(room, event.as_deref(), if i % 2 == 0 { "bot-a" } else { "bøt-c" }, 1_000 * i);
        let v = gws.1.check_bot_message(&msg);
        suppressed |= matches!(v, Ok(BotVerdict::Suppress(_)));
        same(gws.0.plain_bot(&msg), v, &format!("message {i}"));
    }
    same(gws.0.plain_bot(&m(None, None, "x", -1)), gws.1.check_bot_message(&m(None, None, "x", -1)), "negative ts");
    assert!(suppressed, "the budget of 3 must suppress some of 40 messages");
    assert_same_state(&mut gws, "bot messages");
}

/// session, tool, run, agent and call-id lengths of a raw packed call.
type CallLens = (u32, u32, Option<u32>, Option<u32>, Option<u32>);

/// The path of the policy error a raw packed call returned.
fn error_path<T: std::fmt::Debug>(r: Result<T>) -> String {
    match r {
        Err(Error::Policy { path, .. }) => path,
        other => panic!("expected a policy error, got {other:?}"),
    }
}

impl Gateway {
    fn raw_check(
        &mut self,
        fields: &str,
        lens: (u32, u32, Option<u32>, Option<u32>, Option<u32>),
    ) -> Result<ToolVerdict> {
        let (session, tool, run, agent, id) = lens;
        self.typed("check-tool-call-packed", |s, g, h| {
            g.call_check_tool_call_packed(s, h, fields, session, tool, run, agent, id)
        })?
        .map_err(policy_error)
    }

    fn raw_outcome(
        &mut self,
        fields: &str,
        session: u32,
        tool: u32,
        run: Option<u32>,
        args: u32,
    ) -> Result<OutcomeVerdict> {
        self.typed("record-tool-outcome-packed", |s, g, h| {
            g.call_record_tool_outcome_packed(s, h, fields, session, tool, run, None, None, args, false)
        })?
        .map_err(policy_error)
    }

    fn raw_bot(&mut self, fields: &str, lens: [u32; 5], room: Option<u32>, event: Option<u32>) -> Result<BotVerdict> {
        let [channel, account, conversation, sender, receiver] = lens;
        self.typed("check-bot-message-packed", |s, g, h| {
            g.call_check_bot_message_packed(
                s,
                h,
                fields,
                channel,
                account,
                conversation,
                room,
                sender,
                receiver,
                1,
                event,
            )
        })?
        .map_err(policy_error)
    }
}

#[test]
fn bad_lengths_are_errors_naming_the_length_parameter() {
    let policy = policy();
    let mut gw = policy.gateway(r#"{"tools":{"loopDetection":{"enabled":true}}}"#).expect("config");
    let cases: [(&str, CallLens, &str); 6] = [
        ("s1read{}", (9, 4, None, None, None), "session-len"),
        ("s1read{}", (2, 7, None, None, None), "tool-len"),
        ("s1read{}", (2, 4, Some(3), None, None), "run-len"),
        ("s1read{}", (2, 4, None, Some(u32::MAX), None), "agent-len"),
        ("s1read{}", (2, 4, None, None, Some(3)), "call-id-len"),
        ("sé{}", (2, 0, None, None, None), "session-len"), // ends inside "é"
    ];
    for (fields, lens, param) in cases {
        assert_eq!(error_path(gw.raw_check(fields, lens)), param, "{fields:?} {lens:?}");
    }
    assert_eq!(error_path(gw.raw_check("s1read{", (2, 4, None, None, None))), "call.args-json");

    assert_eq!(error_path(gw.raw_outcome("s1read{}1", 2, 4, None, 4)), "args-len");
    assert_eq!(error_path(gw.raw_outcome("s1read{}1", 2, 4, Some(9), 2)), "run-len");
    assert_eq!(error_path(gw.raw_outcome("s1read{1", 2, 4, None, 1)), "call.args-json");
    assert_eq!(error_path(gw.raw_outcome("s1read{}", 2, 4, None, 2)), "outcome.result", "an empty outcome is not JSON");

    let bot = "discordacbot-1bot-2";
    assert_eq!(error_path(gw.raw_bot(bot, [20, 1, 1, 5, 5], None, None)), "channel-len");
    assert_eq!(error_path(gw.raw_bot(bot, [7, 1, 1, 5, 6], None, None)), "receiver-len");
    assert_eq!(error_path(gw.raw_bot(bot, [7, 1, 1, 5, 5], Some(1), None)), "receiver-len");
    assert_eq!(error_path(gw.raw_bot(bot, [7, 1, 1, 5, 5], None, Some(1))), "event-id-len");
    assert_eq!(error_path(gw.raw_bot(bot, [7, 1, 1, 5, 4], None, None)), "fields", "a byte left over");
    assert_eq!(error_path(gw.raw_bot("dé", [2, 0, 0, 0, 0], None, None)), "channel-len");

    // Nothing was recorded, and the instance did not trap: correct calls still work.
    assert_eq!(gw.stats().expect("stats").sessions, 0);
    assert_eq!(gw.bot_stats().expect("stats").pairs, 0);
    let v = gw.raw_check("s1read{}", (2, 4, None, None, None)).expect("a well packed call");
    assert_eq!(v.action, ToolAction::Allow);
    assert_eq!(gw.raw_bot(bot, [7, 1, 1, 5, 5], None, None).expect("a well packed message"), BotVerdict::Allow);
}

impl Gateway {
    /// `check-bot-message-quick` on the gateway with id `id` (any id, for the tests below), with
    /// the failure's text fetched from `last-error` as [`Gateway::check_bot_message`] does.
    fn raw_quick(&mut self, id: u64, fields: &str, lens: [u32; 5]) -> Result<BotVerdict> {
        let [channel, account, conversation, sender, receiver] = lens;
        let deadline = self.instance.limits.call_deadline;
        let verdict = self.instance.call("check-bot-message-quick", deadline, |s, b| {
            b.loopguard_policy_guard().call_check_bot_message_quick(
                s,
                id,
                fields,
                channel,
                account,
                conversation,
                None,
                sender,
                receiver,
                1,
                None,
            )
        })?;
        verdict.map_err(|()| self.last_error("check-bot-message-quick"))
    }
}

#[test]
fn quick_calls_find_their_gateway_by_id_and_explain_failures_through_last_error() {
    let policy = policy();
    let mut gw = policy.gateway("{}").expect("config");
    let bot = "discordacbot-1bot-2";
    let lens = [7, 1, 1, 5, 5];

    // A bad length fails the same way as the packed call, with the text from `last-error`.
    same(gw.raw_bot(bot, [20, 1, 1, 5, 5], None, None), gw.raw_quick(gw.id, bot, [20, 1, 1, 5, 5]), "bad length");
    // Ids that name no live gateway: another slot, another generation of this slot.
    for id in [gw.id + 1, gw.id + (1 << 32), u64::MAX] {
        assert_eq!(error_path(gw.raw_quick(id, bot, lens)), "gateway", "id {id:#x}");
    }
    assert_eq!(gw.bot_stats().expect("stats").pairs, 0, "failed calls record nothing");
    assert_eq!(gw.raw_quick(gw.id, bot, lens).expect("decision"), BotVerdict::Allow);
    assert_eq!(gw.bot_stats().expect("stats").pairs, 1);

    // A second gateway in the same instance (as Node and Python gateways may share one) has
    // its own id and its own state; once dropped, its id is refused.
    let deadline = gw.instance.limits.call_deadline;
    let other = gw
        .instance
        .call("create", deadline, |s, b| b.loopguard_policy_guard().gateway().call_create(s, "{}"))
        .expect("call")
        .expect("config");
    let other_id =
        gw.instance.call("id", deadline, |s, b| b.loopguard_policy_guard().gateway().call_id(s, other)).expect("id");
    assert_ne!(other_id, gw.id);
    let pairs = |gw: &mut Gateway, h| {
        gw.instance.call("bot-stats", deadline, |s, b| b.loopguard_policy_guard().gateway().call_bot_stats(s, h))
    };
    gw.raw_quick(other_id, "discordacbot-1bot-3", lens).expect("decision on the other gateway");
    assert_eq!(pairs(&mut gw, other).expect("stats").pairs, 1);
    assert_eq!(gw.bot_stats().expect("stats").pairs, 1, "this gateway did not see it");
    other.resource_drop(&mut gw.instance.store).expect("drop");
    assert_eq!(error_path(gw.raw_quick(other_id, bot, lens)), "gateway", "a dropped gateway's id");
    assert_eq!(gw.raw_quick(gw.id, bot, lens).expect("still working"), BotVerdict::Allow);
}

#[test]
fn quick_tool_calls_refuse_unknown_ids_and_keep_the_last_message() {
    let policy = policy();
    let mut gw = policy.gateway(r#"{"tools":{"loopDetection":{"enabled":true}}}"#).expect("config");
    let deadline = gw.instance.limits.call_deadline;
    let fields = "s1read{}";
    for id in [gw.id + 1, u64::MAX] {
        let check = gw
            .instance
            .call("check-tool-call-quick", deadline, |s, b| {
                b.loopguard_policy_guard().call_check_tool_call_quick(s, id, fields, 2, 4, None, None, None)
            })
            .expect("call");
        assert!(check.is_err(), "id {id:#x}");
        assert_eq!(error_path::<()>(Err(gw.last_error("check-tool-call-quick"))), "gateway", "id {id:#x}");
        let outcome = gw
            .instance
            .call("record-tool-outcome-quick", deadline, |s, b| {
                b.loopguard_policy_guard().call_record_tool_outcome_quick(
                    s,
                    id,
                    "s1read{}{}",
                    2,
                    4,
                    None,
                    None,
                    None,
                    2,
                    false,
                )
            })
            .expect("call");
        assert!(outcome.is_err(), "id {id:#x}");
        assert_eq!(error_path::<()>(Err(gw.last_error("record-tool-outcome-quick"))), "gateway");
    }
    assert_eq!(gw.stats().expect("stats").sessions, 0, "failed calls record nothing");

    // Repeat one call until it warns: the message comes with the verdict; an allowed call after
    // it has none, and leaves the last message in place.
    let c = call("s1", "read", r#"{"path":"/a"}"#, None, None, None);
    let warned = (0..20)
        .map(|_| {
            let v = gw.check_tool_call(&c).expect("decision");
            gw.record_tool_outcome(&c, &ToolOutcome::Returned(r#"{"content":"same"}"#.into())).expect("outcome");
            v
        })
        .find(|v| v.action == ToolAction::Warn)
        .expect("ten identical calls warn");
    let message = warned.message.expect("a warning has its message");
    assert!(message.starts_with("WARNING: You have called read 10 times"), "{message}");
    let other = call("s2", "read", r#"{"path":"/b"}"#, None, None, None);
    assert_eq!(gw.check_tool_call(&other).expect("decision").message, None);
    let last = gw.instance.call("last-message", deadline, |s, b| b.loopguard_policy_guard().call_last_message(s));
    assert_eq!(last.expect("call"), Some(message));
}
