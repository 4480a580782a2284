//! The host's typed errors.
//!
//! Why three kinds: an operator must be able to tell apart "the policy file is broken" (fix the
//! deployment), "the input or config is wrong" (fix the input; the guest says where) and "the
//! policy crashed" (file a bug). Each message is one line, so a CLI can print it as is.

use std::fmt;
use std::path::PathBuf;

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
    /// An expected failure reported by the guest (`policy-error`): bad config, malformed input or
    /// an unreadable snapshot. `path` is where (`tools.loopDetection.historySize`, `line 3: args`).
    Policy {
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
    /// Wraps a wasmtime error from a call into the guest as a one-line [`Error::Trap`].
    pub(crate) fn trap(err: wasmtime::Error) -> Self {
        let message = match err.downcast_ref::<wasmtime::Trap>() {
            Some(trap) => trap.to_string(),
            None => first_line(&format!("{err:#}")),
        };
        Error::Trap { message }
    }

    /// A load error for `path` from any displayable cause, kept to one line.
    pub(crate) fn load(path: impl Into<PathBuf>, cause: impl fmt::Display) -> Self {
        Error::Load { path: path.into(), reason: first_line(&format!("{cause:#}")) }
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim_end().to_string()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Load { path, reason } => write!(f, "cannot load policy {}: {reason}", path.display()),
            Error::Incompatible { path, found, expected } => write!(
                f,
                "policy {} implements interface {found}, this host needs a version compatible with {expected}; \
                 use a policy built for loopguard:policy@{expected}",
                path.display()
            ),
            Error::Policy { path, reason } => write!(f, "{path}: {reason}"),
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
