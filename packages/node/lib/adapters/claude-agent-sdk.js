// loopguard for the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`): the policy checks every
// tool call of a `query()` through the SDK's own hooks, in the application's process.
//
//   import { loopGuardHooks } from 'loopguard/claude-agent-sdk';
//   for await (const m of query({ prompt, options: { hooks: loopGuardHooks() } })) { … }
//
// | SDK hook             | gate                         | answer                                                      |
// |----------------------|------------------------------|-------------------------------------------------------------|
// | `PreToolUse`         | `before`                     | `{}` (the SDK's own permissions go on), or `permissionDecision: 'deny'` with the policy's text as `permissionDecisionReason`: the model gets it as the call's error result (Claude Code writes `PreToolUse:<tool> hook error: <text>`); at an end of run also `continue: false` |
// | `PostToolUse`        | `after` `{ result }`, by `tool_use_id` | a warning as `additionalContext` (once); at an end of run `continue: false` with the policy's text as `stopReason` |
// | `PostToolUseFailure` | `after` `{ error }`          | the same                                                    |
//
// A refused call has no ticket, so nothing is recorded for it if Claude Code reports it as a
// failure. The session is the SDK's `session_id` unless `options.session(input)` says otherwise.
// Why hooks and not `canUseTool`: hooks run for every tool, also those the settings allow
// without asking, and `PostToolUse` gives the outcome. No loop rule lives here: the policy decides.
import { ToolGate, MAX_PENDING } from './gate.js';
import { LoopGuardError } from '../errors.js';

/**
 * The `hooks` option of `query()`: `PreToolUse`, `PostToolUse` and `PostToolUseFailure`
 * matchers for every tool. Merge them with hooks of your own by concatenating the arrays.
 * @param {{ config?: string | object, guard?: object, session?: (input: object) => string }} [options]
 *   `config` (the agent-facing default document fills what it leaves out) or `guard` (a LoopGuard
 *   to share); `session`: the session id from a hook input (default: `input.session_id`).
 *   A broken config throws LoopGuardError here, naming its path.
 */
export function loopGuardHooks(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new LoopGuardError('input', 'options', 'must be an object');
  }
  const { session = (input) => input.session_id, ...gateOptions } = options;
  if (typeof session !== 'function') {
    throw new LoopGuardError('input', 'options.session', 'must be a function of the hook input');
  }
  const gate = new ToolGate(gateOptions);
  /** tool_use_id → ticket of a call that was let run */
  const tickets = new Map();

  const pre = async (input, toolUseID) => {
    const id = toolUseID ?? input.tool_use_id;
    const before = await gate.before({
      session: String(session(input)),
      tool: input.tool_name,
      args: input.tool_input,
      callId: id,
      agent: input.agent_id,
    });
    if (!before.run) {
      const deny = { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: before.message };
      return before.endRun ? { continue: false, stopReason: before.message, hookSpecificOutput: deny } : { hookSpecificOutput: deny };
    }
    tickets.set(id, before.ticket);
    if (tickets.size > MAX_PENDING) tickets.delete(tickets.keys().next().value);
    return {};
  };

  const post = async (input, toolUseID) => {
    const id = toolUseID ?? input.tool_use_id;
    const ticket = tickets.get(id);
    if (ticket === undefined) return {}; // refused by us, or not seen before
    tickets.delete(id);
    const failed = input.hook_event_name === 'PostToolUseFailure';
    const after = await gate.after(ticket, failed ? { error: input.error } : { result: input.tool_response });
    const out = {};
    if (after.note) out.hookSpecificOutput = { hookEventName: input.hook_event_name, additionalContext: after.note };
    if (after.endRun) Object.assign(out, { continue: false, stopReason: after.message });
    return out;
  };

  return {
    PreToolUse: [{ hooks: [pre] }],
    PostToolUse: [{ hooks: [post] }],
    PostToolUseFailure: [{ hooks: [post] }],
  };
}
