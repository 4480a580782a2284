//! The detectors beyond OpenClaw (docs/spec/beyond.md) through the gateway: trace lines in,
//! decision lines out. Each test is a rule of the spec.

use loopguard_policy::gateway::Gateway;

/// A search call and its result, as trace lines.
fn search(session: &str, query: &str, result: &str) -> String {
    let call = format!(r#""session":"{session}","tool":"search","args":{{"query":"{query}"}}"#);
    format!(
        "{{\"kind\":\"tool_call\",{call}}}\n{{\"kind\":\"tool_result\",{call},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{result}\"}}]}}}}\n"
    )
}

/// The actions of the tool_call lines (and aborts), in order.
fn actions(config: &str, trace: &str) -> Vec<String> {
    let mut gw = Gateway::from_config(config).expect("valid config");
    let out = gw.apply_events(trace, 1).expect("valid trace");
    out.lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a decision line is JSON");
            let action = v["action"].as_str().expect("every decision has an action").to_string();
            let det = v["detector"].as_str().map(|d| format!(":{d}")).unwrap_or_default();
            match (v["kind"].as_str(), action.as_str()) {
                (Some("tool_call"), _) | (_, "abort") => Some(format!("{action}{det}")),
                _ => None,
            }
        })
        .collect()
}

const ON: &str = r#"{tools: {loopDetection: {enabled: true}}, loopguard: {preset: "recommended"}}"#;
const CAUTIOUS: &str = r#"{tools: {loopDetection: {enabled: true}}, loopguard: {preset: "cautious"}}"#;
const OFF: &str = r#"{tools: {loopDetection: {enabled: true}}}"#;

