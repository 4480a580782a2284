//! Versions, integrity, hot swap, shadow runs and sandbox limits through the host library
//! (docs/spec/README.md), with the hostile fixture of `tests/hostile-policy/` where a misbehaving policy is
//! needed. Each test names the behaviour it proves; without that behaviour it fails.

// The helpers below are test code too: an unwrap failure shows the error, which is what we want.
#![allow(clippy::unwrap_used)]

use std::num::NonZeroUsize;
use std::sync::mpsc;
use std::time::Duration;

use loopguard_host::{
    Deadline, Error, FailureMode, Limits, LoadOptions, Policy, Supervision, SwappableGateway, ToolAction, ToolCall,
};
use loopguard_tests::{hostile_wasm, policy_wasm, scenarios, workspace_root, Scenario};

fn cache() {
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
}

fn real() -> Policy {
    cache();
    Policy::from_file(policy_wasm()).unwrap()
}

fn hostile(feature: &str) -> Policy {
    cache();
    Policy::from_file(hostile_wasm(feature)).unwrap()
}

fn scenario(name: &str) -> Scenario {
    scenarios().into_iter().find(|s| s.name == name).unwrap()
}

/// Applies `lines` (1-based numbers starting at `first`) one call per line, concatenating decisions.
fn apply_lines(gw: &SwappableGateway, lines: &[&str], first: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(&gw.apply_events(line, (first + i) as u32).unwrap());
    }
    out
}

fn call(session: &str) -> ToolCall {
    ToolCall {
        session: session.into(),
        tool: "read".into(),
        args_json: r#"{"path":"/a"}"#.into(),
        run: None,
        agent: None,
        call_id: None,
    }
}

#[test]
fn a_policy_of_another_interface_major_is_refused_naming_both_versions() {
    cache();
    for (feature, found) in [("major2", "2.0.0"), ("major0", "0.5.0")] {
        let err = Policy::from_file(hostile_wasm(feature)).unwrap_err();
        assert!(matches!(err, Error::Incompatible { found: ref found_v, .. } if found_v == found), "{err:?}");
        let text = err.to_string();
        let want = format!("policy interface {found} is incompatible with this host (1.x)");
        assert!(text.contains(&want), "{text}");
    }
    // The same fixture without the feature is accepted: the refusal is about the version only.
    hostile("");
}

#[test]
fn a_digest_mismatch_is_refused_before_compiling() {
    cache();
    let bytes = std::fs::read(policy_wasm()).unwrap();
    let digest = blake3::hash(&bytes).to_hex().to_string();
    let wrong = "0".repeat(64);
    let err = Policy::from_bytes_pinned(&bytes, &wrong).unwrap_err();
    match &err {
        Error::DigestMismatch { expected, found, .. } => assert_eq!((expected, found), (&wrong, &digest)),
        other => panic!("expected a digest mismatch, got {other:?}"),
    }
    assert!(err.to_string().contains(&wrong) && err.to_string().contains(&digest), "{err}");
    // Garbage with a wrong pin fails on the pin, not in the compiler: the pin is checked first.
    let garbage = Policy::from_bytes_pinned(b"not a component", &wrong).unwrap_err();
    assert!(matches!(garbage, Error::DigestMismatch { .. }), "{garbage:?}");
    // The right pin (any case) loads.
    Policy::from_bytes_pinned(&bytes, &digest.to_uppercase()).unwrap();
}

#[test]
fn a_swap_to_the_same_module_changes_no_decision_on_any_example() {
    let policy = real();
    for s in scenarios() {
        let config = Scenario::read(&s.config);
        let trace = Scenario::read(&s.trace);
        let lines: Vec<&str> = trace.lines().collect();
        let mid = lines.len() / 2;
        let gw = SwappableGateway::new(policy.clone(), &config, Supervision::default()).unwrap();
        let mut out = apply_lines(&gw, &lines[..mid], 1);
        let report = gw.swap(policy.clone()).unwrap();
        assert_eq!(report.from_digest, report.to_digest);
        out.push_str(&apply_lines(&gw, &lines[mid..], mid + 1));
        assert_eq!(out, Scenario::read(&s.expected), "{}: swap before line {}", s.name, mid + 1);
        assert_eq!(gw.health().swaps, 1);
    }
}

