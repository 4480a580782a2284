// The Node figures of the README: one tool-call decision (beforeToolCall + afterToolOutcome, the
// arguments and the result as objects) on the Rust benchmark's workload (1,000 sessions with
// 30-entry histories, ~300-byte arguments, results of a few hundred bytes), the batched path, a
// bot message with 100,000 active pairs, and the cold start (import, first guard, first decision)
// in a fresh process. Medians of several timed rounds. A benchmark, not a test.
//
// The cost of OpenTelemetry metrics (docs/METRICS.md): paired rounds of the same tool-call
// decisions on two guards, one without metrics and one recording on the SDK's MeterProvider
// with an in-memory exporter (@opentelemetry/sdk-metrics, a devDependency), alternating in this
// process (which runs first alternates too); the figure is the median of the per-pair ratios,
// so drift of the machine between rounds cancels out. `--control` pairs two guards without
// metrics the same way (an A/A run: the noise of the figure).
//
// Usage: node bench/decision.mjs [--metrics (only the metrics pairs) [--control]]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === '--cold') {
  const t0 = performance.now();
  const { LoopGuard } = await import('../index.js');
  const guard = new LoopGuard({ tools: { loopDetection: { enabled: true } } });
  guard.beforeToolCall({ session: 's', tool: 'read', args: { path: '/a' } });
  process.stdout.write(String(performance.now() - t0));
  process.exit(0);
}

