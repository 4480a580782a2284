// The policy's home: one worker thread of the gateway process holds the LoopGuard (the `loopguard`
// package: the sandboxed WebAssembly policy). Why a worker and not the gateway's own thread: a
// policy call is synchronous, so a policy that spins would freeze the whole gateway with it.
// Here the gateway waits for each answer with a deadline (guard-client.js), and a worker that
// misses it is terminated and replaced; a trap is contained the same way.
//
// Protocol (guard-client.js is the other side):
//   workerData   { loopguardUrl, policy, expectDigest, config, snapshot, signal, port }
//   sync calls   the client posts {id, op, args} on `port` and sets signal[2] = id (a notify
//                wakes this thread from Atomics.wait); the answer {id, ok, value|error} is
//                posted on `port`, then signal[0] = id and a notify wakes the client; both sides
//                read with receiveMessageOnPort (neither runs its event loop meanwhile)
//   async ops    {id, op: 'swap'} over parentPort, answered over parentPort
//   readiness    {id: 0, ready, policy | error} on `port`, then signal[1]: 1 ready or 2 failed
//                (0 while starting)
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';

import { adoptState, checkPin, errorOf } from './policy-start.js';

const { loopguardUrl, policy, expectDigest, config, snapshot, signal: signalBuffer, port } = workerData;
const signal = new Int32Array(signalBuffer);


let guard = null;

// A recent snapshot lives with the client (guard-client.js): it is the restart point when this
// instance traps or spins (a trapped component instance cannot export its state any more). It is
// taken here, between calls, at most once a second while the state changes, and posted over
// parentPort, so no call waits for it.
const SNAPSHOT_EVERY_MS = 1_000;
const STATEFUL = new Set(['check', 'outcome', 'compaction', 'endSession', 'bot', 'importState']);
let lastSnapshotAt = 0;
let snapshotTimer = null;

function snapshotSoon() {
  if (snapshotTimer !== null) return;
  const wait = Math.max(0, lastSnapshotAt + SNAPSHOT_EVERY_MS - Date.now());
  snapshotTimer = setTimeout(() => {
    snapshotTimer = null;
    lastSnapshotAt = Date.now();
    try {
      const bytes = guard.exportState();
      parentPort.postMessage({ control: 'snapshot', bytes }, [bytes.buffer]);
    } catch {
      // a failed export leaves the previous restart point in place
    }
  }, wait);
}

/** The operations a client may call synchronously; each returns plain data. */
const OPS = {
  check: (call) => guard.beforeToolCall(call),
  outcome: (call, outcome) => guard.afterToolOutcome(call, outcome),
  compaction: (session, run, agent) => guard.afterCompactionRetry(session, run, agent),
  endSession: (session) => (guard.endSession(session), null),
  bot: (msg) => guard.onBotMessage(msg),
  exportState: () => guard.exportState(),
  importState: (bytes) => (guard.importState(bytes), null),
  stats: () => guard.stats(),
  policy: () => guard.policy,
  warm: (rounds) => (guard.warmUp({ rounds }), null),
  ping: () => 'pong',
};

function answer(msg) {
  port.postMessage(msg);
  Atomics.store(signal, 0, msg.id);
  Atomics.notify(signal, 0);
}

function handle(req) {
  if (guard === null) return answer({ id: req.id, ok: false, error: { kind: 'policy', path: 'worker', message: 'the policy is not loaded' } });
  const fn = OPS[req.op];
  if (!fn) return answer({ id: req.id, ok: false, error: { kind: 'input', path: 'op', message: `unknown op ${req.op}` } });
  try {
    answer({ id: req.id, ok: true, value: fn(...(req.args ?? [])) });
    if (STATEFUL.has(req.op)) snapshotSoon();
  } catch (e) {
    // A WebAssembly.RuntimeError is a trap: the instance is not to be trusted any more.
    const trap = e instanceof WebAssembly.RuntimeError || e?.cause instanceof WebAssembly.RuntimeError;
    answer({ id: req.id, ok: false, trap, error: errorOf(e) });
  }
}

// The request loop: blocked in Atomics.wait on signal[2] (a futex: the fastest wake-up there is),
// reading requests with receiveMessageOnPort. It hands the thread back to the event loop every
// SERVE_SLICE_MS (or after IDLE_MS without a request) so that a hot swap's awaits and the
// snapshot timer make progress.
const SERVE_SLICE_MS = 50;
const IDLE_MS = 10;
let lastRequest = 0;

function serve() {
  const end = Date.now() + SERVE_SLICE_MS;
  for (let i = 0; i < 1_000_000 && Date.now() < end; i += 1) {
    let req = receiveMessageOnPort(port)?.message;
    if (!req) {
      if (Atomics.wait(signal, 2, lastRequest, IDLE_MS) === 'timed-out') break;
      lastRequest = Atomics.load(signal, 2);
      req = receiveMessageOnPort(port)?.message;
      if (!req) continue;
    }
    handle(req);
  }
  setImmediate(serve);
}

parentPort.on('message', async (req) => {
  if (req.op !== 'swap') return;
  try {
    const report = await guard.swap(req.path, req.expectDigest ? { expectDigest: req.expectDigest } : {});
    parentPort.postMessage({ id: req.id, ok: true, value: report });
  } catch (e) {
    parentPort.postMessage({ id: req.id, ok: false, error: errorOf(e) });
  }
});

async function start() {
  const { LoopGuard } = await import(loopguardUrl);
  const options = expectDigest ? { expectDigest } : {};
  guard = policy ? await LoopGuard.load(policy, config, options) : new LoopGuard(config);
  if (!policy) checkPin(guard, expectDigest);
  return adoptState(guard, snapshot);
}

// Readiness goes over the sync port first (a waiting client reads it without its event loop),
// then a nudge over parentPort lets an idle client read it too.
function ready(msg, state) {
  port.postMessage({ id: 0, ...msg });
  Atomics.store(signal, 1, state);
  Atomics.notify(signal, 1);
  parentPort.postMessage({ control: 'ready' });
}

start().then(
  (info) => {
    ready({ ready: true, ...info }, 1);
    serve();
  },
  (e) => ready({ ready: false, error: errorOf(e) }, 2),
);
