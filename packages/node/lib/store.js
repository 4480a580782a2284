// Where a StoredLoopGuard keeps each key's state between decisions: a map in this process
// (`store: 'memory'`, and every replica's local fallback) or Valkey/Redis shared by replicas.
//
// The same layout and script as the Rust host (host/src/store/redis.rs, host/src/store/mod.rs),
// so that Node, Rust and Python replicas share one store: one key `<prefix>{<state key>}` per
// state key, holding a 16-digit lowercase hex version followed by the policy's blob; reads are a
// GET, writes are CAS_SCRIPT (compare the version, set value and TTL, or return the current
// value so that a retry needs no second read). No rule of the policy is here.
//
// Every backend has the same four calls: get(key) → {version, blob}; cas(key, expected, blob,
// ttlMs) → {written: version} | {conflict: {version, blob}}; describe(); close(). A failure is a
// StoreError with a kind (unreachable, timeout, refused, unreadable), never a crash.
import { createRequire } from 'node:module';
import { message } from './errors.js';
import { clusterUrl } from './store-options.js';

/**
 * Compares the version header; when it is still ARGV[1], sets the blob ARGV[2] under the next
 * version (the server's clock in microseconds, or one more, whichever is larger: `nextVersion`)
 * with the TTL ARGV[3] ms and returns that version (an integer); else the current value (empty
 * when the key is absent). Byte for byte host/src/store/redis.rs's CAS_SCRIPT: the same text has
 * the same SHA-1, so EVALSHA finds the script whichever replica loaded it.
 */
export const CAS_SCRIPT = `
local cur = redis.call('GET', KEYS[1])
local ver = cur and string.sub(cur, 1, 16) or '0000000000000000'
if ver ~= ARGV[1] then return cur or '' end
local t = redis.call('TIME')
local v = math.max(tonumber(ver, 16) + 1, t[1] * 1000000 + t[2])
redis.call('SET', KEYS[1], string.format('%016x', v) .. ARGV[2], 'PX', ARGV[3])
return v
`;

/**
 * The version a write after `current` gets: the clock in microseconds since the Unix epoch, or
 * one more than `current`, whichever is larger (host/src/store/kv.rs's `next_version`). A
 * replica writes at the version it last saw without reading first; counting from 1, a key that
 * expired or was evicted would count 1, 2, 3 again and a stale remembered version could win.
 */
export function nextVersion(current, nowMicros) {
  return Math.max(current + 1, nowMicros);
}

/** Versions below 2^40 were counted from 1 by loopguard 1.0: never remembered (they may repeat). */
export const COUNTED_BELOW = 2 ** 40;

/** Keys the in-process map holds by default (as the Rust host's MemoryStore). */
export const DEFAULT_CAPACITY = 100_000;

const EMPTY = Object.freeze({ version: 0, blob: new Uint8Array(0) });

/** Why the store did not answer. */
export class StoreError extends Error {
  /** @param {'unreachable' | 'timeout' | 'refused' | 'unreadable'} kind @param {string} reason */
  constructor(kind, reason) {
    super(`store ${kind === 'timeout' ? 'timed out' : kind === 'refused' ? 'refused the command' : kind === 'unreadable' ? 'holds an unreadable value' : 'unreachable'}: ${reason}`);
    this.name = 'StoreError';
    this.kind = kind;
  }
}

/** Reads a stored value (16 hex digits of version, then the blob); anything else is `unreadable`. */
export function decode(value) {
  const header = value.subarray(0, 16).toString('latin1');
  if (value.length < 16 || !/^[0-9a-fA-F]{16}$/.test(header)) {
    throw new StoreError('unreadable', 'the value does not start with a 16-digit hex version');
  }
  const version = Number.parseInt(header, 16);
  if (!Number.isSafeInteger(version)) throw new StoreError('unreadable', `version ${header} is past what this host counts`);
  return { version, blob: new Uint8Array(value.subarray(16)) };
}

/**
 * The in-process backend: versions, compare-and-set and TTL as in the shared store. Bounded: at
 * most `capacity` keys; a write past the cap drops the expired keys, then the soonest-expiring
 * half. Synchronous (a replica's local fallback must not wait).
 */
