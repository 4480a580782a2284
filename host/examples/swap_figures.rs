//! Figures for hot swap and recovery, measured, not asserted by the test suite.
//!
//! Why an example and not a test: these are latencies on whatever machine runs them; a timed
//! test would be flaky on a busy CI box. What *is* checked here is exact: no decision lost or
//! duplicated across 100 swaps under continuous load.
//!
//! Run: `cargo run --profile bench -p loopguard-host --example swap_figures`
//! (an optimized host; the guest is always an optimized component).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use loopguard_host::{FailureMode, Policy, Supervision, SwappableGateway, ToolAction, ToolCall, ToolOutcome};
use loopguard_tests::{hostile_wasm, policy_wasm, workspace_root};

const SESSIONS: usize = 10_000;
const PAIRS: usize = 100_000;
const SWAPS: usize = 100;
/// Polls per session of the load.
const POLLS: usize = 25;
const CONFIG: &str = r#"{"tools":{"loopDetection":{"enabled":true}},"loopguard":{"maxSessions":1000000}}"#;

fn fill(gw: &SwappableGateway) {
    let mut batch = String::new();
    let mut line = 1u32;
    let flush = |batch: &mut String, line: &mut u32| {
        let n = batch.lines().count() as u32;
        gw.apply_events(batch, *line).expect("fill");
        *line += n;
        batch.clear();
    };
    for s in 0..SESSIONS {
        for j in 0..3 {
            batch.push_str(&format!(
                "{{\"kind\":\"tool_call\",\"session\":\"agent:{s}\",\"tool\":\"read\",\"args\":{{\"path\":\"/src/f{j}.rs\"}}}}\n"
            ));
        }
        if batch.len() > 1 << 20 {
            flush(&mut batch, &mut line);
        }
    }
    for p in 0..PAIRS {
        batch.push_str(&format!(
            "{{\"kind\":\"bot_message\",\"channel\":\"discord\",\"account\":\"acct-{}\",\"conversation\":\"chan-{}\",\"sender\":\"bot-a-{p}\",\"receiver\":\"bot-b-{p}\",\"ts_ms\":{},\"event_id\":\"e{p}\"}}\n",
            p % 10,
            p / 10 % 10_000,
            1_000_000 + p % 1_000
        ));
        if batch.len() > 1 << 20 {
            flush(&mut batch, &mut line);
        }
    }
    flush(&mut batch, &mut line);
}

fn call(session: String) -> ToolCall {
    ToolCall {
        session,
        tool: "read".into(),
        args_json: r#"{"path":"/a"}"#.into(),
        run: None,
        agent: None,
        call_id: None,
    }
}

/// Polls that make no progress, each with its outcome, in one session, which then ends: the
/// answers (action and count) go from allow to warnings to blocks.
fn polling_session(gw: &SwappableGateway, session: &str) -> Vec<(ToolAction, u32)> {
    let poll = ToolCall {
        session: session.into(),
        tool: "process".into(),
        args_json: r#"{"action":"poll","sessionId":"build-7"}"#.into(),
        run: None,
        agent: None,
        call_id: None,
    };
    let still_running = ToolOutcome::Returned(r#"{"content":[{"type":"text","text":"still running"}]}"#.into());
    let answers = (0..POLLS)
        .map(|_| {
            let v = gw.check_tool_call(&poll).expect("decision");
            gw.record_tool_outcome(&poll, &still_running).expect("outcome");
            (v.action, v.count)
        })
        .collect();
    gw.end_session(session).expect("end session");
    answers
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        ms(v[v.len() / 2]),
        ms(v[v.len() * 9 / 10]),
        ms(v[v.len() - 1])
    )
}

