// The options of a StoredLoopGuard, checked once at construction: each error is a LoopGuardError
// of kind `input` naming the option and saying what it must be.
import { readFileSync } from 'node:fs';
import { LoopGuardError } from './errors.js';

/**
 * A cluster URL, `redis+cluster://[user:pass@]host:port,host:port` (TLS: `rediss+cluster://`),
 * read into its parts; null for any other string. Not `new URL`: a list of hosts is no URL host.
 */
export function clusterUrl(store) {
  const m = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^@/]+)\/?$/.exec(store);
  if (!m) return null;
  const nodes = m[3].split(',').map((h) => {
    const at = h.lastIndexOf(':');
    const port = Number(h.slice(at + 1));
    return at > 0 && Number.isInteger(port) && port > 0 && port < 65536 ? { host: h.slice(0, at), port } : null;
  });
  if (nodes.includes(null)) return null;
  const [user, pass] = (m[2] ?? '').split(':');
  const creds = m[2] === undefined ? {} : { username: decodeURIComponent(user) || undefined, password: pass === undefined ? undefined : decodeURIComponent(pass) };
  return { tls: m[1] === 'rediss', nodes, ...creds };
}

/** True for a store URL that speaks TLS. */
function speaksTls(store) {
  return clusterUrl(store)?.tls ?? new URL(store).protocol === 'rediss:';
}

/**
 * The TLS files (`storeCa`, `storeCert`, `storeKey`, PEM paths) read into ioredis's `tls`
 * options, or undefined when none is given; each error names its option and file.
 */
function tlsFiles(options, store) {
  const names = { storeCa: 'ca', storeCert: 'cert', storeKey: 'key' };
  const given = Object.keys(names).filter((k) => options[k] !== undefined);
  if (given.length === 0) return undefined;
  if (store === 'memory' || !speaksTls(store)) {
    throw new LoopGuardError('input', `options.${given[0]}`, 'TLS files need a rediss:// (or rediss+cluster://) store URL');
  }
  if ((options.storeCert === undefined) !== (options.storeKey === undefined)) {
    const missing = options.storeCert === undefined ? 'storeCert' : 'storeKey';
    throw new LoopGuardError('input', `options.${missing}`, 'a client certificate and its key are given together');
  }
  const tls = {};
  for (const k of given) {
    if (typeof options[k] !== 'string') throw new LoopGuardError('input', `options.${k}`, `must be the path of a PEM file, not ${typeof options[k]}`);
    try {
      tls[names[k]] = readFileSync(options[k]);
    } catch (e) {
      throw new LoopGuardError('input', `options.${k}`, `cannot read ${options[k]}: ${e.code ?? e.message}`);
    }
  }
  return tls;
}

/** Checks the options once, at construction; each error names its option. */
export function storeOptions(options) {
  if (options === null || typeof options !== 'object') {
    throw new LoopGuardError('input', 'options', 'must be an object with `store` ("redis://host:port" or "memory")');
  }
  const store = options.store;
  if (store !== 'memory') {
    let ok = false;
    try {
      ok = typeof store === 'string' && (clusterUrl(store) !== null || ['redis:', 'rediss:'].includes(new URL(store).protocol));
    } catch {}
    if (!ok) throw new LoopGuardError('input', 'options.store', `must be "memory", a redis://[user:pass@]host:port[/db] (or rediss://) URL or a redis+cluster://host:port,host:port one, not ${JSON.stringify(store)}`);
  }
  const int = (name, dflt, max) => {
    const v = options[name] ?? dflt;
    if (!Number.isInteger(v) || v < 1 || v > max) throw new LoopGuardError('input', `options.${name}`, `must be an integer from 1 to ${max}, not ${String(v)}`);
    return v;
  };
  const prefix = options.storePrefix ?? 'lg:1:';
  if (typeof prefix !== 'string') throw new LoopGuardError('input', 'options.storePrefix', 'must be a string');
  if (options.storeFailClosed !== undefined && typeof options.storeFailClosed !== 'boolean') {
    throw new LoopGuardError('input', 'options.storeFailClosed', 'must be true or false');
  }
  if (options.log !== undefined && typeof options.log !== 'function') throw new LoopGuardError('input', 'options.log', 'must be a function (message) => void');
  if (options.redisOptions !== undefined && (options.redisOptions === null || typeof options.redisOptions !== 'object')) {
    throw new LoopGuardError('input', 'options.redisOptions', 'must be an object of ioredis options (tls, username, password, …)');
  }
  const tls = tlsFiles(options, store);
  return {
    store,
    storePrefix: prefix,
    ttlMs: int('storeTtlS', 3600, 30 * 86400) * 1000,
    deadlineMs: int('storeDeadlineMs', 20, 60_000),
    failClosed: options.storeFailClosed === true,
    redisOptions: tls ? { ...options.redisOptions, tls: { ...options.redisOptions?.tls, ...tls } } : options.redisOptions,
    log: options.log ?? ((m) => process.stderr.write(`${m}\n`)),
  };
}
