// Conversions between the public API's plain values and the component's WIT values (records,
// tagged variants, bigint for s64), and the checks on the caller's arguments. A bad argument
// becomes a LoopGuardError of kind `input` (or `config`) that names its path, before the policy
// is called. No policy logic: every decision is made inside the component.
import { LoopGuardError, message } from './errors.js';

/** The public description of a loaded policy (`guard.policy`, a swap's report). */
export function policyInfo(p) {
  return { version: p.version, interfaceVersion: p.interfaceVersion, blake3: p.blake3, source: p.source };
}

export function configText(config) {
  if (typeof config === 'string') return config;
  if (config !== null && typeof config === 'object') return json(config, 'config');
  throw new LoopGuardError('config', 'config', 'must be JSON/JSON5 text or an object');
}

/** A call's arguments as JSON text: `argsJson` as given, or `args` serialized. */
function argsJson(call) {
  if (call.argsJson !== undefined) return requireString(call.argsJson, 'call.argsJson');
  return json(call.args ?? null, 'call.args');
}

export function toolCall(call) {
  if (call === null || typeof call !== 'object') throw new LoopGuardError('input', 'call', 'must be an object');
  return {
    session: requireString(call.session, 'call.session'),
    tool: requireString(call.tool, 'call.tool'),
    argsJson: argsJson(call),
    run: optionalString(call.run, 'call.run'),
    agent: optionalString(call.agent, 'call.agent'),
    callId: optionalString(call.callId, 'call.callId'),
  };
}

export function botMessage(msg) {
  if (msg === null || typeof msg !== 'object') throw new LoopGuardError('input', 'message', 'must be an object');
  return {
    channel: requireString(msg.channel, 'message.channel'),
    account: requireString(msg.account, 'message.account'),
    conversation: requireString(msg.conversation, 'message.conversation'),
    room: optionalString(msg.room, 'message.room'),
    sender: requireString(msg.sender, 'message.sender'),
    receiver: requireString(msg.receiver, 'message.receiver'),
    tsMs: int64(msg.tsMs, 'message.tsMs'),
    eventId: optionalString(msg.eventId, 'message.eventId'),
  };
}

export function groupThread(t) {
  if (t === null || typeof t !== 'object') throw new LoopGuardError('input', 'thread', 'must be an object');
  return {
    channel: requireString(t.channel, 'thread.channel'),
    account: requireString(t.account, 'thread.account'),
    conversation: requireString(t.conversation, 'thread.conversation'),
    thread: optionalString(t.thread, 'thread.thread'),
    root: requireString(t.root, 'thread.root'),
  };
}

/**
 * A tool's outcome as the component takes it, or undefined for an undefined result. OpenClaw's
 * rule (docs/spec/tool-loop.md §1.3): an error that is not undefined wins; an undefined result has
 * no hash and is neither recorded nor observed. JSON cannot carry `undefined`, so that one case is
 * answered by the caller instead of the component.
 */
export function toolOutcome(outcome) {
  if (outcome === null || typeof outcome !== 'object') {
    throw new LoopGuardError('input', 'outcome', 'must be an object with `result` or `error`');
  }
  if (outcome.error !== undefined) return { tag: 'threw', val: json(errorValue(outcome.error), 'outcome.error') };
  if (outcome.result !== undefined) return { tag: 'returned', val: json(outcome.result, 'outcome.result') };
  if (outcome.resultJson !== undefined) return { tag: 'returned', val: requireString(outcome.resultJson, 'outcome.resultJson') };
  return undefined;
}

/** `finishGroupRound`'s replies, checked. */
export function groupReplies(replies) {
  if (!Array.isArray(replies)) throw new LoopGuardError('input', 'replies', 'must be an array of { agent, reply }');
  return replies.map((r, i) => ({
    agent: requireString(r?.agent, `replies[${i}].agent`),
    reply: optionalString(r?.reply, `replies[${i}].reply`),
  }));
}

// ---- the component's verdicts → the public API's ----

export function toolVerdict(v) {
  if (v.action === 'allow') return { action: 'allow', count: v.count, notify: v.notify };
  return { action: v.action, detector: v.detector, count: v.count, message: v.message, notify: v.notify };
}

export function outcomeVerdict(v) {
  if (v.tag !== 'abort') return { action: v.tag };
  return { action: 'abort', detector: v.val.detector, count: v.val.count, tool: v.val.tool, message: v.val.message };
}

export function compactionVerdict(v) {
  return v.tag === 'armed' ? { action: 'armed', remaining: v.val } : { action: 'disabled' };
}

export function botVerdict(v) {
  if (v.tag === 'allow') return { action: 'allow' };
  return { action: 'suppress', cooldownUntilMs: Number(v.val.cooldownUntilMs), budget: v.val.budget };
}

export function groupStart(v) {
  if (v.tag === 'round') return { action: 'round', round: v.val.round, participants: v.val.participants };
  if (v.tag === 'legacy') return { action: 'legacy', participants: v.val };
  return { action: 'none' };
}

export function groupStep(v) {
  if (v.tag === 'round') return { action: 'round', round: v.val.round, participants: v.val.participants };
  return { action: 'stop', reason: v.val.replaceAll('-', '_') };
}

/** formatError's Error case (docs/spec/tool-loop.md §1.3): the message, or the name if it is empty. */
export function errorValue(error) {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'bigint') return String(error);
  return error;
}

export function json(value, path) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new LoopGuardError('input', path, `cannot be serialized as JSON (${message(e)})`, { cause: e });
  }
  return text ?? 'null';
}

export function requireString(value, path) {
  if (typeof value !== 'string') throw new LoopGuardError('input', path, `must be a string, not ${typeName(value)}`);
  return value;
}

export function optionalString(value, path) {
  return value === undefined || value === null ? undefined : requireString(value, path);
}

function int64(value, path) {
  if (typeof value === 'bigint') return value;
  if (Number.isSafeInteger(value)) return BigInt(value);
  throw new LoopGuardError('input', path, `must be an integer (milliseconds), not ${typeName(value)} ${String(value)}`);
}

function typeName(value) {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}
