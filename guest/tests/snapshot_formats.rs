//! Snapshot formats across the profiles (src/snapshot.rs): the documented profile still writes
//! format 2 byte for byte as the policy did before format 3 existed, every format stays readable,
//! and openclaw 2026.9 state travels in format 3.
//!
//! `tests/data/*.format2.snap` were exported by the policy at commit 9275a3b (before the
//! `openclaw-2026.9` profile) after replaying the first N lines of an example trace.

use std::path::{Path, PathBuf};

use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway;

fn example(name: &str, file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/traces").join(name).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn golden(name: &str, lines: usize) -> Vec<u8> {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/{name}-{lines}.format2.snap"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn with_compat(config: &str) -> String {
    let mut doc: serde_json::Value = json5::from_str(config).expect("a valid config");
    doc.as_object_mut()
        .expect("an object")
        .insert("loopguard".into(), serde_json::json!({"compat": "openclaw-2026.9"}));
    doc.to_string()
}

const CASES: [(&str, usize); 3] =
    [("exec-poll-no-progress", 30), ("discord-two-bot-loop", 20), ("group-thread-rounds", 10)];

#[test]
fn the_documented_profile_exports_the_same_format_2_bytes_as_before() {
    for (name, n) in CASES {
        let trace = example(name, "trace.jsonl");
        let lines: Vec<&str> = trace.lines().collect();
        let mut gw = Gateway::new(Config::parse(&example(name, "config.json5")).unwrap());
        gw.apply_events(&lines[..n].join("\n"), 1).unwrap();
        assert_eq!(gw.export_state(), golden(name, n), "{name}: documented snapshot bytes changed");
    }
}

#[test]
fn an_old_format_2_snapshot_reads_into_either_profile_and_the_trace_goes_on() {
    for (name, n) in CASES {
        let trace = example(name, "trace.jsonl");
        let lines: Vec<&str> = trace.lines().collect();
        let config = example(name, "config.json5");
        // Documented: the rest of the trace gives the rest of expected.jsonl.
        let mut gw = Gateway::new(Config::parse(&config).unwrap());
        gw.import_state(&golden(name, n)).unwrap();
        assert_eq!(gw.export_state(), golden(name, n), "{name}: reads back to the same bytes");
        let rest = gw.apply_events(&lines[n..].join("\n"), n as u32 + 1).unwrap();
        let expected = example(name, "expected.jsonl");
        let expected: Vec<&str> = expected.lines().skip(n).collect();
        assert_eq!(rest.lines().collect::<Vec<_>>(), expected, "{name}: documented after the swap");
        // openclaw-2026.9: the rest gives the rest of the package's decisions.
        let mut gw = Gateway::new(Config::parse(&with_compat(&config)).unwrap());
        gw.import_state(&golden(name, n)).unwrap();
        let rest = gw.apply_events(&lines[n..].join("\n"), n as u32 + 1).unwrap();
        let expected = example(name, "expected-openclaw-2026.9.jsonl");
        let expected: Vec<&str> = expected.lines().skip(n).collect();
        assert_eq!(rest.lines().collect::<Vec<_>>(), expected, "{name}: openclaw-2026.9 after the swap");
    }
}

#[test]
fn openclaw_2026_9_state_is_written_as_format_3_and_only_when_there_is_some() {
    let config = with_compat(&example("exec-poll-no-progress", "config.json5"));
    let trace = example("exec-poll-no-progress", "trace.jsonl");
    let lines: Vec<&str> = trace.lines().collect();
    let mut gw = Gateway::new(Config::parse(&config).unwrap());
    gw.apply_events(&lines[..10].join("\n"), 1).unwrap();
    assert_eq!(&gw.export_state()[..8], b"LGSNAP\x02\x00", "no veto record, no recovery state yet: format 2");
    gw.apply_events(&lines[10..].join("\n"), 11).unwrap();
    let snap = gw.export_state();
    assert_eq!(&snap[..8], b"LGSNAP\x03\x00", "after the blocks: veto records and recovery state");
    let mut back = Gateway::new(Config::parse(&config).unwrap());
    back.import_state(&snap).unwrap();
    assert_eq!(back.export_state(), snap);
    // A corrupt format 3 body is refused and leaves the state alone.
    let e = back.import_state(&snap[..snap.len() / 2]).unwrap_err();
    assert!(e.reason.contains("format 3 snapshot is corrupt"), "{e}");
    assert_eq!(back.export_state(), snap);
}
