//! Profiling aid: the bot benchmark's workload (`benches/common/bot_workload.rs`) through the
//! wasmtime host: 100 000 pairs filled, then MESSAGES messages of the benchmark's stream, or
//! natively with `--native`. Under callgrind, two message counts give instructions per message,
//! a figure this machine's load does not move; `LOOPGUARD_PERFMAP=1` names the compiled guest
//! functions (`scripts/callgrind-guest.py`).
//!
//! Run: `cargo run --profile bench -p loopguard-host --example bot_profile [MESSAGES [POLICY.wasm | --native]]`
use std::hint::black_box;

use loopguard_host::Policy;
use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway as Native;

#[path = "../benches/common/bot_workload.rs"]
mod bot_workload;
use bot_workload::{message, native, Stream, PAIRS};

fn main() {
    let messages: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let target = std::env::args().nth(2);
    let fill = (0..PAIRS).map(|p| message(p, 1_000_000 + p as i64 % 1_000));
    let mut stream = Stream::new();
    let start;
    if target.as_deref() == Some("--native") {
        let mut core = Native::new(Config::parse("{}").expect("config"));
        for m in fill {
            core.check_bot_message(&native(&m)).expect("fill");
        }
        start = std::time::Instant::now();
        for _ in 0..messages {
            black_box(core.check_bot_message(&native(stream.next())).expect("decision"));
        }
    } else {
        let policy = match target {
            Some(path) => Policy::from_file(&path).expect("the policy file loads"),
            None => Policy::embedded().expect("the embedded policy loads"),
        };
        let mut gw = policy.gateway("{}").expect("gateway");
        for m in fill {
            gw.check_bot_message(&m).expect("fill");
        }
        start = std::time::Instant::now();
        for _ in 0..messages {
            black_box(gw.check_bot_message(stream.next()).expect("decision"));
        }
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / messages.max(1) as f64;
    eprintln!("{per:.2} µs per message");
}
