//! Session-level rules of docs/spec/tool-loop.md §2–§6, one named case per rule.

use loopguard_policy::config::profile::DOCUMENTED;
use loopguard_policy::config::tool::{resolve, LoopSettings};
use loopguard_policy::json::parse;
use loopguard_policy::tool_loop::openclaw::known_poll::is_known_poll;
use loopguard_policy::tool_loop::{
    Args, CallFacts, CompactionVerdict, Detector, Outcome, OutcomeVerdict, Session, ToolAction, ToolCall, ToolVerdict,
    MAX_GUARDS_PER_SESSION,
};

fn settings(extra: &str) -> LoopSettings {
    let v: serde_json::Value = serde_json::from_str(extra).expect("valid JSON");
    resolve(v.as_object(), &DOCUMENTED)
}

fn on() -> LoopSettings {
    settings(r#"{"enabled":true}"#)
}

/// The fingerprint a gateway computes for a call (arguments as text, documented rules).
fn facts(c: &ToolCall<'_>) -> CallFacts {
    CallFacts::of(c, &DOCUMENTED.tool).expect("valid JSON")
}

struct Sim {
    s: Session,
    cfg: LoopSettings,
}

impl Sim {
    fn new(cfg: LoopSettings) -> Self {
        Self { s: Session::default(), cfg }
    }

    fn call_run(&mut self, tool: &str, args: &str, run: Option<&str>) -> ToolVerdict {
        let c = ToolCall { session: "s", tool, args: Args::Text(args), run, agent: None, call_id: None };
        self.s.check(&c, &facts(&c), &self.cfg)
    }

    fn call(&mut self, tool: &str, args: &str) -> ToolVerdict {
        self.call_run(tool, args, None)
    }

    fn result_run(&mut self, tool: &str, args: &str, result: &str, run: Option<&str>) -> OutcomeVerdict {
        let r = parse(result).expect("valid JSON");
        let c = ToolCall { session: "s", tool, args: Args::Text(args), run, agent: None, call_id: None };
        self.s.outcome(&c, &facts(&c), Outcome::Result(&r), &self.cfg, &[])
    }

    fn result(&mut self, tool: &str, args: &str, result: &str) -> OutcomeVerdict {
        self.result_run(tool, args, result, None)
    }

    fn error(&mut self, tool: &str, args: &str, err: &str) -> OutcomeVerdict {
        let e = parse(err).expect("valid JSON");
        let c = ToolCall { session: "s", tool, args: Args::Text(args), run: None, agent: None, call_id: None };
        self.s.outcome(&c, &facts(&c), Outcome::Error(&e), &self.cfg, &[])
    }

    /// Calls and records the same result `n` times; returns the verdicts.
    fn repeat(&mut self, n: usize, tool: &str, args: &str, result: &str) -> Vec<ToolVerdict> {
        (0..n)
            .map(|_| {
                let v = self.call(tool, args);
                if v.action != ToolAction::Block {
                    self.result(tool, args, result);
                }
                v
            })
            .collect()
    }
}

fn brief(v: &ToolVerdict) -> (ToolAction, Option<&'static str>, u32, bool) {
    (v.action, v.detector.map(Detector::as_str), v.count, v.notify)
}

#[test]
fn disabled_or_unset_enabled_never_detects_but_still_records() {
    for cfg in [settings("{}"), settings(r#"{"enabled":null}"#)] {
        let mut sim = Sim::new(cfg);
        let all = sim.repeat(40, "exec", r#"{"command":"ls"}"#, "1");
        assert!(all.iter().all(|v| v.action == ToolAction::Allow));
        assert_eq!(sim.s.history().len(), 30, "unset enabled still fills history");
    }
    let mut sim = Sim::new(settings(r#"{"enabled":false}"#));
    sim.repeat(5, "exec", "{}", "1");
    assert_eq!(sim.s.history().len(), 5, "explicitly disabled: calls not recorded, outcomes still are");
    assert!(sim.s.history().scoped(None).all(|r| r.result.is_some()));
}

#[test]
fn generic_repeat_warns_on_identical_args_and_blocks_on_identical_outcomes() {
    let mut sim = Sim::new(on());
    let v = sim.repeat(21, "read", r#"{"path":"/a"}"#, r#"{"content":[{"type":"text","text":"same"}]}"#);
    for (i, v) in v.iter().enumerate().take(10) {
        assert_eq!(v.action, ToolAction::Allow, "call {}", i + 1);
    }
    assert_eq!(brief(&v[10]), (ToolAction::Warn, Some("generic_repeat"), 10, true));
    assert_eq!(
        v[10].message.as_deref(),
        Some("WARNING: You have called read 10 times with identical arguments. If this is not making progress, stop retrying and report the task as failed.")
    );
    assert_eq!(brief(&v[11]), (ToolAction::Warn, Some("generic_repeat"), 11, false));
    assert_eq!(brief(&v[20]), (ToolAction::Block, Some("generic_repeat"), 20, false));
    assert_eq!(
        v[20].message.as_deref(),
        Some("CRITICAL: Called read with identical arguments and identical outcomes 20 times. Session execution blocked to prevent runaway loops.")
    );
    // Blocked calls are not recorded, so the next one is blocked with the same count.
    assert_eq!(brief(&sim.call("read", r#"{"path":"/a"}"#)).2, 20);
}

#[test]
fn generic_repeat_warns_even_without_results_but_never_blocks_on_changing_outcomes() {
    let mut sim = Sim::new(on());
    for _ in 0..10 {
        sim.call("read", "{}");
    }
    assert_eq!(brief(&sim.call("read", "{}")), (ToolAction::Warn, Some("generic_repeat"), 10, true));
    let mut sim = Sim::new(on());
    for i in 0..25 {
        let v = sim.call("read", "{}");
        assert_ne!(v.action, ToolAction::Block);
        sim.result("read", "{}", &i.to_string());
    }
}

#[test]
fn known_poll_warns_and_blocks_on_no_progress_and_never_uses_generic_repeat() {
    let args = r#"{"action":"poll","sessionId":"p1"}"#;
    let mut sim = Sim::new(on());
    let v = sim.repeat(21, "process", args, r#"{"details":{"status":"running","aggregated":"building"}}"#);
    assert_eq!(brief(&v[9]), (ToolAction::Allow, None, 0, false));
    assert_eq!(brief(&v[10]), (ToolAction::Warn, Some("known_poll_no_progress"), 10, true));
    assert_eq!(v[10].message.as_deref(), Some("WARNING: You have called process 10 times with identical arguments and no progress. Stop polling and either (1) increase wait time between checks, or (2) report the task as failed if the process is stuck."));
    assert_eq!(brief(&v[20]), (ToolAction::Block, Some("known_poll_no_progress"), 20, false));
    assert_eq!(v[20].message.as_deref(), Some("CRITICAL: Called process with identical arguments and no progress 20 times. This appears to be a stuck polling loop. Session execution blocked to prevent resource waste."));
    // Changing output: nothing fires, even after 25 identical calls.
    let mut sim = Sim::new(on());
    for i in 0..25 {
        assert_eq!(sim.call("process", args).action, ToolAction::Allow);
        sim.result("process", args, &format!(r#"{{"details":{{"status":"running","aggregated":"{i}"}}}}"#));
    }
    // command_status is a known poll tool; process kill is not.
    assert!(is_known_poll("command_status", None));
    assert!(!is_known_poll("process", Some("kill")));
}

#[test]
fn known_poll_switch_off_leaves_only_the_global_breaker() {
    let mut sim = Sim::new(settings(r#"{"enabled":true,"detectors":{"knownPollNoProgress":false}}"#));
    let v = sim.repeat(31, "command_status", "{}", "1");
    assert!(v[..30].iter().all(|v| v.action == ToolAction::Allow));
    assert_eq!(brief(&v[30]), (ToolAction::Block, Some("global_circuit_breaker"), 30, false));
    assert_eq!(v[30].message.as_deref(), Some("CRITICAL: command_status has repeated identical no-progress outcomes 30 times. Session execution blocked by global circuit breaker to prevent runaway loops."));
}

#[test]
fn global_breaker_is_not_gated_by_detector_switches() {
    let cfg = r#"{"enabled":true,"historySize":50,"detectors":{"genericRepeat":false,"pingPong":false,"knownPollNoProgress":false}}"#;
    let mut sim = Sim::new(settings(cfg));
    let v = sim.repeat(31, "read", "{}", "1");
    assert!(v[..30].iter().all(|v| v.action == ToolAction::Allow));
    assert_eq!(v[30].detector, Some(Detector::GlobalCircuitBreaker));
}

#[test]
fn unknown_tool_blocks_first_and_ignores_args() {
    let mut sim = Sim::new(on());
    for i in 0..10 {
        let args = format!(r#"{{"url":"https://example.com/{i}"}}"#);
        assert_eq!(sim.call("browser_open", &args).action, ToolAction::Allow);
        sim.error("browser_open", &args, r#""Unknown tool: browser_open""#);
    }
    let v = sim.call("browser_open", r#"{"url":"new"}"#);
    assert_eq!(brief(&v), (ToolAction::Block, Some("unknown_tool_repeat"), 10, false));
    assert_eq!(v.message.as_deref(), Some("CRITICAL: attempted unavailable tool browser_open 10 times. Stop retrying that missing tool and answer without it."));
    // Another tool is not affected.
    assert_eq!(sim.call("read", "{}").action, ToolAction::Allow);
}

#[test]
fn ping_pong_warns_at_ten_and_blocks_at_twenty_with_no_progress_evidence() {
    let mut sim = Sim::new(on());
    let mut verdicts = Vec::new();
    for i in 0..20 {
        let (tool, args, res) =
            if i % 2 == 0 { ("read", r#"{"path":"a"}"#, "\"A\"") } else { ("list", r#"{"dir":"."}"#, "\"B\"") };
        let v = sim.call(tool, args);
        if v.action != ToolAction::Block {
            sim.result(tool, args, res);
        }
        verdicts.push(v);
    }
    assert_eq!(brief(&verdicts[8]), (ToolAction::Allow, None, 0, false));
    assert_eq!(brief(&verdicts[9]), (ToolAction::Warn, Some("ping_pong"), 10, true));
    assert_eq!(verdicts[9].message.as_deref(), Some("WARNING: You are alternating between repeated tool-call patterns (10 consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed."));
    assert_eq!(brief(&verdicts[10]), (ToolAction::Warn, Some("ping_pong"), 11, false), "one key for both sides");
    assert_eq!(brief(&verdicts[19]), (ToolAction::Block, Some("ping_pong"), 20, false));
    assert_eq!(verdicts[19].message.as_deref(), Some("CRITICAL: You are alternating between repeated tool-call patterns (20 consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste."));
}

#[test]
fn ping_pong_without_evidence_only_warns() {
    let mut sim = Sim::new(settings(r#"{"enabled":true,"historySize":60}"#));
    let mut last = None;
    for i in 0..30 {
        let (tool, args) = if i % 2 == 0 { ("read", "{}") } else { ("list", "{}") };
        let v = sim.call(tool, args);
        sim.result(tool, args, &i.to_string());
        last = Some(v);
    }
    let v = last.unwrap();
    assert_eq!((v.action, v.detector), (ToolAction::Warn, Some(Detector::PingPong)));
}

#[test]
fn run_scoping_keeps_runs_apart() {
    let mut sim = Sim::new(on());
    for _ in 0..10 {
        sim.call_run("read", "{}", Some("r1"));
    }
    assert_eq!(sim.call_run("read", "{}", Some("r2")).action, ToolAction::Allow);
    assert_eq!(sim.call_run("read", "{}", None).action, ToolAction::Allow);
    assert_eq!(sim.call_run("read", "{}", Some(" r1 ")).action, ToolAction::Warn, "run ids are trimmed");
}

#[test]
fn warning_key_prefix_uses_the_raw_run_id() {
    let mut sim = Sim::new(on());
    for _ in 0..10 {
        sim.call_run("read", "{}", Some("r1"));
    }
    assert!(sim.call_run("read", "{}", Some("r1")).notify);
    assert!(sim.call_run("read", "{}", Some(" r1")).notify, "same run after trim, but another warning key");
    assert!(!sim.call_run("read", "{}", Some("r1")).notify);
}

#[test]
fn lower_warning_thresholds_warn_without_notify_below_ten() {
    let mut sim = Sim::new(settings(r#"{"enabled":true,"warningThreshold":3,"criticalThreshold":6}"#));
    let v = sim.repeat(7, "read", "{}", "1");
    assert_eq!(brief(&v[3]), (ToolAction::Warn, Some("generic_repeat"), 3, false));
    assert_eq!(brief(&v[6]), (ToolAction::Block, Some("generic_repeat"), 6, false));
}

#[test]
fn loop_veto_result_is_ignored_so_blocks_are_sticky() {
    let mut sim = Sim::new(on());
    let veto = r#"{"content":[{"type":"text","text":"x"}],"details":{"status":"blocked","deniedReason":"tool-loop","reason":"x"}}"#;
    assert_eq!(sim.result("read", "{}", veto), OutcomeVerdict::Ignored);
    assert!(sim.s.history().is_empty());
}

#[test]
fn post_compaction_guard_aborts_on_the_window_th_identical_outcome() {
    // On even with `enabled` unset.
    let mut sim = Sim::new(settings("{}"));
    assert_eq!(sim.s.compaction(Some("r"), &sim.cfg), CompactionVerdict::Armed(3));
    assert_eq!(sim.result_run("exec", "{}", "1", Some("r")), OutcomeVerdict::Recorded);
    assert_eq!(sim.result_run("exec", "{}", "1", None), OutcomeVerdict::Recorded, "another run's guard");
    assert_eq!(sim.result_run("exec", "{}", "1", Some("r")), OutcomeVerdict::Recorded);
    let OutcomeVerdict::Abort { count, message, .. } = sim.result_run("exec", "{}", "1", Some("r")) else {
        panic!("expected an abort");
    };
    assert_eq!(count, 3);
    assert!(message.starts_with("CRITICAL: tool exec repeated 3 times"));
    assert_eq!(sim.result_run("exec", "{}", "1", Some("r")), OutcomeVerdict::Recorded, "disarmed");
}

#[test]
fn post_compaction_guard_is_off_only_when_explicitly_disabled_and_keeps_its_setting() {
    let mut sim = Sim::new(settings(r#"{"enabled":false}"#));
    assert_eq!(sim.s.compaction(None, &sim.cfg), CompactionVerdict::Disabled);
    let on = settings(r#"{"enabled":true,"postCompactionGuard":{"windowSize":5}}"#);
    assert_eq!(sim.s.compaction(None, &on), CompactionVerdict::Disabled, "created disabled, stays so");
    assert_eq!(sim.s.compaction(Some("x"), &on), CompactionVerdict::Armed(5));
}

#[test]
fn guards_per_session_are_bounded() {
    let mut sim = Sim::new(on());
    for i in 0..100 {
        sim.s.compaction(Some(&format!("run-{i}")), &sim.cfg);
    }
    assert_eq!(sim.s.guard_count(), MAX_GUARDS_PER_SESSION);
}

#[test]
fn update_plan_args_are_reduced_to_their_shape() {
    let mut sim = Sim::new(on());
    for i in 0..10 {
        sim.call("update_plan", &format!(r#"{{"plan":[{{"step":"step {i}","status":"pending"}}]}}"#));
    }
    let v = sim.call("update_plan", r#"{"plan":[{"step":"other","status":"pending"}]}"#);
    assert_eq!((v.action, v.count), (ToolAction::Warn, 10));
}

#[test]
fn history_size_bounds_the_session() {
    let mut sim = Sim::new(settings(r#"{"enabled":true,"historySize":5}"#));
    for i in 0..50 {
        sim.call("read", &format!("{i}"));
    }
    assert_eq!(sim.s.history().len(), 5);
}
