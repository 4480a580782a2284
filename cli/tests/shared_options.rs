//! Every command that decides takes the same policy options (`--policy`, `--expect-digest`,
//! `--deadline-ms`, `--memory-mib`, `--fail-closed`, `--config`) and reads them the same way:
//! a pinned digest that does not match refuses the policy before anything runs, in each command's
//! own way of failing (exit code 2 with one line, or the hook's fail-mode answer).

use std::path::PathBuf;

use loopguard_tests::{policy_wasm, Run, TempDir};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loopguard"))
}

const WRONG: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The line a refused pin is reported with, whichever command loaded the policy.
fn says_the_pin_was_refused(text: &str) {
    assert!(text.contains(&format!("but {WRONG} was pinned")), "{text}");
}

#[test]
fn replay_transcripts_and_mcp_refuse_a_policy_whose_digest_is_not_the_pinned_one() {
    let dir = TempDir::new("shared-options");
    let config = dir.write("c.json", "{}");
    let trace = dir.write("t.jsonl", "");
    let wasm = policy_wasm();
    let (config, trace, wasm) = (config.to_str().unwrap(), trace.to_str().unwrap(), wasm.to_str().unwrap());
    // The MCP server after `--` would be started only after the policy loaded: `false` would
    // make the proxy exit 1, so exit code 2 with the pin's line shows nothing was started.
    for args in [
        vec!["replay", "--config", config, "--policy", wasm, "--expect-digest", WRONG, trace],
        vec!["transcripts", "--policy", wasm, "--expect-digest", WRONG, trace],
        vec!["mcp", "--policy", wasm, "--expect-digest", WRONG, "--", "false"],
        vec!["mcp", "--expect-digest", WRONG, "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp"],
    ] {
        let run = Run::new(&bin(), &args, None);
        assert_eq!(run.output.status.code(), Some(2), "{args:?}{}", run.describe());
        says_the_pin_was_refused(&run.stderr());
        assert!(run.stdout().is_empty(), "{args:?}{}", run.describe());
    }
}

#[test]
fn the_hook_answers_a_refused_pin_in_its_fail_mode() {
    let dir = TempDir::new("shared-options-hook");
    let state = dir.path().join("state");
    let event = br#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}"#;
    let state = state.to_str().unwrap();
    let open = Run::new(&bin(), ["hook", "claude-code", "--state-dir", state, "--expect-digest", WRONG], Some(event));
    assert_eq!(open.output.status.code(), Some(0), "{}", open.describe());
    says_the_pin_was_refused(&open.stderr());
    assert!(!open.stdout().contains("deny"), "fail open lets the call run{}", open.describe());
    let closed = Run::new(
        &bin(),
        ["hook", "claude-code", "--state-dir", state, "--expect-digest", WRONG, "--fail-closed"],
        Some(event),
    );
    says_the_pin_was_refused(&closed.stderr());
    assert!(closed.stdout().contains("deny"), "fail closed denies the call{}", closed.describe());
}

#[test]
fn the_sandbox_limits_are_options_of_every_deciding_command() {
    for command in ["replay", "transcripts", "hook", "mcp"] {
        let run = Run::new(&bin(), [command, "--help"], None);
        let help = run.success().stdout();
        for option in ["--config", "--policy", "--expect-digest", "--deadline-ms", "--memory-mib", "--fail-closed"] {
            assert!(help.contains(option), "`loopguard {command} --help` lacks {option}:\n{help}");
        }
    }
}
