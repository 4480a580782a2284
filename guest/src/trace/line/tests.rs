use super::*;

/// A field's value as a tree, whichever way the line kept it.
fn get<'a>(line: Line<'_, 'a>, field: Field) -> Option<Json<'a>> {
    Some(match line.slot(field)? {
        TextOrJson::Text(s) => Json::Str((*s).into()),
        TextOrJson::Json(v) => v.clone(),
    })
}

/// A batch of one line.
fn read(text: &str, n: u32, keys: LoneKeys) -> Result<Lines<'_>, PolicyError> {
    let mut lines = Lines::default();
    lines.read(text, n, keys)?;
    Ok(lines)
}

/// What the line's fields were before this reader: the line parsed into an object and each
/// field looked up by `Json::get`.
fn by_object<'a>(text: &'a str, keys: LoneKeys) -> Vec<(Field, Json<'a>)> {
    let object = json::parse_with(text, keys).expect("valid JSON");
    Field::ALL.into_iter().filter_map(|f| object.get(f.name()).map(|v| (f, v.clone()))).collect()
}

#[test]
fn args_text_is_the_text_the_args_value_was_read_from() {
    let cases = [
        (r#"{"kind":"tool_call","args": { "b" : 1 } ,"tool":"t"}"#, Some(r#"{ "b" : 1 }"#)),
        (r#"{"args":[1],"args":"later","kind":"tool_call"}"#, Some(r#""later""#)),
        (r#"{"kind":"compaction","session":"s"}"#, None),
    ];
    for (text, want) in cases {
        let lines = read(text, 1, LoneKeys::Merge).expect("reads");
        let (_, line) = lines.iter().next().expect("one line");
        assert_eq!(line.args_text(), want, "{text}");
        if let Some(args) = want {
            assert_eq!(line.value(Field::Args), Some(&json::parse(args).expect("JSON")), "{text}");
        }
    }
    // A line read as a whole object (lone surrogates in keys, distinct): no text to key by.
    let text = r#"{"kind\ud800":"x","args":{"a":1}}"#;
    let lines = read(text, 1, LoneKeys::Distinct).expect("reads");
    assert_eq!(lines.iter().next().expect("one line").1.args_text(), None);
}

#[test]
fn fields_are_what_an_object_lookup_gives() {
    let lines = [
        r#"{"kind":"tool_call","session":"s","tool":"exec","args":{"b":1,"a":[1,2]}}"#,
        r#"{"kind":"bot_message","kind":"tool_call","session":"a","session":"b"}"#,
        r#"{"other":{"deep":[1,{"x":null}]},"ts_ms":5,"ts_ms":7.5,"text":"\u00e9\n"}"#,
        r#"{"kind\ud800":"lone","kind":"plain"}"#,
        r#"{"kind":"plain","kind\ud800":"lone"}"#,
        r#"{"kind\udc00":"one","kind\ud800":"two"}"#,
        r#"{"kind\ud800":"only"}"#,
        r#"{"\u006bind":"tool_call","se\u0073sion":"s\"q\n","tool":"\u0065xec","run":"r"}"#,
        r#"{"kind":"bot_message","channel":"a\\b","account":"\u00e9","sender":"x\ty","ts_ms":1}"#,
        r#"{}"#,
    ];
    for text in lines {
        for keys in [LoneKeys::Merge, LoneKeys::Distinct] {
            let lines = read(text, 1, keys).expect("reads");
            let (_, line) = lines.iter().next().expect("one line");
            for (field, value) in by_object(text, keys) {
                assert_eq!(get(line, field), Some(value), "{text} {keys:?} {field:?}");
            }
            let count = Field::ALL.into_iter().filter(|f| line.slot(*f).is_some()).count();
            assert_eq!(count, by_object(text, keys).len(), "{text} {keys:?}");
        }
    }
}

#[test]
fn all_lists_every_field_at_its_own_index() {
    // `Line::at` is indexed by `field as usize` and sized by `Field::ALL`.
    for (i, field) in Field::ALL.into_iter().enumerate() {
        assert_eq!(field as usize, i, "{field:?}");
    }
}

#[test]
fn every_name_and_only_those_is_a_field() {
    for field in Field::ALL {
        assert_eq!(Field::from_name(field.name()), Some(field));
        // Same length and ends, another middle: not the field.
        let name = field.name();
        let near = format!("{}{}{}", &name[..1], "?".repeat(name.len() - 2), &name[name.len() - 1..]);
        assert_eq!(Field::from_name(&near), None, "{near}");
    }
    for other in ["", "k", "KIND", "kine", "tooth", "rooms", "result "] {
        assert_eq!(Field::from_name(other), None, "{other}");
    }
}

#[test]
fn a_line_holds_one_value_per_field_however_often_it_repeats() {
    // The slot of a field is a byte: 300 values of one field must not pass it.
    let mut text = String::from("{");
    for i in 0..300 {
        text.push_str(&format!("\"kind\":\"k{i}\",\"ts_ms\":{i},\"args\":[{i}],"));
    }
    text.push_str("\"session\":\"s\"}");
    let lines = read(&text, 1, LoneKeys::Merge).expect("reads");
    let (_, line) = lines.iter().next().expect("one line");
    assert_eq!(line.text(Field::Kind), Some(Ok("k299")));
    assert_eq!(line.value(Field::TsMs), Some(&Json::Num(299.0)));
    assert_eq!(line.value(Field::Args), Some(&json::parse("[299]").expect("JSON")));
    assert_eq!(line.args_text(), Some("[299]"));
    assert_eq!(line.text(Field::Session), Some(Ok("s")));
    assert_eq!(lines.values.len(), 4);
}

#[test]
fn the_later_of_duplicate_fields_wins() {
    let lines = read(r#"{"kind":"bot_message","kind":"tool_call"}"#, 1, LoneKeys::Merge).expect("reads");
    let (_, line) = lines.iter().next().expect("one line");
    assert_eq!(line.text(Field::Kind), Some(Ok("tool_call")));
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
    // Members of other names are still read, so a broken one is an error too.
    assert!(reason(r#"{"kind":"tool_call","other":[1,}"#).starts_with("not valid JSON: "));
    assert!(reason(r#"{"kind":"tool_call"} x"#).starts_with("not valid JSON: unexpected text after"));
}
