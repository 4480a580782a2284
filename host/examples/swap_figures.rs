//! Figures for hot swap and recovery (issue 5), measured, not asserted by the test suite.
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

use loopguard_host::{FailureMode, Policy, Supervision, SwappableGateway, ToolAction, ToolCall};
use loopguard_tests::{hostile_wasm, policy_wasm, workspace_root};

const SESSIONS: usize = 10_000;
const PAIRS: usize = 100_000;
const SWAPS: usize = 100;
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
    let bot = gw.bot_stats().expect("bot stats");
    println!(
        "state: {} sessions, {} bot pairs, guest memory {} MiB (filled in {:.1} s)",
        gw.stats().expect("stats").sessions,
        bot.pairs,
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

    // 2. SWAPS swaps under continuous load: every call answered exactly once, none lost.
    let gw = Arc::new(gw);
    let base = gw.stats().expect("stats").sessions as u64;
    let stop = Arc::new(AtomicBool::new(false));
    let (calls, answers) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let load = {
        let (gw, stop, calls, answers) = (gw.clone(), stop.clone(), calls.clone(), answers.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                calls.fetch_add(1, Ordering::SeqCst);
                let v = gw.check_tool_call(&call(format!("load:{i}"))).expect("decision");
                assert_eq!(v.action, ToolAction::Allow, "a fresh session is allowed");
                answers.fetch_add(1, Ordering::SeqCst);
                i += 1;
            }
        })
    };
    let mut paused = Vec::new();
    let t = Instant::now();
    for i in 0..SWAPS {
        let next = if i % 2 == 0 { other.clone() } else { real.clone() };
        paused.push(gw.swap(next).expect("swap under load").paused);
    }
    let took = t.elapsed();
    stop.store(true, Ordering::Relaxed);
    load.join().expect("load thread");
    let (c, a) = (calls.load(Ordering::SeqCst), answers.load(Ordering::SeqCst));
    let sessions = gw.stats().expect("stats").sessions as u64;
    println!("health after load: {:?}; last failure: {:?}", gw.health(), gw.last_failure());
    println!(
        "under load: {SWAPS} swaps in {:.2} s, {c} calls, {a} answers, sessions {} = {base} + {c}: {}; paused {}",
        took.as_secs_f64(),
        sessions,
        if c == a && sessions == base + c { "none lost or duplicated" } else { "MISMATCH" },
        stats(paused)
    );
    assert_eq!((c, sessions), (a, base + c), "a decision was lost or duplicated across swaps");

    // 3. Recovery after a trap: the call that traps returns the fail-mode verdict after
    // re-instantiating and restoring the last snapshot.
    for (label, big) in [("empty state", false), ("10k sessions + 100k pairs", true)] {
        let gw = SwappableGateway::new(
            other.clone(),
            CONFIG,
            Supervision { failure_mode: FailureMode::Closed, snapshot_every: 1_000 },
        )
        .expect("gateway");
        if big {
            fill(&gw);
            gw.import_state(&gw.export_state().expect("export")).expect("snapshot now");
        }
        let mut times = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            let v = gw.check_tool_call(&call("__trap__".into())).expect("fail-mode verdict");
            times.push(t.elapsed());
            assert_eq!(v.action, ToolAction::Block);
        }
        assert_eq!(gw.health().recoveries, 20);
        println!("recovery after a trap ({label}): {}", stats(times));
    }
}
