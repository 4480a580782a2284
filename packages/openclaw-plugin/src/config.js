// From the plugin's config (plugins.entries.loopguard.config) to the policy's config document.
//
// The policy reads an OpenClaw-style document (docs/spec/trace-format.md "Config"): tools.loopDetection,
// agents.list[].tools.loopDetection, channels.*.botLoopProtection and a `loopguard` block. The
// plugin cannot hand it the gateway's own document: OpenClaw 2026.9.6's schema accepts only
// `enabled` under tools.loopDetection, and the operator turns that off to let loopguard decide.
// So the knobs live in the plugin's block and are moved here to where the policy reads them.
// Only keys the operator set are passed: unset knobs take the compatibility profile's defaults,
// which for openclaw-2026.9 are the gateway's own constants.
import path from 'node:path';
import { ROOM_CHANNELS } from './schema.js';

const LOOP_KEYS = ['historySize', 'warningThreshold', 'criticalThreshold', 'unknownToolThreshold', 'globalCircuitBreakerThreshold'];
const BOT_KEYS = ['enabled', 'maxEventsPerWindow', 'windowSeconds', 'cooldownSeconds', 'maxConversationBotEvents'];

/** The plugin's own settings, with every default filled in. */
export function resolveSettings(raw, { stateDir, openclawVersion } = {}) {
  const c = raw && typeof raw === 'object' ? raw : {};
  const compatAuto = c.compat === undefined;
  return {
    enabled: c.enabled !== false,
    compat: c.compat ?? profileFor(openclawVersion),
    compatAuto,
    policy: c.policy ? path.resolve(c.policy) : null,
    expectDigest: c.expectDigest ? String(c.expectDigest).toLowerCase() : null,
    failMode: c.failMode === 'closed' ? 'closed' : 'open',
    isolation: c.isolation === 'inline' || c.isolation === 'worker' ? c.isolation : c.policy ? 'worker' : 'inline',
    callTimeoutMs: c.callTimeoutMs ?? 250,
    stateFile: path.resolve(c.stateFile ?? path.join(stateDir ?? '.', 'plugins', 'loopguard', 'state.bin')),
    stateIntervalMs: (c.stateIntervalSeconds ?? 30) * 1000,
    policyWatchMs: c.policyWatchMs ?? 2000,
    decisionLog: c.decisionLog ? path.resolve(c.decisionLog) : null,
    botIds: Object.fromEntries(Object.entries(c.botIds ?? {}).map(([ch, ids]) => [ch, new Set(ids.map(String))])),
    store: resolveStore(c),
  };
}

const CONFIG_PATH = 'plugins.entries.loopguard.config';
const STORE_KEYS = ['url', 'prefix', 'ttlSeconds', 'deadlineMs', 'failMode', 'ca', 'cert', 'key'];

/** A config the plugin cannot run with: `path` is where it is in openclaw.json. */
export class PluginConfigError extends Error {
  constructor(path, reason) {
    super(`${CONFIG_PATH}.${path}: ${reason}`);
    this.name = 'PluginConfigError';
    this.path = `${CONFIG_PATH}.${path}`;
  }
}

/**
 * The `store` block, checked (OpenClaw validates the schema before the gateway starts; this
 * also checks what a schema cannot say, the URL's scheme, and holds when the schema was not
 * applied): null when unset. A bad block throws at registration, naming its path: a gateway
 * meant to share budgets must not start counting alone without saying so.
 */
