// loopguard for LangChain.js agents (`createAgent` of langchain 1.x, on LangGraph.js): the
// agent loops model → tools → model until the model stops calling tools or the recursion limit
// trips, so an agent that polls an unchanged job burns steps until then. This middleware puts
// the policy around each tool call and ends the run where the policy says so.
//
//   const agent = createAgent({ model, tools, middleware: [loopGuardMiddleware()] });
//
// LangChain point                   → gate                → LangChain answer
// wrapToolCall(request, handler)    → before(call)        → block: a ToolMessage (status
//                                                           'error') with the policy's text,
//                                                           the tool never runs
//   handler(request) → ToolMessage  → after(ticket, out)  → note / end of run, kept by call id
// beforeModel(state) (canJumpTo end)→ (the last AI message's calls) → end: {jumpTo:'end'};
//                                     note: one HumanMessage with it, added to the state once
//
// Session: the thread (`configurable.thread_id`); without one, one session per middleware.
// Calls pair by the model's tool-call id, which every request carries.
import { MAX_PENDING, ToolGate } from './gate.js';
import { createMiddleware, HumanMessage, ToolMessage } from 'langchain';

/**
 * @param {{ config?: string | object, guard?: object,
 *   session?: (request: { toolCall: object, state: object, runtime: object }) => string }} [options]
 */
export function loopGuardMiddleware(options = {}) {
  const { session, ...gateOptions } = options ?? {};
  const gate = new ToolGate(gateOptions);
  const own = `langchain:${process.pid}:${Date.now().toString(36)}`;
  const sessionOf = session ?? ((request) => request.runtime?.configurable?.thread_id ?? own);
  /** tool-call id → note; tool-call ids whose call ends the run */
  const notes = new Map();
  const ends = new Set();

  const middleware = createMiddleware({
    name: 'LoopGuard',
    async wrapToolCall(request, handler) {
      const { toolCall } = request;
      const call = { session: String(sessionOf(request)), tool: toolCall.name, args: toolCall.args, callId: toolCall.id };
      const verdict = await gate.before(call);
      if (!verdict.run) {
        if (verdict.endRun) keep(ends, toolCall.id);
        return new ToolMessage({ content: verdict.message, tool_call_id: toolCall.id, name: toolCall.name, status: 'error' });
      }
      let out;
      try {
        out = await handler(request);
      } catch (error) {
        await settle(verdict.ticket, toolCall.id, { error: error instanceof Error ? error.message : String(error) });
        throw error;
      }
      await settle(verdict.ticket, toolCall.id, ToolMessage.isInstance(out) ? outcomeOf(out) : { result: out });
      return out;
    },
    beforeModel: {
      canJumpTo: ['end'],
      hook(state) {
        const ids = lastCalls(state.messages);
        if (ids.some((id) => ends.delete(id))) return { jumpTo: 'end' };
        const due = [...new Set(ids.flatMap((id) => take(notes, id)))]; // parallel calls may warn alike
        if (due.length === 0) return undefined;
        return { messages: due.map((text) => new HumanMessage(text)) };
      },
    },
  });

  async function settle(ticket, id, outcome) {
    const after = await gate.after(ticket, outcome);
    if (after.note) keep(notes, id, after.note);
    if (after.endRun) keep(ends, id);
  }

  return Object.assign(middleware, { gate });
}

/** A tool's answer: its text, or an error when the tool reported one. */
function outcomeOf(message) {
  const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
  return message.status === 'error' ? { error: text } : { result: text };
}

/** The tool-call ids of the newest AI message (the step whose results the model reads next). */
function lastCalls(messages = []) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.tool_calls?.length || m.getType?.() === 'ai' || m.type === 'ai') return (m.tool_calls ?? []).map((c) => c.id);
  }
  return [];
}

function take(map, id) {
  const value = map.get(id);
  map.delete(id);
  return value === undefined ? [] : [value];
}

function keep(store, key, value) {
  if (store instanceof Set) store.add(key);
  else store.set(key, value);
  if (store.size > MAX_PENDING) store.delete(store.keys().next().value);
}
