// The per-session facts make-fixtures.mjs puts into expected.json (and its README), read back
// from the fixture's SQLite agent store: summarize(dbFile, sessionKey); plus the two small
// helpers it shapes them with (countBy, pick).
import { DatabaseSync } from "node:sqlite";
import * as h from "./harness.mjs";

export function summarize(dbFile, key) {
  const db = new DatabaseSync(dbFile, { readOnly: true });
  try {
    const sid = h.sessionIdFor(db, key);
    const rows = db.prepare("SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events WHERE session_id = ? ORDER BY seq").all(sid);
    const events = rows.map((r) => ({ seq: r.seq, compressed: r.event_json == null, bytes: r.event_utf8_bytes ?? null, event: h.decodeEventRow(r) }));
    const calls = [];
    for (const { seq, event } of events) {
      if (event?.type !== "message" || event.message?.role !== "assistant") continue;
      for (const part of event.message.content ?? []) {
        if (part?.type === "toolCall") calls.push({ index: calls.length + 1, seq, id: part.id, tool: part.name, arguments: part.arguments, runId: event.message.__openclaw?.runId ?? null });
      }
    }
    const results = [];
    for (const { seq, event } of events) {
      if (event?.type !== "message" || event.message?.role !== "toolResult") continue;
      const m = event.message;
      const call = calls.find((c) => c.id === m.toolCallId);
      const texts = (m.content ?? []).filter((p) => p?.type === "text").map((p) => p.text);
      results.push({
        seq,
        toolCallId: m.toolCallId,
        callIndex: call?.index ?? null,
        tool: m.toolName,
        status: m.details?.status ?? null,
        isError: m.isError === true,
        ...(m.details?.deniedReason ? { deniedReason: m.details.deniedReason } : {}),
        ...(m.details?.intervention
          ? { detector: m.details.intervention.detector, count: m.details.intervention.count, reason: m.details.intervention.reason }
          : {}),
        texts,
      });
    }
    const runtimeCount = db.prepare("SELECT count(*) AS n FROM trajectory_runtime_events WHERE session_id = ?").get(sid).n;
    return {
      sessionKey: key,
      sessionId: sid,
      transcriptRows: rows.length,
      compressedRows: events.filter((e) => e.compressed).length,
      compressedRowSeqs: events.filter((e) => e.compressed).map((e) => e.seq),
      eventTypes: countBy(events.map((e) => e.event?.type + (e.event?.customType ? `:${e.event.customType}` : e.event?.message ? `:${e.event.message.role}` : ""))),
      runtimeEvents: runtimeCount,
      runIds: [...new Set(calls.map((c) => c.runId).filter(Boolean))],
      toolCalls: calls.map(({ index, seq, id, tool, arguments: a, runId }) => ({ index, seq, id, tool, arguments: a, runId })),
      toolResults: results,
      compactions: events.filter((e) => e.event?.type === "compaction").map((e) => ({ seq: e.seq, id: e.event.id, firstKeptEntryId: e.event.firstKeptEntryId, runId: e.event.__openclaw?.runId ?? null })),
      userMessages: events.filter((e) => e.event?.message?.role === "user").map((e) => e.event.message.content),
    };
  } finally {
    db.close();
  }
}

export function countBy(list) {
  const o = {};
  for (const x of list) o[x] = (o[x] ?? 0) + 1;
  return o;
}

export function pick(o, keys) {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}
