// The tool-call hooks: before_tool_call (allow, warn or block), the tool-result middleware (the
// warning note OpenClaw's core would append), after_tool_call (the outcome, queued by the
// Supervisor: loopguard's lib/outcome-queue.js) and after_compaction (arms the post-compaction
// guard). Like bot-hooks.js, each takes the process's Runtime (index.js), which holds the
// Supervisor and the bookkeeping between hooks; the decisions are the policy's. With a `store`
// block a decision is a Promise (store.js): `settle` runs the same code on its value.
import { recordStored, settle } from './store.js';

/** What OpenClaw 2026.9's core appends to a result when a loop warning is due (internal-hooks). */
export const warningNote = (count) =>
  `[System note: Tool-loop warning after ${count} repeated calls. Change your approach or stop if you are not making progress.]`;

/** before_tool_call → undefined (allow) or {block, blockReason}. */
export function beforeToolCall(rt, event, ctx) {
  if (!rt.settings.enabled) return undefined;
  const t0 = performance.now();
  const session = ctx?.sessionKey ?? (ctx?.sessionId ? `session:${ctx.sessionId}` : null);
  if (!session) return undefined;
  const run = event?.runId ?? ctx?.runId;
  const agent = ctx?.agentId;
  const callId = event?.toolCallId ?? ctx?.toolCallId;
  rt.sessions.set(session, { run, agent });
  rt.client?.flushOutcomes('before_tool_call'); // an outcome waiting may abort this run
  const aborted = run ? rt.abortedRuns.get(run) : undefined;
  if (aborted) {
    if (callId) rt.ourBlocks.set(callId, true);
    rt.event({ event: 'decision', hook: 'before_tool_call', session, tool: event.toolName, callId, action: 'block', detector: 'compaction_loop_persisted', ms: performance.now() - t0 });
    return { block: true, blockReason: aborted };
  }
  const call = { session, tool: String(event?.toolName ?? 'tool'), args: event?.params ?? {}, run, agent, callId };
  const tp = performance.now();
  return settle(rt.call('beforeToolCall', call), (r) => toolVerdict(rt, r, { call, session, run, callId, t0, tp }));
}

/** The gateway's answer to a tool-call verdict (or failure). */
function toolVerdict(rt, r, { call, session, run, callId, t0, tp }) {
  const ms = performance.now() - t0;
  const policyMs = performance.now() - tp;
  // With a store, the outcome that aborted the run may have been decided while this call waited
  // behind it (decisions of one session run in order): its abort applies to this call too.
  const aborted = rt.settings.store && run ? rt.abortedRuns.get(run) : undefined;
  if (aborted) {
    if (callId) rt.ourBlocks.set(callId, true);
    rt.event({ event: 'decision', hook: 'before_tool_call', session, tool: call.tool, callId, action: 'block', detector: 'compaction_loop_persisted', ms });
    return { block: true, blockReason: aborted };
  }
  if (!r.ok) {
    // `store`: the shared store failed and store.failMode is closed
    if (rt.settings.failMode === 'closed' || r.reason === 'store') {
      if (callId) rt.ourBlocks.set(callId, true);
      rt.event({ event: 'decision', hook: 'before_tool_call', session, tool: call.tool, callId, action: 'fail-closed', ms });
      return { block: true, blockReason: failureText(r) };
    }
    rt.event({ event: 'decision', hook: 'before_tool_call', session, tool: call.tool, callId, action: 'fail-open', ms });
    return undefined;
  }
  const v = r.value;
  rt.counters.decisions += 1;
  rt.event({ event: 'decision', hook: 'before_tool_call', session, run, tool: call.tool, callId, action: v.action, detector: v.detector, count: v.count, notify: v.notify, ms, policyMs, policy: rt.client?.info?.policy?.version ?? rt.stored?.policy.version });
  if (v.action === 'block') {
    if (callId) rt.ourBlocks.set(callId, true);
    return { block: true, blockReason: v.message };
  }
  if (callId) {
    rt.pending.set(callId, call);
    if (v.action === 'warn' && v.notify) rt.notes.set(callId, warningNote(v.count));
  }
  return undefined;
}

