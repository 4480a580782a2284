#!/usr/bin/env node
// What one tool-call decision costs a Node gateway: beforeToolCall + afterToolOutcome through the
// jco-transpiled component, on the mix of the Rust benchmark (host/benches/decision.rs): 1 000
// sessions with 30-entry histories already filled, ~300-byte arguments, results of a few hundred
// bytes, sessions round-robin. Also the batched path (applyEvents with 1 000 events per call) and
// bot messages (onBotMessage) on the Rust bot benchmark's mix.
//
// The call and outcome objects are built inside the timed loop, as a gateway builds them for its
// hook (their cost is included). Built up front, 30 000 of them made each decision pay cache
// misses on objects a gateway would just have written: 0.5–1 µs of the figure.
// `LOOPGUARD_NODE_GLUE=jco node bench.mjs` measures the tool hooks through jco's generated glue
// instead of the direct core calls (core-calls.mjs).
//
// Usage: node bench.mjs [--quick]
import { LoopGuard } from './loopguard.mjs';
import { defaultPolicy } from './policy.mjs';

const quick = process.argv.includes('--quick');
const CONFIG = '{"tools":{"loopDetection":{"enabled":true}}}';
const SESSIONS = 1000;
const HISTORY = 30;
const TOOLS = ['read', 'exec', 'grep', 'edit', 'web_fetch', 'process'];

function event(session, step) {
  const args = {
    path: `/home/dev/projects/service-${session}/src/module_${step}/handler.rs`,
    command: `cargo test -p service-${session} --lib module_${step}::tests -- --nocapture`,
    cwd: `/home/dev/projects/service-${session}`,
    timeout_ms: 120000,
    env: { RUST_LOG: 'debug', CI: 'false' },
    step,
  };
  const text =
    `running 12 tests\ntest module_${step}::tests::parses ... ok\ntest module_${step}::tests::rejects_empty ... ok\n` +
    `test module_${step}::tests::round_trips ... FAILED\n\nfailures:\n---- module_${step}::tests::round_trips stdout ----\n` +
    `assertion failed: left == right (session ${session})\n\ntest result: FAILED. 11 passed; 1 failed`;
  const result = { content: [{ type: 'text', text }], exitCode: 101, durationMs: 1000 + step * 7 };
  return {
    session: `agent:main:session-${session}`,
    tool: TOOLS[step % TOOLS.length],
    args,
    argsJson: JSON.stringify(args),
    result,
    resultJson: JSON.stringify(result),
  };
}

const events = [];
for (let step = 0; step < HISTORY; step++) for (let s = 0; s < SESSIONS; s++) events.push(event(s, step));
const argBytes = events.reduce((n, e) => n + e.argsJson.length, 0) / events.length;

function timeIt(label, unit, n, fn) {
  const t0 = process.hrtime.bigint();
  fn();
  const us = Number(process.hrtime.bigint() - t0) / 1e3 / n;
  console.log(`${label.padEnd(58)} ${us.toFixed(2).padStart(7)} µs per ${unit}`);
  return us;
}

const guard = new LoopGuard(CONFIG);
for (const e of events) {
  const call = { session: e.session, tool: e.tool, args: e.args, run: 'run-1' };
  guard.beforeToolCall(call);
  guard.afterToolOutcome(call, { result: e.result });
}
const glue = defaultPolicy.core !== null ? 'direct core calls' : "jco's glue (LOOPGUARD_NODE_GLUE=jco)";
console.log(`${SESSIONS} sessions x ${HISTORY}-entry histories filled; args ~${Math.round(argBytes)} bytes; Node ${process.version}`);
console.log(`tool hooks through ${glue}`);

