//! The one error type of config validation.
//!
//! Every config error names the path of the offending key in the operator's document, so that a
//! gateway can print one line that says exactly what to change.

use std::fmt;

/// A config document that cannot be used, with the path of the offending key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The dotted path of the key, e.g. `tools.loopDetection.historySize` (or `config` for the
    /// document as a whole).
    pub path: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

impl ConfigError {
    /// An error at `path` with `reason`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { path: path.into(), reason: reason.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// Describes a JSON value's type the way an operator reads it in an error message.
pub fn type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
