//! The shadow replay (`loopguard replay --shadow`): moved here with the CLI's replay from the
//! cross-implementation tests, with the same hostile components.

use loopguard_host::{Policy, Supervision, SwappableGateway};
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

#[test]
fn a_shadow_run_reports_exactly_the_lines_where_the_candidate_differs() {
    let s = scenario("exec-poll-no-progress");
    let (config, trace, expected) = (Scenario::read(&s.config), Scenario::read(&s.trace), Scenario::read(&s.expected));
    let active = SwappableGateway::new(real(), &config, Supervision::default()).unwrap();
    let candidate = SwappableGateway::new(hostile("always-allow"), &config, Supervision::default()).unwrap();
    let (mut out, mut diffs) = (Vec::new(), Vec::new());
    let summary =
        crate::trace::stream::shadow(&active, &candidate, &mut trace.as_bytes(), &mut out, &mut diffs).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), expected, "stdout stays the active policy's");
    let want: String = expected
        .lines()
        .filter(|l| l.contains("\"kind\":\"tool_call\"") && !l.contains("\"action\":\"allow\""))
        .map(|l| {
            let n: u32 = l["{\"line\":".len()..].split(',').next().unwrap().parse().unwrap();
            format!(
                "{{\"shadow_diff\":{{\"line\":{n},\"active\":{l},\"candidate\":{{\"line\":{n},\"kind\":\"tool_call\",\"action\":\"allow\"}}}}}}\n"
            )
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(String::from_utf8(diffs).unwrap(), want);
    assert_eq!(summary.events, expected.lines().count() as u64);
    assert_eq!(summary.differ, want.lines().count() as u64);

    // The same module beside itself: no difference.
    let twin = SwappableGateway::new(real(), &config, Supervision::default()).unwrap();
    let fresh = SwappableGateway::new(real(), &config, Supervision::default()).unwrap();
    let (mut out, mut diffs) = (Vec::new(), Vec::new());
    let summary = crate::trace::stream::shadow(&fresh, &twin, &mut trace.as_bytes(), &mut out, &mut diffs).unwrap();
    assert_eq!((summary.differ, diffs.len()), (0, 0));
}

#[test]
fn a_shadow_candidate_that_breaks_is_a_difference_with_its_error_and_the_run_goes_on() {
    let trace = [
        r#"{"kind":"tool_call","session":"s","tool":"read","args":{"path":"/a"}}"#,
        r#"{"kind":"tool_call","session":"__trap__","tool":"read","args":{"path":"/a"}}"#,
        r#"{"kind":"tool_call","session":"s","tool":"read","args":{"path":"/b"}}"#,
    ]
    .join("\n");
    let active = SwappableGateway::new(real(), "{}", Supervision::default()).unwrap();
    let candidate = SwappableGateway::new(hostile(""), "{}", Supervision::default()).unwrap();
    let (mut out, mut diffs) = (Vec::new(), Vec::new());
    let summary =
        crate::trace::stream::shadow(&active, &candidate, &mut trace.as_bytes(), &mut out, &mut diffs).unwrap();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 3, "the active policy decides every line");
    assert_eq!(summary.events, 3);
    let diffs = String::from_utf8(diffs).unwrap();
    let lines: Vec<serde_json::Value> = diffs.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "the trap is the one difference: {diffs}");
    assert_eq!(summary.differ, 1);
    let first = &lines[0]["shadow_diff"];
    assert_eq!(first["line"], 2, "{diffs}");
    assert_eq!(first["active"]["action"], "allow", "{diffs}");
    let error = first["candidate"]["error"].as_str().unwrap_or_else(|| panic!("no error text: {diffs}"));
    assert!(error.starts_with("the policy trapped"), "{error}");
}
