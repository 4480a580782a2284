// The loopguard trace format (docs/spec/trace-format.md): reading event lines and writing decision lines.

export class TraceError extends Error {
  constructor(line, message) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

const STR = "string";
const INT = "integer";
const ANY = "any";
const REPLIES = "replies";

// kind -> [required fields, optional fields]
export const EVENT_FIELDS = {
  tool_call: [
    { session: STR, tool: STR, args: ANY },
    { run: STR, agent: STR, call_id: STR, ts_ms: INT },
  ],
  tool_result: [
    { session: STR, tool: STR, args: ANY },
    { run: STR, agent: STR, call_id: STR, ts_ms: INT },
  ],
  compaction: [{ session: STR }, { run: STR, agent: STR }],
  bot_message: [
    { channel: STR, account: STR, conversation: STR, sender: STR, receiver: STR, ts_ms: INT },
    { room: STR, event_id: STR },
  ],
  group_message: [
    { channel: STR, account: STR, peer: STR, conversation: STR, root: STR, text: STR },
    { thread: STR },
  ],
  group_replies: [{ channel: STR, account: STR, conversation: STR, root: STR, replies: REPLIES }, { thread: STR }],
  group_cancel: [{ channel: STR, account: STR, conversation: STR, root: STR }, { thread: STR }],
};

function typeOk(type, v) {
  if (type === ANY) return true;
  if (type === STR) return typeof v === "string";
  if (type === INT) return typeof v === "number" && Number.isInteger(v);
  return false;
}

function checkReplies(lineNo, v) {
  if (!Array.isArray(v)) throw new TraceError(lineNo, "field `replies` must be a list");
  v.forEach((r, i) => {
    if (r === null || typeof r !== "object" || Array.isArray(r)) throw new TraceError(lineNo, `field \`replies[${i}]\` must be an object`);
    if (typeof r.agent !== "string") throw new TraceError(lineNo, `field \`replies[${i}].agent\` must be a string`);
    if (!("reply" in r)) throw new TraceError(lineNo, `field \`replies[${i}].reply\` is missing`);
    if (r.reply !== null && typeof r.reply !== "string") throw new TraceError(lineNo, `field \`replies[${i}].reply\` must be a string or null`);
  });
}

/** Parse and validate one non-blank line; returns the event object. */
export function parseEventLine(raw, lineNo) {
  let ev;
  try {
    ev = JSON.parse(raw);
  } catch (e) {
    throw new TraceError(lineNo, `not valid JSON (${e.message})`);
  }
  if (ev === null || typeof ev !== "object" || Array.isArray(ev)) throw new TraceError(lineNo, "not a JSON object");
  if (!("kind" in ev)) throw new TraceError(lineNo, "missing field `kind`");
  if (typeof ev.kind !== "string") throw new TraceError(lineNo, "field `kind` must be a string");
  const spec = EVENT_FIELDS[ev.kind];
  if (!spec) throw new TraceError(lineNo, `unknown kind ${JSON.stringify(ev.kind)}`);
  const [req, opt] = spec;
  for (const [k, t] of Object.entries(req)) {
    if (!(k in ev)) throw new TraceError(lineNo, `missing field \`${k}\``);
    if (t === REPLIES) checkReplies(lineNo, ev[k]);
    else if (!typeOk(t, ev[k])) throw new TraceError(lineNo, `field \`${k}\` must be ${t === INT ? "an integer" : "a string"}`);
  }
  for (const [k, t] of Object.entries(opt)) {
    if (k in ev && !typeOk(t, ev[k])) throw new TraceError(lineNo, `field \`${k}\` must be ${t === INT ? "an integer" : "a string"}`);
  }
  if (ev.kind === "tool_result") {
    const hasR = "result" in ev;
    const hasE = "error" in ev;
    if (hasR === hasE) throw new TraceError(lineNo, "tool_result needs exactly one of `result` or `error`");
  }
  return ev;
}

/** Split a whole trace text into [lineNo, rawLine] for non-blank lines. */
export function* traceLines(text) {
  let lineNo = 0;
  let start = 0;
  const n = text.length;
  while (start <= n) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = n;
    lineNo += 1;
    let line = text.slice(start, end);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() !== "") yield [lineNo, line];
    if (end >= n) break;
    start = end + 1;
  }
}

const KEY_ORDER = [
  "line",
  "kind",
  "action",
  "detector",
  "count",
  "message",
  "notify",
  "remaining",
  "cooldown_until_ms",
  "budget",
  "round",
  "participants",
  "reason",
];

/** Compact JSON with the key order of trace-format.md "Decisions". */
export function formatDecision(d) {
  const o = {};
  for (const k of KEY_ORDER) if (d[k] !== undefined) o[k] = d[k];
  for (const k of Object.keys(d)) if (!(k in o) && d[k] !== undefined) o[k] = d[k];
  return JSON.stringify(o);
}
