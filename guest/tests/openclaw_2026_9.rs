//! The `openclaw-2026.9` profile against the real `openclaw@2026.9.6` package: one test per
//! behaviour of tests/oracle/NOTES.md §2–§5. Each replays a case of `tests/oracle/cases/` with
//! `loopguard.compat: "openclaw-2026.9"` and compares it with the decisions the package made
//! (`openclaw-2026.9.6.jsonl`, written by tests/oracle/driver.mjs); nothing expected here is
//! computed by loopguard.

use std::path::PathBuf;

use loopguard_policy::config::Config;
use loopguard_policy::gateway::Gateway;
use loopguard_policy::replay::replay;
use serde_json::Value;

fn case_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/oracle/cases").join(name)
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A config document with `loopguard.compat` set.
fn with_compat(config: &str, compat: &str) -> String {
    let mut doc: Value = json5::from_str(config).expect("a valid config");
    let obj = doc.as_object_mut().expect("an object");
    let lg = obj.entry("loopguard").or_insert_with(|| Value::Object(Default::default()));
    lg.as_object_mut().expect("an object").insert("compat".into(), Value::String(compat.into()));
    doc.to_string()
}

/// The case's config (with the profile), trace and the package's decisions.
fn case(name: &str) -> (String, String, String) {
    let dir = case_dir(name);
    let config = with_compat(&read(dir.join("config.json")), "openclaw-2026.9");
    (config, read(dir.join("trace.jsonl")), read(dir.join("openclaw-2026.9.6.jsonl")))
}

/// Replays the case and compares with the package, naming the first differing line.
fn assert_like_the_package(name: &str) {
    let (config, trace, expected) = case(name);
    let got = replay(&config, &trace).unwrap_or_else(|e| panic!("{name}: {e}"));
    for (i, (g, e)) in got.lines().zip(expected.lines()).enumerate() {
        assert_eq!(g, e, "{name}: decision {} differs from openclaw 2026.9.6", i + 1);
    }
    assert_eq!(got.lines().count(), expected.lines().count(), "{name}: number of decisions");
}

/// §2.4: a block leaves a veto record, so the next identical block counts 21, 22, … and the 11th
/// is the global circuit breaker; §2.3: the first block of an attempt gets the recovery
/// paragraph, later ones the "recovery failed" text, and a compaction starts a new attempt.
#[test]
fn blocked_calls_are_recorded_and_worded_by_tool_loop_recovery() {
    assert_like_the_package("exec-repeat-block-recovery");
}

/// §2.4: the veto record ends the unknown-tool streak: the call after the block is allowed.
#[test]
fn unknown_tool_blocks_are_not_sticky() {
    assert_like_the_package("unknown-tool-not-sticky");
}

/// §2.4: the veto record breaks the alternation; repeating the blocked call is a generic
/// warning, not a ping-pong block.
#[test]
fn ping_pong_blocks_are_not_sticky() {
    assert_like_the_package("ping-pong-not-sticky");
}

/// §2.5: three paths cycled, every write unchanged: argument-churn warnings from 10 on.
#[test]
fn argument_churn_warns_on_cycled_unchanged_writes() {
    assert_like_the_package("argument-churn-write");
}

/// §2.5: two paths in blocks of three, one error text: argument-churn warnings.
#[test]
fn argument_churn_warns_on_variants_failing_alike() {
    assert_like_the_package("argument-churn-errors");
}

/// §2.6: a `write` with `changed: false` is one "unchanged" outcome whatever its text: a block
/// at 20.
#[test]
fn unchanged_writes_are_no_progress() {
    assert_like_the_package("write-unchanged");
}

/// §2.6: terminal exec failures that differ only in volatile parts are one failure, also across
/// different commands.
#[test]
fn exec_failures_have_an_identity_across_volatile_output_and_commands() {
    assert_like_the_package("exec-failure-identity");
}

/// §2.7: untrusted-content marker ids do not change outcome digests.
#[test]
fn untrusted_marker_ids_are_canonicalized() {
    assert_like_the_package("untrusted-marker-ids");
}

/// §2.7: embedded blocks with 1 and 3 backslashes before their quotes are canonicalized, 2 are
/// not.
#[test]
fn escaped_untrusted_markers_follow_the_backslash_rule() {
    assert_like_the_package("untrusted-marker-escaped");
}

/// §2.7: lone surrogates are kept: `note` and `note\uD800` are two argument sets.
#[test]
fn lone_surrogates_are_kept_in_fingerprints() {
    assert_like_the_package("lone-surrogate-kept");
}

/// §2.1: with `enabled` unset calls are not recorded (outcomes are), and the post-compaction
/// guard sees the same outcomes.
#[test]
fn calls_are_recorded_only_when_enabled_is_true() {
    assert_like_the_package("enabled-unset-post-compaction");
}

/// §4.1: a redelivered event id is let through even during the pair's cooldown.
#[test]
fn a_redelivery_during_a_cooldown_is_allowed() {
    assert_like_the_package("bot-replay-during-cooldown");
}

/// §5: `NO_REPLY` and blanks are passes, display names address participants, a duplicate root
/// launches nobody while its thread runs, a legacy entry is a one-round thread.
#[test]
fn group_threads_follow_the_2026_9_coordinator() {
    assert_like_the_package("group-rounds");
}

/// §2.1: 2026.9.6 ignores the thresholds (its schema rejects them). loopguard keeps honouring
/// knobs an operator sets explicitly; without them its decisions are the package's.
#[test]
fn explicit_knobs_still_work_and_without_them_decisions_are_the_packages() {
    let (config, trace, expected) = case("thresholds-ignored");
    let honoured = replay(&config, &trace).unwrap();
    assert_ne!(honoured, expected, "the explicit thresholds change decisions");
    let mut doc: Value = serde_json::from_str(&config).unwrap();
    let block = doc.pointer_mut("/tools/loopDetection").and_then(Value::as_object_mut).unwrap();
    block.retain(|k, _| k == "enabled");
    assert_eq!(replay(&doc.to_string(), &trace).unwrap(), expected);
}

/// §5: 2026.9.6 clamps out-of-range budgets and drops unknown agents; the validation of
/// loopguard stays as it is in every profile (docs/SPEC-CHOICES.md).
#[test]
fn config_validation_is_the_same_in_every_profile() {
    let (config, _, _) = case("group-config-clamps");
    let e = Config::parse(&config).unwrap_err();
    assert_eq!(e.path, "broadcast.slack:C2.agents[1]");
}

/// Snapshot format 3 carries the veto records and the recovery state: a hot swap in the middle of
/// the recovery case gives the package's decisions, and a documented gateway still writes format
/// 2.
#[test]
fn a_hot_swap_keeps_veto_records_and_recovery_state() {
    let (config, trace, expected) = case("exec-repeat-block-recovery");
    let lines: Vec<&str> = trace.lines().collect();
    for cut in [41, 44, 55] {
        let mut old = Gateway::new(Config::parse(&config).unwrap());
        let mut out = old.apply_events(&lines[..cut].join("\n"), 1).unwrap();
        let snap = old.export_state();
        assert_eq!(&snap[..8], b"LGSNAP\x03\x00", "openclaw 2026.9 state needs format 3");
        let mut new = Gateway::new(Config::parse(&config).unwrap());
        new.import_state(&snap).unwrap();
        assert_eq!(new.export_state(), snap, "format 3 reads back to the same state");
        out.push_str(&new.apply_events(&lines[cut..].join("\n"), cut as u32 + 1).unwrap());
        assert_eq!(out, expected, "swap before line {}", cut + 1);
    }
}
