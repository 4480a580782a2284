// The tool-call shapes of gen-trace.mjs: for each "outcome family" (read, exec, process poll,
// message send, unknown tool, ...) the args and result-or-error of one call. They live apart from
// the episodes so that the hashing rules each family exercises can be read in one place.

export const BASE_TS = 1767225600000;

export function textResult(text, details) {
  const r = { content: [{ type: "text", text }] };
  if (details !== undefined) r.details = details;
  return r;
}

function untrusted(rng, body, escapes) {
  const id = rng.hex(16);
  const q = "\\".repeat(escapes) + '"';
  return `<<<EXTERNAL_UNTRUSTED_CONTENT id=${q}${id}${q}>>>\n${body}\n<<<END_EXTERNAL_UNTRUSTED_CONTENT id=${q}${id}${q}>>>`;
}

function volatileTime(rng) {
  const s = rng.int(0, 59).toString().padStart(2, "0");
  return `2026-01-01T10:${rng.int(10, 59)}:${s}.${rng.int(100, 999)}Z`;
}

// An "outcome family": (args, result-or-error) for a call, given whether this call repeats the
// previous outcome (stable) and the call's index in its episode. Every family varies only what
// the hashing rules ignore when `stable` is true.
export const FAMILIES = {
  read: (rng, st) => ({ tool: "read", args: { path: st.path }, result: textResult(st.stable ? st.text : `${st.text} v${st.i}`) }),
  web_search: (rng, st) => ({ tool: "web_search", args: { query: st.query, count: 5 }, result: textResult(st.stable ? st.text : `${st.text} #${st.i}`, { provider: "brave" }) }),
  exec_completed: (rng, st) => {
    const out = st.stable ? st.text : `${st.text} ${st.i}`;
    return {
      tool: "exec",
      args: { command: st.command },
      result: {
        content: [{ type: "text", text: out }],
        details: { status: "completed", exitCode: 0, exitSignal: null, durationMs: rng.int(5, 900), aggregated: rng.chance(0.5) ? `  ${out}\n` : out, noOutputTimedOut: false, cwd: `/w/${rng.word()}`, pid: rng.int(1000, 9999) },
      },
    };
  },
  exec_failed: (rng, st) => {
    const msg = st.stable
      ? `error at ${volatileTime(rng)}: build failed (attempt ${rng.int(1, 9)}, took ${rng.int(1, 900)}ms, pid ${rng.int(100, 999)})`
      : `error: build failed step ${st.i}`;
    return {
      tool: "exec",
      args: { command: st.command },
      result: { content: [{ type: "text", text: msg }], details: { status: "failed", exitCode: st.exitCode ?? 1, durationMs: rng.int(5, 900), aggregated: msg, cwd: "/w" } },
    };
  },
  exec_failed_plain: (rng, st) => {
    const ec = st.exitCode ?? 2;
    return {
      tool: "exec",
      args: { command: st.command },
      result: { content: [{ type: "text", text: st.stable ? `(Command exited with code ${ec})` : `out ${st.i}` }], details: { status: "failed", exitCode: ec, aggregated: rng.chance(0.5) ? "" : "   ", durationMs: rng.int(1, 99) } },
    };
  },
  exec_running: (rng, st) => ({
    tool: "exec",
    args: { command: st.command, background: true },
    result: {
      content: [{ type: "text", text: `started ${rng.hex(6)}` }],
      details: { status: "running", sessionId: rng.hex(8), pid: rng.int(1000, 9999), startedAt: BASE_TS + rng.int(0, 1e6), cwd: "/w", tail: st.stable ? st.text : `${st.text}${st.i}` },
    },
  }),
  exec_approval: (rng, st) => ({
    tool: "exec",
    args: { command: st.command, elevated: true },
    result: {
      content: [{ type: "text", text: `approval ${rng.hex(4)}` }],
      details: { status: rng.chance(0.5) ? "approval-pending" : "approval-pending", reason: st.stable ? "needs approval" : `reason ${st.i}`, host: "gateway", command: st.command, expiresAtMs: BASE_TS + rng.int(0, 1e6), approvalId: rng.hex(8), ...(rng.chance(0.3) ? { warningText: "" } : {}) },
    },
  }),
  process_poll: (rng, st) => ({
    tool: "process",
    args: { action: "poll", sessionId: st.sid },
    result: {
      content: [{ type: "text", text: st.stable ? "still running" : `line ${st.i}` }],
      details: { status: "running", sessionId: st.sid, ...(rng.chance(0.5) ? { aggregated: st.stable ? "x" : `x${st.i}` } : { aggregated: st.stable ? "x" : `y${st.i}` }), polledAt: BASE_TS + rng.int(0, 1e6) },
    },
  }),
  process_log: (rng, st) => ({
    tool: "process",
    args: { action: "log", sessionId: st.sid, offset: 0 },
    result: { content: [{ type: "text", text: st.stable ? "log" : `log ${st.i}` }], details: { status: "running", totalLines: st.stable ? 10 : 10 + st.i, totalChars: 100, truncated: false, readAt: rng.int(0, 1e6) } },
  }),
  command_status: (rng, st) => ({
    tool: "command_status",
    args: { commandId: st.sid },
    result: textResult(st.stable ? "RUNNING" : `RUNNING ${st.i}`, { status: "running" }),
  }),
  message_send: (rng, st) => ({
    tool: "message",
    args: { action: st.action ?? "send", channel: "slack", target: "#ops", message: st.text },
    result: {
      content: [{ type: "text", text: `sent ${rng.hex(10)}` }],
      details: {
        ok: true,
        messageId: rng.hex(12),
        ts: `${1767225600 + rng.int(0, 99999)}.${rng.int(100000, 999999)}`,
        channel: "slack",
        delivery: { id: rng.hex(10), text: st.stable ? st.text : `${st.text} ${st.i}`, direction: "outbound", receipt: rng.hex(6) },
        ...(st.stable ? {} : { seq: st.i }),
      },
    },
  }),
  sessions_send: (rng, st) => ({
    tool: "sessions_send",
    args: { sessionKey: "agent:ops:main", message: st.text },
    result: { content: [{ type: "text", text: `ok ${rng.hex(5)}` }], details: { status: "accepted", runId: rng.hex(8), sessionKey: "agent:ops:main", createdAt: BASE_TS + rng.int(0, 1e6), ...(st.stable ? {} : { n: st.i }) } },
  }),
  update_plan: (rng, st) => {
    const plan = [
      { step: `${rng.word()} ${rng.word()}`, status: "completed" },
      { step: st.stable ? `${rng.word()} step` : "", status: st.stable ? "in_progress" : "pending" },
    ];
    return { tool: "update_plan", args: { plan, explanation: rng.chance(0.5) ? "why" : "because" }, result: { content: [{ type: "text", text: `Plan updated ${rng.hex(4)}` }], details: { plan, updatedAt: rng.int(0, 1e6) } } };
  },
  write_unchanged: (rng, st) => ({
    tool: "write",
    args: { path: st.path, content: st.text },
    result: textResult(st.stable ? `Wrote ${st.path}` : `Wrote ${st.path} (${st.i})`, { changed: st.stable ? false : true, bytes: rng.int(1, 99) }),
  }),
  web_fetch_untrusted: (rng, st) => ({
    tool: "web_fetch",
    args: { url: st.url },
    result: textResult(untrusted(rng, st.stable ? st.text : `${st.text} ${st.i}`, st.escapes ?? 0), { status: 200 }),
  }),
  web_fetch_nested: (rng, st) => ({
    tool: "web_fetch",
    args: { url: st.url, format: "json" },
    result: textResult(JSON.stringify({ body: untrusted(rng, st.stable ? st.text : `${st.text} ${st.i}`, 0) }), { status: 200 }),
  }),
  unknown_tool: (rng, st) => ({
    tool: st.tool,
    args: { url: rng.chance(0.5) ? "https://a.example" : `https://b.example/${rng.int(0, 3)}` },
    error: rng.pick([`Unknown tool: ${st.tool}`, `unknown tool "${st.tool}"`, `Tool ${st.tool} not found`, `tool '${st.tool}' is not available`, `  Unknown tool:${st.tool.toUpperCase()}  `]),
  }),
  error_mixed: (rng, st) => ({
    tool: "grep",
    args: { pattern: st.text },
    error: st.stable ? st.err : rng.pick(["boom", 404, 5, "5", { code: "ENOENT", message: "no such file" }, null, true, ["a", 1], "", "   "]),
  }),
  non_object: (rng, st) => ({ tool: "calc", args: { expr: st.text }, result: st.stable ? st.value : rng.pick(["ok", 42, 4.0, [1, 2], null, true, false, "", 1e21]) }),
  content_join: (rng, st) => {
    const parts = [
      { type: "text", text: st.stable ? "  head  " : ` head ${st.i} ` },
      { type: "image", text: "alt" },
      { type: "text" },
      "loose string",
      { type: 7, text: "not a string type" },
      { type: "text", text: "tail\n" },
    ];
    return { tool: "browser_snapshot", args: { tab: st.sid }, result: { content: rng.chance(0.2) ? "not an array" : parts, details: rng.chance(0.2) ? "not an object" : { title: "Page", ts: st.stable ? 1 : st.i } } };
  },
  surrogate: (rng, st) => ({ tool: "search_notes", args: { q: rng.chance(0.5) ? `note\ud800` : "note" }, result: textResult(st.stable ? "same" : `r${st.i}`) }),
  // Lone surrogates in keys (distinct keys in JS, ordered by code units), at the edges of result
  // texts (they stop the trim) and in errors.
  surrogate_keys: (rng, st) => {
    const args = rng.pick([{ "a\ud800": 1, a: 2 }, { a: 2, "a\ud800": 1 }, { ab: 1, "a\ud800": 2 }, { a: 2 }, { "\udc00k": [1, "x\ud83d"] }]);
    if (rng.chance(0.3)) return { tool: "lookup", args, error: rng.pick(["bad \ud800", "bad ", { m: "bad\udfff" }]) };
    return { tool: "lookup", args, result: textResult(st.stable ? rng.pick([" \ud800 same ", "same"]) : `r${st.i}\udc00`, { "k\ud800": 1, k: 2 }) };
  },
  // Tool names as a model writes them; the OpenClaw callers normalize them (trim, lowercase,
  // bash -> exec, apply-patch -> apply_patch, and in 2026.9.6 cron -> automations).
  raw_names: (rng, st) => {
    const out = st.stable ? "ok" : `ok ${st.i}`;
    return { tool: rng.pick(["Bash", "bash", " READ ", "Apply-Patch", "CRON", "Exec"]), args: { command: st.command }, result: { content: [{ type: "text", text: out }], details: { status: "completed", exitCode: 0, aggregated: out } } };
  },
  conversations_send: (rng, st) => ({
    tool: rng.pick(["conversations_send", "conversations_turn"]),
    args: { conversationId: "conv_1", message: st.text },
    result: {
      content: [{ type: "text", text: `sent ${rng.hex(6)}` }],
      details: { status: "sent", messageId: rng.hex(10), ts: BASE_TS + rng.int(0, 1e6), conversationId: "conv_1", ...(st.stable ? {} : { n: st.i }) },
    },
  }),
  veto_like: (rng, st) => ({
    tool: "exec",
    args: { command: st.command },
    result: textResult("Tool call blocked by plugin", { status: "blocked", deniedReason: rng.chance(0.5) ? "plugin-before-tool-call" : "plugin-approval", reason: "policy" }),
  }),
};

// Shapes where the documented behaviour deliberately differs from both releases.
export const SPEC_CHOICE_FAMILIES = ["surrogate", "surrogate_keys", "update_plan", "raw_names"];
