//! The host's typed errors.
//!
//! Why three kinds: an operator must be able to tell apart "the policy file is broken" (fix the
//! deployment), "the input or config is wrong" (fix the input; the guest says where) and "the
//! policy crashed" (file a bug). Each message is one line, so a CLI can print it as is.

use std::fmt;
use std::path::PathBuf;

pub use crate::bindings::loopguard::policy::types::ErrorKind;

/// Everything the host library can fail with.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The policy could not be read, compiled or linked (not a component, wrong world, …).
    Load {
        /// The file the policy came from (`<embedded>` for the built-in one).
        path: PathBuf,
        /// Why it failed, in one line.
        reason: String,
    },
    /// The policy implements an interface version this host cannot drive.
    Incompatible {
        /// The file the policy came from.
        path: PathBuf,
        /// The `interface-version` the policy reported.
        found: String,
        /// The interface version this host was built against.
        expected: &'static str,
    },
    /// The policy's bytes do not have the pinned blake3 digest (checked before compiling).
    DigestMismatch {
        /// The file the policy came from.
        path: PathBuf,
        /// The digest that was pinned (`--expect-digest`, `LoadOptions::expect_digest`).
        expected: String,
        /// The digest of the bytes that were read.
        found: String,
    },
    /// A call into the guest ran past its deadline and was interrupted. The instance is unusable
    /// afterwards; a [`crate::SwappableGateway`] replaces it by itself.
    Timeout {
        /// What was called (`check-tool-call`, `apply-events`, …).
        call: &'static str,
        /// The deadline it ran past.
        deadline: std::time::Duration,
    },
    /// The guest needed more linear memory than the cap allows (it aborted or trapped when an
    /// allocation failed). The instance is unusable afterwards.
    OutOfMemory {
        /// What was called.
        call: &'static str,
        /// The cap, in bytes (`Limits::memory_bytes`).
        limit_bytes: usize,
    },
    /// An expected failure reported by the guest (`policy-error`): bad config, malformed input or
    /// an unreadable snapshot. `path` is where (`tools.loopDetection.historySize`, `line 3: args`).
    Policy {
        /// What kind of failure (`config`, `input`, `snapshot`, `too-large`).
        kind: ErrorKind,
        /// Where the problem is, as the guest names it.
        path: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// Reading the input or writing the output failed (outside the policy).
    Io {
        /// What was being read or written (`the trace`, `stdout`).
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The guest trapped (a bug in the policy, or it ran out of memory or stack). The instance
    /// is unusable afterwards; create a new one.
    Trap {
        /// The trap, in one line.
        message: String,
    },
}

impl Error {
    /// An error about bad input as the policy names them (`kind`, the `path` of the input, the
    /// `reason`), for readers that check input before the policy sees it (the CLI's trace reader).
    pub fn invalid(kind: ErrorKind, path: impl Into<String>, reason: impl Into<String>) -> Error {
        Error::Policy { kind, path: path.into(), reason: reason.into() }
    }

    /// A failed read or write of `what` (`reading the trace`, `writing the decisions`).
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io { what: what.into(), source }
    }

    /// The error the policy returned for bad input (config, events, snapshot).
    pub(crate) fn policy(e: crate::bindings::loopguard::policy::types::PolicyError) -> Error {
        Error::Policy { kind: e.kind, path: e.path, reason: e.reason }
    }

    /// True for failures that leave the instance unusable (trap, timeout, out of memory): the
    /// caller must drop it and make a new one.
    pub fn breaks_instance(&self) -> bool {
        matches!(self, Error::Trap { .. } | Error::Timeout { .. } | Error::OutOfMemory { .. })
    }

    /// The name of an error kind as the WIT spells it (`config`, `input`, `snapshot`,
    /// `too-large`), for wrappers and logs.
    pub fn kind_name(kind: ErrorKind) -> &'static str {
        match kind {
            ErrorKind::Config => "config",
            ErrorKind::Input => "input",
            ErrorKind::Snapshot => "snapshot",
            ErrorKind::TooLarge => "too-large",
        }
    }

    /// Wraps a wasmtime error from a call into the guest as a one-line [`Error::Trap`]: the trap,
    /// or the root cause (a host function's error, such as an import the host does not give).
    pub(crate) fn trap(err: wasmtime::Error) -> Self {
        let message = match err.downcast_ref::<wasmtime::Trap>() {
            Some(trap) => trap.to_string(),
            None => first_line(&err.root_cause().to_string()),
        };
        Error::Trap { message }
    }

    /// A load error for `path` from any displayable cause, kept to one line.
    pub fn load(path: impl Into<PathBuf>, cause: impl fmt::Display) -> Self {
        Error::Load { path: path.into(), reason: first_line(&format!("{cause:#}")) }
    }
}

/// `0.3.x` for 0.3.0, `1.x` for 1.3.0: the versions a host accepts.
fn compatible_range(version: &str) -> String {
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some("0"), Some(minor)) => format!("0.{minor}.x"),
        (Some(major), _) => format!("{major}.x"),
        _ => version.to_string(),
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim_end().to_string()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load { path, reason } => write!(f, "cannot load policy {}: {reason}", path.display()),
            Error::Incompatible { path, found, expected } => {
                let range = compatible_range(expected);
                write!(
                    f,
                    "policy interface {found} is incompatible with this host ({range}); \
                     {} must be built for loopguard:policy@{range}",
                    path.display()
                )
            }
            Error::DigestMismatch { path, expected, found } => write!(
                f,
                "policy {} has digest {found}, but {expected} was pinned; refusing to load it \
                 (deploy the pinned file, or pin the new digest if the change is intended)",
                path.display()
            ),
            Error::Timeout { call, deadline } => write!(
                f,
                "the policy did not answer {call} within {} ms and was stopped (raise the deadline in Limits \
                 if the input is legitimately large)",
                deadline.as_millis()
            ),
            Error::OutOfMemory { call, limit_bytes } => {
                write!(f, "the policy ran out of memory in {call} (cap {} MiB) and was stopped", limit_bytes >> 20)
            }
            Error::Policy { path, reason, .. } => write!(f, "{path}: {reason}"),
            Error::Io { what, source } => write!(f, "{what}: {source}"),
            Error::Trap { message } => write!(f, "the policy trapped: {message}"),
        }
    }
}

/// The one-line `Display` already includes every cause, so no `source()` is reported (a chain
/// printer would repeat it).
impl std::error::Error for Error {}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
