//! Writes real snapshots (formats 2 and 1) to fuzz/seeds/snapshot_import/, taken after replaying
//! each example trace and a few synthetic bot/group events.
//! Run: cargo run --manifest-path fuzz/Cargo.toml --example snapshot_seeds
use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway;
use loopguard_policy::snapshot::export_v1;
use std::path::Path;

const EXTRA: &str = concat!(
    r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":1000}"#, "\n",
    r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"y","receiver":"x","ts_ms":1500}"#, "\n",
    r#"{"kind":"group_message","channel":"d","account":"a","conversation":"c","root":"r","peer":"1","text":"hi"}"#, "\n",
    r#"{"kind":"group_replies","channel":"d","account":"a","conversation":"c","root":"r","replies":[{"agent":"alpha","reply":"@beta"}]}"#, "\n",
);

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("seeds/snapshot_import");
    std::fs::create_dir_all(&out).expect("create seeds dir");
    let examples = root.join("../examples/traces");
    let mut dirs: Vec<_> = std::fs::read_dir(&examples).expect("examples/traces").flatten().map(|e| e.path()).collect();
    dirs.sort();
    let group_cfg = r#"{ agents: { list: [{ id: "alpha" }, { id: "beta" }] },
      broadcast: { "d:1": { agents: ["alpha", "beta"], maxRounds: 2, maxTurns: 3 } } }"#;
    for dir in dirs {
        let (Ok(cfg), Ok(trace)) =
            (std::fs::read_to_string(dir.join("config.json5")), std::fs::read_to_string(dir.join("trace.jsonl")))
        else {
            continue;
        };
        let name = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let mut gw = Gateway::new(Config::parse(&cfg).expect("example config"));
        // Only the first lines: snapshots stay small, and the fuzzer mutates small inputs faster.
        let head: String = trace.lines().take(12).map(|l| format!("{l}\n")).collect();
        gw.apply_events(&head, 1).expect("example trace");
        std::fs::write(out.join(format!("v2-{name}.bin")), gw.export_state()).expect("write");
        std::fs::write(out.join(format!("v1-{name}.bin")), export_v1(&gw)).expect("write");
    }
    let mut gw = Gateway::new(Config::parse(group_cfg).expect("group config"));
    gw.apply_events(EXTRA, 1).expect("extra events");
    std::fs::write(out.join("v2-bot-group.bin"), gw.export_state()).expect("write");
    std::fs::write(out.join("v2-empty.bin"), Gateway::new(Config::parse("{}").expect("defaults")).export_state()).expect("write");
    println!("snapshot seeds written to {}", out.display());
}
