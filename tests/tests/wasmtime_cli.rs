//! The golden traces through the stock wasmtime CLI (`wasmtime run --invoke 'replay(…)'`): any
//! WASI-p2 runtime, not only our host, must give the same decisions. wasmtime is a required
//! tool: without it this test fails and names `scripts/setup.sh` (CI installs it).

use loopguard_tests::{diff_decisions, policy_wasm, require_tool, scenarios, wave, Run, Scenario};

/// The OS limit on one argument (`MAX_ARG_STRLEN`, 32 pages), minus room for the call syntax.
const MAX_ARG: usize = 128 * 1024 - 64;

#[test]
fn golden_traces_through_the_wasmtime_cli() {
    let wasmtime = require_tool("wasmtime");
    let version = Run::new(&wasmtime, ["--version"], None).success().stdout();
    assert!(version.contains("48.0."), "need wasmtime 48.0.x, found {version}; run `bash scripts/setup.sh`");

    let wasm = policy_wasm();
    let (mut ran, mut failures) = (0, Vec::new());
    for scenario in scenarios() {
        let config = Scenario::read(&scenario.config);
        let trace = Scenario::read(&scenario.trace);
        let call = format!("replay({}, {})", wave::string(&config), wave::string(&trace));
        if call.len() > MAX_ARG {
            eprintln!(
                "note: {} skipped: its invoke argument is {} bytes, over the OS limit of 128 KiB",
                scenario.name,
                call.len()
            );
            continue;
        }
        let run =
            Run::new(&wasmtime, ["run".as_ref(), "--invoke".as_ref(), call.as_str().as_ref(), wasm.as_os_str()], None)
                .success();
        match wave::ok_string(&run.stdout()) {
            Ok(decisions) => {
                if let Some(diff) = diff_decisions(&Scenario::read(&scenario.expected), &decisions) {
                    failures.push(format!("{}: {diff}", scenario.name));
                }
            }
            Err(printed) => failures.push(format!(
                "{}: replay did not return ok(\"…\"): {printed}{}",
                scenario.name,
                run.describe()
            )),
        }
        ran += 1;
    }
    assert!(ran > 0, "every scenario was too large for the wasmtime CLI; quickstart must fit");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_config_error_is_an_err_value_through_the_wasmtime_cli() {
    let wasmtime = require_tool("wasmtime");
    let call =
        format!("replay({}, {})", wave::string("{tools: {loopDetection: {historySize: \"x\"}}}"), wave::string(""));
    let run = Run::new(
        &wasmtime,
        ["run".as_ref(), "--invoke".as_ref(), call.as_str().as_ref(), policy_wasm().as_os_str()],
        None,
    )
    .success();
    let printed = wave::ok_string(&run.stdout()).expect_err("a bad config is not ok");
    let run = run
        .check(printed.starts_with("err(") && printed.contains("historySize"), "expected err({path: …historySize…})");
    drop(run);
}
