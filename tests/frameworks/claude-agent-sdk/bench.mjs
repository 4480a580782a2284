// The adapter's own cost per tool call (PreToolUse + PostToolUse through loopguard/claude-agent-sdk's
// hook functions, the SDK and Claude Code excluded) against the bare LoopGuard calls in the same
// run, 200-call sessions of distinct calls, interleaved; and the adapter over a stub guard that
// answers at once (its own code alone).   node tests/frameworks/claude-agent-sdk/bench.mjs
import { LoopGuard } from 'loopguard';
import { agentConfig } from '../../../packages/node/lib/agent.js';
import { loopGuardHooks } from 'loopguard/claude-agent-sdk';

const SESSIONS = 10;
const CALLS = 200;
const stub = {
  beforeToolCall: async () => ({ action: 'allow', notify: false }),
  afterToolOutcome: async () => ({ action: 'recorded' }),
};
const mine = loopGuardHooks();
const alone = loopGuardHooks({ guard: stub });
const guard = new LoopGuard(agentConfig({}));

const adapter = (hooks, session, i) => async () => {
  const pre = { session_id: session, tool_name: 'Read', tool_input: { file_path: `/src/${i}.js` }, hook_event_name: 'PreToolUse' };
  await hooks.PreToolUse[0].hooks[0](pre, `${session}-${i}`, {});
  await hooks.PostToolUse[0].hooks[0]({ ...pre, hook_event_name: 'PostToolUse', tool_response: `text ${i}` }, `${session}-${i}`, {});
};
const bare = (session, i) => async () => {
  const call = { session, tool: 'read', args: { path: `/src/${i}.js` } };
  await guard.beforeToolCall(call);
  await guard.afterToolOutcome(call, { result: `text ${i}` });
};
const timed = async (fn) => {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

for (let i = 0; i < 50; i++) {
  await adapter(mine, 'warm', i)();
  await adapter(alone, 'warm', i)();
  await bare('warm', i)();
}
const ours = [], theirs = [], own = [];
for (let s = 0; s < SESSIONS; s++) {
  for (let i = 0; i < CALLS; i++) {
    ours.push(await timed(adapter(mine, `s${s}`, i)));
    theirs.push(await timed(bare(`s${s}`, i)));
    own.push(await timed(adapter(alone, `s${s}`, i)));
  }
}
console.log(`claude-agent-sdk (Node): ${SESSIONS} sessions x ${CALLS} calls, ms per call (check + outcome)`);
for (const [label, xs] of [['adapter', ours], ['bare', theirs], ['adapter over a stub guard (its own cost)', own]]) {
  console.log(`  ${label} p50 ${pct(xs, 50).toFixed(3)}  p99 ${pct(xs, 99).toFixed(3)}`);
}
