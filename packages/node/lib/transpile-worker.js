// Runs in a worker thread for policy.js: transpiling is one long synchronous computation
// (about a second for loopguard_policy.wasm), which must not stall the gateway's event loop.
// In: the component bytes (workerData). Out: one message, { ok: true, files } with the bindings
// and the core modules, or { ok: false, reason }.
import { parentPort, workerData } from 'node:worker_threads';
import { transpilePolicy } from './transpile.js';

let reply;
try {
  const { files } = await transpilePolicy(workerData);
  const wanted = Object.entries(files).filter(([name]) => name === 'loopguard_policy.js' || /^[^/]*\.core\d*\.wasm$/.test(name));
  reply = { ok: true, files: Object.fromEntries(wanted) };
} catch (e) {
  const text = e instanceof Error ? e.message : String(e);
  reply = { ok: false, reason: `not a loadable policy component (jco: ${text.replace(/\s+/g, ' ').trim().slice(0, 300)})` };
}
parentPort.postMessage(reply);
