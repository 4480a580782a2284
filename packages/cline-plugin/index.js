// loopguard in Cline's CLI, in-process: a Cline plugin (`{name, manifest: {capabilities:
// ["hooks"]}, hooks: {beforeTool, afterTool}}`, loaded from ~/.cline/plugins or
// <workspace>/.cline/plugins). A Cline file hook (PreToolUse) cannot refuse one call, only
// cancel the whole task; a plugin can, so loopguard ships as one.
//
// What maps to what (ToolGate, the one mapping every adapter shares; no loop rule lives here):
// - `beforeTool` → gate.before. A block returns `{skip: true, reason}`: the tool does not run and
//   the model reads `{"error":"<the policy's message>"}` as its result.
// - `afterTool` → gate.after with the tool's `output` (`{error}` when Cline marks it `isError`).
//   Cline also calls afterTool for a call a hook skipped: that call has no ticket and is not
//   recorded. A warning returns `{appendContext: note}`, once: Cline hands it to the model in a
//   `<hook_context>` user message after the step's tool results.
// - An end of run (the ladder under `loopguard.preset: "recommended"`, or an abort from the
//   outcome) returns `stop: true` with the message: Cline ends the task; later calls of that
//   session are refused with the same message.
// - Session = Cline's task id (the runtime's `conversationId`); calls pair by `toolCallId`.
//
// Cline checks exact repeats itself first (the CLI's loop detection: a recovery notice at the
// 3rd identical consecutive call, the task stopped at the 5th).
//
// Config: `LOOPGUARD_CONFIG` (a JSON file), else ~/.cline/loopguard.json if present; the
// agent-facing hosts' default document fills in what it does not say. `LOOPGUARD_FAIL_MODE`:
// `open` (default: a broken config is reported once on stderr and the calls run unguarded) or
// `closed` (every call is refused with the reason). `createLoopGuardPlugin(options)` takes the
// same as options (`config`, `configFile`, `failMode`; or `guard`: a LoopGuard to share) for
// hosts embedding Cline's SDK.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Cline's plugin sandbox loads a plugin through jiti (a transpiling loader) and gives that 4 s
// (`initialize`); transpiling the policy's bindings does not fit on a busy machine, and Cline
// then runs without plugins. So `loopguard` is imported natively (an `import()` jiti does not
// rewrite), at the first tool call.
const nativeImport = new Function('url', 'return import(url)');
let loopguard;
const importLoopGuard = () =>
  (loopguard ??= nativeImport(pathToFileURL(createRequire(import.meta.url).resolve('loopguard')).href));

/** Calls whose after point never came: the oldest go first. */
const MAX_TICKETS = 4096;

function openGate(ToolGate, options, env) {
  const home = path.join(os.homedir(), '.cline', 'loopguard.json');
  const file = options.configFile ?? env.LOOPGUARD_CONFIG ?? (fs.existsSync(home) ? home : undefined);
  const where = options.config !== undefined ? 'the option "config"' : file;
  try {
    let config = options.config;
    if (config === undefined && file) config = fs.readFileSync(file, 'utf8');
    return { gate: new ToolGate(options.guard ? { guard: options.guard } : { config: config ?? {} }) };
  } catch (e) {
    return { reason: `loopguard: invalid config ${where ?? '(none)'}: ${e?.message ?? e}` };
  }
}

/** The session of a hook's context: Cline's task id. */
const sessionOf = (snapshot) => snapshot?.conversationId ?? snapshot?.runId ?? snapshot?.agentId ?? 'cline';

/**
 * A Cline plugin around one ToolGate (a promise: `loopguard` is imported first).
 * @param {{ config?: object | string, configFile?: string, failMode?: 'open' | 'closed' }} [options]
 */
export async function createLoopGuardPlugin(options = {}, env = process.env) {
  const closed = (options.failMode ?? env.LOOPGUARD_FAIL_MODE) === 'closed';
  const opened = openGate((await importLoopGuard()).ToolGate, options, env);
  const plugin = { name: 'loopguard', manifest: { capabilities: ['hooks'] }, hooks: {} };
  if (!opened.gate) {
    const refusal = `${opened.reason}; this tool call is blocked because loopguard's fail mode is closed.`;
    let told = false;
    plugin.hooks.beforeTool = async () => {
      if (!told) process.stderr.write(`${opened.reason} (fail mode ${closed ? 'closed: every tool call is refused' : 'open: tool calls run unguarded'})\n`);
      told = true;
      return closed ? { skip: true, reason: refusal } : undefined;
    };
    return plugin;
  }
  const { gate } = opened;
  const tickets = new Map(); // toolCallId → ticket
  const ended = new Map(); // session → the message that ended it

  const failed = (e) => {
    const reason = `loopguard: ${e?.message ?? e}`;
    if (closed) return { skip: true, reason: `${reason}; this tool call is blocked because loopguard's fail mode is closed.` };
    process.stderr.write(`${reason} (fail mode open: the call runs)\n`);
    return undefined;
  };

  plugin.hooks.beforeTool = async ({ snapshot, toolCall, input }) => {
    const session = sessionOf(snapshot);
    const gone = ended.get(session);
    if (gone !== undefined) return { skip: true, stop: true, reason: gone };
    let verdict;
    try {
      verdict = await gate.before({ session, tool: toolCall.toolName, args: input, callId: toolCall.toolCallId, agent: snapshot?.agentId });
    } catch (e) {
      return failed(e);
    }
    if (!verdict.run) {
      if (!verdict.endRun) return { skip: true, reason: verdict.message };
      ended.set(session, verdict.message);
      return { skip: true, stop: true, reason: verdict.message };
    }
    tickets.set(toolCall.toolCallId, verdict.ticket);
    if (tickets.size > MAX_TICKETS) tickets.delete(tickets.keys().next().value);
    return undefined;
  };

  plugin.hooks.afterTool = async ({ snapshot, toolCall, result }) => {
    const ticket = tickets.get(toolCall.toolCallId);
    if (ticket === undefined) return undefined; // skipped by a hook (ours included), or unseen
    tickets.delete(toolCall.toolCallId);
    let after;
    try {
      after = await gate.after(ticket, result?.isError ? { error: result.output } : { result: result?.output });
    } catch (e) {
      failed(e);
      return undefined;
    }
    const answer = {};
    if (after.note) answer.appendContext = after.note;
    if (after.endRun) {
      ended.set(sessionOf(snapshot), after.message);
      Object.assign(answer, { stop: true, reason: after.message });
    }
    return Object.keys(answer).length ? answer : undefined;
  };
  return plugin;
}

// The plugin Cline loads: its gate is made at the first call. Also exported by name, for a
// plugin file in ~/.cline/plugins that re-exports it as its default (Cline loads plugin files
// through jiti, which does not pass a re-exported default through as is; docs/agent-clis/cline.md).
// Cline's sandbox also scans a plugin's text for import specifiers, comments included: none here
// may name a package that is not installed.
let made;
const loaded = () => (made ??= createLoopGuardPlugin());
export const plugin = {
  name: 'loopguard',
  manifest: { capabilities: ['hooks'] },
  hooks: {
    beforeTool: async (context) => (await loaded()).hooks.beforeTool?.(context),
    afterTool: async (context) => (await loaded()).hooks.afterTool?.(context),
  },
};
export default plugin;
