//! Quick hot swap and recovery with a large state: a swap copies the state while calls
//! go on (the last snapshot, then the calls logged since), and a recovery switches to a standby
//! instance that imported the last snapshot in the background. Each test names the behaviour it
//! proves; without that behaviour it fails.

// Test code: an unwrap failure shows the error, which is what we want.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use loopguard_host::{
    BotMessage, Deadline, FailureMode, Limits, Policy, Supervision, SwappableGateway, ToolAction, ToolCall, ToolOutcome,
};
use loopguard_tests::{hostile_wasm, policy_wasm, scenarios, workspace_root, Scenario};

fn cache() {
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
}

fn real() -> Policy {
    cache();
    Policy::from_file(policy_wasm()).unwrap()
}

/// The real policy under another digest and version; traps on session `__trap__`. Patient
/// limits, so that a trap is never mistaken for a timeout on a loaded machine.
fn hostile() -> Policy {
    cache();
    Policy::from_file(hostile_wasm("")).unwrap().with_limits(Limits {
        call_deadline: Deadline::new(Duration::from_secs(5)).expect("not zero"),
        ..Limits::default()
    })
}

fn polling_loop() -> (String, Vec<String>, String) {
    let s = scenarios().into_iter().find(|s| s.name == "exec-poll-no-progress").unwrap();
    let trace = Scenario::read(&s.trace);
    (Scenario::read(&s.config), trace.lines().map(String::from).collect(), Scenario::read(&s.expected))
}

/// Applies `lines` (1-based numbers starting at `first`) one call per line, concatenating decisions.
fn apply_lines(gw: &SwappableGateway, lines: &[String], first: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(&gw.apply_events(line, (first + i) as u32).unwrap());
    }
    out
}

fn expected_from(expected: &str, line: usize) -> String {
    expected.lines().skip(line - 1).map(|l| format!("{l}\n")).collect()
}

fn trap_call() -> ToolCall {
    ToolCall {
        session: "__trap__".into(),
        tool: "read".into(),
        args_json: "{}".into(),
        run: None,
        agent: None,
        call_id: None,
    }
}

#[test]
fn a_recovery_switches_to_the_standby_holding_the_last_snapshot_in_both_failure_modes() {
    let (config, lines, expected) = polling_loop();
    for mode in [FailureMode::Open, FailureMode::Closed] {
        let gw =
            SwappableGateway::new(hostile(), &config, Supervision { failure_mode: mode, ..Supervision::default() })
                .unwrap();
        apply_lines(&gw, &lines[..29], 1);
        // The snapshot: the state after line 29. Lines 30-34 come after it and are lost.
        gw.import_state(&gw.export_state().unwrap()).unwrap();
        apply_lines(&gw, &lines[29..34], 30);
        assert!(gw.wait_for_standby(Duration::from_secs(60)), "{mode:?}: the standby was never ready");
        let verdict = gw.check_tool_call(&trap_call()).unwrap();
        let want = if mode == FailureMode::Open { ToolAction::Allow } else { ToolAction::Block };
        assert_eq!(verdict.action, want, "{mode:?}");
        let h = gw.health();
        assert_eq!((h.traps, h.recoveries, h.standby_recoveries), (1, 1, 1), "{mode:?}: {h:?}");
        assert!(gw.last_failure().unwrap().contains("the standby"), "{:?}", gw.last_failure());
        // The state is the snapshot's: lines 30.. decide again exactly as in a run without a trap.
        assert_eq!(apply_lines(&gw, &lines[29..], 30), expected_from(&expected, 30), "{mode:?}");
    }
}

#[test]
fn without_a_standby_a_recovery_imports_the_last_snapshot_itself() {
    let (config, lines, expected) = polling_loop();
    let supervision = Supervision { failure_mode: FailureMode::Closed, standby: false, ..Supervision::default() };
    let gw = SwappableGateway::new(hostile(), &config, supervision).unwrap();
    apply_lines(&gw, &lines[..29], 1);
    gw.import_state(&gw.export_state().unwrap()).unwrap();
    assert!(!gw.wait_for_standby(Duration::from_millis(10)));
    assert_eq!(gw.check_tool_call(&trap_call()).unwrap().action, ToolAction::Block);
    let h = gw.health();
    assert_eq!((h.recoveries, h.standby_recoveries, h.standbys), (1, 0, 0), "{h:?}");
    assert_eq!(apply_lines(&gw, &lines[29..], 30), expected_from(&expected, 30));
}

