//! Arbitrary bytes as a JSON text: `json::parse`, then the canonical serializer and the digests.
//! Property: for a value without non-finite numbers, the canonical text parses back to a value
//! whose canonical text is the same (canonicalization is a fixed point), and so are the digests;
//! every string literal the reader keeps as canonical is exactly what escaping its text gives;
//! and the tree-less writer (`canonical_text`) either gives up or writes exactly the tree's
//! canonical text, finds the same top-level `action`, and never accepts text the reader rejects;
//! and a result hashed straight from its text (`hash_result_text`) either gives up or hashes as
//! the tree path does, for tools with and without outcome shapes of their own.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_policy::canonical_text::CanonicalText;
use loopguard_policy::digest::{
    args_digest, args_digest_canonical, args_prefix, canonical, digest_of, js_trim, tag, value_digest, write_string,
};
use loopguard_policy::json::{self, Json, Text};
use loopguard_policy::tool_loop::outcome::{hash_outcome, hash_result_text, Outcome};

fn all_finite(v: &Json) -> bool {
    match v {
        Json::Num(n) => n.is_finite(),
        Json::Arr(items) => items.iter().all(all_finite),
        Json::Obj(members) => members.iter().all(|(_, v)| all_finite(v)),
        _ => true,
    }
}

fn check_literal(t: &Text) {
    if let Some(body) = t.literal() {
        let trimmed = t.is_js_trimmed();
        let mut escaped = String::new();
        write_string(t, &mut escaped);
        assert_eq!(format!("\"{body}\""), escaped, "a kept literal is not canonical");
        assert_eq!(trimmed, js_trim(t).len() == t.len(), "trim judged from the literal differs: {body:?}");
    }
}

fn check_literals(v: &Json) {
    match v {
        Json::Str(t) => check_literal(t),
        Json::Arr(items) => items.iter().for_each(check_literals),
        Json::Obj(members) => members.iter().for_each(|(k, v)| {
            check_literal(k);
            check_literals(v);
        }),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut writer = CanonicalText::default();
    let fast = writer.write(text).map(|w| (w.canonical.to_vec(), w.action.map(str::to_string)));
    let Ok(v) = json::parse(text) else {
        assert!(fast.is_none(), "the tree-less writer accepted text the reader rejects: {text:?}");
        let result = hash_result_text("read", None, text, &[], &mut writer);
        assert!(result.is_none(), "the result text path accepted text the reader rejects: {text:?}");
        return;
    };
    check_literals(&v);
    for tool in ["read", "exec", "process"] {
        if let Some(h) = hash_result_text(tool, None, text, &[], &mut writer) {
            let tree = hash_outcome(tool, None, Outcome::Result(&v), &[]);
            assert_eq!(Some(h), tree, "{tool} result hashed from its text differs\ninput: {text:?}");
        }
    }
    let c = canonical(&v);
    let d = value_digest(tag::RESULT, &v);
    let a = args_digest("exec", &v);
    if let Some((fast_text, action)) = fast {
        assert_eq!(fast_text, c.as_bytes(), "tree-less canonical text differs\ninput: {text:?}");
        assert_eq!(args_digest_canonical("exec", &fast_text), a, "tree-less args digest differs");
        let mut len = [0u8; 8];
        let w = writer.write_after(&args_prefix("exec", &mut len), text).expect("the same text with a prefix");
        assert_eq!(w.canonical, c.as_bytes(), "the prefix changed the canonical text: {text:?}");
        assert_eq!(digest_of(w.prefixed), a, "one-call args digest differs: {text:?}");
        assert_eq!(action.as_deref(), v.get("action").and_then(Json::as_str), "action differs: {text:?}");
    }
    if !all_finite(&v) {
        return;
    }
    let back = match json::parse(&c) {
        Ok(back) => back,
        Err(e) => panic!("canonical text does not parse: {e}\ninput: {text:?}\ncanonical: {c:?}"),
    };
    let c2 = canonical(&back);
    assert_eq!(c, c2, "canonical text is not a fixed point\ninput: {text:?}");
    assert_eq!(d, value_digest(tag::RESULT, &back), "value digest changed after a round trip");
    assert_eq!(a, args_digest("exec", &back), "args digest changed after a round trip");
});
