//! Reading the typed calls' text inputs: the same rules for every host.
//!
//! A typed call carries a tool call's arguments and outcome as JSON text. The limits and the
//! error wording for that text live here, in the core, so that the WIT glue only moves values:
//! a value over [`MAX_VALUE_BYTES`] is a `too-large` error, text that is not JSON an `input`
//! error, both naming the argument (`call.args-json`, `outcome.result`).

use crate::error::{ErrorKind, PolicyError};
use crate::json::{self, Json, LoneKeys};

/// Largest JSON value accepted in one argument, in bytes (a tool result can be a file read; a
/// larger one is refused instead of held in guest memory). Trace lines have the same limit.
pub const MAX_VALUE_BYTES: usize = 8 * 1024 * 1024;

/// Reads the JSON text of the argument named `path`.
pub fn json_value<'a>(text: &'a str, path: &str) -> Result<Json<'a>, PolicyError> {
    json_value_with(text, path, LoneKeys::Merge)
}

/// [`json_value`] with the profile's key identity ([`crate::config::Config::lone_keys`]).
pub fn json_value_with<'a>(text: &'a str, path: &str, keys: LoneKeys) -> Result<Json<'a>, PolicyError> {
    if text.len() > MAX_VALUE_BYTES {
        return Err(PolicyError::new(
            ErrorKind::TooLarge,
            path,
            format!("{} bytes; values larger than {MAX_VALUE_BYTES} bytes are refused", text.len()),
        ));
    }
    json::parse_with(text, keys).map_err(|e| PolicyError::input(path, format!("not valid JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_argument_and_their_kind() {
        let e = json_value("{x", "call.args-json").unwrap_err();
        assert_eq!((e.kind, e.path.as_str()), (ErrorKind::Input, "call.args-json"));
        assert!(e.reason.starts_with("not valid JSON: "), "{e}");
        let big = format!("\"{}\"", "x".repeat(MAX_VALUE_BYTES));
        let e = json_value(&big, "outcome.result").unwrap_err();
        assert_eq!((e.kind, e.path.as_str()), (ErrorKind::TooLarge, "outcome.result"));
        assert_eq!(json_value("[1]", "x").unwrap(), Json::Arr(vec![Json::Num(1.0)]));
    }
}