const { LoopGuard } = await import('../index.js');
const SESSIONS = 1000;
const HISTORY = 30;
const TOOLS = ['read', 'exec', 'grep', 'edit', 'web_fetch', 'process'];
const args = (s, step) => ({
  path: `/home/dev/projects/service-${s}/src/module_${step}/handler.rs`,
  command: `cargo test -p service-${s} --lib module_${step}::tests -- --nocapture`,
  cwd: `/home/dev/projects/service-${s}`,
  timeout_ms: 120000,
  env: { RUST_LOG: 'debug', CI: 'false' },
  step,
});
const result = (s, step) => ({
  content: [
    {
      type: 'text',
      text: `running 12 tests\ntest module_${step}::tests::parses ... ok\ntest module_${step}::tests::rejects_empty ... ok\ntest module_${step}::tests::round_trips ... FAILED\n\nfailures:\n---- module_${step}::tests::round_trips stdout ----\nassertion failed: left == right (session ${s})\n\ntest result: FAILED. 11 passed; 1 failed`,
    },
  ],
  exitCode: 101,
  durationMs: 1000 + step * 7,
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const CONFIG = { tools: { loopDetection: { enabled: true } } };
const guard = new LoopGuard(CONFIG);
const decideOn = (g, i) => {
  const step = Math.floor(i / SESSIONS) % HISTORY;
  const s = i % SESSIONS;
  const call = { session: `agent:main:session-${s}`, tool: TOOLS[step % TOOLS.length], args: args(s, step), run: 'run-1' };
  g.beforeToolCall(call);
  g.afterToolOutcome(call, { result: result(s, step) });
};
const decide = (i) => decideOn(guard, i);

if (process.argv.includes('--metrics')) {
  console.log(`node ${process.version}`);
  await metricsPairs();
  process.exit(0);
}

/** Metrics off and on, paired rounds (see the head of this file). */
async function metricsPairs() {
  const { InMemoryMetricExporter, AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 1000 });
  const provider = new MeterProvider({ readers: [reader] });
  const off = new LoopGuard(CONFIG, { meterProvider: null });
  const control = process.argv.includes('--control');
  const on = new LoopGuard(CONFIG, { meterProvider: control ? null : provider, metricsHost: 'bench' });
  for (let i = 0; i < SESSIONS * HISTORY; i++) {
    decideOn(off, i);
    decideOn(on, i);
  }
  const round = (g, from, n) => {
    const t = performance.now();
    for (let i = from; i < from + n; i++) decideOn(g, i);
    return ((performance.now() - t) * 1000) / n;
  };
  const PAIRS = 41;
  const N = 2000;
  const ratios = [];
  const offUs = [];
  const onUs = [];
  for (let p = 0; p < PAIRS; p++) {
    const from = SESSIONS * HISTORY + p * N; // both guards decide the same calls on the same state
    const [a, b] = p % 2 === 0 ? [round(off, from, N), round(on, from, N)] : [round(on, from, N), round(off, from, N)].reverse();
    offUs.push(a);
    onUs.push(b);
    ratios.push(b / a);
    await new Promise((r) => setImmediate(r)); // the reader's timer may export between pairs
  }
  await reader.forceFlush();
  const exported = exporter.getMetrics().at(-1)?.scopeMetrics[0]?.metrics.map((m) => m.descriptor.name) ?? [];
  await provider.shutdown();
  const pct = (median(ratios) - 1) * 100;
  console.log(
    `${control ? 'A/A control, two guards without metrics' : 'metrics on/off'}, tool-call decision: ${pct >= 0 ? '+' : ''}${pct.toFixed(1)}% (median of ${PAIRS} paired rounds of ${N}; ratios ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}; off ${median(offUs).toFixed(2)} µs, on ${median(onUs).toFixed(2)} µs; exported: ${exported.length} instruments)`,
  );
}

for (let i = 0; i < SESSIONS * HISTORY; i++) decide(i); // fill every history
const rounds = [];
for (let r = 0; r < 9; r++) {
  const n = 10000;
  const t = performance.now();
  for (let i = 0; i < n; i++) decide(r * n + i);
  rounds.push(((performance.now() - t) * 1000) / n);
}

const lines = [];
for (let i = 0; i < 2000; i++) {
  const step = i % HISTORY;
  const base = { session: `agent:main:session-${i % SESSIONS}`, run: 'run-1', tool: TOOLS[step % TOOLS.length], args: args(i % SESSIONS, step) };
  lines.push(JSON.stringify({ kind: 'tool_call', ...base }), JSON.stringify({ kind: 'tool_result', ...base, result: result(i % SESSIONS, step) }));
}
const batch = lines.join('\n');
const batched = [];
for (let r = 0; r < 5; r++) {
  const t = performance.now();
  guard.applyEvents(batch);
  batched.push(((performance.now() - t) * 1000) / lines.length);
}

const bots = new LoopGuard('{}');
const PAIRS = 100000;
const msg = (p, ts, id) => ({ channel: 'discord', account: 'default', conversation: `c${p % 5000}`, sender: `bot-${p}`, receiver: 'bot-main', tsMs: ts, eventId: `evt-${id}` });
for (let p = 0; p < PAIRS; p++) bots.onBotMessage(msg(p, 1_000_000 + (p % 1000), p));
const botRounds = [];
let id = PAIRS;
for (let r = 0; r < 7; r++) {
  const n = 20000;
  const t = performance.now();
  for (let i = 0; i < n; i++) {
    const p = (i * 7919) % PAIRS;
    bots.onBotMessage(msg(p, 1_001_000 + r * 1000 + (i % 1000), id++));
  }
  botRounds.push(((performance.now() - t) * 1000) / n);
}

const here = fileURLToPath(import.meta.url);
const cold = [];
for (let r = 0; r < 5; r++) cold.push(Number(execFileSync(process.execPath, [here, '--cold'])));

console.log(`node ${process.version}`);
console.log(`tool-call decision, args and result as objects: ${median(rounds).toFixed(2)} µs (median of ${rounds.length} rounds; ${Math.min(...rounds).toFixed(2)}-${Math.max(...rounds).toFixed(2)})`);
console.log(`applyEvents, ${lines.length} events per batch: ${median(batched).toFixed(2)} µs per event`);
console.log(`bot message, ${PAIRS} active pairs: ${median(botRounds).toFixed(2)} µs`);
console.log(`cold start (import, first guard, first decision): ${median(cold).toFixed(0)} ms (median of ${cold.length} processes)`);
await metricsPairs();
