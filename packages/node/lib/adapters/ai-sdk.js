// loopguard for the Vercel AI SDK (`ai` 7): `generateText`, `streamText` and `ToolLoopAgent`
// run tools in a loop of steps, and the SDK's only loop limit is a step count. This adapter puts
// the policy between the model and the tools through the SDK's own settings, so a step that
// repeats an unchanged call gets the policy's text instead of another run of the tool.
//
//   const guard = loopGuard();
//   await generateText(guard.wrap({ model, tools, prompt, stopWhen: isStepCount(20) }));
//
// SDK point                      → gate                → SDK answer
// toolApproval({toolCall})       → before(call)        → block: {type:'denied', reason} (the
//                                                         model reads `reason` as the result)
// onToolExecutionEnd({toolCall}) → after(ticket, out)  → note / end of run, kept by toolCallId
// prepareStep({steps, messages}) → (notes of the last step) → one user message with the note
// stopWhen({steps})              → (ends of the last step)  → true: the run ends after this step
//
// Calls pair by the SDK's toolCallId. The settings a caller already gave are kept and run too:
// their toolApproval first (a call they deny never reaches the policy; with a function of our
// own the SDK no longer reads a tool's `needsApproval`, so this adapter reads it), then their
// prepareStep, their stop conditions (the SDK's default, one step, when none is given).
import { MAX_PENDING, ToolGate } from './gate.js';

/**
 * @param {{ config?: string | object, guard?: object,
 *   session?: (ctx: { runtimeContext: unknown, toolCall: object, messages: unknown[] }) => string }} [options]
 *   `session`: the conversation a call belongs to; default: one session per `wrap()` (one
 *   generateText call, or one agent).
 */
export function loopGuard(options = {}) {
  const { session, ...gateOptions } = options ?? {};
  const gate = new ToolGate(gateOptions);
  /** toolCallId → ticket; toolCallId → note; toolCallIds whose call ends the run */
  const tickets = new Map();
  const notes = new Map();
  const ends = new Map();
  let wraps = 0;

  /** The settings of one generateText / streamText / ToolLoopAgent, guarded. */
  function wrap(settings = {}) {
    const own = `ai-sdk:${process.pid}:${++wraps}:${Date.now().toString(36)}`;
    const sessionOf = session ?? (() => own);
    const stopConditions = settings.stopWhen === undefined ? [defaultStop] : [settings.stopWhen].flat();
    return {
      ...settings,
      async toolApproval(ctx) {
        const theirs = await theirApproval(settings.toolApproval, ctx);
        if (theirs?.type === 'denied') return theirs;
        const { toolCall } = ctx;
        const call = { session: sessionOf(ctx), tool: toolCall.toolName, args: toolCall.input, callId: toolCall.toolCallId };
        const verdict = await gate.before(call);
        if (!verdict.run) {
          if (verdict.endRun) keep(ends, toolCall.toolCallId, verdict.message);
          return { type: 'denied', reason: verdict.message };
        }
        keep(tickets, toolCall.toolCallId, verdict.ticket);
        return theirs;
      },
      async onToolExecutionEnd(event) {
        const ticket = tickets.get(event.toolCall.toolCallId);
        if (ticket !== undefined) {
          tickets.delete(event.toolCall.toolCallId);
          const out = event.toolOutput;
          const after = await gate.after(ticket, out?.type === 'tool-error' ? { error: errorText(out.error) } : { result: out?.output });
          if (after.note) keep(notes, event.toolCall.toolCallId, after.note);
          if (after.endRun) keep(ends, event.toolCall.toolCallId, after.message);
        }
        await (settings.onToolExecutionEnd ?? settings.experimental_onToolCallFinish)?.(event);
      },
      async prepareStep(ctx) {
        const theirs = (await settings.prepareStep?.(ctx)) ?? undefined;
        const due = [...new Set(take(notes, lastCalls(ctx.steps)))]; // parallel calls may warn alike
        if (due.length === 0) return theirs;
        const messages = theirs?.messages ?? ctx.messages;
        return { ...theirs, messages: [...messages, ...due.map((text) => ({ role: 'user', content: [{ type: 'text', text }] }))] };
      },
      stopWhen: [
        ...stopConditions,
        ({ steps }) => take(ends, lastCalls(steps)).length > 0,
      ],
    };
  }

  return { wrap, gate };
}

/** What the caller's own approval setting says about this call (the SDK's own order of
 * reading: a function, else the tool's entry, else the tool's `needsApproval`). */
async function theirApproval(setting, ctx) {
  const { toolCall, tools, runtimeContext, messages } = ctx;
  if (typeof setting === 'function') return normalize(await setting(ctx));
  const entry = setting == null ? undefined : Object.hasOwn(setting, toolCall.toolName) ? setting[toolCall.toolName] : undefined;
  if (typeof entry === 'function') {
    const toolContext = ctx.toolsContext?.[toolCall.toolName];
    return normalize(await entry(toolCall.input, { toolCallId: toolCall.toolCallId, messages, toolContext, runtimeContext }));
  }
  if (entry != null) return normalize(entry);
  const tool = tools && Object.hasOwn(tools, toolCall.toolName) ? tools[toolCall.toolName] : undefined;
  const needs = typeof tool?.needsApproval === 'function'
    ? await tool.needsApproval(toolCall.input, { toolCallId: toolCall.toolCallId, messages, context: ctx.toolsContext?.[toolCall.toolName] })
    : tool?.needsApproval;
  return needs ? { type: 'user-approval' } : undefined;
}

function normalize(status) {
  return typeof status === 'string' ? { type: status } : status ?? undefined;
}

/** The SDK's default stop condition (`isStepCount(1)`), kept when the caller gives none. */
function defaultStop({ steps }) {
  return steps.length >= 1;
}

function lastCalls(steps) {
  return (steps?.at(-1)?.toolCalls ?? []).map((c) => c.toolCallId);
}

function take(map, ids) {
  const out = [];
  for (const id of ids) {
    if (map.has(id)) out.push(map.get(id));
    map.delete(id);
  }
  return out;
}

function keep(map, key, value) {
  map.set(key, value);
  if (map.size > MAX_PENDING) map.delete(map.keys().next().value);
}

function errorText(error) {
  return error instanceof Error ? error.message : String(error);
}
