//! The keyed path decides as the ordinary path does, one key at a time (docs/SCALING.md).

use crate::error::ErrorKind;
use crate::gateway::Gateway;

fn bot(conv: &str, sender: &str, receiver: &str, ts: i64, id: Option<&str>) -> String {
    let id = id.map(|i| format!(",\"event_id\":\"{i}\"")).unwrap_or_default();
    format!(
        r#"{{"kind":"bot_message","channel":"slack","account":"a","conversation":"{conv}","sender":"{sender}","receiver":"{receiver}","ts_ms":{ts}{id}}}"#
    )
}

fn tool(session: &str, path: &str) -> String {
    format!(r#"{{"kind":"tool_call","session":"{session}","tool":"read","args":{{"path":"{path}"}}}}"#)
}

/// Decides every line on its key's blob, as a store would keep them.
fn keyed(config: &str, lines: &[String]) -> String {
    let mut gw = Gateway::from_config(config).unwrap();
    let mut blobs = std::collections::HashMap::<String, Vec<u8>>::new();
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let key = gw.state_key(line).unwrap();
        let (decision, state) = gw.decide_keyed(line, i as u32 + 1, blobs.get(&key).map(Vec::as_slice)).unwrap();
        match state {
            Some(s) => blobs.insert(key, s),
            None => blobs.remove(&key),
        };
        out.push_str(&decision);
    }
    out
}

fn plain(config: &str, lines: &[String]) -> String {
    Gateway::from_config(config).unwrap().apply_events(&lines.join("\n"), 1).unwrap()
}

const BURST: &str = r#"{"channels":{"defaults":{"botLoopProtection":{"maxConversationBotEvents":12}}}}"#;

#[test]
fn a_pair_storm_over_two_conversations_gets_the_ordinary_decisions() {
    let lines: Vec<String> = (0..60)
        .map(|i| {
            bot(if i % 3 == 0 { "c2" } else { "c1" }, ["x", "y"][i % 2], ["y", "x"][i % 2], 1_000 * i as i64, None)
        })
        .collect();
    let out = keyed("{}", &lines);
    assert!(out.contains("suppress"), "the storm trips the pair budget: {out}");
    assert_eq!(out, plain("{}", &lines));
}

#[test]
fn a_burst_storm_with_three_senders_and_a_redelivery_gets_the_ordinary_decisions() {
    let mut lines: Vec<String> =
        (0..40).map(|i| bot("c", ["p", "q", "r"][i % 3], "me", 500 * i as i64, Some(&format!("e{i}")))).collect();
    lines.insert(5, bot("c", "p", "me", 2_000, Some("e3")));
    let out = keyed(BURST, &lines);
    assert!(out.contains("\"burst\""), "the burst budget trips: {out}");
    assert_eq!(out, plain(BURST, &lines));
}

#[test]
fn tool_loop_sessions_get_the_ordinary_decisions() {
    let config = r#"{"tools":{"loopDetection":{"enabled":true}}}"#;
    let lines: Vec<String> = (0..80).map(|i| tool(if i % 2 == 0 { "s1" } else { "s2" }, "/same")).collect();
    let out = keyed(config, &lines);
    assert!(out.contains("\"warn\""), "the repeat detector warns: {out}");
    assert_eq!(out, plain(config, &lines));
}

#[test]
fn the_gateways_own_state_is_left_as_it_was() {
    let mut gw = Gateway::from_config("{}").unwrap();
    gw.apply_events(&bot("c", "x", "y", 1, None), 1).unwrap();
    let before = gw.export_state();
    gw.decide_keyed(&bot("d", "x", "y", 2, None), 1, None).unwrap();
    assert_eq!(gw.export_state(), before);
}

#[test]
fn an_event_that_keeps_nothing_returns_no_state() {
    let mut gw = Gateway::from_config("{}").unwrap();
    let (decision, state) = gw.decide_keyed(&bot("c", "x", "x", 1, None), 1, None).unwrap();
    assert_eq!(decision, "{\"line\":1,\"kind\":\"bot_message\",\"action\":\"allow\"}\n");
    assert_eq!(state, None);
}

#[test]
fn an_unreadable_blob_is_a_snapshot_error_and_leaves_the_state() {
    let mut gw = Gateway::from_config("{}").unwrap();
    let err = gw.decide_keyed(&bot("c", "x", "y", 1, None), 1, Some(b"LGSNAP\xff\xffjunk")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Snapshot);
    assert!(err.reason.contains("newer"), "{}", err.reason);
    assert_eq!(gw.stats().bot_pairs, 0);
}

#[test]
fn keys_name_the_state_an_event_touches() {
    let gw = Gateway::from_config("{}").unwrap();
    assert_eq!(gw.state_key(&tool(r#"s\"1"#, "/a")).unwrap(), r#"session["s\"1"]"#);
    let group = r#"{"kind":"group_cancel","channel":"discord","account":"a","conversation":"c","root":"m1"}"#;
    assert_eq!(gw.state_key(group).unwrap(), r#"group["discord","a","c",null,"m1"]"#);
    let err = gw.state_key(r#"{"kind":"bot_message"}"#).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Input);
    assert!(err.path.starts_with("line 1"), "{}", err.path);
}
