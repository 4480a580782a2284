// The policy's home in a worker thread (Supervisor with isolation "worker"; lib/home-worker.js is
// the other side). Why a worker: a policy call is synchronous, so a policy that spins would freeze
// the caller's thread with it; here the caller waits for each answer with a deadline, and a worker
// that misses it is terminated and replaced. A trap is contained the same way.
//
// Protocol:
//   workerData   { policy, expectDigest, config, snapshot, signal, port }
//   sync calls   the caller posts {id, op, args} on `port` and sets signal[2] = id (a notify
//                wakes this thread from Atomics.wait); the answer {id, ok, value | trap, error}
//                is posted on `port`, then signal[0] = id and a notify wakes the caller; both
//                sides read with receiveMessageOnPort (neither runs its event loop meanwhile)
//   async ops    {id, op: 'swap'} over parentPort, answered over parentPort
//   snapshots    {control: 'snapshot', bytes} over parentPort: the restart point, taken here
//                between calls at most once a second while the state changes (no call waits)
//   readiness    {id: 0, ready, info | error} on `port`, then signal[1]: 1 ready or 2 failed
//                (0 while starting), then {control: 'ready'} over parentPort
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { adoptState, defaultGuard, loadGuard, plainError, runOp, STATEFUL } from './ops.js';

const { policy, expectDigest, config, snapshot, signal: signalBuffer, port } = workerData;
const signal = new Int32Array(signalBuffer);
const SNAPSHOT_EVERY_MS = 1_000;
let guard = null;
let lastSnapshotAt = 0;
let snapshotTimer = null;

function snapshotSoon() {
  if (snapshotTimer !== null) return;
  snapshotTimer = setTimeout(() => {
    snapshotTimer = null;
    lastSnapshotAt = Date.now();
    try {
      const bytes = guard.exportState();
      parentPort.postMessage({ control: 'snapshot', bytes }, [bytes.buffer]);
    } catch {
      // a failed export leaves the previous restart point in place
    }
  }, Math.max(0, lastSnapshotAt + SNAPSHOT_EVERY_MS - Date.now()));
}

function answer(msg) {
  port.postMessage(msg);
  Atomics.store(signal, 0, msg.id);
  Atomics.notify(signal, 0);
}

function handle(req) {
  const r = runOp(guard, req.op, req.args ?? []);
  answer({ id: req.id, ...r });
  if (r.ok && STATEFUL.has(req.op)) snapshotSoon();
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
    const report = await guard.swap(req.policy, req.expectDigest ? { expectDigest: req.expectDigest } : {});
    parentPort.postMessage({ id: req.id, ok: true, value: report });
  } catch (e) {
    parentPort.postMessage({ id: req.id, ok: false, error: plainError(e) });
  }
});

async function start() {
  // a fresh worker is a fresh instance: the package's own policy loads synchronously here too
  guard = policy ? await loadGuard(policy, config, expectDigest) : defaultGuard(config, expectDigest);
  return adoptState(guard, snapshot);
}

function ready(msg, state) {
  port.postMessage({ id: 0, ...msg });
  Atomics.store(signal, 1, state);
  Atomics.notify(signal, 1);
  parentPort.postMessage({ control: 'ready' });
}

start().then(
  (info) => {
    ready({ ready: true, info }, 1);
    serve();
  },
  (e) => ready({ ready: false, error: plainError(e) }, 2),
);