#[test]
fn state_is_kept_across_a_swap_so_a_loop_started_before_is_blocked_after() {
    let s = scenario("exec-poll-no-progress");
    let (config, trace, expected) = (Scenario::read(&s.config), Scenario::read(&s.trace), Scenario::read(&s.expected));
    let lines: Vec<&str> = trace.lines().collect();
    let gw = SwappableGateway::new(real(), &config, Supervision::default()).unwrap();
    let before = apply_lines(&gw, &lines[..29], 1);
    assert!(!before.contains("\"block\""), "the loop must not be blocked before the swap");
    // Another module (the fixture carries the real policy): a different digest and version.
    let report = gw.swap(hostile("")).unwrap();
    assert_ne!(report.from_digest, report.to_digest);
    assert!(report.to_version.ends_with("+hostile"), "{report:?}");
    let after = apply_lines(&gw, &lines[29..], 30);
    assert_eq!(format!("{before}{after}"), expected);
    assert!(after.contains("{\"line\":45,\"kind\":\"tool_call\",\"action\":\"block\""), "{after}");
}

#[test]
fn a_failed_import_keeps_the_old_version_and_its_state() {
    let s = scenario("exec-poll-no-progress");
    let (config, trace, expected) = (Scenario::read(&s.config), Scenario::read(&s.trace), Scenario::read(&s.expected));
    let lines: Vec<&str> = trace.lines().collect();
    let old = real();
    let gw = SwappableGateway::new(old.clone(), &config, Supervision::default()).unwrap();
    let before = apply_lines(&gw, &lines[..29], 1);
    let err = gw.swap(hostile("bad-import")).unwrap_err();
    assert!(matches!(err, Error::Policy { .. }), "{err:?}");
    assert!(err.to_string().contains("import-state always fails"), "{err}");
    assert_eq!(gw.policy().digest(), old.digest(), "the old policy must stay active");
    assert_eq!(gw.version(), "1.0.0");
    assert_eq!((gw.health().swaps, gw.health().failed_swaps), (0, 1));
    let after = apply_lines(&gw, &lines[29..], 30);
    assert_eq!(format!("{before}{after}"), expected, "the old state must be intact");
}

/// A gateway on the hostile fixture with a snapshot after every call, fed the first 29 lines of
/// the polling loop, so that a recovery can be checked to restore the state.
fn supervised(mode: FailureMode, limits: Limits) -> (SwappableGateway, Vec<String>, String) {
    let s = scenario("exec-poll-no-progress");
    let (config, trace, expected) = (Scenario::read(&s.config), Scenario::read(&s.trace), Scenario::read(&s.expected));
    let gw = SwappableGateway::new(
        hostile("").with_limits(limits),
        &config,
        Supervision { failure_mode: mode, snapshot_every: 1, snapshot_spacing: 0, ..Supervision::default() },
    )
    .unwrap();
    let lines: Vec<String> = trace.lines().map(String::from).collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    apply_lines(&gw, &refs[..29], 1);
    (gw, lines, expected)
}

/// After a recovery the next calls work and the state is the last snapshot's: the rest of the
/// polling loop decides exactly as if nothing had happened.
fn assert_recovered_with_state(gw: &SwappableGateway, lines: &[String], expected: &str) {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let after = apply_lines(gw, &refs[29..], 30);
    let want: String = expected.lines().skip(29).map(|l| format!("{l}\n")).collect();
    assert_eq!(after, want);
    assert!(gw.check_tool_call(&call("fresh")).unwrap().action == ToolAction::Allow);
}

/// Runs `f` on a thread of its own and fails the test if it has not returned within `limit`.
/// The limit is far past any deadline under test, so only a call that never returns trips it, not
/// a loaded machine; how long a stopped call takes is measured by the benchmarks, not here.
fn returns_within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("no answer within {limit:?}: the call was never stopped"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the call panicked (its message is above)"),
    }
}

#[test]
fn an_endless_loop_is_stopped_at_the_deadline_and_the_gateway_recovers() {
    // A second, not the default 100 ms: the loop always runs into it, while the 29 ordinary calls
    // before it could miss 100 ms on a loaded machine and count a timeout of their own.
    let limits =
        Limits { call_deadline: Deadline::new(Duration::from_secs(1)).expect("not zero"), ..Limits::default() };
    let (gw, lines, expected) = supervised(FailureMode::Open, limits);
    // The deadline's proof is the timeout counted below and the verdict that names it; the
    // thread only turns a deadline that never fires into a failure instead of a hung test.
    let (gw, verdict) = returns_within(Duration::from_secs(60), move || {
        let verdict = gw.check_tool_call(&call("__loop__")).unwrap();
        (gw, verdict)
    });
    assert_eq!(verdict.action, ToolAction::Allow, "fail-open");
    let within = "did not answer check-tool-call within 1000 ms";
    assert!(verdict.message.as_deref().unwrap_or("").contains(within), "{verdict:?}");
    let h = gw.health();
    assert_eq!((h.timeouts, h.recoveries, h.traps, h.oom), (1, 1, 0, 0), "{h:?}");
    assert_recovered_with_state(&gw, &lines, &expected);
}

