//! The CLI side of versioning, pinning and hot swap: `inspect`, `--expect-digest`, `--swap-at/--swap-to`, `--shadow`, and
//! a misbehaving policy that must end in a clean exit, never a hang or a crash. The hostile
//! fixture (`tests/hostile-policy/`) is built on demand by `loopguard_tests::hostile_wasm`.

use std::path::{Path, PathBuf};

use loopguard_tests::{hostile_wasm, policy_wasm, scenarios, Run, Scenario, TempDir};

/// The longest trace line the CLI reads (`MAX_LINE_BYTES` in `src/trace/read.rs`).
const MAX_LINE_BYTES: usize = 16 << 20;

fn loopguard<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(args: I) -> Run {
    Run::new(Path::new(env!("CARGO_BIN_EXE_loopguard")), args, None)
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

fn scenario(name: &str) -> Scenario {
    scenarios().into_iter().find(|s| s.name == name).expect("the example exists")
}

/// Exit code 2 and one `loopguard:` line on stderr containing every needle.
fn fails_with(run: Run, needles: &[&str]) -> Run {
    let err = run.stderr();
    let ok = err.lines().count() == 1
        && err.starts_with("loopguard: ")
        && needles.iter().all(|n| err.contains(n))
        && !err.contains("panicked");
    run.code(2).check(ok, &format!("expected one `loopguard: …` line mentioning {needles:?}"))
}

#[test]
fn inspect_prints_versions_digest_size_and_imports() {
    let wasm = policy_wasm();
    let bytes = std::fs::read(&wasm).expect("the policy is built");
    let run = loopguard(["inspect", &path(&wasm)]).success();
    let out = run.stdout();
    let field = |name: &str| out.lines().find_map(|l| l.strip_prefix(&format!("{name}: "))).map(str::to_string);
    let names: Vec<&str> = out.lines().filter_map(|l| l.split_once(": ").map(|(n, _)| n)).collect();
    let ok = names.len() == out.lines().count()
        && field("interface").as_deref() == Some(loopguard_host::INTERFACE_VERSION)
        && field("policy").is_some()
        && field("digest") == Some(blake3::hash(&bytes).to_hex().to_string())
        && field("size") == Some(bytes.len().to_string())
        && field("compatible").as_deref() == Some("yes")
        && out.contains("import: loopguard:policy/types@")
        && out.contains("import: wasi:");
    run.check(ok, "one `name: value` per line: interface, policy, digest (blake3), size, compatible, imports");
}

#[test]
fn inspect_shows_an_incompatible_module_that_replay_refuses() {
    let major2 = hostile_wasm("major2");
    let run = loopguard(["inspect", &path(&major2)]).success();
    let ok = run.stdout().contains("interface: 2.0.0\n") && run.stdout().contains("compatible: no\n");
    run.check(ok, "inspect reads the version without refusing");
    let s = scenario("quickstart");
    fails_with(
        loopguard(["replay", "--policy", &path(&major2), "--config", &path(&s.config), &path(&s.trace)]),
        &["policy interface 2.0.0 is incompatible with this host (1.x)"],
    );
}

#[test]
fn expect_digest_refuses_a_mismatch_naming_both_digests() {
    let wasm = policy_wasm();
    let digest = blake3::hash(&std::fs::read(&wasm).expect("built")).to_hex().to_string();
    let wrong = "ab".repeat(32);
    let s = scenario("quickstart");
    let base = ["replay", "--policy", &path(&wasm), "--config", &path(&s.config)];
    let trace = path(&s.trace);
    let mismatch: Vec<&str> = base.iter().copied().chain(["--expect-digest", &wrong, &trace]).collect();
    fails_with(loopguard(&mismatch), &[&wrong, &digest]);
    let matching: Vec<&str> = base.iter().copied().chain(["--expect-digest", &digest, &trace]).collect();
    let run = loopguard(&matching).success();
    let same = run.stdout() == Scenario::read(&s.expected);
    run.check(same, "a matching pin replays normally");
    // The embedded policy is pinned the same way.
    let embedded = ["replay", "--config", &path(&s.config), "--expect-digest", &wrong, &trace];
    fails_with(loopguard(embedded), &[&wrong, "<embedded>"]);
}

#[test]
fn a_swap_to_the_same_module_gives_identical_decisions_on_every_example() {
    let wasm = path(&policy_wasm());
    for s in scenarios() {
        let lines = Scenario::read(&s.trace).lines().count();
        let at = (lines / 2 + 1).to_string();
        let (config, trace) = (path(&s.config), path(&s.trace));
        let plain = loopguard(["replay", "--config", &config, &trace]).success();
        let swapped =
            loopguard(["replay", "--config", &config, "--swap-at", &at, "--swap-to", &wasm, &trace]).success();
        let same = swapped.stdout() == plain.stdout() && plain.stdout() == Scenario::read(&s.expected);
        let said = swapped.stderr().contains(&format!("before line {at}"));
        swapped.check(same && said, &format!("{}: swap before line {at} changed a decision", s.name));
    }
}

#[test]
fn a_loop_started_before_a_swap_is_blocked_after_it() {
    // exec-poll-no-progress blocks at line 45 (20 identical polls); swap to another module at 30.
    let s = scenario("exec-poll-no-progress");
    let other = path(&hostile_wasm(""));
    let run =
        loopguard(["replay", "--config", &path(&s.config), "--swap-at", "30", "--swap-to", &other, &path(&s.trace)])
            .success();
    let out = run.stdout();
    let ok = out == Scenario::read(&s.expected)
        && out.contains("{\"line\":45,\"kind\":\"tool_call\",\"action\":\"block\"")
        && run.stderr().contains("+hostile before line 30");
    run.check(ok, "the state must cross the swap: the loop counted before line 30 is blocked at line 45");
}

#[test]
fn a_swap_whose_import_fails_is_an_error() {
    let s = scenario("exec-poll-no-progress");
    let bad = path(&hostile_wasm("bad-import"));
    let run =
        loopguard(["replay", "--config", &path(&s.config), "--swap-at", "30", "--swap-to", &bad, &path(&s.trace)]);
    fails_with(run, &["import-state always fails"]);
}

#[test]
fn shadow_reports_each_differing_line_and_a_summary() {
    let s = scenario("exec-poll-no-progress");
    let expected = Scenario::read(&s.expected);
    let (config, trace) = (path(&s.config), path(&s.trace));
    let candidate = path(&hostile_wasm("always-allow"));
    let run = loopguard(["replay", "--config", &config, "--shadow", &candidate, &trace]).success();
    let want: Vec<String> = expected
        .lines()
        .filter(|l| l.contains("\"kind\":\"tool_call\"") && !l.contains("\"action\":\"allow\""))
        .map(|l| {
            let n = &l["{\"line\":".len()..l.find(',').expect("a comma")];
            format!(
                "{{\"shadow_diff\":{{\"line\":{n},\"active\":{l},\"candidate\":{{\"line\":{n},\"kind\":\"tool_call\",\"action\":\"allow\"}}}}}}"
            )
        })
        .collect();
    let summary = format!("shadow: {} events, {} differ", expected.lines().count(), want.len());
    let err = run.stderr();
    let got: Vec<&str> = err.lines().collect();
    let ok = run.stdout() == expected
        && !want.is_empty()
        && got.len() == want.len() + 1
        && got.iter().zip(&want).all(|(g, w)| g == w)
        && got.last() == Some(&summary.as_str());
    run.check(ok, &format!("stdout = active decisions; stderr = {} diff lines, then `{summary}`", want.len()));

    let same = loopguard(["replay", "--config", &config, "--shadow", &path(&policy_wasm()), &trace]).success();
    let ok = same.stderr() == format!("shadow: {} events, 0 differ\n", expected.lines().count());
    same.check(ok, "the same module beside itself differs nowhere");
}

#[test]
fn a_policy_that_never_answers_is_stopped_and_reported() {
    let dir = TempDir::new("hostile-loop");
    let config = dir.write("config.json", "{}");
    let trace =
        dir.write("trace.jsonl", "{\"kind\":\"tool_call\",\"session\":\"__loop__\",\"tool\":\"read\",\"args\":{}}\n");
    let hostile = path(&hostile_wasm(""));
    let run = loopguard(["replay", "--policy", &hostile, "--config", &path(&config), &path(&trace)]);
    let run = run.code(2);
    let err = run.stderr();
    let ok =
        err.contains("did not answer apply-events within") && err.contains("1 timeouts") && !err.contains("panicked");
    run.check(ok, "the endless loop ends at the deadline with a clear error and the counters");
}

#[test]
fn swap_and_shadow_usage_errors_exit_2() {
    let s = scenario("quickstart");
    let (config, trace) = (path(&s.config), path(&s.trace));
    let wasm = path(&policy_wasm());
    fails_with(loopguard(["replay", "--config", &config, "--swap-at", "3", &trace]), &["--swap-to"]);
    fails_with(
        loopguard(["replay", "--config", &config, "--swap-at", "x", "--swap-to", &wasm, &trace]),
        &["--swap-at"],
    );
    fails_with(loopguard(["inspect"]), &["inspect needs"]);
    let missing: PathBuf = PathBuf::from(&config).with_file_name("absent.wasm");
    fails_with(loopguard(["inspect", &path(&missing)]), &["absent.wasm"]);
}

#[test]
fn a_line_longer_than_a_reader_takes_is_named_on_every_path_and_not_read_whole() {
    // A file with no line end (a database passed by mistake, a runaway line): the plain replay,
    // the swap's reader and the shadow's each stop at the cap and name the line, where the
    // policy would otherwise get the whole line and run out of memory naming none.
    let dir = TempDir::new("long-line");
    let config = path(&dir.write("config.json", "{}"));
    let first = "{\"kind\":\"tool_call\",\"session\":\"s\",\"tool\":\"read\",\"args\":{}}\n";
    let trace = dir.write("trace.jsonl", format!("{first}{{\"args\":\"{}", "x".repeat(MAX_LINE_BYTES)));
    let (trace, wasm) = (path(&trace), path(&policy_wasm()));
    for extra in [&[][..], &["--swap-at", "2", "--swap-to", &wasm], &["--shadow", &wasm], &["--jobs", "2"]] {
        eprintln!("case: {extra:?}");
        let args = ["replay", "--config", &config].into_iter().chain(extra.iter().copied()).chain([trace.as_str()]);
        fails_with(loopguard(args), &["line 2: is longer than 16777216 bytes", "JSON Lines"]);
    }
}