export class MemoryStore {
  #entries = new Map();
  #capacity;
  evicted = 0;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = Math.max(1, capacity);
  }

  get size() {
    return this.#entries.size;
  }

  clear() {
    this.#entries.clear();
  }

  delete(key) {
    this.#entries.delete(key);
  }

  /** Keeps `value` as `key`'s for `ttlMs`, whatever was there: what a replica saw of a shared key. */
  remember(key, value, ttlMs) {
    const now = performance.now();
    if (!this.#entries.has(key) && this.#entries.size >= this.#capacity) this.#makeRoom(now);
    this.#entries.set(key, { version: value.version, blob: value.blob, expires: now + ttlMs });
  }

  get(key) {
    const e = this.#entries.get(key);
    if (!e || e.expires <= performance.now()) return EMPTY;
    return { version: e.version, blob: e.blob };
  }

  cas(key, expected, blob, ttlMs) {
    const now = performance.now();
    const current = this.get(key);
    if (current.version !== expected) return { conflict: current };
    if (!this.#entries.has(key) && this.#entries.size >= this.#capacity) this.#makeRoom(now);
    const version = nextVersion(expected, Math.floor((performance.timeOrigin + now) * 1000));
    this.#entries.set(key, { version, blob, expires: now + ttlMs });
    return { written: version };
  }

  describe() {
    return 'memory';
  }

  close() {}

  #makeRoom(now) {
    for (const [k, e] of this.#entries) if (e.expires <= now) this.#entries.delete(k);
    if (this.#entries.size < this.#capacity) return;
    const expiries = [...this.#entries.values()].map((e) => e.expires).sort((a, b) => a - b);
    const median = expiries[Math.floor(expiries.length / 2)];
    for (const [k, e] of this.#entries) {
      if (e.expires <= median) {
        this.#entries.delete(k);
        this.evicted += 1;
      }
    }
  }
}

/**
 * Valkey or Redis (≥ 7.0; 6.2 works) through ioredis. Connects at the first decision, not at
 * construction, so a store that is down at start is a failure of the first decision. Commands
 * are never queued while the connection is down (they fail at once: the decision goes local);
 * each command is bounded by `deadlineMs`, and one that times out closes its connection (the
 * next decision's write must not queue behind it). ioredis reconnects
 * on its own, every 250 ms at most, while the store is down, and at once when a decision tries
 * the store.
 */
export class RedisStore {
  #client;
  #prefix;
  #deadlineMs;
  #shown;
  #lastError = null;
  /** A new client, not connected yet. */
  #open;

  /**
   * @param {string} url redis://[user:pass@]host:port[/db] or rediss://… (TLS); a cluster:
   *   redis+cluster://[user:pass@]host:port,host:port (rediss+cluster://: TLS)
   * @param {{ prefix: string, deadlineMs: number, redisOptions?: object }} o
   */
  constructor(url, { prefix, deadlineMs, redisOptions }) {
    // Loaded here, not imported: a gateway without a shared store never loads the client.
    const Redis = createRequire(import.meta.url)('ioredis');
    const cluster = clusterUrl(url);
    if (cluster) {
      this.#shown = `${url.split('://')[0]}://${cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
    } else {
      const u = new URL(url);
      this.#shown = `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
    }
    this.#prefix = prefix;
    this.#deadlineMs = deadlineMs;
    const connection = {
      commandTimeout: deadlineMs,
      connectTimeout: Math.max(deadlineMs, 1_000),
      maxRetriesPerRequest: 0,
      autoResubscribe: false,
    };
    this.#open = () => {
      // A cluster: ioredis finds the slots from any node given, follows MOVED and ASK while slots
      // migrate and the new primary after a failover; every decision touches one key, one slot.
      const client = cluster
        ? new Redis.Cluster(cluster.nodes, {
            lazyConnect: true,
            enableOfflineQueue: false,
            enableReadyCheck: false,
            clusterRetryStrategy: (times) => Math.min(25 * times, 250),
            redisOptions: {
              ...redisOptions,
              ...connection,
              ...(cluster.username ? { username: cluster.username } : {}),
              ...(cluster.password ? { password: cluster.password } : {}),
              ...(cluster.tls ? { tls: { ...redisOptions?.tls } } : {}),
            },
          })
        : new Redis(url, {
            ...redisOptions,
            ...connection,
            lazyConnect: true,
            enableOfflineQueue: false,
            enableReadyCheck: false,
            retryStrategy: (times) => Math.min(25 * times, 250),
          });
      client.defineCommand('loopguardCas', { numberOfKeys: 1, lua: CAS_SCRIPT });
      // Failures are reported by the decision that meets them (one line per episode), not here;
      // the last one says why a connection closed (refused, WRONGPASS, …).
      client.on('error', (e) => {
        this.#lastError = message(e);
      });
      return client;
    };
    this.#client = this.#open();
  }

  /** The store key of a state key (the braces make the state key the cluster hash tag). */
  key(stateKey) {
    return `${this.#prefix}{${stateKey}}`;
  }

  async get(key) {
    const value = await this.#run(() => this.#client.getBuffer(this.key(key)));
    return value === null ? EMPTY : decode(value);
  }

  async cas(key, expected, blob, ttlMs) {
    const reply = await this.#run(() =>
      this.#client.loopguardCasBuffer(
        this.key(key),
        expected.toString(16).padStart(16, '0'),
        Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength),
        String(Math.max(1, Math.round(ttlMs))),
      ),
    );
    if (typeof reply === 'number' && reply > 0) return { written: reply };
    if (Buffer.isBuffer(reply)) return { conflict: reply.length === 0 ? EMPTY : decode(reply) };
    throw new StoreError('refused', `unexpected reply to the CAS script: ${String(reply)}`);
  }

  describe() {
    return this.#shown;
  }

  async close() {
    const c = this.#client;
    if (c.status === 'wait' || c.status === 'end') return;
    try {
      await Promise.race([c.quit(), new Promise((r) => setTimeout(r, 200).unref())]);
    } catch {}
    c.disconnect();
  }

  /**
   * Drops this connection for a new one, made at the next decision: a command that missed its
   * deadline is still on its way, and the next one would queue behind it (a write that timed
   * out would land before the next decision's), as would a handshake stuck behind a slow store.
   * The Rust host makes a new connection after any failure too.
   */
  #drop() {
    const old = this.#client;
    this.#client = this.#open();
    old.disconnect();
    old.stream?.destroy();
  }

  async #run(fn) {
    await this.#connected();
    try {
      return await fn();
    } catch (e) {
      const error = classify(e); if (process.env.LG_DEBUG) console.error('DEBUG run', Date.now()%100000, error.kind, error.message, this.#client.status);
      // A command that timed out is still on its way, and the next one would queue behind it on
      // this connection: a write that missed its deadline would then land before the next
      // decision's. A new connection, as the Rust host makes after any failure.
      if (error.kind === 'timeout') this.#drop();
      throw error;
    }
  }

  /**
   * Waits for a connection being made (at most the deadline). A decision the loop sends to the
   * store tries it now, as the Rust host does: while ioredis waits to reconnect on its own
   * schedule (up to 250 ms), that wait is ended and a connection started, so that the first
   * decision after the store is back is made on it.
   */
  async #connected() { if (process.env.LG_DEBUG) console.error('DEBUG connected', Date.now()%100000, this.#client.status);
    const c = this.#client;
    if (c.status === 'ready') return;
    if (c.status === 'reconnecting') c.disconnect(); // ends ioredis's wait: status 'end'
    if (c.status === 'wait' || c.status === 'end') c.connect().catch(() => {});
    if (c.status !== 'connecting' && c.status !== 'connect') {
      throw new StoreError('unreachable', `no connection to ${this.#shown} (${c.status})`);
    }
    await new Promise((resolve, reject) => {
      const done = (fn, v) => {
        clearTimeout(timer);
        c.off('ready', onReady);
        c.off('close', onClose);
        fn(v);
      };
      const onReady = () => done(resolve);
      const onClose = () => done(reject, new StoreError('unreachable', `cannot connect to ${this.#shown}${this.#lastError ? ` (${this.#lastError})` : ''}`));
      const timer = setTimeout(() => {
        done(reject, new StoreError('timeout', `no connection to ${this.#shown} within ${this.#deadlineMs} ms`));
        this.#drop();
      }, this.#deadlineMs);
      c.once('ready', onReady);
      c.once('close', onClose);
    });
  }
}

function classify(e) {
  if (e instanceof StoreError) return e;
  const text = message(e);
  if (/timed out/i.test(text)) return new StoreError('timeout', text);
  if (e?.name === 'ReplyError') return new StoreError('refused', text);
  return new StoreError('unreachable', text);
}
