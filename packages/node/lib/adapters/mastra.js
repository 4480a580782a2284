// loopguard for Mastra agents (@mastra/core 1.x): `agent.generate` / `stream` loop model →
// tools until the model answers or `maxSteps` trips, so an agent polling an unchanged job spends
// steps until then. Mastra wraps every tool's execute in the agent's `hooks`; this adapter is
// those hooks, plus an input processor for what a hook cannot do (a note, the end of the run).
//
//   const guard = loopGuard();
//   const agent = new Agent({ id, name, instructions, model, tools,
//     hooks: guard.hooks, inputProcessors: [guard.processor] });
//
// Mastra point                          → gate               → Mastra answer
// hooks.beforeToolCall({toolName,input,context}) → before(call) → block: {proceed:false,
//                                                              output: text} (the model reads it
//                                                              as the result; the tool never runs)
// hooks.afterToolCall({output|error})   → after(ticket, out) → note / end of run, kept by call id
// processor.processInputStep({steps})   → (the last step's calls) → end: abort(text) (Mastra's
//                                         tripwire: the result's `tripwire.reason`); note: one
//                                         user message with it, added to the messages once
//
// Mastra does not call afterToolCall for a call its before-hook refused. Calls pair by
// `context.toolCallId`; where a caller runs the tools without one, by order per (session, tool).
// Session: the memory thread (`context.agent.threadId`), else one per request context (one per
// generate call unless the caller passes the same RequestContext), or the `session` option.
import { MAX_PENDING, OrderedTickets, ToolGate } from './gate.js';

/**
 * @param {{ config?: string | object, guard?: object,
 *   session?: (ctx: { toolName: string, input: unknown, context: any }) => string }} [options]
 */
export function loopGuard(options = {}) {
  const { session, ...gateOptions } = options ?? {};
  const gate = new ToolGate(gateOptions);
  const contexts = new WeakMap();
  let count = 0;
  const own = `mastra:${process.pid}:${Date.now().toString(36)}`;
  const perRequest = ({ context }) => {
    const thread = context?.agent?.threadId;
    if (typeof thread === 'string') return thread;
    const key = context?.requestContext;
    if (key === null || typeof key !== 'object') return own;
    if (!contexts.has(key)) contexts.set(key, `${own}:${++count}`);
    return contexts.get(key);
  };
  const sessionOf = session ?? perRequest;
  /** call id → ticket; calls without an id wait in order */
  const tickets = new Map();
  const ordered = new OrderedTickets();
  const notes = new Map();
  const ends = new Map();

  const hooks = {
    async beforeToolCall(ctx) {
      const id = ctx.context?.toolCallId;
      const call = { session: String(sessionOf(ctx)), tool: ctx.toolName, args: ctx.input, callId: id };
      const verdict = await gate.before(call);
      if (!verdict.run) {
        if (verdict.endRun && id !== undefined) keep(ends, id, verdict.message);
        return { proceed: false, output: verdict.message };
      }
      if (id !== undefined) keep(tickets, id, verdict.ticket);
      else ordered.push(call.session, call.tool, verdict.ticket);
      return undefined;
    },
    async afterToolCall(ctx) {
      const id = ctx.context?.toolCallId;
      const ticket = id !== undefined ? tickets.get(id) : ordered.shift(String(sessionOf(ctx)), ctx.toolName);
      if (ticket === undefined) return;
      tickets.delete(id);
      const outcome = ctx.error !== undefined ? { error: ctx.error instanceof Error ? ctx.error.message : String(ctx.error) } : { result: ctx.output };
      const after = await gate.after(ticket, outcome);
      if (id === undefined) return; // no id: nothing names the step it belongs to
      if (after.note) keep(notes, id, after.note);
      if (after.endRun) keep(ends, id, after.message);
    },
  };

  const processor = {
    id: 'loopguard',
    name: 'loopguard',
    processInputStep({ steps, messageList, abort, rotateResponseMessageId }) {
      const ids = (steps?.at(-1)?.toolCalls ?? []).map((c) => c.toolCallId);
      const end = ids.map((id) => ends.get(id)).find((m) => m !== undefined);
      for (const id of ids) ends.delete(id);
      if (end !== undefined) abort(end, { metadata: { loopguard: end } });
      const due = new Set(); // parallel calls may warn alike
      for (const id of ids) {
        if (notes.has(id)) due.add(notes.get(id));
        notes.delete(id);
      }
      if (due.size === 0) return undefined;
      for (const text of due) messageList.add({ role: 'user', content: text }, 'input');
      // the model's next answer goes into a new message after the note (else Mastra appends it
      // to the previous answer, before the note, and the conversation stops growing)
      const messageId = rotateResponseMessageId?.();
      return messageId === undefined ? messageList : { messageList, messageId };
    },
  };

  return { hooks, processor, gate };
}

function keep(map, key, value) {
  map.set(key, value);
  if (map.size > MAX_PENDING) map.delete(map.keys().next().value);
}