#[test]
fn a_new_standby_follows_each_snapshot_and_each_recovery() {
    let (config, lines, expected) = polling_loop();
    let supervision = Supervision { snapshot_every: 1, snapshot_spacing: 0, ..Supervision::default() };
    let gw = SwappableGateway::new(hostile(), &config, supervision).unwrap();
    apply_lines(&gw, &lines[..29], 1);
    for _ in 0..3 {
        assert!(gw.wait_for_standby(Duration::from_secs(60)));
        gw.check_tool_call(&trap_call()).unwrap();
    }
    let h = gw.health();
    assert_eq!((h.recoveries, h.standby_recoveries), (3, 3), "{h:?}");
    // A snapshot after every call: the recoveries lost nothing.
    assert_eq!(apply_lines(&gw, &lines[29..], 30), expected_from(&expected, 30));
}

#[test]
fn a_swap_applies_the_calls_since_the_last_snapshot_before_it_takes_the_lock() {
    let (config, lines, expected) = polling_loop();
    let gw = SwappableGateway::new(real(), &config, Supervision::default()).unwrap();
    let before = apply_lines(&gw, &lines[..29], 1);
    let report = gw.swap(hostile()).unwrap();
    assert_eq!((report.replayed, report.replayed_paused), (29, 0), "{report:?}");
    assert_eq!(format!("{before}{}", apply_lines(&gw, &lines[29..], 30)), expected);
    // After a recovery the calls since the snapshot are gone, and a swap applies none.
    gw.check_tool_call(&trap_call()).unwrap();
    assert_eq!(gw.swap(real()).unwrap().replayed, 0);
}

#[test]
fn without_the_call_log_a_swap_starts_from_a_snapshot_of_everything_before_it() {
    let (config, lines, expected) = polling_loop();
    let supervision = Supervision { log_calls: false, ..Supervision::default() };
    let gw = SwappableGateway::new(real(), &config, supervision).unwrap();
    let before = apply_lines(&gw, &lines[..29], 1);
    let report = gw.swap(hostile()).unwrap();
    // Nothing was logged: the 29 calls reach the new instance in the snapshot, not replayed.
    assert_eq!((report.replayed, report.replayed_paused), (0, 0), "{report:?}");
    assert!(gw.health().snapshots >= 1, "{:?}", gw.health());
    assert_eq!(format!("{before}{}", apply_lines(&gw, &lines[29..], 30)), expected);
}

