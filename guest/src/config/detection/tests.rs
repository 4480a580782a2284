//! `loopguard.preset`, `loopguard.detectors`, `scope`, `historySize`, `rules`: what they turn
//! on, and errors that name the config path.

use super::*;
use serde_json::json;

fn parse(doc: Value) -> Result<Detection, ConfigError> {
    Detection::parse(&doc)
}

#[test]
fn no_preset_and_no_detector_named_is_off() {
    for doc in [json!({}), json!({"loopguard": {"maxSessions": 5}}), json!({"loopguard": {"preset": "off"}})] {
        assert!(!parse(doc.clone()).unwrap().is_on(), "{doc}");
    }
}

#[test]
fn the_recommended_preset_turns_every_detector_on() {
    let d = parse(json!({"loopguard": {"preset": "recommended"}})).unwrap();
    assert!(d.is_on());
    assert_eq!(d.preset, Some("recommended"));
    assert_eq!(d.same_error, RECOMMENDED.same_error);
    assert_eq!(d.cycle.map(|c| c.max_period), Some(30));
    assert_eq!(d.ladder.map(NonZeroU32::get), Some(3));
}

#[test]
fn each_detector_is_tuned_or_switched_off_by_name() {
    let d = parse(json!({"loopguard": {"preset": "recommended", "scope": "run", "detectors": {
        "sameError": {"warnAt": 4, "blockAt": 8}, "growingArgs": false, "cycle": {"enabled": false},
        "ladder": {"abortAfterBlocks": 5}}}}))
    .unwrap();
    let r = RECOMMENDED.same_error.unwrap();
    let same = Levels { warn_at: 4, block_at: 8 };
    assert_eq!(d.same_error, Some(StreakSettings { same, ..r }));
    assert_eq!((d.growing_args, d.cycle), (None, None));
    assert_eq!(d.ladder.map(NonZeroU32::get), Some(5));
    assert_eq!(d.scope, HistoryScope::Run);
    // Without a preset, naming a detector turns that one on.
    let d = parse(json!({"loopguard": {"detectors": {"sameResult": true}}})).unwrap();
    assert!(d.same_result.is_some() && d.same_error.is_none() && d.ladder.is_none());
}

#[test]
fn bad_values_name_their_path() {
    let cases = [
        (json!({"loopguard": {"preset": "strict"}}), "loopguard.preset"),
        (json!({"loopguard": {"scope": "global"}}), "loopguard.scope"),
        (json!({"loopguard": {"historySize": 1}}), "loopguard.historySize"),
        (json!({"loopguard": {"detectors": {"pingPong": true}}}), "loopguard.detectors.pingPong"),
        (json!({"loopguard": {"detectors": {"cycle": 3}}}), "loopguard.detectors.cycle"),
        (json!({"loopguard": {"detectors": {"cycle": {"maxPeriod": 1}}}}), "loopguard.detectors.cycle.maxPeriod"),
        (
            json!({"loopguard": {"detectors": {"cycle": {"maxPeriod": 200, "blockAt": 20}}}}),
            "loopguard.detectors.cycle.maxPeriod",
        ),
        (
            json!({"loopguard": {"detectors": {"sameError": {"warnAt": 5, "blockAt": 4}}}}),
            "loopguard.detectors.sameError.blockAt",
        ),
        (json!({"loopguard": {"detectors": {"sameError": {"warn": 5}}}}), "loopguard.detectors.sameError.warn"),
        (
            json!({"loopguard": {"detectors": {"sameResult": {"variedWarnAt": 9, "variedBlockAt": 9}}}}),
            "loopguard.detectors.sameResult.variedBlockAt",
        ),
        (
            json!({"loopguard": {"detectors": {"ladder": {"abortAfterBlocks": 1}}}}),
            "loopguard.detectors.ladder.abortAfterBlocks",
        ),
        (
            json!({"loopguard": {"detectors": {"ladder": {"abortAfterBlocks": 0}}}}),
            "loopguard.detectors.ladder.abortAfterBlocks",
        ),
        (json!({"loopguard": {"rules": {"volatile": ["("]}}}), "loopguard.rules.volatile[0]"),
        (json!({"loopguard": {"rules": {"nothingFound": "x"}}}), "loopguard.rules.nothingFound"),
        (json!({"loopguard": {"rules": {"other": []}}}), "loopguard.rules.other"),
        (json!({"loopguard": {"preset": "recommended", "historySize": 50}}), "loopguard.historySize"),
    ];
    for (doc, path) in cases {
        let e = parse(doc.clone()).unwrap_err();
        assert_eq!(e.path, path, "{doc}: {e}");
    }
}

#[test]
fn the_whole_config_accepts_the_new_keys_and_refuses_unknown_ones() {
    use crate::config::Config;
    let c = Config::parse(r#"{loopguard: {preset: "recommended", scope: "session", maxSessions: 9}}"#).unwrap();
    assert!(c.detection.is_on());
    assert_eq!(Config::parse(r#"{loopguard: {presets: "recommended"}}"#).unwrap_err().path, "loopguard.presets");
}
