// The fake model's pure scenario logic (no I/O; re-exported by ../fake-model.mjs): which
// messages are OpenClaw's internal context, which scenario a request plays, the action at a
// position in the turn, and a chat request's delay. The format is described in the header of
// ../fake-model.mjs.

export const INTERNAL_CONTEXT_PREFIX = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";

export function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === "string" ? p : typeof p?.text === "string" ? p.text : ""))
      .join("\n");
  }
  return content == null ? "" : JSON.stringify(content);
}

export function isInternalContext(msg) {
  return msg?.role === "user" && textOf(msg.content).trimStart().startsWith(INTERNAL_CONTEXT_PREFIX);
}

/** Index of the last real (non-internal) user message, or -1. */
export function lastRealUserIndex(messages) {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i]?.role === "user" && !isInternalContext(messages[i])) return i;
  }
  return -1;
}

export function pickScenarioName(messages, scenarios, fallback) {
  const idx = lastRealUserIndex(messages);
  const candidates = [];
  if (idx >= 0) candidates.push(textOf(messages[idx].content));
  // compaction summary requests and the like: any user text
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i]?.role === "user") candidates.push(textOf(messages[i].content));
  }
  for (const text of candidates) {
    const m = /\[scenario:([A-Za-z0-9_.-]+)\]/.exec(text);
    if (m && scenarios[m[1]]) return m[1];
  }
  return fallback;
}

/** Expand steps into the action at position `pos` (0-based tool results so far in the turn). */
export function actionAt(scenario, pos) {
  const max = scenario.maxToolsPerTurn ?? 40;
  if (pos >= max) return { text: `Stopping after ${pos} tool calls (fake model bound).` };
  let offset = 0;
  for (const step of scenario.steps ?? []) {
    if (step.text !== undefined) return { text: step.text };
    const times = step.times === "forever" ? Infinity : (step.times ?? 1);
    if (pos < offset + times) {
      const k = pos - offset;
      if (step.alternate) {
        const s = step.alternate[k % step.alternate.length];
        return { call: s.call, args: s.args ?? {} };
      }
      return { call: step.call, args: step.args ?? {} };
    }
    offset += times;
  }
  return { text: "Done (fake model script finished)." };
}

/** The delayMs of the scenario a chat request plays (0 for other requests and text answers). */
export function toolDelayFor(raw, cfg) {
  try {
    const body = JSON.parse(raw);
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return 0;
    const scenario = cfg.scenarios[pickScenarioName(body.messages ?? [], cfg.scenarios, cfg.defaultScenario)];
    return Math.min(Number(scenario?.delayMs ?? 0) || 0, 10_000);
  } catch {
    return 0;
  }
}
