// The `store` block (docs/SCALING.md): its validation (each error names its path in openclaw.json), the
// hooks answering with Promises on a shared store, and two gateway replicas (two Runtimes, as
// two processes would hold) sharing one bot-pair budget and one tool loop through a real
// redis-server (required: a missing one fails with how to install it).
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fakeGateway, reset } from './helpers.mjs';
import { PluginConfigError, resolveSettings, resolveStore } from '../src/config.js';
import { Runtime, locate } from '../src/index.js';
import { beforeDispatch } from '../src/bot-hooks.js';
import { afterToolCall, beforeToolCall } from '../src/tool-hooks.js';
import { startRedis, startTlsRedis } from '../../node/test/redis-server.mjs';

afterEach(() => reset());

test('a valid store block resolves with its defaults; no block means in-process', () => {
  assert.equal(resolveSettings({}).store, null);
  assert.deepEqual(resolveStore({ store: { url: 'redis://10.0.0.5:6379/2' } }), { url: 'redis://10.0.0.5:6379/2', prefix: 'lg:1:', ttlSeconds: 3600, deadlineMs: 20, failClosed: false });
  assert.deepEqual(resolveStore({ store: { url: 'rediss://u:p@h:6380', prefix: 'gw:', ttlSeconds: 900, deadlineMs: 50, failMode: 'closed' } }), { url: 'rediss://u:p@h:6380', prefix: 'gw:', ttlSeconds: 900, deadlineMs: 50, failClosed: true });
  assert.deepStrictEqual(resolveStore({ store: { url: 'rediss://h:6380', ca: '/ca.pem', cert: '/c.pem', key: '/k.pem' } }), { url: 'rediss://h:6380', prefix: 'lg:1:', ttlSeconds: 3600, deadlineMs: 20, failClosed: false, ca: '/ca.pem', cert: '/c.pem', key: '/k.pem' });
  // a Valkey/Redis Cluster: any of its nodes, the slots are found from them
  assert.equal(resolveStore({ store: { url: 'redis+cluster://10.0.0.5:7000,10.0.0.6:7000' } }).url, 'redis+cluster://10.0.0.5:7000,10.0.0.6:7000');
  assert.equal(resolveStore({ store: { url: 'rediss+cluster://h1:7000,h2:7000', ca: '/ca.pem' } }).ca, '/ca.pem');
});

