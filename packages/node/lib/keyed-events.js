// The typed calls of a StoredLoopGuard as trace lines, and decision lines back as the verdicts
// LoopGuard's calls return. Why: a stored decision goes through the policy's keyed entry points
// (`state-key`, `decide-keyed`), which take one trace line (docs/spec/trace-format.md), so each
// call is written as the trace event of the same call, field for field (the table "The same
// events as typed calls" there), and the decision line is read back. No policy logic: the
// arguments were checked by convert.js, and every decision is the policy's.

const J = JSON.stringify;

/** Optional fields, written only when set (the trace format has no `null` for them). */
function optional(pairs) {
  let out = '';
  for (const [name, value] of pairs) if (value !== undefined) out += `,${J(name)}:${J(value)}`;
  return out;
}

/** The fields of a tool event; `args` is the call's JSON text as checked. */
function callFields(c) {
  return `"session":${J(c.session)},"tool":${J(c.tool)},"args":${c.argsJson}` + optional([['run', c.run], ['agent', c.agent], ['call_id', c.callId]]);
}

function threadFields(t) {
  return `"channel":${J(t.channel)},"account":${J(t.account)},"conversation":${J(t.conversation)},"root":${J(t.root)}` + optional([['thread', t.thread]]);
}

/** @param {ReturnType<import('./convert.js').toolCall>} c */
export const toolCallLine = (c) => `{"kind":"tool_call",${callFields(c)}}`;

/** @param {ReturnType<import('./convert.js').toolCall>} c @param {{ tag: 'threw' | 'returned', val: string }} o */
export const toolResultLine = (c, o) => `{"kind":"tool_result",${callFields(c)},${o.tag === 'threw' ? '"error"' : '"result"'}:${o.val}}`;

export const compactionLine = (session, run, agent) => `{"kind":"compaction","session":${J(session)}${optional([['run', run], ['agent', agent]])}}`;

/** @param {ReturnType<import('./convert.js').botMessage>} m (tsMs a bigint) */
export const botMessageLine = (m) =>
  `{"kind":"bot_message","channel":${J(m.channel)},"account":${J(m.account)},"conversation":${J(m.conversation)},` +
  `"sender":${J(m.sender)},"receiver":${J(m.receiver)},"ts_ms":${String(m.tsMs)}${optional([['room', m.room], ['event_id', m.eventId]])}}`;

export const groupMessageLine = (t, peer, text) => `{"kind":"group_message",${threadFields(t)},"peer":${J(peer)},"text":${J(text)}}`;

export const groupRepliesLine = (t, replies) =>
  `{"kind":"group_replies",${threadFields(t)},"replies":${J(replies.map((r) => ({ agent: r.agent, reply: r.reply ?? null })))}}`;

export const groupCancelLine = (t) => `{"kind":"group_cancel",${threadFields(t)}}`;

// ---- decision lines → verdicts (the shapes of LoopGuard's methods) ----

export function toolVerdict(d) {
  if (d.action === 'allow') return { action: 'allow', count: d.count ?? 0, notify: d.notify ?? false };
  return { action: d.action, detector: d.detector, count: d.count, message: d.message, notify: d.notify ?? false };
}

export function outcomeVerdict(d, tool) {
  if (d.action !== 'abort') return { action: d.action };
  return { action: 'abort', detector: d.detector, count: d.count, tool, message: d.message };
}

export function compactionVerdict(d) {
  return d.action === 'armed' ? { action: 'armed', remaining: d.remaining } : { action: 'disabled' };
}

export function botVerdict(d) {
  if (d.action === 'allow') return { action: 'allow' };
  return { action: 'suppress', cooldownUntilMs: d.cooldown_until_ms, budget: d.budget };
}

export function groupStartVerdict(d) {
  if (d.action === 'round') return { action: 'round', round: d.round, participants: d.participants };
  if (d.action === 'legacy') return { action: 'legacy', participants: d.participants };
  return { action: 'none' };
}

export function groupStepVerdict(d) {
  if (d.action === 'round') return { action: 'round', round: d.round, participants: d.participants };
  return { action: 'stop', reason: d.reason };
}
