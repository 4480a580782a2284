//! The `loopguard` CLI end to end: golden traces, `version`, and bad input that must end in exit
//! code 2 with one clear line on stderr (never a panic or a backtrace).
//!
//! These live in the CLI crate because only its own tests see `CARGO_BIN_EXE_loopguard`.

use std::path::PathBuf;

use loopguard_tests::{diff_decisions, policy_wasm, scenarios, workspace_root, Run, Scenario, TempDir};

/// The CLI's replay chunk size (`DEFAULT_CHUNK_BYTES` in `src/trace/stream.rs`).
const CHUNK_BYTES: usize = 256 << 10;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loopguard"))
}

fn loopguard<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(args: I, stdin: Option<&[u8]>) -> Run {
    Run::new(&bin(), args, stdin)
}

#[test]
fn golden_traces_through_the_cli() {
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let run = loopguard(
            ["replay".as_ref(), "--config".as_ref(), scenario.config.as_os_str(), scenario.trace.as_os_str()],
            None,
        )
        .success();
        if let Some(diff) = diff_decisions(&Scenario::read(&scenario.expected), &run.stdout()) {
            failures.push(format!("{}: {diff}", scenario.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn replay_reads_stdin_and_takes_an_explicit_policy() {
    let quickstart = scenarios().into_iter().find(|s| s.name == "quickstart").expect("quickstart exists");
    let trace = Scenario::read(&quickstart.trace);
    let run = loopguard(
        [
            "replay".as_ref(),
            "--policy".as_ref(),
            policy_wasm().as_os_str(),
            "--config".as_ref(),
            quickstart.config.as_os_str(),
            "-".as_ref(),
        ],
        Some(trace.as_bytes()),
    )
    .success();
    assert_eq!(run.stdout(), Scenario::read(&quickstart.expected), "{}", run.describe());
}

#[test]
fn version_prints_three_named_lines() {
    let run = loopguard(["version"], None).success();
    let out = run.stdout();
    let names: Vec<&str> = out.lines().filter_map(|l| l.split_once(": ").map(|(n, _)| n)).collect();
    run.check(names == ["loopguard", "policy", "interface"], "expected `loopguard:`, `policy:`, `interface:` lines")
        .check(
            out.contains(&format!("interface: {}\n", loopguard_host::INTERFACE_VERSION)),
            "the WIT's interface version",
        );
}

#[test]
fn help_succeeds_and_shows_usage() {
    let run = loopguard(["replay", "--help"], None).success();
    let has_usage = run.stdout().contains("loopguard replay --config FILE");
    run.check(has_usage, "usage text");
}

/// The commands `loopguard --help` lists under "Commands:" (clap's own `help` aside).
fn listed_commands(help: &str) -> Vec<String> {
    let list = help.split("Commands:\n").nth(1).unwrap_or("").split("\n\n").next().unwrap_or("");
    let names = list.lines().filter_map(|l| l.split_whitespace().next());
    names.filter(|name| *name != "help").map(str::to_string).collect()
}

/// The usage lines, and the README's CLI block, show every command the CLI has.
#[test]
fn the_usage_lines_and_the_readme_show_every_command() {
    let run = loopguard(["--help"], None).success();
    let help = run.stdout();
    let usage = help.split("Commands:").next().unwrap_or("").to_string();
    let commands = listed_commands(&help);
    let run = run.check(commands.len() >= 6, "a command list under `Commands:`");
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let part = readme.split("**CLI and the wasmtime CLI**").nth(1).expect("the README's CLI part");
    let block = part.split("```").nth(1).expect("its code block");
    for command in &commands {
        let line = format!("loopguard {command}");
        assert!(usage.contains(&line), "`{line}` in the usage lines{}", run.describe());
        assert!(block.contains(&line), "`{line}` in the README's CLI block:\n{block}");
    }
}

/// Asserts the failure contract: exit code 2, exactly one stderr line starting `loopguard: `
/// that mentions every `needle`, and nothing panicky.
fn fails_with(run: Run, needles: &[&str]) {
    let err = run.stderr();
    let lines: Vec<&str> = err.lines().collect();
    let run = run.code(2);
    let ok = lines.len() == 1
        && lines[0].starts_with("loopguard: ")
        && needles.iter().all(|n| lines[0].contains(n))
        && !err.contains("panicked")
        && !err.contains("RUST_BACKTRACE")
        && !err.contains("stack backtrace");
    run.check(ok, &format!("expected one `loopguard: …` line mentioning {needles:?}, no panic"));
}

fn replay(dir: &TempDir, config: &str, trace: &[u8]) -> Run {
    let config = dir.write("config.json5", config);
    let trace = dir.write("trace.jsonl", trace);
    loopguard(["replay".as_ref(), "--config".as_ref(), config.as_os_str(), trace.as_os_str()], None)
}

const ON: &str = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;
const CALL: &str = r#"{"kind":"tool_call","session":"s1","tool":"read","args":{"path":"/a"}}"#;

#[test]
fn bad_trace_lines_name_the_line_and_field() {
    let cases: &[(&str, String, &[&str])] = &[
        ("not json", format!("{CALL}\nthis is not json\n"), &["line 2"]),
        ("not an object", format!("{CALL}\n[1,2]\n"), &["line 2"]),
        (
            "missing session",
            format!("{CALL}\n{{\"kind\":\"tool_call\",\"tool\":\"read\",\"args\":null}}\n"),
            &["line 2", "session"],
        ),
        (
            "missing args",
            format!("{CALL}\n{{\"kind\":\"tool_call\",\"session\":\"s\",\"tool\":\"read\"}}\n"),
            &["line 2", "args"],
        ),
        (
            "wrong type",
            format!("{CALL}\n{{\"kind\":\"tool_call\",\"session\":7,\"tool\":\"read\",\"args\":null}}\n"),
            &["line 2", "session"],
        ),
        ("unknown kind", format!("{CALL}\n{{\"kind\":\"teleport\",\"session\":\"s\"}}\n"), &["line 2", "kind"]),
        ("missing kind", format!("{CALL}\n\n{{\"session\":\"s\"}}\n"), &["line 3", "kind"]),
        ("invalid UTF-8", format!("{CALL}\n{{\"kind\":\"tool_call\",\"session\":\"\u{FFFD}\"}}\n"), &[]),
    ];
    for (name, trace, needles) in cases {
        let dir = TempDir::new("bad-trace");
        let mut bytes = trace.clone().into_bytes();
        if *name == "invalid UTF-8" {
            let at = bytes.windows(3).position(|w| w == "\u{FFFD}".as_bytes()).expect("marker");
            bytes.splice(at..at + 3, [0xff, 0xfe]);
        }
        let needles: Vec<&str> = if *name == "invalid UTF-8" { vec!["line 2", "UTF-8"] } else { needles.to_vec() };
        eprintln!("case: {name}");
        fails_with(replay(&dir, ON, &bytes), &needles);
    }
}

#[test]
fn invalid_configs_name_the_config_path() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("wrong type", r#"{"tools":{"loopDetection":{"enabled":"yes"}}}"#, &["tools.loopDetection.enabled"]),
        ("unknown key", r#"{"tools":{"loopDetection":{"enabeld":true}}}"#, &["tools.loopDetection", "enabeld"]),
        (
            "warning >= critical",
            r#"{"tools":{"loopDetection":{"warningThreshold":20,"criticalThreshold":20}}}"#,
            &["tools.loopDetection.warningThreshold"],
        ),
        ("zero history", r#"{"tools":{"loopDetection":{"historySize":0}}}"#, &["tools.loopDetection.historySize"]),
        ("negative history", r#"{"tools":{"loopDetection":{"historySize":-5}}}"#, &["tools.loopDetection.historySize"]),
        ("zero session cap", r#"{"loopguard":{"maxSessions":0}}"#, &["loopguard.maxSessions"]),
        ("not a document", "{tools: ", &["config.json5"]),
    ];
    for (name, config, needles) in cases {
        eprintln!("case: {name}");
        let dir = TempDir::new("bad-config");
        fails_with(replay(&dir, config, CALL.as_bytes()), needles);
    }
}

/// A UTF-8 byte-order mark, which Windows editors and exporters write, is skipped at
/// the start of a trace (a file or stdin), of a config, and of a hook's event on stdin.
#[test]
fn a_byte_order_mark_is_skipped() {
    let bom = |text: &str| format!("\u{FEFF}{text}");
    let dir = TempDir::new("bom");
    let trace = format!("{CALL}\n{CALL}\n");
    let plain = replay(&dir, ON, trace.as_bytes()).success().stdout();
    let config = dir.write("bom-config.json5", bom(ON));
    let file = dir.write("bom-trace.jsonl", bom(&trace));
    for jobs in ["1", "2"] {
        let args = ["replay".as_ref(), "--jobs".as_ref(), jobs.as_ref(), "--config".as_ref(), config.as_os_str()];
        let run = loopguard(args.into_iter().chain([file.as_os_str()]), None).success();
        assert_eq!(run.stdout(), plain, "--jobs {jobs}{}", run.describe());
        let run = loopguard(args.into_iter().chain(["-".as_ref()]), Some(bom(&trace).as_bytes())).success();
        assert_eq!(run.stdout(), plain, "stdin, --jobs {jobs}{}", run.describe());
    }
    let event =
        r#"{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/a"}}"#;
    let state = dir.path().join("hook-state");
    let args =
        ["hook".as_ref(), "claude-code".as_ref(), "--fail-closed".as_ref(), "--state-dir".as_ref(), state.as_os_str()];
    let run = loopguard(args.into_iter().chain(["--config".as_ref(), config.as_os_str()]), Some(bom(event).as_bytes()));
    let run = run.success();
    let answered = run.stdout().trim() == "{}" && run.stderr().is_empty();
    run.check(answered, "the call allowed, no failure");
}

#[test]
fn a_16_mib_args_value_is_an_error_not_a_crash() {
    let dir = TempDir::new("huge-args");
    let huge = format!(
        "{{\"kind\":\"tool_call\",\"session\":\"s1\",\"tool\":\"write\",\"args\":{{\"data\":\"{}\"}}}}\n",
        "x".repeat(16 << 20)
    );
    let run = replay(&dir, ON, format!("{CALL}\n{huge}").as_bytes());
    // Either the policy accepts the call or it refuses it with a clear error; it must not trap.
    if run.output.status.success() {
        let lines = run.stdout().lines().count();
        run.check(lines == 2, "two decisions");
    } else {
        fails_with(run, &["line 2"]);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let dir = TempDir::new("deep");
    let deep = format!(
        "{{\"kind\":\"tool_call\",\"session\":\"s1\",\"tool\":\"x\",\"args\":{}{}}}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    fails_with(replay(&dir, ON, format!("{CALL}\n{deep}").as_bytes()), &["line 2"]);
}

#[test]
fn missing_files_and_bad_policies_fail_cleanly() {
    let dir = TempDir::new("missing");
    let config = dir.write("config.json5", ON);
    let trace = dir.write("trace.jsonl", CALL);
    let nowhere = dir.path().join("nowhere.json5");
    fails_with(
        loopguard(["replay".as_ref(), "--config".as_ref(), nowhere.as_os_str(), trace.as_os_str()], None),
        &["nowhere.json5"],
    );
    let no_trace = dir.path().join("no-trace.jsonl");
    fails_with(
        loopguard(["replay".as_ref(), "--config".as_ref(), config.as_os_str(), no_trace.as_os_str()], None),
        &["no-trace.jsonl"],
    );

    let garbage = dir.write("garbage.wasm", b"\0asm this is not a component");
    let text = dir.write("text.wasm", b"hello");
    let module = dir.write("module.wasm", b"\0asm\x01\0\0\0");
    for policy in [&garbage, &text, &module, &dir.path().join("absent.wasm")] {
        let file = policy.file_name().and_then(|n| n.to_str()).expect("name");
        eprintln!("case: --policy {file}");
        let args = [
            "replay".as_ref(),
            "--policy".as_ref(),
            policy.as_os_str(),
            "--config".as_ref(),
            config.as_os_str(),
            trace.as_os_str(),
        ];
        fails_with(loopguard(args, None), &[file]);
    }
}

#[test]
fn usage_errors_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&[], "missing command"),
        (&["frobnicate"], "frobnicate"),
        (&["replay", "trace.jsonl"], "--config"),
        (&["replay", "--config"], "--config"),
        (&["replay", "--config", "c.json", "a", "b"], "b"),
        (&["replay", "--colour", "x"], "--colour"),
    ];
    for (args, needle) in cases {
        fails_with(loopguard(*args, None), &[needle]);
    }
}

#[test]
fn limits_below_what_a_policy_can_run_with_are_refused_by_name() {
    let dir = TempDir::new("limits");
    let config = dir.write("config.json5", ON);
    let trace = dir.write("trace.jsonl", CALL);
    let cases: &[(&[&str], &[&str])] = &[
        (&["--jobs", "0"], &["--jobs", "1 or more", "\"0\""]),
        (&["--deadline-ms", "0"], &["--deadline-ms", "milliseconds", "1 or more"]),
        (&["--memory-mib", "0"], &["--memory-mib", "MiB", "1 or more"]),
        // The policy's memory starts at ~1.2 MiB: a 1 MiB cap cannot even instantiate it.
        (&["--memory-mib", "1"], &["needs", "memory cap of 1048576 bytes", "--memory-mib"]),
    ];
    for (flags, needles) in cases {
        eprintln!("case: {flags:?}");
        let mut args: Vec<&std::ffi::OsStr> = vec!["replay".as_ref(), "--config".as_ref(), config.as_os_str()];
        args.extend(flags.iter().map(std::ffi::OsStr::new));
        args.push(trace.as_os_str());
        fails_with(loopguard(args, None), needles);
    }
    // A cap that holds the policy runs, and so does an absurdly large one (no overflow to 0).
    for mib in ["2", "99999999999999999"] {
        let args = ["replay", "--memory-mib", mib, "--config"].map(std::ffi::OsStr::new);
        let run = loopguard(args.iter().copied().chain([config.as_os_str(), trace.as_os_str()]), None).success();
        assert_eq!(run.stdout(), "{\"line\":1,\"kind\":\"tool_call\",\"action\":\"allow\"}\n", "--memory-mib {mib}");
    }
}

#[test]
fn a_trace_larger_than_one_chunk_keeps_its_line_numbers() {
    // ~6 MiB: more than one chunk, with a repeating loop so decisions differ by position.
    let mut trace = String::new();
    for i in 0..60_000 {
        let path = i % 7;
        trace.push_str(&format!(
            "{{\"kind\":\"tool_call\",\"session\":\"s{}\",\"tool\":\"read\",\"args\":{{\"path\":\"/{path}\",\"pad\":\"{}\"}}}}\n",
            i % 3,
            "p".repeat(60)
        ));
    }
    assert!(trace.len() > CHUNK_BYTES);
    let dir = TempDir::new("chunks");
    let run = replay(&dir, ON, trace.as_bytes()).success();
    let _ = loopguard_host::use_compile_cache(&workspace_root().join("target/wasmtime-cache"));
    let policy = loopguard_host::Policy::from_file(policy_wasm()).expect("loads");
    let whole = policy.gateway(ON).expect("config").apply_events(&trace, 1).expect("replays");
    let same = run.stdout() == whole;
    let run = run.check(same, "chunked CLI output differs from one apply-events call");
    run.check(whole.lines().count() == 60_000, "one decision per line");
}

#[test]
fn store_tls_files_are_checked_at_start_and_never_print_the_password() {
    let dir = TempDir::new("store-tls");
    let config = dir.write("config.json", ON);
    let trace = dir.write("trace.jsonl", CALL);
    let store = |url: &str, tls: &[&str]| {
        let mut args = vec!["replay", "--config", config.to_str().unwrap(), "--store", url];
        args.extend_from_slice(tls);
        args.push(trace.to_str().unwrap());
        loopguard(args, None)
    };
    let secret = "rediss://user:hunter2@127.0.0.1:1";
    let run = store(secret, &["--store-ca", "/nonexistent/ca.pem"]);
    assert!(!run.stderr().contains("hunter2"), "{}", run.stderr());
    fails_with(run, &["--store rediss://***@127.0.0.1:1", "cannot read the TLS CA file /nonexistent/ca.pem"]);
    fails_with(store("redis://127.0.0.1:1", &["--store-ca", "/etc/hostname"]), &["TLS files need a rediss:// URL"]);
    fails_with(store(secret, &["--store-cert", "/etc/hostname"]), &["replay needs --store-key"]);
    let garbage = dir.write("ca.pem", "not a certificate");
    fails_with(
        store("rediss://127.0.0.1:1", &["--store-ca", garbage.to_str().unwrap()]),
        &["holds no PEM certificate"],
    );
}