/// A mixed stream of typed calls: tool calls and outcomes that loop in a few sessions, compactions,
/// ended sessions and bot messages that trip their pair budget. Returns every answer, in order.
fn typed_stream(gw: &SwappableGateway, n: usize, pace: Duration) -> Vec<String> {
    let mut answers = Vec::new();
    for i in 0..n {
        let call = ToolCall {
            session: format!("s{}", i % 7),
            tool: "process".into(),
            args_json: format!(r#"{{"action":"poll","sessionId":"p{}"}}"#, i % 7),
            run: (i % 7 < 3).then(|| "r".into()),
            agent: None,
            call_id: Some(format!("c{i}")),
        };
        answers.push(format!("{:?}", gw.check_tool_call(&call).unwrap()));
        let outcome = ToolOutcome::Returned(r#"{"content":[{"type":"text","text":"same"}]}"#.into());
        answers.push(format!("{:?}", gw.record_tool_outcome(&call, &outcome).unwrap()));
        if i % 11 == 0 {
            answers.push(format!("{:?}", gw.compaction_retried(&call.session, call.run.as_deref(), None).unwrap()));
        }
        if i % 150 == 149 {
            gw.end_session(&call.session).unwrap();
        }
        let bot = BotMessage {
            channel: "discord".into(),
            account: "a".into(),
            conversation: format!("c{}", i % 5),
            room: None,
            sender: "bot-1".into(),
            receiver: "bot-2".into(),
            ts_ms: 1_000_000 + i as i64 * 100,
            event_id: Some(format!("e{i}")),
        };
        answers.push(format!("{:?}", gw.check_bot_message(&bot).unwrap()));
        std::thread::sleep(pace);
    }
    answers
}

#[test]
fn swaps_while_typed_calls_run_change_no_answer() {
    swaps_while_typed_calls_run(true);
}

#[test]
fn swaps_while_typed_calls_run_change_no_answer_without_the_call_log() {
    // Calls are logged only while the swap copies: those made during the copy must reach the
    // new instance all the same.
    swaps_while_typed_calls_run(false);
}

fn swaps_while_typed_calls_run(log_calls: bool) {
    let config = r#"{"tools":{"loopDetection":{"enabled":true}},
        "channels":{"discord":{"allowBots":true,"botLoopProtection":{"maxEventsPerWindow":8}}}}"#;
    let reference =
        typed_stream(&SwappableGateway::new(real(), config, Supervision::default()).unwrap(), 1_000, Duration::ZERO);
    assert!(reference.iter().any(|a| a.contains("Block")), "the stream must reach blocks");
    assert!(reference.iter().any(|a| a.contains("Suppress")), "the stream must reach suppressions");
    // Frequent snapshots, so that some fall due while a swap copies (and are taken from the new
    // instance).
    let supervision = Supervision { snapshot_every: 100, snapshot_spacing: 0, log_calls, ..Supervision::default() };
    let gw = Arc::new(SwappableGateway::new(real(), config, supervision).unwrap());
    let policies = [hostile(), real()];
    let done = Arc::new(AtomicBool::new(false));
    let calls = {
        let (gw, done) = (gw.clone(), done.clone());
        std::thread::spawn(move || {
            let answers = typed_stream(&gw, 1_000, Duration::from_micros(300));
            done.store(true, Ordering::SeqCst);
            answers
        })
    };
    let (mut swaps, mut replayed) = (0, 0);
    while !done.load(Ordering::SeqCst) {
        replayed += gw.swap(policies[swaps % 2].clone()).unwrap().replayed;
        swaps += 1;
    }
    let answers = calls.join().unwrap();
    assert!(swaps >= 5 && replayed > 0, "{swaps} swaps, {replayed} calls replayed: the test proves nothing");
    assert_eq!(answers.len(), reference.len());
    for (i, (got, want)) in answers.iter().zip(&reference).enumerate() {
        assert_eq!(got, want, "answer {i} differs after {swaps} swaps");
    }
}

/// Polls that make no progress, each with its outcome, in one session, which then ends.
fn polling_session(gw: &SwappableGateway, session: &str) -> Vec<String> {
    let poll = ToolCall {
        session: session.into(),
        tool: "process".into(),
        args_json: r#"{"action":"poll","sessionId":"build-7"}"#.into(),
        run: None,
        agent: None,
        call_id: None,
    };
    let running = ToolOutcome::Returned(r#"{"content":[{"type":"text","text":"still running"}]}"#.into());
    let answers = (0..25)
        .map(|_| {
            let v = gw.check_tool_call(&poll).unwrap();
            gw.record_tool_outcome(&poll, &running).unwrap();
            format!("{:?} {}", v.action, v.count)
        })
        .collect();
    gw.end_session(session).unwrap();
    answers
}

#[test]
fn swaps_under_calls_made_as_fast_as_possible_change_no_answer() {
    let config = r#"{"tools":{"loopDetection":{"enabled":true}},"channels":{"discord":{"allowBots":true}}}"#;
    let reference = polling_session(&SwappableGateway::new(real(), config, Supervision::default()).unwrap(), "ref");
    let gw = Arc::new(SwappableGateway::new(real(), config, Supervision::default()).unwrap());
    // Some state, so that importing the snapshot takes a while and calls pile up meanwhile.
    let pairs: String = (0..30_000)
        .map(|p| {
            format!(
                "{{\"kind\":\"bot_message\",\"channel\":\"discord\",\"account\":\"a\",\"conversation\":\"c{}\",\"sender\":\"x{p}\",\"receiver\":\"y{p}\",\"ts_ms\":{}}}\n",
                p % 100,
                1_000 + p
            )
        })
        .collect();
    gw.apply_events(&pairs, 1).unwrap();
    gw.import_state(&gw.export_state().unwrap()).unwrap();
    let policies = [hostile(), real()];
    let stop = Arc::new(AtomicBool::new(false));
    let load = {
        let (gw, stop, reference) = (gw.clone(), stop.clone(), reference.clone());
        std::thread::spawn(move || {
            let (mut sessions, mut differ) = (0, 0);
            while !stop.load(Ordering::SeqCst) {
                differ += usize::from(polling_session(&gw, &format!("load:{sessions}")) != reference);
                sessions += 1;
            }
            (sessions, differ)
        })
    };
    let mut reports = Vec::new();
    for i in 0..6 {
        reports.push(gw.swap(policies[i % 2].clone()).unwrap());
    }
    stop.store(true, Ordering::SeqCst);
    let (sessions, differ) = load.join().unwrap();
    let replayed: usize = reports.iter().map(|r| r.replayed).sum();
    assert!(sessions > 0 && replayed > 0, "{sessions} sessions, {replayed} calls replayed: the test proves nothing");
    assert_eq!(differ, 0, "{differ} of {sessions} polling loops decided differently: {reports:?}");
    assert_eq!(gw.stats().unwrap().sessions, 0, "every load session was ended");
}