const rounds = quick ? 1 : 3;
const n = events.length * rounds;
/** One pass of decisions per round, args (and result) as objects or as the JSON text. */
const decisions = (argsText, resultText) => () => {
  for (let r = 0; r < rounds; r++) {
    for (const e of events) {
      const call = argsText
        ? { session: e.session, tool: e.tool, argsJson: e.argsJson, run: 'run-1' }
        : { session: e.session, tool: e.tool, args: e.args, run: 'run-1' };
      guard.beforeToolCall(call);
      guard.afterToolOutcome(call, resultText ? { resultJson: e.resultJson } : { result: e.result });
    }
  }
};
const objects = decisions(false, false);
const argsText = decisions(true, false);
const bothText = decisions(true, true);
// warm-up passes so V8 has tiered up the wasm and the wrappers
objects();
bothText();
const withObjects = timeIt('single call, args objects (JSON.stringify in the wrapper)', 'decision', n, objects);
timeIt('single call, args already JSON text (argsJson)', 'decision', n, argsText);
const withText = timeIt('single call, args and result already JSON text', 'decision', n, bothText);

// Batched: the same events as trace lines, 1 000 events per applyEvents call.
const BATCH = 1000;
const lines = [];
for (const e of events) {
  const base = { session: e.session, run: 'run-1', tool: e.tool, args: e.args };
  lines.push(JSON.stringify({ kind: 'tool_call', ...base }));
  lines.push(JSON.stringify({ kind: 'tool_result', ...base, result: e.result }));
}
const batches = [];
for (let i = 0; i < lines.length; i += BATCH) batches.push(lines.slice(i, i + BATCH).join('\n'));
const batched = () => {
  for (let r = 0; r < rounds; r++) for (const b of batches) guard.applyEvents(b, 1);
};
batched();
const perEvent = timeIt(`applyEvents, ${BATCH} events per batch`, 'event', lines.length * rounds, batched);
console.log(`${''.padEnd(58)} ${(perEvent * 2).toFixed(2).padStart(7)} µs per decision (call + result events)`);

// Bot messages, on the mix of the Rust bot benchmark (host/benches/common/bot_workload.rs):
// 100 000 pairs over 1 000 conversations of 10 accounts, each filled with one message, then
// messages to pairs in a scattered order with time moving on by 1 ms per message and a fresh
// event id each time (built in the loop, as a gateway builds them).
const PAIRS = 100_000;
const pairs = Array.from({ length: PAIRS }, (_, p) => ({
  account: `acct-${p % 10}`,
  conversation: `chan-${Math.floor(p / 10) % 10_000}`,
  a: `bot-a-${p}`,
  b: `bot-b-${p}`,
}));
const bots = new LoopGuard('{}');
let ts = 1_000_000;
const botMessage = (p) => {
  const pair = pairs[p];
  ts += 1;
  const [sender, receiver] = ts % 2 === 0 ? [pair.a, pair.b] : [pair.b, pair.a];
  return { channel: 'discord', account: pair.account, conversation: pair.conversation, sender, receiver, tsMs: ts, eventId: `e${ts}` };
};
for (let p = 0; p < PAIRS; p++) bots.onBotMessage(botMessage(p));
const BOT_MESSAGES = quick ? 100_000 : 300_000;
const botLoop = () => {
  let next = 0;
  for (let i = 0; i < BOT_MESSAGES; i++) {
    bots.onBotMessage(botMessage(next % PAIRS));
    next += 7919;
  }
};
botLoop();
const perBot = timeIt(`bot message (onBotMessage), ${PAIRS} active pairs`, 'message', BOT_MESSAGES, botLoop);
bots[Symbol.dispose]();

// The floor under any single call: an empty method call (`stats`) through jco's generated glue,
// which creates and retires a task object per call whatever the call does. A decision through
// the hooks is two calls, so this, twice, is the part no policy change can remove.
const { Gateway } = defaultPolicy.exports.guard;
const bare = Gateway.create('{}');
const EMPTY = 100_000;
const empty = () => {
  for (let i = 0; i < EMPTY; i++) bare.stats();
};
empty();
timeIt('empty method call through jco (gateway.stats)', 'call', EMPTY, empty);
bare[Symbol.dispose]?.();
guard[Symbol.dispose]();
// for scripts/bench-hosts.sh: the JSON-text figure is the one with the Rust benchmark's inputs
console.log(
  `summary node single=${withText.toFixed(2)} batched=${perEvent.toFixed(2)} objects=${withObjects.toFixed(2)} bot=${perBot.toFixed(2)}`,
);
