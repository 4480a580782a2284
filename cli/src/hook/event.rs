//! What every CLI's hook event means to the guard, and what the guard answers, in words that
//! belong to no CLI. Each protocol file (`claude.rs`, `codex.rs`, `gemini.rs`) reads its CLI's
//! JSON into a [`Hook`] and renders a [`Reply`] in its CLI's answer format; `guard.rs` maps a
//! [`Hook`] onto the policy's calls. Keeping the two vocabularies apart is what keeps the
//! protocol files free of any rule about loops.

use serde_json::Value;

/// One hook event of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Hook {
    /// The CLI's `session_id`: the policy's session key and the state file's key.
    pub session: String,
    /// What happened.
    pub event: Event,
}

/// What happened, as the policy's calls see it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A tool is about to run: `check-tool-call`.
    Check(Call),
    /// A tool ran: `record-tool-outcome`.
    Outcome(Call, Outcome),
    /// The CLI compacted the context and goes on: `compaction-retried`.
    Compaction,
    /// The session is over for good (`/clear`, logout): `end-session`, and its state file goes.
    Forget,
    /// The session starts: load the policy now (compiling it into the cache the first time on a
    /// machine), so that the first tool call does not pay for it. No policy call.
    Warm,
    /// An event the guard has nothing to do with (prompts, a plain exit that may be resumed, …).
    Ignore,
}

/// A tool call as the policy's `tool-call` record wants it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool's name as the CLI reports it (`Bash`, `Read`, `run_shell_command`, …).
    pub tool: String,
    /// The tool's input, as JSON text.
    pub args_json: String,
    /// The CLI's tool-call id (Claude Code, Codex); Gemini CLI gives none.
    pub call_id: Option<String>,
}

impl Call {
    /// Reads the `tool_name`, `tool_input` and `tool_use_id` fields every CLI shares.
    pub fn from_input(input: &Value) -> Result<Call, String> {
        let tool = input.get("tool_name").and_then(Value::as_str).ok_or("the event has no tool_name")?;
        let args = input.get("tool_input").cloned().unwrap_or(Value::Null);
        let call_id = input.get("tool_use_id").and_then(Value::as_str).map(str::to_string);
        Ok(Call { tool: tool.to_string(), args_json: args.to_string(), call_id })
    }

    /// The key that pairs a pending warning with the outcome of the same call: the call id, or
    /// (Gemini CLI, which has none) the tool and its input.
    pub fn key(&self) -> String {
        match &self.call_id {
            Some(id) => format!("id:{id}"),
            None => format!("call:{}:{}", self.tool, self.args_json),
        }
    }
}

/// How a tool call ended, as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The tool returned this result.
    Returned(String),
    /// The tool failed with this error.
    Threw(String),
}

/// What the guard answers, for the protocol file to render.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Nothing to say: the CLI goes on.
    Nothing,
    /// Add this text for the model (a warning, once).
    Context(String),
    /// Do not run the tool; the model gets this text.
    Deny(String),
    /// Do not run the tool and end the session where the CLI can; the model (or the user) gets
    /// this text. A CLI that cannot end a session from a hook renders it as [`Reply::Deny`].
    Stop(String),
    /// The hook failed; the CLI gets the configured fail mode's answer, stderr the reason.
    Failed {
        /// One line for stderr.
        reason: String,
        /// Fail closed: deny the tool call (on events that can deny).
        closed: bool,
    },
}

/// Which hook point an event came from, so that a protocol renders a reply in the form that
/// point accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Before a tool runs (can deny).
    BeforeTool,
    /// After a tool ran (can add context).
    AfterTool,
    /// Anything else.
    Other,
}

/// What a protocol writes back: stdout (one JSON object or nothing) and the exit code.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The JSON answer on stdout.
    pub stdout: Option<Value>,
    /// 0, or 2 for a block the CLI reads from stderr.
    pub exit: u8,
    /// One line for stderr (a failure's reason), if any.
    pub stderr: Option<String>,
}

impl Answer {
    /// A JSON answer, exit 0.
    pub fn json(value: Value) -> Answer {
        Answer { stdout: Some(value), exit: 0, stderr: None }
    }

    /// `{}`, exit 0: the CLI goes on as if there were no hook.
    pub fn empty() -> Answer {
        Answer::json(Value::Object(Default::default()))
    }
}

/// The `session_id` and `hook_event_name` every CLI sends.
pub fn session_and_name(input: &Value) -> Result<(String, &str), String> {
    let name = input.get("hook_event_name").and_then(Value::as_str).ok_or("the event has no hook_event_name")?;
    let session = input.get("session_id").and_then(Value::as_str).filter(|s| !s.is_empty());
    Ok((session.ok_or("the event has no session_id")?.to_string(), name))
}

/// A `SessionEnd`: `/clear` and logout end a session for good; any other end (the process
/// exits) may be resumed, so the session's counts stay until they expire.
pub fn end_event(input: &Value) -> Event {
    match input.get("reason").and_then(Value::as_str) {
        Some("clear" | "logout") => Event::Forget,
        _ => Event::Ignore,
    }
}

/// What the model reads when a failing hook denies a call (fail mode closed).
pub fn fail_closed_text(reason: &str) -> String {
    format!("{reason}; this tool call is blocked because loopguard's fail mode is closed.")
}
