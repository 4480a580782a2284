// loopguard in OpenCode, in-process: the plugin runs inside OpenCode's own process, so a check
// costs a function call, not a process start (the Claude Code/Codex/Gemini hooks are processes).
// Install: `opencode.json` `{"plugin": ["opencode-loopguard"]}` (OpenCode installs it from npm),
// or a file in `.opencode/plugin/` that re-exports this module's default.
//
// What maps to what (ToolGate, the one mapping every adapter shares; no loop rule lives here):
// - `tool.execute.before` → gate.before. A block throws `Error(message)`: OpenCode turns it into
//   that call's tool error, so the model reads exactly the policy's message; the tool does not
//   run and `tool.execute.after` does not fire for it.
// - `tool.execute.after` → gate.after with `output.output` (the text the model will read) as the
//   outcome. A warning is appended to that same text (`\n\n` + the note), once: OpenCode has no
//   other per-call way to hand the model a note. A tool that throws has no after point in
//   OpenCode, so its error is not recorded.
// - An end of run (the ladder under `loopguard.preset: "recommended"`, or an abort from the
//   outcome) → `client.session.abort`; later calls of that session are refused with its message.
// - Session = OpenCode's `sessionID` (a subagent's task has its own); calls pair by `callID`.
//
// Options (opencode.json `["opencode-loopguard", {…}]`): `config` (an object or JSON text),
// else `configFile` / `LOOPGUARD_CONFIG` (a JSON file); the agent-facing hosts' default
// document fills in what it does not say. From code, `guard`: a LoopGuard to share.
// `failMode` / `LOOPGUARD_FAIL_MODE`: `open` (default: a broken config is reported once on
// stderr and the calls run unguarded) or `closed` (every call is refused with the reason).
import fs from 'node:fs';
import { ToolGate } from 'loopguard';

/** Calls whose after point never came (a tool that threw): the oldest go first. */
const MAX_TICKETS = 4096;

/**
 * Opens the gate from the options; a config that cannot be read or is invalid is returned as
 * the reason, naming the file (or option) and the key the policy names.
 * @returns {{ gate: ToolGate } | { reason: string }}
 */
export function openGate(options = {}, env = process.env) {
  const file = options.configFile ?? env.LOOPGUARD_CONFIG;
  const where = options.config !== undefined ? 'the plugin option "config"' : file;
  try {
    let config = options.config;
    if (config === undefined && file) config = fs.readFileSync(file, 'utf8');
    return { gate: new ToolGate(options.guard ? { guard: options.guard } : { config: config ?? {} }) };
  } catch (e) {
    return { reason: `loopguard: invalid config ${where ?? '(none)'}: ${e?.message ?? e}` };
  }
}

/** The plugin's hooks, given OpenCode's plugin input and this plugin's options. */
export async function LoopGuardPlugin({ client }, options = {}) {
  const closed = (options.failMode ?? process.env.LOOPGUARD_FAIL_MODE) === 'closed';
  const opened = openGate(options ?? {});
  if (!opened.gate) {
    const refusal = `${opened.reason}; this tool call is blocked because loopguard's fail mode is closed.`;
    process.stderr.write(`${opened.reason} (fail mode ${closed ? 'closed: every tool call is refused' : 'open: tool calls run unguarded'})\n`);
    return closed ? { 'tool.execute.before': async () => { throw new Error(refusal); } } : {};
  }
  const { gate } = opened;
  const tickets = new Map(); // callID → ticket
  const ended = new Map(); // sessionID → the message that ended it

  const failed = (e) => {
    const reason = `loopguard: ${e?.message ?? e}`;
    if (closed) throw new Error(`${reason}; this tool call is blocked because loopguard's fail mode is closed.`);
    process.stderr.write(`${reason} (fail mode open: the call runs)\n`);
  };
  const end = (sessionID, message) => {
    if (ended.has(sessionID)) return;
    ended.set(sessionID, message);
    // Not awaited: the abort cancels the very tool call whose hook is running.
    Promise.resolve(client?.session?.abort?.({ path: { id: sessionID } }))
      .catch((e) => process.stderr.write(`loopguard: could not abort session ${sessionID}: ${e?.message ?? e}\n`));
  };

  return {
    'tool.execute.before': async (input, output) => {
      const gone = ended.get(input.sessionID);
      if (gone !== undefined) throw new Error(gone);
      let verdict;
      try {
        verdict = await gate.before({ session: input.sessionID, tool: input.tool, args: output.args, callId: input.callID });
      } catch (e) {
        return failed(e);
      }
      if (!verdict.run) {
        if (verdict.endRun) end(input.sessionID, verdict.message);
        throw new Error(verdict.message);
      }
      tickets.set(input.callID, verdict.ticket);
      if (tickets.size > MAX_TICKETS) tickets.delete(tickets.keys().next().value);
    },
    'tool.execute.after': async (input, output) => {
      const ticket = tickets.get(input.callID);
      if (ticket === undefined) return;
      tickets.delete(input.callID);
      let after;
      try {
        after = await gate.after(ticket, { result: output.output });
      } catch (e) {
        return failed(e);
      }
      if (after.note) output.output = `${output.output ?? ''}\n\n${after.note}`;
      if (after.endRun) end(input.sessionID, after.message);
    },
  };
}

export default { id: 'loopguard', server: LoopGuardPlugin };
