//! Arbitrary bytes as a JSON text: `json::parse`, then the canonical writer and the digests.
//!
//! Properties:
//! - nothing panics, whatever the bytes;
//! - for a value without non-finite numbers, the canonical text parses back to a value with the
//!   same canonical text and the same digests (canonicalization is a fixed point);
//! - the one reader agrees with a well-kept one: wherever `serde_json` (with exact float parsing)
//!   accepts the text, our canonical text equals the one written from `serde_json`'s value by a
//!   plain reference writer (keys in UTF-16 order, later duplicates win, numbers as JavaScript
//!   prints them). `serde_json` refuses the two inputs where JavaScript differs (lone surrogate
//!   escapes and numbers beyond the double range), which is why the policy has a reader of its own;
//! - outcome hashing of the value as a result and as an error never panics and is deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_policy::canonical::canonical;
use loopguard_policy::digest::{args_digest, tag, value_digest};
use loopguard_policy::json::{self, Json};
use loopguard_policy::tool_loop::outcome::{hash_outcome, Outcome};

fn all_finite(v: &Json) -> bool {
    match v {
        Json::Num(n) => n.is_finite(),
        Json::Arr(items) => items.iter().all(all_finite),
        Json::Obj(members) => members.iter().all(|(_, v)| all_finite(v)),
        _ => true,
    }
}

/// UTF-16 code unit order, as JavaScript sorts keys.
fn utf16_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The canonical text of a `serde_json` value, written independently of the policy's writer.
fn reference(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let f = n.as_f64().expect("finite: serde_json refuses the rest");
            if f == 0.0 {
                out.push('0');
            } else {
                out.push_str(ryu_js::Buffer::new().format_finite(f));
            }
        }
        Value::String(s) => out.push_str(&serde_json::to_string(s).expect("a string serializes")),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                reference(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| utf16_cmp(a, b));
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).expect("a key serializes"));
                out.push(':');
                reference(&map[k.as_str()], out);
            }
            out.push('}');
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let ours = json::parse(text);
    if let Ok(theirs) = serde_json::from_str::<serde_json::Value>(text) {
        let v = ours.as_ref().unwrap_or_else(|e| panic!("serde_json accepts what the reader rejects ({e}): {text:?}"));
        let mut want = String::new();
        reference(&theirs, &mut want);
        assert_eq!(canonical(v), want, "the readers disagree on {text:?}");
    }
    let Ok(v) = ours else { return };
    let once = canonical(&v);
    if all_finite(&v) {
        let again = json::parse(&once).unwrap_or_else(|e| panic!("canonical text does not parse ({e}): {once:?}"));
        assert_eq!(canonical(&again), once, "canonicalization is not a fixed point");
        assert_eq!(args_digest("t", &again), args_digest("t", &v));
        assert_eq!(value_digest(tag::RESULT, &again), value_digest(tag::RESULT, &v));
    }
    for tool in ["read", "exec", "process", "message", "update_plan", "write"] {
        let action = v.get("action").and_then(Json::as_str);
        let a = hash_outcome(tool, action, Outcome::Result(&v), &[]);
        assert_eq!(a, hash_outcome(tool, action, Outcome::Result(&v), &[]), "hashing is deterministic");
        let _ = hash_outcome(tool, action, Outcome::Error(&v), &[]);
    }
});