#[test]
fn a_plain_gateway_reports_a_timeout_as_a_typed_error() {
    let mut gw = hostile("").gateway("{}").unwrap();
    let err = returns_within(Duration::from_secs(60), move || gw.check_tool_call(&call("__loop__")).unwrap_err());
    assert!(matches!(err, Error::Timeout { call: "check-tool-call", .. }), "{err:?}");
    assert!(err.breaks_instance());
}

#[test]
fn a_memory_bomb_is_stopped_at_the_cap_and_the_gateway_recovers() {
    let limits = Limits { memory_bytes: NonZeroUsize::new(64 << 20).expect("not zero"), ..patient() };
    let (gw, lines, expected) = supervised(FailureMode::Closed, limits);
    let verdict = gw.check_tool_call(&call("__bomb__")).unwrap();
    assert_eq!(verdict.action, ToolAction::Block, "fail-closed");
    assert!(verdict.message.as_deref().unwrap_or("").contains("ran out of memory"), "{verdict:?}");
    let h = gw.health();
    assert_eq!((h.oom, h.recoveries, h.traps, h.timeouts), (1, 1, 0, 0), "{h:?}");
    assert_recovered_with_state(&gw, &lines, &expected);
}

/// Limits under which a trap can never be mistaken for a timeout, even on a loaded machine.
fn patient() -> Limits {
    Limits { call_deadline: Deadline::new(Duration::from_secs(5)).expect("not zero"), ..Limits::default() }
}

#[test]
fn a_trap_is_recovered_fail_open() {
    let (gw, lines, expected) = supervised(FailureMode::Open, patient());
    let verdict = gw.check_tool_call(&call("__trap__")).unwrap();
    assert_eq!(verdict.action, ToolAction::Allow);
    assert!(
        verdict.message.as_deref().unwrap_or("").starts_with("loopguard failed open: the policy trapped"),
        "{verdict:?}"
    );
    assert_eq!((gw.health().traps, gw.health().recoveries), (1, 1));
    assert!(gw.last_failure().unwrap().contains("recovered on a fresh instance"));
    assert_recovered_with_state(&gw, &lines, &expected);
}

#[test]
fn a_trap_is_recovered_fail_closed() {
    let (gw, lines, expected) = supervised(FailureMode::Closed, patient());
    let verdict = gw.check_tool_call(&call("__trap__")).unwrap();
    assert_eq!(verdict.action, ToolAction::Block);
    assert!(verdict.message.as_deref().unwrap_or("").starts_with("loopguard failed closed"), "{verdict:?}");
    // A second trap in a row is recovered too.
    assert_eq!(gw.check_tool_call(&call("__trap__")).unwrap().action, ToolAction::Block);
    assert_eq!((gw.health().traps, gw.health().recoveries), (2, 2), "{:?} {:?}", gw.health(), gw.last_failure());
    assert_recovered_with_state(&gw, &lines, &expected);
}

#[test]
fn a_policy_that_tries_io_traps_and_is_recovered() {
    // The host gives the policy no WASI: std's stdout is an import that traps when called.
    let (gw, lines, expected) = supervised(FailureMode::Closed, patient());
    let verdict = gw.check_tool_call(&call("__io__")).unwrap();
    assert_eq!(verdict.action, ToolAction::Block, "fail-closed");
    let message = verdict.message.unwrap_or_default();
    assert!(message.contains("the policy trapped"), "{message}");
    let failure = gw.last_failure().unwrap_or_default();
    assert!(failure.contains("wasi:cli/stdout"), "the failure names the import: {failure}");
    assert_eq!((gw.health().traps, gw.health().recoveries), (1, 1));
    assert_recovered_with_state(&gw, &lines, &expected);
}

#[test]
fn load_options_carry_limits_to_every_instance() {
    cache();
    let limits =
        Limits { call_deadline: Deadline::new(Duration::from_millis(3)).expect("not zero"), ..Limits::default() };
    let policy = Policy::from_file_with(hostile_wasm(""), &LoadOptions { expect_digest: None, limits }).unwrap();
    assert_eq!(policy.limits(), limits);
    let mut gw = policy.gateway("{}").unwrap();
    let err = returns_within(Duration::from_secs(60), move || gw.check_tool_call(&call("__loop__")).unwrap_err());
    assert!(err.to_string().contains("within 3 ms"), "{err}");
}
