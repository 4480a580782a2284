// The in-process plugins' own cost per tool call (issue 60: ≤ 0.5 ms p99): OpenCode's
// `tool.execute.before` + `tool.execute.after` and Cline's `beforeTool` + `afterTool`, called
// directly with fake inputs shaped as each CLI passes them, against the bare guard's
// `beforeToolCall` + `afterToolOutcome` on the same calls in the same run; and each plugin around
// a guard that decides nothing (`guard` option: allow at once), which is the plugin's own cost
// alone. Each session is 200 distinct calls (none blocked: every hook does its full work);
// sessions alternate between the kinds so that the machine's load falls on all alike.
//
//   node tests/agent-clis/bench-plugins.mjs [sessions=20]
//
// The plugins are imported as npm installs them (a folder with node_modules/{opencode-loopguard,
// cline-loopguard} copied and loopguard linked to packages/node).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SESSIONS = Number(process.argv[2] || 20);
const CALLS = 200;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-plugins-'));
const nm = path.join(dir, 'node_modules');
fs.mkdirSync(nm);
for (const [name, src] of [['opencode-loopguard', 'opencode-plugin'], ['cline-loopguard', 'cline-plugin']]) {
  fs.mkdirSync(path.join(nm, name));
  for (const f of ['index.js', 'package.json']) fs.copyFileSync(path.join(ROOT, 'packages', src, f), path.join(nm, name, f));
}
fs.symlinkSync(path.join(ROOT, 'packages', 'node'), path.join(nm, 'loopguard'));
const load = (name) => import(pathToFileURL(path.join(nm, name, 'index.js')).href);
const { LoopGuard, agentConfig } = await import(pathToFileURL(path.join(nm, 'loopguard', 'index.js')).href);
const opencode = await load('opencode-loopguard');
const cline = await load('cline-loopguard');

const call = (i) => ({ command: `cat src/file${i}.py`, description: 'Read a source file' });
const output = (i) => `line one of file ${i}\nline two\n`;

async function bare(session) {
  const guard = new LoopGuard(agentConfig({}));
  const t = [];
  for (let i = 0; i < CALLS; i++) {
    const c = { session, tool: 'bash', args: call(i), callId: `c${i}` };
    const t0 = performance.now();
    const v = guard.beforeToolCall(c);
    if (v.action !== 'block') guard.afterToolOutcome(c, { result: output(i) });
    t.push(performance.now() - t0);
  }
  return t;
}

/** A guard that decides nothing: the plugin's own work alone. */
const idle = { beforeToolCall: () => ({ action: 'allow' }), afterToolOutcome: () => ({ action: 'allow' }) };

async function openCode(session, options = {}) {
  const hooks = await opencode.LoopGuardPlugin({ client: { session: { abort: async () => {} } } }, options);
  const t = [];
  for (let i = 0; i < CALLS; i++) {
    const input = { tool: 'bash', sessionID: session, callID: `call_${i}` };
    const out = { title: '', output: output(i), metadata: {} };
    const t0 = performance.now();
    await hooks['tool.execute.before'](input, { args: call(i) });
    await hooks['tool.execute.after']({ ...input, args: call(i) }, out);
    t.push(performance.now() - t0);
  }
  return t;
}

async function clinePlugin(session, options = {}) {
  const plugin = await cline.createLoopGuardPlugin(options);
  const t = [];
  for (let i = 0; i < CALLS; i++) {
    const input = { commands: [call(i).command] };
    const snapshot = { agentId: 'agent_1', conversationId: session, runId: 'run_1', status: 'running', iteration: i + 1, messages: [], pendingToolCalls: [] };
    const toolCall = { type: 'tool-call', toolCallId: `call_${i}`, toolName: 'run_commands', input };
    const t0 = performance.now();
    const b = await plugin.hooks.beforeTool({ snapshot, tool: {}, toolCall, input });
    if (!b?.skip) await plugin.hooks.afterTool({ snapshot, tool: {}, toolCall, input, result: { output: [{ query: input.commands[0], result: output(i), success: true }] } });
    t.push(performance.now() - t0);
  }
  return t;
}

const kinds = {
  bare,
  opencode: openCode,
  cline: clinePlugin,
  'opencode, idle guard': (s) => openCode(s, { guard: idle }),
  'cline, idle guard': (s) => clinePlugin(s, { guard: idle }),
};
const runs = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
for (const k of Object.keys(kinds)) await kinds[k]('warm-up'); // V8 compiles the hot code
for (let s = 0; s < SESSIONS; s++) for (const [k, f] of Object.entries(kinds)) runs[k].push(...(await f(`s${s}`)));
const q = (xs, p) => xs.toSorted((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
console.log(`${SESSIONS} sessions of ${CALLS} calls each (check + outcome per call), load average ${os.loadavg()[0].toFixed(2)}`);
for (const [k, t] of Object.entries(runs)) {
  console.log(`${k.padEnd(20)} p50 ${q(t, 0.5).toFixed(3)} ms  p99 ${q(t, 0.99).toFixed(3)} ms`);
}
const extra = (k, p) => (q(runs[k], p) - q(runs.bare, p)).toFixed(3);
console.log(`plugin over bare: opencode p50 +${extra('opencode', 0.5)} ms, p99 +${extra('opencode', 0.99)} ms; cline p50 +${extra('cline', 0.5)} ms, p99 +${extra('cline', 0.99)} ms`);
fs.rmSync(dir, { recursive: true, force: true });
