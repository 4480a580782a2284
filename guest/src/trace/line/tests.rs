use super::*;

/// A batch of one line.
fn read(text: &str, n: u32, keys: LoneKeys) -> Result<Lines<'_>, PolicyError> {
    let mut lines = Lines::default();
    lines.read(text, n, keys)?;
    Ok(lines)
}

/// The `kind` of a one-line batch.
fn kind(text: &str, keys: LoneKeys) -> Option<String> {
    let lines = read(text, 1, keys).expect("reads");
    let (_, line) = lines.iter().next().expect("one line");
    line.text(Field::Kind).map(|k| k.expect("a string").to_string())
}

#[test]
fn a_field_is_found_by_its_name_escaped_or_not() {
    let text = r#"{"\u006bind":"tool_call","se\u0073sion":"s\"q\n","tool":"\u0065xec","args":{"b":1,"a":[1,2]}}"#;
    let lines = read(text, 1, LoneKeys::Merge).expect("reads");
    let (n, line) = lines.iter().next().expect("one line");
    assert_eq!(n, 1);
    assert_eq!(line.text(Field::Kind), Some(Ok("tool_call")));
    assert_eq!(line.text(Field::Session), Some(Ok("s\"q\n")));
    assert_eq!(line.text(Field::Tool), Some(Ok("exec")));
    assert_eq!(line.value(Field::Args), Some(&json::parse(r#"{"a":[1,2],"b":1}"#).expect("JSON")));
    assert_eq!(line.text(Field::Args), Some(Err(&json::parse(r#"{"a":[1,2],"b":1}"#).expect("JSON"))));
    assert_eq!(line.value(Field::Run), None);
}

#[test]
fn the_later_of_duplicate_fields_wins() {
    assert_eq!(kind(r#"{"kind":"bot_message","kind":"tool_call"}"#, LoneKeys::Merge).as_deref(), Some("tool_call"));
    let lines = read(r#"{"ts_ms":5,"ts_ms":7.5}"#, 1, LoneKeys::Merge).expect("reads");
    assert_eq!(lines.iter().next().expect("one line").1.value(Field::TsMs), Some(&Json::Num(7.5)));
}

#[test]
fn keys_with_lone_surrogates_follow_the_profiles_key_identity() {
    // Merge: keys that differ only in lone surrogates are one key, the later wins. Distinct:
    // they are different keys, and a lookup prefers the one without lone surrogates.
    let cases = [
        (r#"{"kind\ud800":"lone","kind":"plain"}"#, "plain", "plain"),
        (r#"{"kind":"plain","kind\ud800":"lone"}"#, "lone", "plain"),
        (r#"{"kind\udc00":"one","kind\ud800":"two"}"#, "two", "two"),
        (r#"{"kind\ud800":"only"}"#, "only", "only"),
    ];
    for (text, merged, distinct) in cases {
        assert_eq!(kind(text, LoneKeys::Merge).as_deref(), Some(merged), "{text}");
        assert_eq!(kind(text, LoneKeys::Distinct).as_deref(), Some(distinct), "{text}");
    }
}

#[test]
fn a_line_that_is_not_an_object_or_not_json_names_the_line() {
    let reason = |text: &str| {
        let e = read(text, 7, LoneKeys::Merge).expect_err("refused");
        assert_eq!(e.path, "line 7");
        e.reason
    };
    assert_eq!(reason("[1,2]"), "an event must be a JSON object");
    assert_eq!(reason("\"kind\""), "an event must be a JSON object");
    assert!(reason(r#"{"kind":"tool_call""#).starts_with("not valid JSON: "));
    // Members of other names are read too, so a broken one is an error.
    assert!(reason(r#"{"kind":"tool_call","other":[1,}"#).starts_with("not valid JSON: "));
    assert!(reason(r#"{"kind":"tool_call"} x"#).starts_with("not valid JSON: unexpected text after"));
}
