//! Arbitrary bytes as a JSON text: `json::parse`, then the canonical serializer and the digests.
//! Property: for a value without non-finite numbers, the canonical text parses back to a value
//! whose canonical text is the same (canonicalization is a fixed point), and so are the digests.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_policy::digest::{args_digest, canonical, tag, value_digest};
use loopguard_policy::json::{self, Json};

fn all_finite(v: &Json) -> bool {
    match v {
        Json::Num(n) => n.is_finite(),
        Json::Arr(items) => items.iter().all(all_finite),
        Json::Obj(members) => members.iter().all(|(_, v)| all_finite(v)),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(v) = json::parse(text) else { return };
    let c = canonical(&v);
    let d = value_digest(tag::RESULT, &v);
    let a = args_digest("exec", &v);
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
