// Reading session transcripts from an agent's SQLite database (read-only, zstd-aware) and picking
// messages, tool calls, tool results, blocks and compactions out of them.
import path from "node:path";
import zlib from "node:zlib";
import { DatabaseSync } from "node:sqlite";

// ---------------------------------------------------------------------------------------------
// transcripts (SQLite)

export function agentDbPath(stateDir, agentId = "main") {
  return path.join(stateDir, "agents", agentId, "agent", "openclaw-agent.sqlite");
}

export function fullSessionKey(sessionKey, agentId = "main") {
  return sessionKey.startsWith("agent:") ? sessionKey : `agent:${agentId}:${sessionKey}`;
}

export function decodeEventRow(row) {
  if (row.event_json != null) return JSON.parse(row.event_json);
  if (row.event_zstd != null) return JSON.parse(zlib.zstdDecompressSync(Buffer.from(row.event_zstd)).toString("utf8"));
  return null;
}

/** Open an agent database read-only (works while the gateway runs). Caller closes. */
export function openAgentDb(dbFile) {
  return new DatabaseSync(dbFile, { readOnly: true });
}

/** session key -> session id via session_nodes (current_session_id) */
export function sessionIdFor(db, sessionKey) {
  const row = db.prepare("SELECT current_session_id AS id FROM session_nodes WHERE session_key = ?").get(sessionKey);
  return row?.id ?? null;
}

/**
 * Read a session's transcript events in seq order: [{seq, compressed, event}].
 * Accepts a file path or a stateDir (+agentId). sessionKey may be short ("k1") or full.
 */
export function readTranscript(stateDirOrDb, agentId, sessionKey, { withRows = false } = {}) {
  const dbFile = stateDirOrDb.endsWith(".sqlite") ? stateDirOrDb : agentDbPath(stateDirOrDb, agentId);
  const db = openAgentDb(dbFile);
  try {
    const key = fullSessionKey(sessionKey, agentId);
    const sid = sessionIdFor(db, key);
    if (!sid) return [];
    const rows = db
      .prepare("SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq")
      .all(sid);
    return rows.map((r) => {
      const event = decodeEventRow(r);
      return withRows ? { seq: r.seq, compressed: r.event_json == null, event } : event;
    });
  } finally {
    db.close();
  }
}

/** message events with a role */
export const messagesOf = (events, role) =>
  events.filter((e) => e?.type === "message" && (!role || e.message?.role === role)).map((e) => e.message);

/** [{id, name, arguments, runId}] in order, from assistant toolCall parts */
export function toolCallsOf(events) {
  const out = [];
  for (const m of messagesOf(events, "assistant")) {
    for (const part of Array.isArray(m.content) ? m.content : []) {
      if (part?.type === "toolCall") out.push({ id: part.id, name: part.name, arguments: part.arguments, runId: m.__openclaw?.runId });
    }
  }
  return out;
}

/** [{toolCallId, toolName, text, texts, details, isError, runId}] in order */
export function toolResultsOf(events) {
  return messagesOf(events, "toolResult").map((m) => {
    const texts = (Array.isArray(m.content) ? m.content : []).filter((p) => p?.type === "text").map((p) => p.text);
    return { toolCallId: m.toolCallId, toolName: m.toolName, texts, text: texts.join("\n"), details: m.details ?? {}, isError: m.isError === true, runId: m.__openclaw?.runId };
  });
}

export const blockedResults = (events) => toolResultsOf(events).filter((r) => r.details?.status === "blocked");
export const compactionsOf = (events) => events.filter((e) => e?.type === "compaction");
