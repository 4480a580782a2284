//! Every golden trace in `examples/traces/` through the host library, three ways (one
//! `apply-events` call, line-sized chunks, the stateless `replay` export), and natively through
//! the guest crate: all must give `expected.jsonl` byte for byte.

use loopguard_host::Policy;
use loopguard_tests::{diff_decisions, policy_wasm, scenarios, workspace_root, Scenario};

/// Loads the built policy, sharing compiled code with the other test binaries through a cache
/// under `target/` (compiling the component in a debug build takes seconds).
fn load(from_file: bool) -> Policy {
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
    let policy = if from_file { Policy::from_file(policy_wasm()) } else { Policy::embedded() };
    policy.expect("the built policy loads")
}

fn check(scenario: &Scenario, how: &str, actual: &str, failures: &mut Vec<String>) {
    let expected = Scenario::read(&scenario.expected);
    if let Some(diff) = diff_decisions(&expected, actual) {
        failures.push(format!("{} ({how}): {diff}", scenario.name));
    }
}

#[test]
fn golden_traces_through_the_host_library() {
    let policy = load(true);
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let config = Scenario::read(&scenario.config);
        let trace = Scenario::read(&scenario.trace);

        let mut gateway = policy.gateway(&config).unwrap_or_else(|e| panic!("{}: config: {e}", scenario.name));
        let whole = gateway.apply_events(&trace, 1).unwrap_or_else(|e| panic!("{}: {e}", scenario.name));
        check(&scenario, "one apply-events call", &whole, &mut failures);

        // Chunks of one line each: `first-line` must carry the numbering across calls.
        let mut gateway = policy.gateway(&config).expect("config accepted above");
        let mut out = String::new();
        for (i, line) in trace.lines().enumerate() {
            let first_line = u32::try_from(i + 1).expect("a short trace");
            out += &gateway.apply_events(line, first_line).unwrap_or_else(|e| panic!("{}: {e}", scenario.name));
        }
        check(&scenario, "one line per call", &out, &mut failures);

        let mut instance = policy.instantiate().expect("instantiates");
        let replayed = instance.replay(&config, &trace).unwrap_or_else(|e| panic!("{}: {e}", scenario.name));
        check(&scenario, "replay export", &replayed, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn golden_traces_natively_through_the_guest_crate() {
    use loopguard_policy::{config::Config, gateway::Gateway};
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let config = Config::parse(&Scenario::read(&scenario.config))
            .unwrap_or_else(|e| panic!("{}: config: {e:?}", scenario.name));
        let out = Gateway::new(config)
            .apply_events(&Scenario::read(&scenario.trace), 1)
            .unwrap_or_else(|e| panic!("{}: {e:?}", scenario.name));
        check(&scenario, "native", &out, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn embedded_policy_is_the_built_file() {
    let built = load(true);
    let embedded = load(false);
    assert_eq!(
        embedded.digest(),
        built.digest(),
        "the embedded policy differs from target/policy/…/loopguard_policy.wasm; rebuild loopguard-host"
    );
    let mut instance = embedded.instantiate().expect("instantiates");
    assert_eq!(instance.interface_version().expect("callable"), loopguard_host::INTERFACE_VERSION);
}
