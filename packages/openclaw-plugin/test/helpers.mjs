// A stand-in for OpenClaw's plugin api, enough to drive the hooks the way the gateway does
// (before_tool_call → the tool → middleware → after_tool_call), without a gateway.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import plugin, { sharedState } from '../src/index.js';

export function tmpDir(label = 'lg-plugin-test') {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${label}-`));
}

/** Registers the plugin `modes.length` times (like the gateway's full + discovery registrations). */
export function fakeGateway({ config = {}, stateDir = tmpDir(), version = '2026.9.6', modes = ['full', 'discovery'] } = {}) {
  const hooks = new Map();
  const middleware = [];
  const logs = [];
  const logger = Object.fromEntries(['info', 'warn', 'error', 'debug'].map((l) => [l, (m) => logs.push({ level: l, m })]));
  const register = (pluginConfig, mode) =>
    plugin.register({
      id: 'loopguard',
      registrationMode: mode,
      pluginConfig,
      rootDir: path.resolve(import.meta.dirname, '..'),
      logger,
      runtime: { version, state: { resolveStateDir: () => stateDir } },
      on: (name, fn) => {
        if (!hooks.has(name)) hooks.set(name, []);
        hooks.get(name).push({ fn, mode });
      },
      registerAgentToolResultMiddleware: (fn) => middleware.push({ fn, mode }),
    });
  for (const m of modes) register(config, m);
  /** the last registered handler of a hook (like the gateway's live registration) */
  const fire = (name, event, ctx) => hooks.get(name)?.at(-1)?.fn(event, ctx);
  let callNo = 0;
  /** one tool call as the gateway runs it; returns what the model sees */
  const toolCall = ({ session = 'agent:main:s1', run = 'run-1', tool = 'exec', params = { command: 'echo loop' }, result, error } = {}) => {
    callNo += 1;
    const toolCallId = `call_${callNo}`;
    const ctx = { toolName: tool, agentId: 'main', sessionKey: session, sessionId: `sid-${session}`, runId: run, toolCallId };
    const before = fire('before_tool_call', { toolName: tool, params, runId: run, toolCallId }, ctx);
    if (before?.block) {
      const blocked = { content: [{ type: 'text', text: before.blockReason }], details: { status: 'blocked', deniedReason: 'plugin-before-tool-call', reason: before.blockReason } };
      fire('after_tool_call', { toolName: tool, params, runId: run, toolCallId, result: blocked, error: before.blockReason }, ctx);
      return { blocked: true, texts: [before.blockReason] };
    }
    let res = result ?? { content: [{ type: 'text', text: 'loop' }], details: { status: 'completed', exitCode: 0 } };
    const mw = middleware.at(-1)?.fn({ toolCallId, toolName: tool, args: params, isError: false, result: res }, { runtime: 'openclaw', sessionKey: session, runId: run });
    if (mw?.result) res = mw.result;
    fire('after_tool_call', { toolName: tool, params, runId: run, toolCallId, result: res, ...(error ? { error } : {}) }, ctx);
    return { blocked: false, texts: res.content.map((p) => p.text) };
  };
  return { hooks, middleware, logs, fire, toolCall, register, stateDir, get rt() { return sharedState().current; } };
}

/** Stops and forgets the process-wide runtime (between tests). */
export function reset({ save = false } = {}) {
  const s = sharedState();
  s.current?.stop({ save });
  s.current = null;
}

export function readLog(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}
