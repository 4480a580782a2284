// openclaw-loopguard: OpenClaw's loop decisions (tool-call loop detectors, post-compaction guard,
// bot-to-bot budgets) made by loopguard's sandboxed WebAssembly policy, inside the gateway.
//
// What OpenClaw's loader does that shapes this file (shared/openclaw-gateway.md §3.4, §5.1):
// register() runs several times per process ("full" and "discovery" modes), each time from a
// separate copy of the package, and the live hooks of one gateway come from different
// registrations. So every hook is registered in every mode, and all of them reach the one
// Runtime kept in a process-wide object; a registration with a changed config replaces that
// Runtime (the counts move over). register() stays synchronous and nothing in the import graph
// uses top-level await (OpenClaw loads entries with require()). Nothing starts at registration:
// the policy worker starts with the gateway (gateway_start) or at the first hook that needs it,
// so CLI processes that only load the plugin spawn nothing and write no state.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { configKey, resolveSettings } from './config.js';
import { beforeDispatch, messageSent } from './bot-hooks.js';
import { Runtime } from './runtime.js';
import { afterCompaction, afterToolCall, beforeToolCall, toolResult } from './tool-hooks.js';

export const PLUGIN_ID = 'loopguard';
const STATE = Symbol.for('openclaw.loopguard.state');

/** The process-wide object: `current` is the one Runtime of this process. */
export function sharedState() {
  globalThis[STATE] ??= { current: null, registrations: 0, exitHooked: false };
  return globalThis[STATE];
}

/**
 * Where the worker script and the `loopguard` package are. The package's own install (api.rootDir)
 * first: OpenClaw's per-registration copies carry only what was imported, and the worker imports
 * `loopguard` (and, for a hot swap, its transpiler) outside that graph.
 */
export function locate(rootDir) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const roots = [...(rootDir ? [rootDir] : []), path.dirname(here)];
  let workerUrl = null;
  let loopguardUrl = null;
  for (const root of roots) {
    const w = path.join(root, 'src', 'guard-worker.js');
    if (!workerUrl && fs.existsSync(w)) workerUrl = pathToFileURL(w).href;
    if (!loopguardUrl) {
      try {
        loopguardUrl = pathToFileURL(createRequire(path.join(root, 'package.json')).resolve('loopguard')).href;
      } catch {}
    }
  }
  workerUrl ??= new URL('./guard-worker.js', import.meta.url).href;
  if (!loopguardUrl) throw new Error(`the loopguard package is not installed next to ${roots.join(' or ')}`);
  return { workerUrl, loopguardUrl };
}

/** Where this copy of the plugin runs from, and whether `loopguard` resolves from there (diagnostics). */
function whereFrom() {
  const module = import.meta.url;
  try {
    return { module, loopguardFromCopy: createRequire(module).resolve('loopguard') };
  } catch (e) {
    return { module, loopguardFromCopy: null, loopguardFromCopyError: String(e?.message ?? e).split('\n')[0] };
  }
}

/** The Runtime for this registration's config: the current one, or a new one that takes over. */
export function runtimeFor(api) {
  const shared = sharedState();
  const raw = api.pluginConfig ?? {};
  let stateDir;
  try {
    stateDir = api.runtime?.state?.resolveStateDir?.();
  } catch {}
  stateDir ??= process.env.OPENCLAW_STATE_DIR ?? path.join(process.env.HOME ?? '.', '.openclaw');
  const openclawVersion = api.runtime?.version;
  const key = configKey(raw, { stateDir, openclawVersion });
  const old = shared.current;
  if (old && old.key === key && !old.stopped) {
    // the newest registration's logger: OpenClaw retires older plugin instances, and calls into
    // a retired instance's api are its calls still
    if (api.logger) old.logger = api.logger;
    return old;
  }
  const settings = resolveSettings(raw, { stateDir, openclawVersion });
  const rt = new Runtime({ settings, raw, urls: locate(api.rootDir), logger: api.logger, key });
  if (old) {
    rt.adopt(old);
    const wasStarted = old.started;
    const snapshot = old.stop();
    if (wasStarted) rt.ensure(snapshot ?? undefined);
    rt.log('info', 'config changed: the loop guard was rebuilt with the counts carried over');
  }
  shared.current = rt;
  if (!shared.exitHooked) {
    shared.exitHooked = true;
    // a last write if the process exits without gateway_stop (only a runtime that decided something writes)
    process.once('exit', () => {
      try {
        sharedState().current?.save();
      } catch {}
    });
  }
  return rt;
}

/** Runs a hook on the current Runtime; nothing a hook does may take the gateway down. */
function guarded(name, fn, fallback) {
  return (event, ctx) => {
    const rt = sharedState().current;
    if (!rt) return fallback?.(null, new Error('not registered'));
    try {
      return fn(rt, event, ctx);
    } catch (e) {
      try {
        rt.log('error', `${name} failed: ${e?.stack ?? e}`);
      } catch {}
      return fallback?.(rt, e);
    }
  };
}

/** What a failing before_tool_call answers: failMode decides. */
function toolFallback(rt, e) {
  if (rt?.settings?.failMode === 'closed') {
    return { block: true, blockReason: `loopguard: the loop guard failed (${e?.message ?? e}); this call is blocked because failMode is "closed".` };
  }
  return undefined;
}

export function register(api) {
  const shared = sharedState();
  shared.registrations += 1;
  const rt = runtimeFor(api);
  rt.event({ event: 'registered', mode: api.registrationMode, source: api.source, rootDir: api.rootDir, openclaw: api.runtime?.version, ...whereFrom() });
  const on = (hook, handler) => api.on(hook, handler);
  on('gateway_start', guarded('gateway_start', (rt) => rt.ensure()));
  on('before_tool_call', guarded('before_tool_call', (rt, e, c) => beforeToolCall(rt, e, c), toolFallback));
  on('after_tool_call', guarded('after_tool_call', (rt, e, c) => afterToolCall(rt, e, c)));
  on('model_call_started', guarded('model_call_started', (rt) => rt.modelCallStarted()));
  on('after_compaction', guarded('after_compaction', (rt, e, c) => afterCompaction(rt, e, c)));
  on('before_dispatch', guarded('before_dispatch', (rt, e, c) => beforeDispatch(rt, e, c), (rt) => (rt?.settings?.failMode === 'closed' ? { handled: true } : undefined)));
  on('message_sent', guarded('message_sent', (rt, e, c) => messageSent(rt, e, c)));
  on('session_end', guarded('session_end', (rt, e, c) => rt.sessionEnd(e, c)));
  on('before_reset', guarded('before_reset', (rt, e, c) => rt.endSession(c?.sessionKey, 'reset')));
  on('gateway_stop', guarded('gateway_stop', (rt) => rt.save()));
  if (typeof api.registerAgentToolResultMiddleware === 'function') {
    api.registerAgentToolResultMiddleware(
      guarded('tool_result', (rt, e) => toolResult(rt, e)),
      { runtimes: ['openclaw'] },
    );
  }
}

export default {
  id: PLUGIN_ID,
  name: 'loopguard',
  description: "OpenClaw's loop decisions (tool-call loops, post-compaction loops, bot-to-bot loops) by loopguard's sandboxed WebAssembly policy.",
  register,
};
