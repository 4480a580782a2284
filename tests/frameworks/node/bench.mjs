// The Node adapters' own cost per tool call (issue 59): the check and the outcome through each
// adapter's hook functions, called directly with fake framework objects (the framework's own
// overhead excluded), against the bare LoopGuard calls in the same run, per call of 200-call
// sessions (distinct calls: every call runs). Each adapter runs twice: on the real policy (compare
// with `bare`) and on a stub guard that answers at once (`+stub`: the adapter's bookkeeping alone,
// what it adds to the bare calls). Prints p50 and p99 in ms; the floor is p99 ≤ 0.5 ms.
// A benchmark, not a test.
//   (cd tests/frameworks/node && node --preserve-symlinks bench.mjs [SESSIONS])
import { LoopGuard, agentConfig } from 'loopguard';
import { loopGuard as aiSdk } from 'loopguard/ai-sdk';
import { loopGuardMiddleware } from 'loopguard/langchain';
import { loopGuard as mastra } from 'loopguard/mastra';
import { loopGuard as openaiAgents } from 'loopguard/openai-agents';
import { ToolMessage } from 'langchain';

const CALLS = 200;
const SESSIONS = Number(process.argv[2] ?? 60);
const args = (i) => ({ path: `/srv/app/src/module_${i}/handler.ts`, offset: i * 40, limit: 200 });
const output = (i) => `export function handler${i}(req, res) {\n  // ${'x'.repeat(200)}\n}\n`;

/** A guard that decides nothing: the adapters' own cost alone. */
const stub = { beforeToolCall: () => ({ action: 'allow', count: 1, notify: false }), afterToolOutcome: () => ({ action: 'recorded' }) };

/** One tool call through each path: (session, i) → Promise<void>. */
function paths(options, suffix = '') {
  const bare = new LoopGuard(agentConfig({}));
  const ai = aiSdk(options);
  const lc = loopGuardMiddleware(options);
  const oa = openaiAgents(options);
  const ma = mastra(options);
  const wraps = new Map();
  const runContexts = new Map();
  const requestContexts = new Map();
  const once = (map, key, make) => map.get(key) ?? map.set(key, make()).get(key);
  const all = {
    async bare(s, i) {
      const call = { session: s, tool: 'read', args: args(i), callId: `c${i}` };
      bare.beforeToolCall(call);
      bare.afterToolOutcome(call, { result: output(i) });
    },
    async 'ai-sdk'(s, i) {
      const settings = once(wraps, s, () => ai.wrap({}));
      const toolCall = { type: 'tool-call', toolCallId: `${s}:c${i}`, toolName: 'read', input: args(i) };
      await settings.toolApproval({ toolCall, tools: {}, toolsContext: {}, runtimeContext: {}, messages: [] });
      await settings.onToolExecutionEnd({ callId: 'g', toolCall, toolOutput: { type: 'tool-result', output: output(i) } });
    },
    async langchain(s, i) {
      const toolCall = { name: 'read', args: args(i), id: `${s}:c${i}`, type: 'tool_call' };
      const result = new ToolMessage({ content: output(i), tool_call_id: toolCall.id, name: 'read' }); // the tool's own answer
      await lc.wrapToolCall({ toolCall, tool: undefined, state: { messages: [] }, runtime: { configurable: { thread_id: s } } }, async () => result);
    },
    async 'openai-agents'(s, i) {
      const context = once(runContexts, s, () => ({ context: {} }));
      const toolCall = { type: 'function_call', name: 'read', arguments: JSON.stringify(args(i)), callId: `${s}:c${i}` };
      await oa.inputGuardrail.run({ context, agent: {}, toolCall });
      await oa.outputGuardrail.run({ context, agent: {}, toolCall, output: output(i) });
    },
    async mastra(s, i) {
      const requestContext = once(requestContexts, s, () => ({}));
      const ctx = { toolName: 'read', input: args(i), context: { toolCallId: `${s}:c${i}`, requestContext } };
      await ma.hooks.beforeToolCall(ctx);
      await ma.hooks.afterToolCall({ ...ctx, output: output(i) });
    },
  };
  if (suffix) delete all.bare;
  return Object.fromEntries(Object.entries(all).map(([k, f]) => [k + suffix, f]));
}

const ps = { ...paths({}), ...paths({ guard: stub }, '+stub') };
const names = Object.keys(ps);
const samples = Object.fromEntries(names.map((n) => [n, []]));
for (let s = 0; s < SESSIONS + 5; s++) {
  for (let i = 0; i < CALLS; i++) {
    for (const n of names) {
      const t = process.hrtime.bigint();
      await ps[n](`${n}-s${s}`, i);
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      if (s >= 5) samples[n].push(ms); // the first sessions warm up
    }
  }
}
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
console.log(`per tool call (check + outcome), ${SESSIONS} sessions × ${CALLS} calls, Node ${process.version}`);
console.log('path                 p50 ms   p99 ms   p99 over bare');
const bareP99 = pct(samples.bare, 99);
for (const n of names) {
  const [p50, p99] = [pct(samples[n], 50), pct(samples[n], 99)];
  const over = n === 'bare' || n.endsWith('+stub') ? '' : `${(p99 - bareP99).toFixed(3)}`;
  console.log(`${n.padEnd(19)} ${p50.toFixed(3).padStart(7)} ${p99.toFixed(3).padStart(8)}   ${over}`);
}
