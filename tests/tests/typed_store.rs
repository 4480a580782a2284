//! A gateway whose state lives in a store takes the same typed calls as one that keeps it in the
//! process, and answers the same: interface 1.2's `key-of`, `decide-call` and `apply-calls`.
#![allow(clippy::unwrap_used)]

use loopguard_host::store::{MemoryStore, StoreOptions, StoredGateway, Via};
use loopguard_host::{
    BotMessage, BotVerdict, Call, Compaction, GroupThread, Policy, ToolAction, ToolCall, ToolOutcome, Verdict,
};

use loopguard_tests::{policy_wasm, workspace_root};

fn policy() -> Policy {
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
    Policy::from_file(policy_wasm()).expect("the built policy loads")
}

const CONFIG: &str = r#"{"tools":{"loopDetection":{"enabled":true}},"loopguard":{"preset":"recommended"}}"#;

fn poll(session: &str) -> ToolCall {
    ToolCall {
        session: session.into(),
        tool: "exec".into(),
        args_json: r#"{"command":"ps aux | grep build"}"#.into(),
        run: Some("r1".into()),
        agent: None,
        call_id: None,
    }
}

fn bot(ts_ms: i64) -> BotMessage {
    BotMessage {
        channel: "discord".into(),
        account: "a".into(),
        conversation: "c".into(),
        room: None,
        sender: "x".into(),
        receiver: "y".into(),
        ts_ms,
        event_id: None,
    }
}

/// A session that polls an unchanged process list, a compaction, and a bot pair answering each
/// other every second: calls that warn, block and suppress.
fn calls() -> Vec<Call> {
    let mut calls = Vec::new();
    for _ in 0..12 {
        calls.push(Call::CheckToolCall(poll("s1")));
        calls.push(Call::RecordToolOutcome((poll("s1"), ToolOutcome::Returned(r#""build 4242 running""#.into()))));
    }
    calls.push(Call::CompactionRetried(Compaction { session: "s1".into(), run: Some("r1".into()), agent: None }));
    calls.extend((0..25).map(|i| Call::CheckBotMessage(bot(1_000 * i))));
    calls
}

/// The verdicts of the plain typed methods, one call at a time: the oracle.
fn plain(gateway: &mut loopguard_host::Gateway, call: &Call) -> Verdict {
    match call {
        Call::CheckToolCall(c) => Verdict::CheckToolCall(gateway.check_tool_call(c).unwrap()),
        Call::RecordToolOutcome((c, o)) => Verdict::RecordToolOutcome(gateway.record_tool_outcome(c, o).unwrap()),
        Call::CompactionRetried(c) => Verdict::CompactionRetried(
            gateway.compaction_retried(&c.session, c.run.as_deref(), c.agent.as_deref()).unwrap(),
        ),
        Call::CheckBotMessage(m) => Verdict::CheckBotMessage(gateway.check_bot_message(m).unwrap()),
        other => panic!("not used here: {other:?}"),
    }
}

#[test]
fn typed_calls_on_a_store_answer_as_the_plain_methods_do() {
    let policy = policy();
    let mut oracle = policy.gateway(CONFIG).unwrap();
    let mut stored =
        StoredGateway::new(policy.gateway(CONFIG).unwrap(), Box::new(MemoryStore::default()), StoreOptions::default());
    let (mut blocked, mut suppressed) = (0, 0);
    for (i, call) in calls().iter().enumerate() {
        let expected = plain(&mut oracle, call);
        let decided = stored.decide_call(call).unwrap();
        assert_eq!(decided.via, Via::Store);
        let verdict = decided.decision.expect("a verdict");
        assert_eq!(verdict, expected, "call {i}");
        blocked += matches!(&verdict, Verdict::CheckToolCall(v) if v.action == ToolAction::Block) as u32;
        suppressed += matches!(&verdict, Verdict::CheckBotMessage(BotVerdict::Suppress(_))) as u32;
    }
    // The trace is not trivial: the poll is blocked and the pair budget suppresses.
    assert!(blocked > 0 && suppressed > 0, "blocked {blocked}, suppressed {suppressed}");
    assert_eq!(stored.stats().on_store, calls().len() as u64);
}

#[test]
fn a_typed_call_has_the_key_of_its_trace_event() {
    let mut g = policy().gateway("{}").unwrap();
    let thread = GroupThread {
        channel: "slack".into(),
        account: "a".into(),
        conversation: "c".into(),
        thread: None,
        root: "m1".into(),
    };
    let pairs = [
        (Call::CheckToolCall(poll("s\"1")), r#"{"kind":"tool_call","session":"s\"1","tool":"exec","args":{}}"#),
        (
            Call::CheckBotMessage(bot(1)),
            r#"{"kind":"bot_message","channel":"discord","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":1}"#,
        ),
        (
            Call::CancelGroupThread(thread),
            r#"{"kind":"group_cancel","channel":"slack","account":"a","conversation":"c","root":"m1"}"#,
        ),
    ];
    for (call, line) in pairs {
        assert_eq!(g.key_of(&call).unwrap(), g.state_key(line).unwrap());
    }
    assert_eq!(g.key_of(&Call::CheckBotMessage(bot(1))).unwrap(), r#"bot["a","c"]"#);
}

#[test]
fn apply_calls_answers_each_call_and_stops_after_a_bad_one() {
    let policy = policy();
    let mut oracle = policy.gateway(CONFIG).unwrap();
    let mut batch = policy.gateway(CONFIG).unwrap();
    let mut calls = calls();
    let bad = ToolCall { args_json: "{oops".into(), ..poll("s2") };
    calls.insert(3, Call::CheckToolCall(bad));
    let answers = batch.apply_calls(&calls).unwrap();
    assert_eq!(answers.len(), 4, "the three calls before the bad one, then its error");
    let error = answers[3].as_ref().unwrap_err();
    assert!(error.path.contains("args"), "{error:?}");
    let rest = batch.apply_calls(&calls[4..]).unwrap();
    assert_eq!(rest.len(), calls.len() - 4);
    let answered = answers[..3].iter().chain(&rest);
    let made = calls.iter().enumerate().filter(|(i, _)| *i != 3).map(|(_, c)| c);
    for (i, (answer, call)) in answered.zip(made).enumerate() {
        assert_eq!(answer.as_ref().unwrap(), &plain(&mut oracle, call), "call {i}");
    }
    assert_eq!(batch.export_state().unwrap(), oracle.export_state().unwrap());
}
