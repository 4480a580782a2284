// StoredLoopGuard on a real redis-server on loopback (persistence off): N replica processes
// deciding at once, each over its own events (bot messages over 2,000 conversations, tool calls
// over 500 sessions), one decision at a time; prints per replica the p50/p99 of a decision
// (read + decide + compare-and-set, as the caller awaits it), decisions per second and CAS
// retries. With --own-keys each replica's conversations and sessions are its own (sticky routing,
// or keys the balancer spreads): the common case of one round trip per decision; without it the
// replicas share every key. Needs redis-server (scripts/setup-redis.sh).
//
//   node bench/store.mjs [--replicas 3] [--events 20000] [--inflight 1] [--own-keys]
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { StoredLoopGuard } from '../index.js';
import { startRedis } from '../test/redis-server.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const CONFIG = { tools: { loopDetection: { enabled: true } } };

const OWN_KEYS = process.argv.includes('--own-keys');

function events(replica, n) {
  const own = OWN_KEYS ? `r${replica}` : '';
  const out = [];
  for (let i = 0; i < n; i++) {
    if (i % 4 === 3) {
      const session = `agent:main:${own}s${(i * 7 + replica) % 500}`;
      out.push(JSON.stringify({ kind: 'tool_call', session, tool: 'read', args: { path: `/f/${i % 13}` } }));
    } else {
      const c = (i * 13 + replica) % 2000;
      out.push(JSON.stringify({ kind: 'bot_message', channel: 'slack', account: 'T1', conversation: `${own}C${c}`, sender: i % 2 ? 'A' : 'B', receiver: i % 2 ? 'B' : 'A', ts_ms: 1_700_000_000_000 + i * 10, event_id: `r${replica}e${i}` }));
    }
  }
  return out;
}

async function child(url, replica, n, startAt, inflight) {
  const guard = new StoredLoopGuard(CONFIG, { store: url, storePrefix: 'lg:bench:', storeDeadlineMs: 200 });
  const list = events(replica, n);
  for (const e of list.slice(0, 200)) await guard.decide(e); // warm-up (V8 compiles the policy)
  await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
  const times = new Float64Array(n);
  const t0 = performance.now();
  // `inflight` callers, each awaiting its decision before taking the next event (1: one at a
  // time; more: a gateway's event loop with that many requests open at once).
  let next = 0;
  const caller = async () => {
    while (next < n) {
      const i = next++;
      const t = performance.now();
      await guard.decide(list[i]);
      times[i] = performance.now() - t;
    }
  };
  await Promise.all(Array.from({ length: inflight }, caller));
  const wall = (performance.now() - t0) / 1000;
  times.sort();
  const q = (p) => times[Math.min(n - 1, Math.floor(p * n))].toFixed(3);
  const s = guard.stats();
  process.stdout.write(`${JSON.stringify({ replica, inflight, decisions: n, p50_ms: q(0.5), p99_ms: q(0.99), per_s: Math.round(n / wall), cas_retries: s.casRetries, on_local: s.onLocal })}\n`);
  await guard.close();
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6]), Number(process.argv[7]));
} else {
  const replicas = arg('--replicas', 3);
  const n = arg('--events', 20_000);
  const inflight = arg('--inflight', 1);
  const redis = await startRedis();
  try {
    const startAt = Date.now() + 3000;
    const runs = Array.from({ length: replicas }, (_, r) => {
      const p = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', redis.url, String(r), String(n), String(startAt), String(inflight), ...(OWN_KEYS ? ['--own-keys'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      return new Promise((resolve) => p.on('exit', () => resolve(out)));
    });
    for (const out of await Promise.all(runs)) process.stdout.write(out);
  } finally {
    await redis.close();
  }
}
