//! Arbitrary bytes as a JSON Lines trace, replayed on a gateway with every guard switched on
//! and tiny thresholds and caps (so warnings, blocks, suppressions, group rounds and LRU
//! eviction are all reachable from short inputs). Any panic is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway;
use loopguard_policy::replay::replay;
use std::sync::OnceLock;

/// A valid config that turns on every detector with small numbers.
const CONFIG: &str = r#"{
  agents: {
    list: [
      { id: "main" },
      { id: "alpha", name: "Alpha", groupChat: { mentionPatterns: ["@alpha\\b", "hey a+"] } },
      { id: "beta", tools: { loopDetection: { warningThreshold: 2, criticalThreshold: 3,
                                              globalCircuitBreakerThreshold: 4, historySize: 5 } } },
      { id: "off", tools: { loopDetection: { enabled: false } } },
    ],
  },
  messages: { groupChat: { mentionPatterns: ["@all"] } },
  tools: {
    loopDetection: {
      enabled: true, historySize: 8, warningThreshold: 3, criticalThreshold: 5,
      globalCircuitBreakerThreshold: 7, unknownToolThreshold: 3,
      detectors: { genericRepeat: true, knownPollNoProgress: true, pingPong: true },
    },
  },
  channels: {
    defaults: { botLoopProtection: { maxEventsPerWindow: 3, windowSeconds: 10, cooldownSeconds: 5,
                                     maxConversationBotEvents: 4 } },
    slack: { botLoopProtection: { enabled: true }, channels: { "C1": { botLoopProtection: { maxEventsPerWindow: 2 } } } },
  },
  broadcast: {
    strategy: "sequential",
    "d:1": { agents: ["alpha", "beta", "main"], maxRounds: 2, maxTurns: 4 },
    "d:2": ["alpha", "beta"],
    "w1": ["alpha"],
  },
  loopguard: { maxSessions: 3, maxPairs: 3, maxGroupThreads: 3, sendTools: ["d_send"] },
}"#;

/// The fixed config, parsed once (parsing it per input would dominate the run time).
fn config() -> &'static Config {
    static CFG: OnceLock<Config> = OnceLock::new();
    CFG.get_or_init(|| match Config::parse(CONFIG) {
        Ok(c) => c,
        Err(e) => panic!("the fixed fuzz config must be valid: {e:?}"),
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The replay entry point: the whole text as one batch on a fresh gateway (all-or-nothing:
    // one bad line fails the batch).
    let whole = replay(CONFIG, &text);
    // The gateway entry point used by hosts, one line per batch on one long-lived gateway, so
    // that the valid lines of a partly broken input still drive the detectors.
    let mut gw = Gateway::new(config().clone());
    let mut out = String::new();
    let mut all_ok = true;
    for (i, line) in text.split('\n').enumerate() {
        match gw.apply_events(line, (i as u32).saturating_add(1)) {
            Ok(o) => out.push_str(&o),
            Err(_) => all_ok = false,
        }
    }
    // When every line is valid the two ways must decide the same.
    if let (Ok(w), true) = (&whole, all_ok) {
        assert_eq!(w, &out, "line-by-line batches decided differently from one batch");
    }
    // The state must survive an export/import round trip.
    let snap = gw.export_state();
    let mut other = Gateway::new(config().clone());
    if let Err(e) = other.import_state(&snap) {
        panic!("a snapshot this gateway just exported failed to import: {e:?}");
    }
    assert_eq!(other.export_state(), snap, "export -> import -> export changed the snapshot");
});