/// A shell command and its output, as trace lines.
fn exec(session: &str, command: &str, output: &str) -> String {
    let call = format!(r#""session":"{session}","tool":"exec","args":{{"command":"{command}"}}"#);
    format!(
        "{{\"kind\":\"tool_call\",{call}}}\n{{\"kind\":\"tool_result\",{call},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{output}\"}}]}}}}\n"
    )
}

#[test]
fn cosmetic_variants_of_a_search_that_finds_nothing_are_warned_then_blocked() {
    let trace: String = ["Scatman John", "scatman john", "\\\"Scatman John\\\"", "Scatman  John", "John Scatman"]
        .iter()
        .map(|q| search("s", q, "Could not find that page."))
        .collect();
    let a = actions(ON, &trace);
    assert_eq!(a, ["allow", "allow", "warn:same_result", "block:same_result", "block:same_result"]);
    assert!(actions(OFF, &trace).iter().all(|x| x == "allow"), "OpenClaw's rules see no loop here");
}

#[test]
fn the_run_ends_only_when_the_agent_sends_a_blocked_call_again_and_again() {
    let q = |n: usize| search("s", "Scatman John", "Could not find that page.").repeat(n);
    let a = actions(ON, &q(7));
    assert_eq!(a[3..5], ["block:same_result", "block:same_result"]);
    assert_eq!(a[5..7], ["block:ladder", "abort:ladder"], "the third block of the same call ends the run");
    // Blocked, then something else: a read and a listing go through and the run goes on.
    let mut trace = q(4);
    let read = r#""session":"s","tool":"read","args":{"path":"notes.md"}"#;
    trace.push_str(&format!("{{\"kind\":\"tool_call\",{read}}}\n{{\"kind\":\"tool_result\",{read},\"result\":\"Scatman John: five albums.\"}}\n"));
    trace.push_str(&exec("s", "ls", "notes.md"));
    let a = actions(ON, &trace);
    assert_eq!(a[3..], ["block:same_result", "allow", "allow"]);
    assert!(actions(CAUTIOUS, &q(12)).iter().all(|x| !x.contains("ladder")), "cautious never ends a run");
}

#[test]
fn different_names_that_are_not_found_are_weak_evidence_warned_late_and_never_denied_by_cautious() {
    let names = ["parseConfig", "loadSettings", "readOptions", "initEnv", "getFlags", "buildArgs", "mkCtx"];
    let more = ["setMode", "runTask", "makeTree"];
    let grep = |n: &&str| exec("s", &format!("grep -rn {n} src/"), "No matches found.");
    let seven: String = names.iter().map(grep).collect();
    let a = actions(CAUTIOUS, &seven);
    assert_eq!(a[..3], ["allow", "allow", "allow"]);
    assert!(a[3..].iter().all(|x| x == "warn:same_result"), "{a:?}");
    let ten: String = names.iter().chain(&more).map(grep).collect();
    assert_eq!(actions(ON, &ten)[9], "block:same_result", "recommended blocks weak evidence only at the 10th");
    assert!(!actions(CAUTIOUS, &ten).iter().any(|x| x.starts_with("block")));
    // A description beside each command (Claude Code's Bash) is commentary, not the call.
    let described: String = names
        .iter()
        .map(|n| {
            let call = format!(r#""session":"s","tool":"Bash","args":{{"command":"grep -rn {n} .","description":"Search the code for {n}"}}"#);
            format!("{{\"kind\":\"tool_call\",{call}}}\n{{\"kind\":\"tool_result\",{call},\"error\":\"\"}}\n")
        })
        .collect();
    assert!(
        !actions(CAUTIOUS, &described).iter().any(|x| x.starts_with("block")),
        "{:?}",
        actions(CAUTIOUS, &described)
    );
    // Searches with nothing in common are not even one streak.
    let apart: String = names.iter().map(|n| search("s", n, "No matches found.")).collect();
    assert!(actions(ON, &apart).iter().all(|x| x == "allow"));
}

#[test]
fn silent_successes_and_short_confirmations_of_different_commands_are_not_a_loop() {
    let scaffolding: String = (0..12).map(|i| exec("s", &format!("mkdir -p src/mod{i}"), "")).collect();
    assert!(actions(ON, &scaffolding).iter().all(|x| x == "allow"));
    let checks: String = (0..8).map(|i| exec("s", &format!("python check_{i}.py"), "OK")).collect();
    assert!(actions(ON, &checks).iter().all(|x| x == "allow"));
    let edits: String = (0..6).map(|i| exec("s", &format!("sed -i s/a{i}/b{i}/ app.py"), "")).collect();
    assert!(actions(ON, &edits).iter().all(|x| x == "allow"));
}

#[test]
fn a_poll_whose_output_differs_only_in_a_timestamp_is_the_same_result() {
    let trace: String = (0..3)
        .map(|i| search("s", "status", &format!("build running since 2026-12-06T07:0{i}:00Z, 1{i}.5s")))
        .collect();
    assert_eq!(actions(ON, &trace)[2], "warn:same_result");
}

#[test]
fn an_edit_then_the_same_failing_test_is_warned_at_the_fourth_re_run_and_denied_at_the_fifth() {
    let mut trace = String::new();
    for i in 0..10 {
        trace.push_str(&exec("s", "pytest -q", "FAILED test_app.py::test_sum - assert 3 == 4"));
        trace.push_str(&exec("s", &format!("sed -i s/x{i}/y{i}/ app.py"), ""));
    }
    let runs: Vec<String> = actions(CAUTIOUS, &trace).into_iter().step_by(2).collect();
    assert_eq!(runs[..4], ["allow", "allow", "allow", "warn:same_result"]);
    assert!(runs[4..].iter().all(|x| x == "block:same_result"), "blocked re-runs keep the streak: {runs:?}");
    assert_eq!(actions(ON, &trace).into_iter().step_by(2).collect::<Vec<_>>(), runs, "the same in both presets");
}

#[test]
fn reading_again_what_was_already_read_is_no_progress_between_two_failing_runs() {
    let mut again = exec("s", "cat app.py", "def total(xs): return sum(xs) + 1");
    let mut elsewhere = again.clone();
    for i in 0..6 {
        let run = exec("s", "pytest -q", "FAILED test_app.py::test_sum - assert 3 == 4");
        again.push_str(&run);
        again.push_str(&exec("s", "cat app.py", "def total(xs): return sum(xs) + 1"));
        elsewhere.push_str(&run);
        elsewhere.push_str(&exec("s", &format!("cat mod{i}.py"), &format!("def helper_{i}(): return {i} * 2")));
    }
    let runs = |trace: &str| actions(CAUTIOUS, trace).into_iter().skip(1).step_by(2).collect::<Vec<_>>();
    assert_eq!(
        runs(&again)[..4],
        ["allow", "allow", "warn:same_result", "block:same_result"],
        "the same file, unchanged"
    );
    assert_eq!(runs(&elsewhere)[..4], ["allow", "allow", "allow", "warn:same_result"], "a new file each time");
    assert!(actions(OFF, &again).iter().all(|x| !x.contains("same_result")), "OpenClaw's rules are untouched");
}

#[test]
fn paging_through_a_file_is_progress_the_same_page_again_is_not() {
    let pages: String = (0..12)
        .map(|i| exec("s", "scroll_down", &format!("[File: a.py] lines {i}01-{i}99: page {i} of the module")))
        .collect();
    assert!(actions(CAUTIOUS, &pages).iter().all(|x| x == "allow"), "a new page each time");
    assert_eq!(actions(OFF, &pages)[10], "warn:generic_repeat", "OpenClaw warns on the arguments alone");
    let same: String = exec("s", "scroll_down", "[File: a.py] (end of file)").repeat(12);
    let a = actions(CAUTIOUS, &same);
    assert_eq!(a[2..4], ["warn:same_result", "block:same_result"]);
}

#[test]
fn the_same_edit_sent_back_to_back_is_warned_whatever_it_returns_and_denied_at_the_fifth() {
    let edit = "edit 1:1\\npublic class CustomException extends Exception { public CustomException() { super(); } }\\nend_of_edit";
    let trace: String = (1..=8)
        .map(|i| exec("s", edit, &format!("[File: Repro.java ({} lines total)] 1:public class", 8 * i)))
        .collect();
    let a = actions(CAUTIOUS, &trace);
    assert_eq!(a[..4], ["allow", "allow", "warn:same_result", "warn:same_result"]);
    assert!(a[4..].iter().all(|x| x == "block:same_result"), "blocked from the 5th send (rerunBlockAt): {a:?}");
    let on = actions(ON, &trace);
    assert_eq!(on[4..7], ["block:same_result", "block:same_result", "block:ladder"], "sent again after two blocks");
    assert!(actions(OFF, &trace).iter().all(|x| x == "allow"));
    let between: String = (1..=8)
        .flat_map(|i| {
            [
                exec("s", edit, &format!("[File: Repro.java ({} lines total)]", 8 * i)),
                exec("s", "ls", &format!("f{i}.java")),
            ]
        })
        .collect();
    assert!(!actions(CAUTIOUS, &between).iter().any(|x| x.starts_with("block")), "not back to back: never denied");
}

#[test]
fn healthy_exploration_passes() {
    let trace: String =
        (0..8).map(|i| search("s", &format!("page {i}"), &format!("Page {i} is about topic {i}."))).collect();
    assert!(actions(ON, &trace).iter().all(|x| x == "allow"));
}

#[test]
fn session_scope_keeps_the_history_across_runs() {
    let run = |r: usize| {
        format!(
            "{{\"kind\":\"tool_call\",\"session\":\"s\",\"run\":\"r{r}\",\"tool\":\"t\",\"args\":{{\"q\":\"the order of run {r}\"}}}}\n\
             {{\"kind\":\"tool_result\",\"session\":\"s\",\"run\":\"r{r}\",\"tool\":\"t\",\"args\":{{\"q\":\"the order of run {r}\"}},\"error\":\"Error: no such order {r}\"}}\n"
        )
    };
    let trace: String = (0..3).map(run).collect();
    assert_eq!(actions(ON, &trace)[2], "warn:same_error");
    let per_run = r#"{tools: {loopDetection: {enabled: true}}, loopguard: {preset: "recommended", scope: "run"}}"#;
    assert!(actions(per_run, &trace).iter().all(|x| x == "allow"));
}

/// Memory stays bounded: a session of 5,000 calls keeps `historySize` entries.
#[test]
fn a_long_session_keeps_at_most_history_size_calls() {
    let config = r#"{loopguard: {preset: "recommended", historySize: 200}}"#;
    let mut gw = Gateway::from_config(config).expect("valid config");
    let trace: String = (0..5000).map(|i| search("s", &format!("page {i}"), &format!("Page {i}."))).collect();
    gw.apply_events(&trace, 1).expect("valid trace");
    let trail = gw.session("s").expect("the session").trail();
    assert_eq!(trail.entries().len(), 200);
}

/// With no preset, every example trace decides exactly as its expected output says, and so it
/// does with every detector beyond OpenClaw named and switched off.
#[test]
fn no_preset_decides_as_today_on_every_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/traces");
    let mut seen = 0;
    for dir in std::fs::read_dir(root).expect("examples/traces") {
        let dir = dir.expect("a directory entry").path();
        let (Ok(config), Ok(trace), Ok(expected)) = (
            std::fs::read_to_string(dir.join("config.json5")),
            std::fs::read_to_string(dir.join("trace.jsonl")),
            std::fs::read_to_string(dir.join("expected.jsonl")),
        ) else {
            continue;
        };
        let off = r#"{"loopguard":{"detectors":{"sameError":false,"sameResult":false,"cycle":false,"growingArgs":false,"ladder":false}}}"#;
        let mut doc: serde_json::Value = json5::from_str(&config).expect("the example config is JSON5");
        let extra: serde_json::Value = serde_json::from_str(off).expect("JSON");
        doc.as_object_mut().expect("an object").entry("loopguard").or_insert_with(|| serde_json::json!({}));
        for (k, v) in extra["loopguard"].as_object().expect("an object") {
            doc["loopguard"][k] = v.clone();
        }
        for cfg in [config.clone(), doc.to_string()] {
            let mut gw = Gateway::from_config(&cfg).expect("valid config");
            assert_eq!(gw.apply_events(&trace, 1).expect("valid trace"), expected, "{}", dir.display());
        }
        seen += 1;
    }
    assert!(seen >= 5, "examples found: {seen}");
}

/// The decision lines of `trace` when every line is decided by a fresh gateway that imports the
/// previous one's snapshot (a hook process, a state file, a hot swap) or by `decide_keyed` on
/// the previous blob (a store replica).
fn decided_one_line_per_gateway(config: &str, trace: &str, keyed: bool) -> String {
    let (mut out, mut snapshot) = (String::new(), None::<Vec<u8>>);
    for (i, line) in trace.lines().enumerate() {
        let mut gw = Gateway::from_config(config).expect("valid config");
        let n = i as u32 + 1;
        if keyed {
            let (decision, blob) = gw.decide_keyed(line, n, snapshot.as_deref()).expect("decided");
            out.push_str(&decision);
            snapshot = blob;
        } else {
            if let Some(s) = &snapshot {
                gw.import_state(s).expect("its own snapshot reads back");
            }
            out.push_str(&gw.apply_events(line, n).expect("valid line"));
            snapshot = Some(gw.export_state());
        }
    }
    out
}

#[test]
fn a_snapshot_carries_the_trail_so_a_new_process_or_replica_decides_as_one_gateway() {
    let trace = search("s", "Scatman John", "Could not find that page.").repeat(7);
    let whole = Gateway::from_config(ON).expect("valid config").apply_events(&trace, 1).expect("valid trace");
    assert!(whole.contains("block") && whole.contains("abort"), "the trace reaches the ladder's end");
    assert_eq!(decided_one_line_per_gateway(ON, &trace, false), whole, "export, then import into a new gateway");
    assert_eq!(decided_one_line_per_gateway(ON, &trace, true), whole, "decide_keyed on the previous blob");
    let mut gw = Gateway::from_config(ON).expect("valid config");
    gw.apply_events(&trace, 1).expect("valid trace");
    assert_eq!(gw.export_state()[6..8], 5u16.to_le_bytes(), "a session with a trail is written as format 5");
    let mut off = Gateway::from_config(OFF).expect("valid config");
    off.apply_events(&trace, 1).expect("valid trace");
    assert_eq!(off.export_state()[6..8], 2u16.to_le_bytes(), "no preset: format 2 as before");
}
