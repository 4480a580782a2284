//! What a discovered session is: who (agent, key, id) and where (file, format).

use std::path::PathBuf;

/// The kind of file a session was found in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceFormat {
    /// An OpenClaw 2026.x agent store (`agents/<id>/agent/openclaw-agent.sqlite`), table
    /// `transcript_events`.
    AgentStore,
    /// A pi-format JSONL transcript, as older releases wrote under `agents/<id>/sessions/`.
    Jsonl,
    /// A trajectory export directory (`openclaw sessions export-trajectory`); `file` is its
    /// `events.jsonl`, or its `session-branch.json` when there is no `events.jsonl`.
    Trajectory,
    /// A cold-archived transcript of an agent store (its retention moved the rows out of
    /// `transcript_events`): `file` is the archive (`sessions/cold/<sha256>.jsonl.zst`), or the
    /// store itself when the archive is embedded in `session_transcript_cold_archives`.
    ColdArchive,
    /// A deleted or reset transcript kept in the store's `session_transcript_archives` (pi JSONL,
    /// zstd or plain); `file` is the store. OpenClaw publishes the same bytes as
    /// `sessions/<id>.jsonl.{deleted,reset}.<ts>.<generation>.zst`.
    StoreArchive,
    /// A Claude Code session (`~/.claude/projects/<project>/<sessionId>.jsonl`).
    ClaudeCode,
    /// A Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
    /// A Gemini CLI chat (`~/.gemini/tmp/<project>/chats/session-*.jsonl`).
    GeminiCli,
    /// An OpenCode session in its SQLite database (`~/.local/share/opencode/opencode.db`).
    OpenCode,
    /// A GitHub Copilot CLI session log (`~/.copilot/session-state/<sessionId>/events.jsonl`).
    CopilotCli,
    /// A Cline task (`~/.cline/data/sessions/<sessionId>/<sessionId>.messages.json`).
    Cline,
    /// A Qwen Code chat (`~/.qwen/projects/<project>/chats/<sessionId>.jsonl`).
    QwenCode,
}

impl SourceFormat {
    /// A short name for reports: `sqlite`, `jsonl`, `trajectory`, `cold`, `archive`,
    /// `claude-code`, `codex`, `gemini`, `opencode`, `copilot`, `cline` or `qwen-code`.
    pub fn name(&self) -> &'static str {
        match self {
            SourceFormat::AgentStore => "sqlite",
            SourceFormat::Jsonl => "jsonl",
            SourceFormat::Trajectory => "trajectory",
            SourceFormat::ColdArchive => "cold",
            SourceFormat::StoreArchive => "archive",
            SourceFormat::ClaudeCode => "claude-code",
            SourceFormat::Codex => "codex",
            SourceFormat::GeminiCli => "gemini",
            SourceFormat::OpenCode => "opencode",
            SourceFormat::CopilotCli => "copilot",
            SourceFormat::Cline => "cline",
            SourceFormat::QwenCode => "qwen-code",
        }
    }
}

/// Where a session's key came from (the key is what the guard keys its history by, so a report
/// says how sure it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeySource {
    /// `session_windows.session_key` of the transcript's session id.
    SessionWindows,
    /// `session_nodes.session_key` whose `current_session_id` is the transcript's.
    SessionNodes,
    /// A legacy `sessions.json` beside the JSONL file.
    SessionsJson,
    /// `session_transcript_archives.session_key` of the agent store beside a deleted or reset
    /// transcript archive.
    TranscriptArchives,
    /// The trajectory export's `manifest.json` (`sessionKey`).
    Manifest,
    /// Nothing mapped the session id to a key: the key is the session id itself (for the coding
    /// CLIs, the CLI's own session id, which their hooks get as `session_id`).
    SessionId,
}

/// One session (one transcript, i.e. one session id) found by discovery.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionInfo {
    /// The file that holds it (for a trajectory export: its `session-branch.json`).
    pub file: PathBuf,
    /// The file's format.
    pub format: SourceFormat,
    /// The agent id (from the store's `schema_meta`, its path, or the session key), if known.
    pub agent_id: Option<String>,
    /// The session key (`agent:<agentId>:<rest>` in 2026.x), the `session` of the trace events.
    pub session_key: String,
    /// Where the key came from.
    pub key_source: KeySource,
    /// The session id (the transcript's id; a key gets a new one on `/new` or `/reset`).
    pub session_id: String,
}

/// Reads the agent id out of a session key of the form `agent:<agentId>:<rest>`.
pub(crate) fn agent_from_key(key: &str) -> Option<String> {
    let rest = key.strip_prefix("agent:")?;
    let (agent, tail) = rest.split_once(':')?;
    (!agent.is_empty() && !tail.is_empty()).then(|| agent.to_string())
}