test('an invalid store block is refused at registration, naming its path in openclaw.json', () => {
  const P = 'plugins.entries.loopguard.config.';
  const cases = [
    [{ store: 'redis://x' }, 'store'],
    [{ store: {} }, 'store.url'],
    [{ store: { url: 'http://cache:6379' } }, 'store.url'],
    [{ store: { url: 'redis://h:1', ttl: 5 } }, 'store.ttl'],
    [{ store: { url: 'redis://h:1', ttlSeconds: 0 } }, 'store.ttlSeconds'],
    [{ store: { url: 'redis://h:1', deadlineMs: 2.5 } }, 'store.deadlineMs'],
    [{ store: { url: 'redis://h:1', failMode: 'maybe' } }, 'store.failMode'],
    [{ store: { url: 'redis://h:1', prefix: 1 } }, 'store.prefix'],
    [{ store: { url: 'redis://h:1' }, policy: '/p.wasm' }, 'store'],
    [{ store: { url: 'redis://h:1', ca: '/etc/ca.pem' } }, 'store.ca'],
    [{ store: { url: 'rediss://h:1', ca: 5 } }, 'store.ca'],
    [{ store: { url: 'rediss://h:1', cert: '/c.pem' } }, 'store.key'],
    [{ store: { url: 'rediss://h:1', key: '/k.pem' } }, 'store.cert'],
  ];
  for (const [config, where] of cases) {
    assert.throws(() => resolveStore(config), (e) => e instanceof PluginConfigError && e.path === P + where && e.message.startsWith(`${P}${where}: `), where);
  }
  reset();
  assert.throws(() => fakeGateway({ config: { store: { url: 'http://cache:6379' } } }), /plugins\.entries\.loopguard\.config\.store\.url: must be redis:\/\//);
});

/** One tool call through the hooks, awaiting before_tool_call as the gateway does. */
async function toolCall(g, n, { session = 'agent:main:s1', run = 'run-1', params = { command: 'echo loop' } } = {}) {
  const toolCallId = `call_${n}`;
  const ctx = { toolName: 'exec', agentId: 'main', sessionKey: session, runId: run, toolCallId };
  const before = await g.fire('before_tool_call', { toolName: 'exec', params, runId: run, toolCallId }, ctx);
  if (before?.block) return { blocked: true, text: before.blockReason };
  let result = { content: [{ type: 'text', text: 'loop' }], details: { status: 'completed', exitCode: 0 } };
  const mw = g.middleware.at(-1)?.fn({ toolCallId, toolName: 'exec', args: params, isError: false, result }, { runtime: 'openclaw', sessionKey: session, runId: run });
  if (mw?.result) result = mw.result;
  g.fire('after_tool_call', { toolName: 'exec', params, runId: run, toolCallId, result }, ctx);
  return { blocked: false, texts: result.content.map((p) => p.text) };
}

test('store "memory": the hooks answer with Promises and decide as in-process (note at the 11th call, block at the 21st)', async () => {
  const g = fakeGateway({ config: { compat: 'documented', store: { url: 'memory' } } });
  const seen = [];
  for (let n = 1; n <= 21; n++) seen.push(await toolCall(g, n));
  assert.equal(seen.findIndex((r) => r.texts?.length === 2), 10, 'the warning note comes with the 11th result');
  assert.equal(seen[20].blocked, true);
  assert.match(seen[20].text, /CRITICAL/);
  assert.equal(g.rt.stored.stats().onStore, 41, '21 checks and 20 outcomes, all on the store');
  assert.equal(g.rt.client, null, 'no Supervisor in store mode');
});

test('store failMode closed with the store down: tool calls are blocked, bot messages dropped', async () => {
  const g = fakeGateway({ config: { compat: 'documented', store: { url: 'redis://127.0.0.1:1', failMode: 'closed' }, botIds: { telegram: ['222'] } } });
  const r = await toolCall(g, 1);
  assert.equal(r.blocked, true);
  assert.match(r.text, /^loopguard: the loop guard failed \(store: /);
  const d = await g.fire('before_dispatch', { senderId: '222', messageId: 'm1' }, { channelId: 'telegram', accountId: 'default', conversationId: '-100' });
  assert.deepEqual(d, { handled: true });
});

test('store failMode open with the store down: the calls run on the replica\'s own counts', async () => {
  // 2 s, not the default 20 ms: on a busy machine a refused connection can be seen after 20 ms,
  // and the episode would be logged as a timeout instead of "unreachable".
  const g = fakeGateway({ config: { compat: 'documented', store: { url: 'redis://127.0.0.1:1', deadlineMs: 2000 } } });
  for (let n = 1; n <= 20; n++) assert.equal((await toolCall(g, n)).blocked, false);
  assert.equal((await toolCall(g, 21)).blocked, true, 'the local counts still block the 21st');
  const s = g.rt.stored.stats();
  assert.equal(s.onStore, 0);
  assert.equal(s.episodes, 1);
  assert.ok(g.logs.filter((l) => /failed \(store unreachable/.test(l.m)).length === 1, 'one line per episode');
});

/** 30 bot messages of one Telegram pair, alternating between two replicas: which were dropped. */
async function droppedOf30(rts) {
  const dropped = [];
  for (let i = 0; i < 30; i++) {
    const d = await beforeDispatch(rts[i % 2], { senderId: '222', messageId: `m${i}` }, { channelId: 'telegram', accountId: 'default', conversationId: '-100777' });
    dropped.push(d?.handled === true);
  }
  return dropped;
}

describe('two replicas on one redis-server', () => {
  let redis;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis?.close());

  /** Two gateway replicas: two Runtimes with one config, as two processes would hold. */
  const replicas = (prefix) => {
    const raw = { compat: 'documented', store: { url: redis.url, prefix, deadlineMs: 2000 }, botIds: { telegram: ['222'] } };
    const { loopguardUrl } = locate();
    return [0, 1].map(() => new Runtime({ settings: resolveSettings(raw), raw, loopguardUrl, logger: null, key: prefix }));
  };

  test('two replicas on one redis-server share the pair budget: the 21st bot message is dropped whichever replica gets it', async (t) => {
    const rts = replicas('lg:pl:');
    t.after(() => rts.forEach((rt) => rt.stop()));
    assert.deepEqual(await droppedOf30(rts), [...Array(20).fill(false), ...Array(10).fill(true)]);
    for (const rt of rts) {
      assert.equal(rt.stored.stats().onLocal, 0);
      rt.stop();
    }
  });

  test('two replicas share one tool loop: calls alternating between them are blocked at the 21st', async (t) => {
    const rts = replicas('lg:pt:');
    t.after(() => rts.forEach((rt) => rt.stop()));
    const ctx = (n) => ({ toolName: 'exec', agentId: 'main', sessionKey: 'agent:main:x', runId: 'r', toolCallId: `c${n}` });
    let blockedAt = 0;
    for (let n = 1; n <= 21 && !blockedAt; n++) {
      const rt = rts[n % 2];
      const ev = { toolName: 'exec', params: { command: 'poll' }, runId: 'r', toolCallId: `c${n}` };
      const v = await beforeToolCall(rt, ev, ctx(n));
      if (v?.block) blockedAt = n;
      else await afterToolCall(rt, { ...ev, result: { content: [{ type: 'text', text: 'same' }] } }, ctx(n));
    }
    assert.equal(blockedAt, 21);
    for (const rt of rts) rt.stop();
  });
});

test('store.ca, .cert and .key: two replicas share the pair budget on a redis-server that speaks TLS and asks for client certificates', async (t) => {
  const redis = await startTlsRedis();
  try {
    const { ca, client, clientKey } = redis.certs;
    const raw = { compat: 'documented', store: { url: redis.tlsUrl, prefix: 'lg:tls:', deadlineMs: 2000, ca, cert: client, key: clientKey }, botIds: { telegram: ['222'] } };
    const { loopguardUrl } = locate();
    const rts = [0, 1].map(() => new Runtime({ settings: resolveSettings(raw), raw, loopguardUrl, logger: null, key: 'tls' }));
    t.after(() => rts.forEach((rt) => rt.stop()));
    assert.deepEqual(await droppedOf30(rts), [...Array(20).fill(false), ...Array(10).fill(true)]);
    for (const rt of rts) {
      assert.deepEqual([rt.stored.stats().onLocal, rt.stored.stats().onStore], [0, 15]);
      rt.stop();
    }
  } finally {
    await redis.close();
  }
});
