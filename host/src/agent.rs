//! The one default document of the agent-facing hosts: `loopguard hook` (Claude Code, Codex,
//! Gemini CLI), `loopguard mcp` and the LiteLLM guardrail (through the Python package).
//!
//! Why a default that guards: a user who puts loopguard in an agent's path wants it to guard,
//! and OpenClaw's thresholds alone (a block at the 21st identical call) sit above the loops real
//! agents make. So tool-loop detection is on with the `cautious` preset wherever the user's
//! document is silent: the recommended detectors, blocking only on strong evidence (the same
//! call, or the same lap of calls, answered the same way) and never ending a session, because
//! a guard that ends one healthy session is uninstalled (docs/REAL-LOOPS.md has the figures
//! behind it). Any value the document gives wins: `loopguard: {preset: "recommended"}` also
//! blocks late on weak evidence and ends a run whose agent keeps sending a blocked call;
//! `{preset: "off"}` keeps OpenClaw's rules only, and `tools.loopDetection.enabled: false` with
//! it switches the guard off. The policy then decides on the filled-in document exactly as on
//! one written out by hand.

use serde_json::Value;

/// What the agent-facing hosts assume where the user's document is silent. The document lives in
/// `agent-defaults.json` beside this file, the one copy: the Node package's build reads it too
/// (its framework adapters start from the same default).
pub const AGENT_DEFAULTS: &str = include_str!("agent-defaults.json");

/// The user's config document (JSON or JSON5; `{}` for none; a leading byte-order mark is
/// skipped) with [`AGENT_DEFAULTS`] filled in where it is silent, as JSON text. An error names
/// what is wrong with the document. The document is read once: JSON first (the common case,
/// and the faster parser), JSON5 only when that fails.
pub fn agent_config(document: &str) -> Result<String, String> {
    let document = document.strip_prefix('\u{feff}').unwrap_or(document);
    let mut doc: Value = match serde_json::from_str(document) {
        Ok(doc) => doc,
        Err(_) => json5::from_str(document).map_err(|e| format!("the config is neither JSON nor JSON5: {e}"))?,
    };
    if !doc.is_object() {
        return Err("the config must be an object at the top, like {\"tools\":{…}}".into());
    }
    let defaults: Value = serde_json::from_str(AGENT_DEFAULTS).map_err(|e| e.to_string())?;
    fill(&mut doc, &defaults);
    Ok(doc.to_string())
}

/// Adds every key of `defaults` that `doc` lacks, object by object. A key the document gives
/// with a value of another type is left as it is, for the policy to report by its path.
fn fill(doc: &mut Value, defaults: &Value) {
    let (Some(doc), Some(defaults)) = (doc.as_object_mut(), defaults.as_object()) else { return };
    for (key, default) in defaults {
        match doc.get_mut(key) {
            Some(given) => fill(given, default),
            None => {
                doc.insert(key.clone(), default.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn filled(doc: Value) -> Value {
        serde_json::from_str(&agent_config(&doc.to_string()).expect("a document")).expect("JSON")
    }

    #[test]
    fn a_document_that_says_nothing_gets_detection_on_and_the_cautious_preset() {
        let want = json!({"tools": {"loopDetection": {"enabled": true}}, "loopguard": {"preset": "cautious"}});
        assert_eq!(filled(json!({})), want);
        assert_eq!(filled(json!({})), serde_json::from_str::<Value>(AGENT_DEFAULTS).expect("JSON"));
        assert!(agent_config("// none\n{}").is_ok(), "JSON5");
    }

    #[test]
    fn the_defaults_fill_in_beside_what_the_document_says() {
        let doc = json!({"tools": {"loopDetection": {"warningThreshold": 3}}, "loopguard": {"maxSessions": 5}});
        let want = json!({"tools": {"loopDetection": {"warningThreshold": 3, "enabled": true}},
                          "loopguard": {"maxSessions": 5, "preset": "cautious"}});
        assert_eq!(filled(doc), want);
    }

    #[test]
    fn the_opt_outs_and_the_other_presets_are_kept() {
        let off = json!({"tools": {"loopDetection": {"enabled": false}}, "loopguard": {"preset": "off"}});
        assert_eq!(filled(off.clone()), off);
        let rec = json!({"tools": {"loopDetection": {"enabled": true}}, "loopguard": {"preset": "recommended"}});
        assert_eq!(filled(rec.clone()), rec);
        // `null` is what the document says too (the config reads it as unset: off).
        let null = json!({"tools": {"loopDetection": {"enabled": null}}, "loopguard": {"preset": null}});
        assert_eq!(filled(null.clone()), null);
    }

    #[test]
    fn a_value_of_the_wrong_type_is_left_for_the_policy_to_name_and_bad_json_is_an_error() {
        assert_eq!(filled(json!({"tools": 3, "loopguard": []})), json!({"tools": 3, "loopguard": []}));
        assert!(agent_config("{nope").is_err_and(|e| e.contains("neither JSON nor JSON5")));
        assert!(agent_config("[1]").is_err_and(|e| e.contains("must be an object")));
        assert!(agent_config("\u{feff}{}").is_ok(), "a byte-order mark is skipped");
    }
}
