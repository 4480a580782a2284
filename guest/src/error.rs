//! The one error type of the policy: what crosses the WIT boundary as `policy-error`.
//!
//! A gateway must tell "the operator's config is wrong" from "this call's arguments are
//! malformed" without matching message text, so every error carries a [`ErrorKind`] beside the
//! path of the offending input and a reason an operator can act on.

use std::fmt;

use crate::config::ConfigError;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The config document is invalid; the path is a config path.
    Config,
    /// An input is malformed (bad JSON, a missing or mistyped field, a negative timestamp).
    Input,
    /// A snapshot cannot be imported.
    Snapshot,
    /// An input is larger than the policy accepts.
    TooLarge,
}

impl ErrorKind {
    /// The name used in the WIT enum and by the wrappers (`config`, `input`, `snapshot`,
    /// `too-large`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::Input => "input",
            ErrorKind::Snapshot => "snapshot",
            ErrorKind::TooLarge => "too-large",
        }
    }
}

/// An expected failure: bad config, malformed input or an unreadable snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Where: a config path, `line N`, `line N: field`, or an argument such as `call.args-json`.
    pub path: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

impl PolicyError {
    /// An error of `kind` at `path`.
    pub fn new(kind: ErrorKind, path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { kind, path: path.into(), reason: reason.into() }
    }

    /// A malformed input at `path`.
    pub fn input(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::Input, path, reason)
    }
}

impl From<ConfigError> for PolicyError {
    fn from(e: ConfigError) -> Self {
        Self { kind: ErrorKind::Config, path: e.path, reason: e.reason }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

impl std::error::Error for PolicyError {}
