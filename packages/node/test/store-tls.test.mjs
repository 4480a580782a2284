// StoredLoopGuard on a redis-server that speaks TLS and asks every client for a certificate
// (rediss://, docs/SCALING.md): two replicas with the test CA and a client certificate share one pair
// budget; without the certificate, or trusting another authority, each decides on local state
// and the log says why; TLS options that cannot work are refused at construction, named.
// Certificates come from tests/replicas/make-certs.sh (openssl), fresh for every run
// (startTlsRedis).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LoopGuardError, StoredLoopGuard } from '../index.js';
import { startTlsRedis } from './redis-server.mjs';

const pairEvent = (i) =>
  JSON.stringify({ kind: 'bot_message', channel: 'slack', account: 'T1', conversation: 'tls', sender: i % 2 ? 'B' : 'A', receiver: i % 2 ? 'A' : 'B', ts_ms: 1_000_000 + i * 100, event_id: `t${i}` });

describe('a rediss:// store', () => {
  let redis;
  let url;
  let certs;
  before(async () => {
    redis = await startTlsRedis();
    url = redis.tlsUrl;
    certs = redis.certs;
  });
  after(() => redis?.close());

  it('two replicas with the CA and a client certificate share one pair budget over TLS', async (t) => {
    const tls = { storeCa: certs.ca, storeCert: certs.client, storeKey: certs.clientKey };
    const [one, two] = [0, 1].map(() => new StoredLoopGuard({}, { store: url, storePrefix: 'lg:tls:', storeDeadlineMs: 2000, ...tls }));
    t.after(() => Promise.all([one.close(), two.close()]));
    const decided = [];
    for (let i = 0; i < 30; i++) decided.push(await (i % 2 ? one : two).decide(pairEvent(i)));
    assert.deepEqual(decided.map((d) => d.via), Array(30).fill('store'));
    assert.deepEqual(decided.map((d) => JSON.parse(d.decision).action), [...Array(20).fill('allow'), ...Array(10).fill('suppress')], 'the default pair budget of 20 holds across the two');
    assert.equal(one.stats().backend, url);
  });

  for (const [what, tls, said] of [
    ['without a client certificate', () => ({ storeCa: certs.ca }), /certificate|alert|ECONNRESET|closed/i],
    ['trusting another authority', () => ({ storeCa: certs.otherCa, storeCert: certs.client, storeKey: certs.clientKey }), /self.signed|unable to verify|certificate/i],
  ]) {
    it(`${what}: every decision on local state, the budget kept there, one episode logged`, async (t) => {
      const logs = [];
      // 2 s: a handshake slower than the deadline on a loaded machine would log a timeout, not
      // the certificate failure this test is about.
      const guard = new StoredLoopGuard({}, { store: url, storePrefix: 'lg:bad:', storeDeadlineMs: 2000, log: (m) => logs.push(m), ...tls() });
      t.after(() => guard.close());
      const decided = [];
      for (let i = 0; i < 25; i++) decided.push(await guard.decide(pairEvent(i)));
      assert.deepEqual(decided.map((d) => d.via), Array(25).fill('local'));
      assert.deepEqual(decided.map((d) => JSON.parse(d.decision).action), [...Array(20).fill('allow'), ...Array(5).fill('suppress')]);
      assert.equal(guard.stats().episodes, 1, logs.join('\n'));
      assert.match(logs.join('\n'), said);
    });
  }

  it('TLS options that cannot work are refused at construction, naming the option', () => {
    const cases = [
      [{ store: 'redis://127.0.0.1:1', storeCa: certs.ca }, 'options.storeCa', /rediss:\/\//],
      [{ store: 'rediss://127.0.0.1:1', storeCa: '/nonexistent/ca.pem' }, 'options.storeCa', /\/nonexistent\/ca\.pem/],
      [{ store: 'rediss://127.0.0.1:1', storeCert: certs.client }, 'options.storeKey', /together/],
      [{ store: 'rediss://127.0.0.1:1', storeCa: 5 }, 'options.storeCa', /PEM file/],
    ];
    for (const [options, where, message] of cases) {
      assert.throws(() => new StoredLoopGuard({}, options), (e) => e instanceof LoopGuardError && e.kind === 'input' && e.path === where && message.test(e.message), where);
    }
  });
});
