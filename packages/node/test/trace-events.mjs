// Feeds one trace event (docs/spec/trace-format.md) through the LoopGuard hooks and turns the hook's
// result back into a decision line. The demo uses it to show a gateway's view of a trace, and the
// tests use it to prove that the hooks and `applyEvents` agree on every example trace.
import { LoopGuardError } from '../index.js';

/**
 * @param {import('../index.js').LoopGuard} guard
 * @param {Record<string, any>} ev one parsed trace line
 * @returns {Record<string, unknown>} the decision fields after `line` and `kind`
 */
export function feed(guard, ev) {
  const thread = () => ({
    channel: ev.channel,
    account: ev.account,
    conversation: ev.conversation,
    thread: ev.thread,
    root: ev.root,
  });
  switch (ev.kind) {
    case 'tool_call': {
      const v = guard.beforeToolCall(toolCall(ev));
      if (v.action === 'allow') return { action: 'allow' };
      const out = { action: v.action, detector: v.detector, count: v.count, message: v.message };
      if (v.action === 'warn') out.notify = v.notify;
      return out;
    }
    case 'tool_result': {
      // The trace tells result and error apart by which key is present ("error": null is an error).
      const outcome = 'error' in ev ? { error: ev.error } : { result: ev.result };
      const v = guard.afterToolOutcome(toolCall(ev), outcome);
      if (v.action !== 'abort') return { action: v.action };
      return { action: 'abort', detector: v.detector, count: v.count, message: v.message };
    }
    case 'compaction':
      return guard.afterCompactionRetry(ev.session, ev.run, ev.agent);
    case 'bot_message': {
      const v = guard.onBotMessage({
        channel: ev.channel,
        account: ev.account,
        conversation: ev.conversation,
        room: ev.room,
        sender: ev.sender,
        receiver: ev.receiver,
        tsMs: ev.ts_ms,
        eventId: ev.event_id,
      });
      if (v.action === 'allow') return v;
      return { action: 'suppress', cooldown_until_ms: v.cooldownUntilMs, budget: v.budget };
    }
    case 'group_message':
      return guard.startGroupThread(thread(), ev.peer, ev.text);
    case 'group_replies':
      return guard.finishGroupRound(thread(), ev.replies);
    case 'group_cancel':
      return guard.cancelGroupThread(thread());
    default:
      throw new LoopGuardError('input', 'kind', `unknown kind ${JSON.stringify(ev.kind)}`);
  }
}

function toolCall(ev) {
  return { session: ev.session, tool: ev.tool, args: ev.args, run: ev.run, agent: ev.agent, callId: ev.call_id };
}

/**
 * Runs a whole trace through the hooks; returns the decision lines (JSON Lines, like replay).
 * @param {import('../index.js').LoopGuard} guard
 * @param {string} trace
 * @param {(line: number, ev: Record<string, any>, decision: Record<string, unknown>) => void} [onDecision]
 */
export function feedTrace(guard, trace, onDecision) {
  let out = '';
  const lines = trace.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].replace(/\r$/, '');
    if (text.trim() === '') continue;
    let ev;
    try {
      ev = JSON.parse(text);
    } catch (e) {
      throw new LoopGuardError('input', `line ${i + 1}`, `not valid JSON (${e.message})`);
    }
    let decision;
    try {
      decision = feed(guard, ev);
    } catch (e) {
      if (e instanceof LoopGuardError) throw new LoopGuardError(e.kind, `line ${i + 1}: ${e.path}`, e.reason, { cause: e });
      throw e;
    }
    onDecision?.(i + 1, ev, decision);
    out += JSON.stringify({ line: i + 1, kind: ev.kind, ...decision }) + '\n';
  }
  return out;
}
