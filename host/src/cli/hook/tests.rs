//! The hook's config defaults: what a document that says nothing becomes, and that every value a
//! document gives (the opt-outs included) wins over the defaults.

use serde_json::{json, Value};

use super::{config, fill, HookArgs, Host};

fn filled(doc: Value) -> Value {
    let mut doc = doc;
    fill(&mut doc, &super::defaults());
    doc
}

#[test]
fn a_document_that_says_nothing_gets_detection_on_and_the_recommended_preset() {
    let want = json!({"tools": {"loopDetection": {"enabled": true}}, "loopguard": {"preset": "recommended"}});
    assert_eq!(filled(json!({})), want);
}

#[test]
fn the_defaults_fill_in_beside_what_the_document_says() {
    let doc = json!({"tools": {"loopDetection": {"warningThreshold": 3}}, "loopguard": {"maxSessions": 5}});
    let want = json!({"tools": {"loopDetection": {"warningThreshold": 3, "enabled": true}},
                      "loopguard": {"maxSessions": 5, "preset": "recommended"}});
    assert_eq!(filled(doc), want);
}

#[test]
fn the_opt_outs_are_kept() {
    let off = json!({"tools": {"loopDetection": {"enabled": false}}, "loopguard": {"preset": "off"}});
    assert_eq!(filled(off.clone()), off);
    // `null` is what the document says too (the config reads it as unset: off).
    let null = json!({"tools": {"loopDetection": {"enabled": null}}, "loopguard": {"preset": null}});
    assert_eq!(filled(null.clone()), null);
}

#[test]
fn a_value_of_the_wrong_type_is_left_for_the_policy_to_name() {
    assert_eq!(filled(json!({"tools": 3, "loopguard": []})), json!({"tools": 3, "loopguard": []}));
}

#[test]
fn a_json5_config_file_is_read_and_filled() {
    let dir = std::env::temp_dir().join(format!("loopguard-hook-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json5");
    std::fs::write(&path, "// mine\n{tools: {loopDetection: {criticalThreshold: 12}}}").unwrap();
    let args = HookArgs {
        host: Host::ClaudeCode,
        state_dir: None,
        config: Some(path.clone()),
        policy: None,
        fail_closed: false,
        timeout_ms: None,
        max_sessions: 1,
        max_state_bytes: 1,
        expire_hours: 1,
    };
    let (name, text) = config(&args, &dir).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(name, path.display().to_string());
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["tools"]["loopDetection"], json!({"criticalThreshold": 12, "enabled": true}));
    assert_eq!(doc["loopguard"], json!({"preset": "recommended"}));
}
