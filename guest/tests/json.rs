//! The JSON reader sees values as JavaScript's `JSON.parse` does.

use loopguard_policy::json::{parse, Json, LoneSurrogate, MAX_DEPTH};

#[test]
fn numbers_are_doubles_as_in_javascript() {
    for (text, want) in [("1.0", 1.0), ("-0", 0.0), ("1e400", f64::INFINITY), ("9007199254740993", 9007199254740992.0)]
    {
        assert_eq!(parse(text), Ok(Json::Num(want)), "{text}");
    }
    for bad in ["01", "1.", ".5", "1e", "+1", "-", "0x10"] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn later_duplicate_keys_win_and_keys_sort_by_utf16() {
    let v = parse(r#"{"b":1,"a":2,"b":3,"\uffff":4,"😀":5}"#).unwrap();
    let Json::Obj(members) = &v else { panic!("an object") };
    let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["a", "b", "😀", "\u{ffff}"]);
    assert_eq!(v.get("b"), Some(&Json::Num(3.0)));
}

#[test]
fn lone_surrogates_are_kept_beside_the_text() {
    let Json::Str(s) = parse(r#""a\ud800b\udc00\ud83d\ude00""#).unwrap() else { panic!("a string") };
    assert_eq!(s.as_str(), "ab😀");
    assert_eq!(s.lone_surrogates(), [LoneSurrogate { at: 1, unit: 0xD800 }, LoneSurrogate { at: 2, unit: 0xDC00 }]);
}

#[test]
fn errors_name_the_byte() {
    assert_eq!(parse("[1,]").unwrap_err().to_string(), "expected a JSON value at byte 3");
    assert_eq!(parse("\"a\u{1}\"").unwrap_err().offset, 2);
    let deep = "[".repeat(MAX_DEPTH + 1);
    assert_eq!(parse(&deep).unwrap_err().to_string(), "nested deeper than 128 levels at byte 128");
    assert!(parse(&format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH))).is_ok());
}
