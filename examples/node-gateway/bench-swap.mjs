#!/usr/bin/env node
// What a hot swap costs a Node gateway with 10 000 live sessions (each with a 10-entry history of
// ~300-byte arguments and few-hundred-byte results, the mix of bench.mjs):
// - prepare: read + (transpile in a worker | reuse) + compile + instantiate + create the gateway;
//   the old policy keeps answering meanwhile (a timer loop measures how long the event loop
//   stalls, and hook calls keep being made while the swap is pending);
// - switch: exportState from the old gateway + importState into the new one + the switch, one
//   synchronous step during which no call is answered. This is the latency a gateway sees.
// Two kinds of swap: to the same .wasm (its compiled modules are reused) and to a byte-different
// copy (an extra custom section), which goes through jco in a worker like any new policy file.
// At the end, the swapped guard and a never-swapped one must decide a further round identically.
//
// Usage: node bench-swap.mjs [--quick] [--sessions N] [path/to/loopguard_policy.wasm]
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoopGuard } from './loopguard.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const sessionsAt = argv.indexOf('--sessions');
const SESSIONS = sessionsAt >= 0 ? Number(argv[sessionsAt + 1]) : 10_000;
const wasm =
  argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--sessions') ??
  join(here, '../../target/policy/wasm32-wasip2/release/loopguard_policy.wasm');
const HISTORY = 10;
const ROUNDS = quick ? 2 : 5;
const CONFIG = '{"tools":{"loopDetection":{"enabled":true}}}';
const TOOLS = ['read', 'exec', 'grep', 'edit', 'web_fetch', 'process'];

function lines(session, step) {
  const args = {
    path: `/home/dev/projects/service-${session}/src/module_${step}/handler.rs`,
    command: `cargo test -p service-${session} --lib module_${step}::tests -- --nocapture`,
    cwd: `/home/dev/projects/service-${session}`,
    timeout_ms: 120000,
    env: { RUST_LOG: 'debug', CI: 'false' },
    step,
  };
  const text =
    `running 12 tests\ntest module_${step}::tests::parses ... ok\n` +
    `test module_${step}::tests::round_trips ... FAILED\n\ntest result: FAILED. 11 passed; 1 failed (session ${session})`;
  const base = { session: `agent:main:session-${session}`, run: 'run-1', tool: TOOLS[step % TOOLS.length], args };
  return [
    JSON.stringify({ kind: 'tool_call', ...base }),
    JSON.stringify({ kind: 'tool_result', ...base, result: { content: [{ type: 'text', text }], exitCode: 101 } }),
  ];
}

function fill(guard, steps) {
  for (const step of steps) {
    let batch = [];
    for (let s = 0; s < SESSIONS; s++) {
      batch.push(...lines(s, step));
      if (batch.length >= 2000) {
        guard.applyEvents(batch.join('\n'));
        batch = [];
      }
    }
    if (batch.length) guard.applyEvents(batch.join('\n'));
  }
}

/**
 * Runs `swap` while a 1 ms timer and a hook-call loop run. Returns the report, the longest
 * event-loop stall that ended before the switch (the preparation's cost to live traffic; the
 * switch itself blocks for `switchMs`) and how many hook calls were answered meanwhile.
 */
async function measured(guard, source) {
  let last = performance.now();
  const gaps = []; // [end, length]
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push([now, now - last]);
    last = now;
  }, 1);
  let calls = 0;
  let busy = true;
  const caller = async () => {
    while (busy) {
      guard.beforeToolCall({ session: 'bench:probe', tool: 'read', args: { path: `/probe/${calls % 7}` } });
      calls++;
      await new Promise((r) => setImmediate(r));
    }
  };
  const probing = caller();
  const start = performance.now();
  const report = await guard.swap(source);
  busy = false;
  await probing;
  clearInterval(timer);
  const prepared = start + report.prepareMs;
  const prepareStall = Math.max(0, ...gaps.filter(([end]) => end <= prepared).map(([, gap]) => gap));
  return { ...report, prepareStall, calls };
}

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0], median: s[Math.floor(s.length / 2)], max: s[s.length - 1] };
};
const ms = (x) => `${x.toFixed(1)} ms`;

const bytes = readFileSync(wasm);
const variants = Array.from({ length: ROUNDS }, (_, i) => {
  const name = Buffer.from('loopguard-bench');
  const body = Buffer.concat([Buffer.from([name.length]), name, Buffer.from(`round ${i}`)]);
  return Buffer.concat([bytes, Buffer.from([0, body.length]), body]);
});

const guard = new LoopGuard(CONFIG);
const control = new LoopGuard(CONFIG);
const t0 = performance.now();
const steps = Array.from({ length: HISTORY }, (_, i) => i);
fill(guard, steps);
fill(control, steps);
const fillMs = (performance.now() - t0) / 2;
console.log(
  `${guard.stats().sessions} live sessions x ${HISTORY}-entry histories (filled in ${ms(fillMs)}); ` +
    `Node ${process.version}; ${ROUNDS} swaps of each kind`,
);

const exportMs = [];
const importMs = [];
let snapshotBytes = 0;
{
  const scratch = new LoopGuard(CONFIG);
  for (let i = 0; i < ROUNDS; i++) {
    const a = performance.now();
    const snap = guard.exportState();
    const b = performance.now();
    scratch.importState(snap);
    const c = performance.now();
    exportMs.push(b - a);
    importMs.push(c - b);
    snapshotBytes = snap.length;
  }
  scratch[Symbol.dispose]();
}

const kinds = [
  ['same .wasm (compiled modules reused)', () => wasm],
  ['other bytes (jco transpile in a worker)', (i) => variants[i]],
];
const rows = [];
for (const [label, source] of kinds) {
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await measured(guard, source(i)));
  rows.push([label, runs]);
}
// the probe calls made while swapping went to one more session, 'bench:probe'
control.beforeToolCall({ session: 'bench:probe', tool: 'read', args: { path: '/probe/0' } });
if (guard.stats().sessions !== control.stats().sessions) throw new Error('sessions lost in the swaps');

// Same decisions as a guard that was never swapped.
const probe = [];
for (let s = 0; s < SESSIONS; s += 1) probe.push(...lines(s, HISTORY));
const text = probe.join('\n');
if (guard.applyEvents(text) !== control.applyEvents(text)) throw new Error('the swapped guard decides differently');

console.log(
  `snapshot: ${(snapshotBytes / 1e6).toFixed(1)} MB; exportState ${ms(stats(exportMs).median)}, ` +
    `importState ${ms(stats(importMs).median)} (medians)`,
);
for (const [label, runs] of rows) {
  const sw = stats(runs.map((r) => r.switchMs));
  const prep = stats(runs.map((r) => r.prepareMs));
  const stall = stats(runs.map((r) => r.prepareStall));
  const calls = Math.round(runs.reduce((n, r) => n + r.calls, 0) / runs.length);
  console.log(`swap to ${label}:`);
  console.log(`  switch (export + import + switch; calls wait):   median ${ms(sw.median)}  (min ${ms(sw.min)}, max ${ms(sw.max)})`);
  console.log(`  prepare (the old policy answers meanwhile):      median ${ms(prep.median)}  (min ${ms(prep.min)}, max ${ms(prep.max)})`);
  console.log(`  longest event-loop stall while preparing:        median ${ms(stall.median)}  (max ${ms(stall.max)})`);
  console.log(`  hook calls answered during a swap:               ${calls} on average`);
}
console.log('after the swaps: same decisions as a never-swapped guard on one more call+result per session');
guard[Symbol.dispose]();
control[Symbol.dispose]();
