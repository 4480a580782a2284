// The options of a StoredLoopGuard, checked once at construction: each error is a LoopGuardError
// of kind `input` naming the option and saying what it must be.
import { readFileSync } from 'node:fs';
import { LoopGuardError } from './errors.js';

/**
 * The TLS files (`storeCa`, `storeCert`, `storeKey`, PEM paths) read into ioredis's `tls`
 * options, or undefined when none is given; each error names its option and file.
 */
function tlsFiles(options, store) {
  const names = { storeCa: 'ca', storeCert: 'cert', storeKey: 'key' };
  const given = Object.keys(names).filter((k) => options[k] !== undefined);
  if (given.length === 0) return undefined;
  if (store === 'memory' || new URL(store).protocol !== 'rediss:') {
    throw new LoopGuardError('input', `options.${given[0]}`, 'TLS files need a rediss:// store URL');
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
      ok = typeof store === 'string' && ['redis:', 'rediss:'].includes(new URL(store).protocol);
    } catch {}
    if (!ok) throw new LoopGuardError('input', 'options.store', `must be "memory" or a redis://[user:pass@]host:port[/db] (or rediss://) URL, not ${JSON.stringify(store)}`);
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
