// Runs in a worker thread for policy.mjs: jco's transpile is one long synchronous computation
// (about a second for loopguard_policy.wasm), which must not stall the gateway's event loop.
// In: the component bytes (workerData). Out: one message, { ok: true, files } with the bindings
// and the core modules, or { ok: false, reason }.
import { parentPort, workerData } from 'node:worker_threads';

let reply;
try {
  const { NAME, transpilePolicy } = await import('./bindgen.mjs');
  const { files } = await transpilePolicy(workerData);
  const wanted = Object.entries(files).filter(([name]) => name === `${NAME}.js` || /^[^/]*\.core\d*\.wasm$/.test(name));
  reply = { ok: true, files: Object.fromEntries(wanted) };
} catch (e) {
  const text = e instanceof Error ? e.message : String(e);
  const reason =
    e?.code === 'ERR_MODULE_NOT_FOUND' && text.includes('@bytecodealliance/jco')
      ? 'loading a policy file at run time needs @bytecodealliance/jco; run `npm ci` in examples/node-gateway'
      : `not a loadable policy component (jco: ${text.replace(/\s+/g, ' ').trim().slice(0, 300)})`;
  reply = { ok: false, reason };
}
parentPort.postMessage(reply);