export function resolveStore(c) {
  const s = c.store;
  if (s === undefined || s === null) return null;
  if (typeof s !== 'object' || Array.isArray(s)) throw new PluginConfigError('store', 'must be an object such as { url: "redis://127.0.0.1:6379" }');
  const unknown = Object.keys(s).filter((k) => !STORE_KEYS.includes(k));
  if (unknown.length) throw new PluginConfigError(`store.${unknown[0]}`, `unknown key; the store block takes ${STORE_KEYS.join(', ')}`);
  let scheme = null;
  try {
    // A cluster's host list is no URL host: its scheme is read by hand (the loopguard package
    // checks the nodes).
    const cluster = /^(rediss?\+cluster):\/\//.exec(s.url);
    scheme = s.url === 'memory' ? 'memory' : cluster ? `${cluster[1]}:` : new URL(s.url).protocol;
  } catch {}
  if (typeof s.url !== 'string' || !['memory', 'redis:', 'rediss:', 'redis+cluster:', 'rediss+cluster:'].includes(scheme)) {
    throw new PluginConfigError('store.url', `must be redis://[user:pass@]host:port[/db], rediss://…, redis+cluster://host:port,host:port (rediss+cluster://…) or "memory", not ${JSON.stringify(s.url)}`);
  }
  if (s.prefix !== undefined && typeof s.prefix !== 'string') throw new PluginConfigError('store.prefix', 'must be a string');
  const int = (k, dflt, max) => {
    const v = s[k] ?? dflt;
    if (!Number.isInteger(v) || v < 1 || v > max) throw new PluginConfigError(`store.${k}`, `must be an integer from 1 to ${max}, not ${JSON.stringify(v)}`);
    return v;
  };
  if (s.failMode !== undefined && s.failMode !== 'open' && s.failMode !== 'closed') {
    throw new PluginConfigError('store.failMode', `must be "open" or "closed", not ${JSON.stringify(s.failMode)}`);
  }
  for (const k of ['ca', 'cert', 'key']) {
    if (s[k] === undefined) continue;
    if (typeof s[k] !== 'string' || s[k] === '') throw new PluginConfigError(`store.${k}`, `must be the path of a PEM file, not ${JSON.stringify(s[k])}`);
    if (scheme !== 'rediss:' && scheme !== 'rediss+cluster:') throw new PluginConfigError(`store.${k}`, 'TLS files need a rediss:// (or rediss+cluster://) store.url');
  }
  if ((s.cert === undefined) !== (s.key === undefined)) {
    throw new PluginConfigError(s.cert === undefined ? 'store.cert' : 'store.key', 'a client certificate and its key are given together');
  }
  if (c.policy) throw new PluginConfigError('store', 'cannot be combined with `policy` in this release: a shared store runs the policy of the loopguard package');
  return { url: s.url, prefix: s.prefix ?? 'lg:1:', ttlSeconds: int('ttlSeconds', 3600, 2_592_000), deadlineMs: int('deadlineMs', 20, 60_000), failClosed: s.failMode === 'closed', ...pick(s, ['ca', 'cert', 'key']) };
}

/** The compatibility profile of an OpenClaw release: 2026.9.x → "openclaw-2026.9"; unknown → "documented". */
export function profileFor(version) {
  const m = /^(\d{4})\.(\d{1,2})\./.exec(String(version ?? ''));
  return m ? `openclaw-${m[1]}.${Number(m[2])}` : 'documented';
}

function pick(obj, keys) {
  const out = {};
  for (const k of keys) if (obj?.[k] !== undefined) out[k] = obj[k];
  return out;
}

/** One tools.loopDetection block from a plugin-level or per-agent block. */
function loopBlock(src, { enabled } = {}) {
  const out = pick(src, LOOP_KEYS);
  if (enabled !== undefined) out.enabled = enabled;
  else if (src?.enabled !== undefined) out.enabled = src.enabled;
  if (src?.detectors) out.detectors = pick(src.detectors, ['genericRepeat', 'knownPollNoProgress', 'pingPong']);
  if (src?.postCompactionGuard) out.postCompactionGuard = pick(src.postCompactionGuard, ['windowSize']);
  return out;
}

/** The policy's config document for a plugin config (an object; the worker gets it as JSON). */
export function policyDocument(raw, compat) {
  const c = raw && typeof raw === 'object' ? raw : {};
  const doc = {
    tools: { loopDetection: loopBlock(c, { enabled: c.enabled !== false }) },
    loopguard: { compat },
  };
  const agents = Object.entries(c.agents ?? {});
  if (agents.length) {
    doc.agents = { list: agents.map(([id, a]) => ({ id, tools: { loopDetection: loopBlock(a) } })) };
  }
  const bots = c.botLoopProtection ?? {};
  const channels = {};
  if (bots.defaults) channels.defaults = { botLoopProtection: pick(bots.defaults, BOT_KEYS) };
  for (const [name, layer] of Object.entries(bots.channels ?? {})) {
    const ch = { botLoopProtection: pick(layer, BOT_KEYS) };
    const accounts = Object.entries(layer.accounts ?? {});
    if (accounts.length) ch.accounts = Object.fromEntries(accounts.map(([id, l]) => [id, { botLoopProtection: pick(l, BOT_KEYS) }]));
    const rooms = Object.entries(layer.rooms ?? {});
    if (rooms.length && ROOM_CHANNELS.includes(name)) {
      // OpenClaw's own keys: Slack channels live under `channels`, Matrix/Google Chat under `groups`
      const key = name === 'slack' ? 'channels' : 'groups';
      ch[key] = Object.fromEntries(rooms.map(([id, l]) => [id, { botLoopProtection: pick(l, BOT_KEYS) }]));
    }
    channels[name] = ch;
  }
  if (Object.keys(channels).length) doc.channels = channels;
  return doc;
}

/** A stable text of the config, to tell whether a registration brought a new one. */
export function configKey(raw, extra = {}) {
  return JSON.stringify(sortKeys({ raw: raw ?? {}, ...extra }));
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}
