// loopguard for the OpenAI Agents SDK (JS, @openai/agents): a run loops model → tools until the
// model answers or `maxTurns` trips, so an agent polling an unchanged job spends turns until
// then. The SDK checks tools through per-tool guardrails; this adapter adds one input and one
// output guardrail to each function tool, and a model-input filter for the policy's notes.
//
//   const guard = loopGuard();
//   const agent = new Agent({ name: 'ops', tools: guard.tools([poll, read]) });
//   await run(agent, input, { callModelInputFilter: guard.callModelInputFilter });
//
// SDK point                             → gate               → SDK answer
// tool inputGuardrails run({toolCall})  → before(call)       → block: rejectContent(text) (the
//                                                              model reads it as the result);
//                                                              end of run: throwException()
// tool outputGuardrails run({output})   → after(ticket, out) → allow; note kept by call id;
//                                                              end of run: throwException()
// callModelInputFilter({modelData})     → (notes of the calls in the input) → one user item
//                                                              with the note, in that request
//
// Why an output guardrail and not the runner's `agent_tool_end` event: that event also fires for
// a rejected call, and would need the runner; the output guardrail runs only after the tool ran.
// An end of run is the SDK's tripwire: `run()` rejects with a ToolCallError whose `error` is a
// ToolInputGuardrailTripwireTriggered (or ...Output...), `.result.output.outputInfo.loopguard`
// the policy's text.
// Session: one per run (its RunContext), or the `session` option. Calls pair by the call id.
import { MAX_PENDING, ToolGate } from './gate.js';
import { defineToolInputGuardrail, defineToolOutputGuardrail } from '@openai/agents';

const allow = { behavior: { type: 'allow' } };

/**
 * @param {{ config?: string | object, guard?: object,
 *   session?: (data: { context: object, agent: object, toolCall: object }) => string }} [options]
 */
export function loopGuard(options = {}) {
  const { session, ...gateOptions } = options ?? {};
  const gate = new ToolGate(gateOptions);
  const runs = new WeakMap();
  let count = 0;
  const perRun = ({ context }) => {
    if (!runs.has(context)) runs.set(context, `openai-agents:${process.pid}:${++count}:${Date.now().toString(36)}`);
    return runs.get(context);
  };
  const sessionOf = session ?? perRun;
  /** call id → ticket, call id → note */
  const tickets = new Map();
  const notes = new Map();

  const inputGuardrail = defineToolInputGuardrail({
    name: 'loopguard',
    async run(data) {
      const { toolCall } = data;
      const call = { session: String(sessionOf(data)), tool: toolCall.name, args: parse(toolCall.arguments), callId: toolCall.callId };
      const verdict = await gate.before(call);
      if (verdict.run) {
        keep(tickets, toolCall.callId, verdict.ticket);
        return allow;
      }
      if (verdict.endRun) return { outputInfo: { loopguard: verdict.message }, behavior: { type: 'throwException' } };
      return { outputInfo: { loopguard: verdict.message }, behavior: { type: 'rejectContent', message: verdict.message } };
    },
  });

  const outputGuardrail = defineToolOutputGuardrail({
    name: 'loopguard',
    async run({ toolCall, output }) {
      const ticket = tickets.get(toolCall.callId);
      if (ticket === undefined) return allow;
      tickets.delete(toolCall.callId);
      const after = await gate.after(ticket, { result: output });
      if (after.note) keep(notes, toolCall.callId, after.note);
      if (after.endRun) return { outputInfo: { loopguard: after.message }, behavior: { type: 'throwException' } };
      return allow;
    },
  });

  /** The function tools, each with loopguard's two guardrails added after its own. */
  function tools(list) {
    for (const t of list) {
      if (t?.type !== 'function') continue;
      t.inputGuardrails = [...(t.inputGuardrails ?? []), inputGuardrail];
      t.outputGuardrails = [...(t.outputGuardrails ?? []), outputGuardrail];
    }
    return list;
  }

  /** Hands the model the notes of the calls whose results this request carries (once). */
  function callModelInputFilter({ modelData }) {
    const due = new Set();
    for (const item of modelData.input) {
      if (item?.type === 'function_call_result' && notes.has(item.callId)) {
        due.add(notes.get(item.callId));
        notes.delete(item.callId);
      }
    }
    if (due.size === 0) return modelData;
    const added = [...due].map((text) => ({ type: 'message', role: 'user', content: text }));
    return { ...modelData, input: [...modelData.input, ...added] };
  }

  return { tools, inputGuardrail, outputGuardrail, callModelInputFilter, gate };
}

function parse(text) {
  try {
    return JSON.parse(text || '{}');
  } catch {
    return text;
  }
}

function keep(map, key, value) {
  map.set(key, value);
  if (map.size > MAX_PENDING) map.delete(map.keys().next().value);
}
