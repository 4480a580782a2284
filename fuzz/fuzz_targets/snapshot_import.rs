//! Arbitrary bytes as a state snapshot: `import_state` must return Ok or Err, never panic or
//! allocate without bound; an accepted snapshot must leave a gateway that still works and
//! re-exports to a snapshot that imports again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway;

const CONFIG: &str = r#"{ tools: { loopDetection: { enabled: true, warningThreshold: 2, criticalThreshold: 3,
  globalCircuitBreakerThreshold: 4, historySize: 4 } },
  agents: { list: [{ id: "alpha" }, { id: "beta" }] },
  broadcast: { "d:1": { agents: ["alpha", "beta"], maxRounds: 2, maxTurns: 3 } },
  loopguard: { maxSessions: 3, maxPairs: 3, maxGroupThreads: 3 } }"#;

/// A few events touching every kind of state an imported snapshot may hold.
const EVENTS: &str = concat!(
    r#"{"kind":"tool_call","session":"s","tool":"read","args":{"path":"/a"}}"#, "\n",
    r#"{"kind":"tool_result","session":"s","tool":"read","args":{"path":"/a"},"result":"x"}"#, "\n",
    r#"{"kind":"compaction","session":"s"}"#, "\n",
    r#"{"kind":"bot_message","channel":"d","account":"a","conversation":"c","sender":"x","receiver":"y","ts_ms":1000}"#, "\n",
    r#"{"kind":"group_message","channel":"d","account":"a","conversation":"c","root":"r","peer":"1","text":"hi"}"#, "\n",
    r#"{"kind":"group_replies","channel":"d","account":"a","conversation":"c","root":"r","replies":[{"agent":"alpha","reply":"@beta"}]}"#, "\n",
);

fuzz_target!(|data: &[u8]| {
    let Ok(cfg) = Config::parse(CONFIG) else { panic!("the fixed fuzz config must be valid") };
    let mut gw = Gateway::new(cfg.clone());
    // Also try the bytes behind a valid header, so the fuzzer need not discover the magic.
    let mut framed = b"LGSNAP\x02\x00".to_vec();
    framed.extend_from_slice(data);
    for bytes in [data, &framed[..]] {
        if gw.import_state(bytes).is_ok() {
            let _ = gw.apply_events(EVENTS, 1);
            let snap = gw.export_state();
            let mut other = Gateway::new(cfg.clone());
            if let Err(e) = other.import_state(&snap) {
                panic!("re-export of an accepted snapshot failed to import: {e:?}");
            }
        }
    }
});
