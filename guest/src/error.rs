//! The error that crosses the WIT boundary as `policy-error`.

use std::fmt;

use crate::config::ConfigError;

/// An expected failure: bad config, malformed input or an unreadable snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// Where: a config path, `line N`, `line N: field`, or an input name such as `call.args`.
    pub path: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

impl PolicyError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { path: path.into(), reason: reason.into() }
    }
}

impl From<ConfigError> for PolicyError {
    fn from(e: ConfigError) -> Self {
        Self { path: e.path, reason: e.reason }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

impl std::error::Error for PolicyError {}