/** The tool-result middleware: appends a due warning note, once, as the core does. */
export function toolResult(rt, event) {
  const callId = event?.toolCallId;
  const note = callId ? rt.notes.take(callId) : undefined;
  if (!note || !event.result) return undefined;
  rt.appended.set(callId, note);
  const content = Array.isArray(event.result.content) ? event.result.content : [];
  rt.event({ event: 'note', callId, note });
  return { result: { ...event.result, content: [...content, { type: 'text', text: note }] } };
}

/**
 * after_tool_call: queues the outcome of a call this plugin let through; it is recorded before
 * the policy's next call or while the next model call runs (Supervisor#afterToolOutcomeLater).
 */
export function afterToolCall(rt, event, ctx) {
  const callId = event?.toolCallId ?? ctx?.toolCallId;
  if (!callId) return;
  const t0 = performance.now();
  const note = rt.appended.take(callId);
  if (rt.ourBlocks.take(callId)) return; // our own block: not an outcome
  const call = rt.pending.take(callId);
  if (!call) return; // never checked (a tool the gateway did not dispatch, or the plugin failed open)
  let outcome;
  if (event.error !== undefined && event.error !== null) outcome = { error: event.error };
  else if (event.result !== undefined) outcome = { result: note ? withoutNote(event.result, note) : event.result };
  else return;
  rt.ensure();
  const item = { call, callId, queueMs: 0 };
  const done = (r, at, ms) => recordOutcome(rt, item, r, at, ms);
  if (rt.settings.store) return recordStored(rt, call, outcome, done);
  rt.client.afterToolOutcomeLater(call, outcome, done);
  item.queueMs = performance.now() - t0;
}

/** The verdict of one queued outcome; `at` is what recorded it (a hook, a policy call, the timer). */
function recordOutcome(rt, { call, callId, queueMs }, r, at, ms) {
  if (!r.ok) {
    rt.counters.failures += 1;
    rt.event({ event: 'policy-failed', op: 'afterToolOutcome', reason: r.reason, error: r.error?.message, failMode: rt.settings.failMode });
    return;
  }
  const v = r.value;
  rt.event({ event: 'decision', hook: 'after_tool_call', session: call.session, run: call.run, tool: call.tool, callId, action: v.action, detector: v.detector, count: v.count, queueMs, ms, recordedAt: at });
  if (v.action === 'abort') {
    if (call.run) rt.abortedRuns.set(call.run, v.message);
    rt.log('warn', `post-compaction loop in ${call.session}: every further call of run ${call.run} is blocked (${v.message})`);
  }
}

/** after_compaction: arms the post-compaction guard for the session's last run. */
export function afterCompaction(rt, event, ctx) {
  if (!rt.settings.enabled) return;
  const session = ctx?.sessionKey;
  if (!session) return;
  const last = rt.sessions.get(session);
  const t0 = performance.now();
  return settle(rt.call('afterCompactionRetry', session, last?.run, ctx?.agentId ?? last?.agent), (r) => {
    if (!r.ok) return;
    rt.event({ event: 'decision', hook: 'after_compaction', session, run: last?.run, action: r.value.action, remaining: r.value.remaining, ms: performance.now() - t0 });
  });
}

/** What a call blocked by failMode "closed" tells the model. */
function failureText(r) {
  return `loopguard: the loop guard failed (${r.reason}: ${r.error?.message ?? 'unknown'}); this call is blocked because failMode is "closed".`;
}

/** The result without the note the middleware appended (the note must not change outcome hashes). */
function withoutNote(result, note) {
  if (!Array.isArray(result?.content)) return result;
  const i = result.content.findLastIndex((p) => p?.type === 'text' && p.text === note);
  if (i < 0) return result;
  return { ...result, content: result.content.filter((_, j) => j !== i) };
}