fn main() {
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
    let real = Policy::from_file(policy_wasm()).expect("policy");
    let other = Policy::from_file(hostile_wasm("")).expect("hostile fixture (the real policy, another digest)");

    // 1. Swap latency with 10 000 live sessions and 100 000 bot pairs, no load.
    let gw = SwappableGateway::new(real.clone(), CONFIG, Supervision::default()).expect("gateway");
    let t = Instant::now();
    fill(&gw);
    let bot = gw.stats().expect("stats");
    println!(
        "state: {} sessions, {} bot pairs, guest memory {} MiB (filled in {:.1} s)",
        bot.sessions,
        bot.bot_pairs,
        bot.memory_bytes >> 20,
        t.elapsed().as_secs_f64()
    );
    let snapshot = gw.export_state().expect("export");
    let t = Instant::now();
    let _ = gw.export_state().expect("export");
    let export = t.elapsed();
    let t = Instant::now();
    gw.import_state(&snapshot).expect("import");
    println!("export {:.1} ms, import {:.1} ms", export.as_secs_f64() * 1e3, t.elapsed().as_secs_f64() * 1e3);
    let (mut paused, mut total, mut bytes) = (Vec::new(), Vec::new(), 0);
    for i in 0..20 {
        let next = if i % 2 == 0 { other.clone() } else { real.clone() };
        let t = Instant::now();
        let r = gw.swap(next).expect("swap");
        total.push(t.elapsed());
        paused.push(r.paused);
        bytes = r.snapshot_bytes;
    }
    println!("swap (20 swaps, {} KiB of state): calls paused {}", bytes >> 10, stats(paused));
    println!("swap (20 swaps): whole swap incl. instantiate + create {}", stats(total));

    // 2. SWAPS swaps under continuous load: one thread makes calls as fast as it can, session
    // after session, each session a polling loop that warns and then blocks; every answer must be
    // the one a run without swaps gives (a lost or repeated call shifts the counts), and each
    // session is ended after its loop, so the state stays the same size.
    let gw = Arc::new(gw);
    let base = gw.stats().expect("stats").sessions as u64;
    let reference = {
        let fresh = SwappableGateway::new(real.clone(), CONFIG, Supervision::default()).expect("gateway");
        polling_session(&fresh, "reference")
    };
    assert!(reference.iter().any(|v| v.0 == ToolAction::Block), "the polling loop must be blocked: {reference:?}");
    let stop = Arc::new(AtomicBool::new(false));
    let (calls, differ) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let load = {
        let (gw, stop, calls, differ) = (gw.clone(), stop.clone(), calls.clone(), differ.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let answers = polling_session(&gw, &format!("load:{i}"));
                calls.fetch_add(answers.len() as u64 * 2 + 1, Ordering::SeqCst);
                if answers != reference {
                    differ.fetch_add(1, Ordering::SeqCst);
                }
                i += 1;
            }
        })
    };
    let (mut paused, mut held, mut replayed, mut tail) = (Vec::new(), Vec::new(), 0, 0);
    let t = Instant::now();
    for i in 0..SWAPS {
        let next = if i % 2 == 0 { other.clone() } else { real.clone() };
        let r = gw.swap(next).expect("swap under load");
        paused.push(r.paused);
        held.push(r.held);
        (replayed, tail) = (replayed + r.replayed, tail.max(r.replayed_paused));
    }
    let took = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    load.join().expect("load thread");
    let (c, d) = (calls.load(Ordering::SeqCst), differ.load(Ordering::SeqCst));
    let sessions = gw.stats().expect("stats").sessions as u64;
    println!("health after load: {:?}; last failure: {:?}", gw.health(), gw.last_failure());
    println!(
        "under load: {SWAPS} swaps in {:.2} s, {c} calls, {d} polling loops decided differently, sessions {sessions} = {base}: {}; paused {}",
        took.as_secs_f64(),
        if d == 0 && sessions == base { "none lost or duplicated" } else { "MISMATCH" },
        stats(paused)
    );
    println!("  calls held by a swap in all (slices of a slowed-down copy + the switch): {}", stats(held));
    println!("  calls applied to the new instances: {replayed} in all, at most {tail} per swap with the lock held");
    assert_eq!((d, sessions), (0, base), "a decision was lost or duplicated across swaps");

    // 3. Recovery after a trap: the call that traps returns the fail-mode verdict after switching
    // to the standby (a fresh instance that imported the last snapshot in the background). Each
    // trap waits until the next standby is ready; back-to-back traps are measured apart, since
    // they wait for the standby being prepared (or import the snapshot themselves).
    for (label, big) in [("empty state", false), ("10k sessions + 100k pairs", true)] {
        let gw = SwappableGateway::new(
            other.clone(),
            CONFIG,
            Supervision { failure_mode: FailureMode::Closed, ..Supervision::default() },
        )
        .expect("gateway");
        if big {
            fill(&gw);
            gw.import_state(&gw.export_state().expect("export")).expect("snapshot now");
        }
        let (mut ready, mut back_to_back) = (Vec::new(), Vec::new());
        for i in 0..40 {
            let waited = i % 2 == 0 && gw.wait_for_standby(Duration::from_secs(30));
            let t = Instant::now();
            let v = gw.check_tool_call(&call("__trap__".into())).expect("fail-mode verdict");
            if waited {
                ready.push(t.elapsed())
            } else {
                back_to_back.push(t.elapsed())
            }
            assert_eq!(v.action, ToolAction::Block);
        }
        let h = gw.health();
        assert_eq!(h.recoveries, 40);
        println!("recovery after a trap ({label}), standby ready: {}", stats(ready));
        println!("recovery after a trap ({label}), right after another: {}", stats(back_to_back));
        println!("  {} of 40 recoveries used the standby, {} standbys prepared", h.standby_recoveries, h.standbys);
    }
}
