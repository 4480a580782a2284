//! Arbitrary bytes as a config document: `Config::parse` must return Ok or Err, never panic,
//! overflow the stack or run away with memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loopguard_policy::config::Config;

fuzz_target!(|data: &[u8]| {
    // Gateways hand the policy text; exercise both exact UTF-8 and lossy decoding so that
    // invalid bytes still reach the parser as replacement characters.
    match std::str::from_utf8(data) {
        Ok(text) => {
            let _ = Config::parse(text);
        }
        Err(_) => {
            let _ = Config::parse(&String::from_utf8_lossy(data));
        }
    }
});
