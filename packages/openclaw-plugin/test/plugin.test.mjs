// The plugin without a gateway: a stand-in api (helpers.mjs) drives the hooks in the gateway's
// order. The real gateway is tests/e2e/plugin-*.test.mjs.
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fakeGateway, readLog, reset, tmpDir } from './helpers.mjs';
import { policyDocument, profileFor, resolveSettings } from '../src/config.js';
import { warningNote } from '../src/tool-hooks.js';
import { sharedState } from '../src/index.js';

const here = import.meta.dirname;
const REPO = path.resolve(here, '../../..');
/** The hostile fixture built with its session-suffix feature (tests/e2e builds it; skipped when absent). */
const HOSTILE = path.join(REPO, 'target/hostile-gateway/wasm32-wasip2/release/hostile_policy.wasm');
const OTHER_POLICY = path.join(REPO, 'target/policy/wasm32-wasip2/release/loopguard_policy.wasm');
// A deadline per policy call in the worker that an ordinary call cannot miss on a busy machine
// (the default is 250 ms), where the test is not about the deadline: a trap is then never
// mistaken for a timeout.
const PATIENT_MS = 5000;

afterEach(() => reset());

test('openclaw.plugin.json is generated from src/schema.js', () => {
  execFileSync(process.execPath, [path.join(here, '../scripts/build.mjs'), '--check']);
});

test('the compatibility profile follows the gateway version', () => {
  assert.equal(profileFor('2026.9.6'), 'openclaw-2026.9');
  assert.equal(profileFor('2026.10.1'), 'openclaw-2026.10');
  assert.equal(profileFor(undefined), 'documented');
  assert.equal(resolveSettings({}, { openclawVersion: '2026.9.6' }).compat, 'openclaw-2026.9');
  assert.equal(resolveSettings({ compat: 'documented' }, { openclawVersion: '2026.9.6' }).compat, 'documented');
});

test('the plugin config becomes the policy document where the policy reads it', () => {
  const doc = policyDocument(
    {
      criticalThreshold: 12,
      detectors: { pingPong: false },
      postCompactionGuard: { windowSize: 4 },
      agents: { ops: { enabled: false }, dev: { warningThreshold: 5 } },
      botLoopProtection: {
        defaults: { maxEventsPerWindow: 8 },
        channels: {
          telegram: { cooldownSeconds: 5, accounts: { alt: { windowSeconds: 9 } } },
          slack: { rooms: { C1: { enabled: false } } },
          matrix: { rooms: { '!r:x': { maxEventsPerWindow: 3 } } },
        },
      },
      botIds: { telegram: ['222'] },
      failMode: 'closed',
    },
    'openclaw-2026.9',
  );
  assert.deepEqual(doc, {
    tools: { loopDetection: { criticalThreshold: 12, enabled: true, detectors: { pingPong: false }, postCompactionGuard: { windowSize: 4 } } },
    loopguard: { compat: 'openclaw-2026.9' },
    agents: {
      list: [
        { id: 'ops', tools: { loopDetection: { enabled: false } } },
        { id: 'dev', tools: { loopDetection: { warningThreshold: 5 } } },
      ],
    },
    channels: {
      defaults: { botLoopProtection: { maxEventsPerWindow: 8 } },
      telegram: { botLoopProtection: { cooldownSeconds: 5 }, accounts: { alt: { botLoopProtection: { windowSeconds: 9 } } } },
      slack: { botLoopProtection: {}, channels: { C1: { botLoopProtection: { enabled: false } } } },
      matrix: { botLoopProtection: {}, groups: { '!r:x': { botLoopProtection: { maxEventsPerWindow: 3 } } } },
    },
  });
});

test('exec poll: the note is appended once at the 11th call, the 21st call is blocked with the policy text', () => {
  const log = path.join(tmpDir(), 'decisions.jsonl');
  const g = fakeGateway({ config: { compat: 'documented', decisionLog: log } });
  const seen = [];
  for (let i = 1; i <= 23; i += 1) seen.push(g.toolCall());
  const withNote = seen.map((r, i) => (r.texts.includes(warningNote(10)) ? i + 1 : 0)).filter(Boolean);
  assert.deepEqual(withNote, [11], 'the note on the 11th result only');
  assert.deepEqual(seen[10].texts, ['loop', warningNote(10)]);
  const blocked = seen.map((r, i) => (r.blocked ? i + 1 : 0)).filter(Boolean);
  assert.deepEqual(blocked, [21, 22, 23]);
  assert.match(seen[20].texts[0], /^CRITICAL: Called exec with identical arguments and identical outcomes 20 times\./);
  // our own blocks are not outcomes; the note was stripped before recording (else call 11's
  // outcome would differ and the block would come later)
  const outcomes = readLog(log).filter((r) => r.event === 'decision' && r.hook === 'after_tool_call');
  assert.equal(outcomes.length, 20);
});

test('model_call_started primes the policy without changing a decision, throttled', () => {
  const run = (prime) => {
    const log = path.join(tmpDir(), 'decisions.jsonl');
    const g = fakeGateway({ config: { compat: 'documented', decisionLog: log } });
    g.fire('gateway_start', {}, {});
    const seen = [];
    for (let i = 1; i <= 23; i += 1) {
      if (prime) {
        g.rt.lastPrimeAt = -Infinity; // as if the last one were long past
        g.fire('model_call_started', { runId: 'run-1', provider: 'fake', model: 'fake' }, { runId: 'run-1', sessionKey: 'agent:main:s1' });
      }
      const r = g.toolCall();
      seen.push([r.blocked, r.texts]);
    }
    const primes = g.rt.counters.primes;
    g.rt.lastPrimeAt = -Infinity;
    g.fire('model_call_started', {}, {});
    g.fire('model_call_started', {}, {});
    const throttled = g.rt.counters.primes - primes;
    const stats = g.rt.client.call('stats').value;
    const logged = readLog(log).filter((r) => r.event === 'prime');
    reset();
    return { seen, primes, throttled, sessions: stats.sessions, logged };
  };
  const plain = run(false);
  const primed = run(true);
  assert.deepEqual(primed.seen, plain.seen);
  assert.equal(primed.sessions, plain.sessions, 'the scratch gateway leaves no session behind');
  assert.equal(plain.primes, 0);
  assert.equal(plain.throttled, 1);
  assert.equal(primed.primes, 23);
  assert.equal(primed.throttled, 1, 'two model calls at once: one prime');
  assert.equal(primed.logged.length, 24, 'each prime in the decision log');
  assert.ok(primed.logged.every((r) => typeof r.ms === 'number' && r.ms >= 0));
});

test('after_tool_call queues the outcome: recorded in order before the next policy call, when a model call starts, or by the timer', async () => {
  const log = path.join(tmpDir(), 'decisions.jsonl');
  const g = fakeGateway({ config: { compat: 'documented', decisionLog: log } });
  const recorded = () => readLog(log).filter((r) => r.event === 'decision' && r.hook === 'after_tool_call').map((r) => r.recordedAt);
  g.toolCall();
  assert.deepEqual(recorded(), [], 'nothing recorded inside after_tool_call');
  g.fire('model_call_started', { runId: 'run-1' }, { runId: 'run-1', sessionKey: 'agent:main:s1' });
  g.toolCall();
  g.toolCall();
  assert.deepEqual(recorded(), ['model_call_started', 'before_tool_call']);
  // the timer fires 250 ms later on an idle machine; waited for, not timed
  await waitFor(() => recorded().length === 3);
  assert.deepEqual(recorded(), ['model_call_started', 'before_tool_call', 'timer']);
  g.toolCall();
  g.fire('gateway_stop', {}, {});
  assert.deepEqual(recorded().at(-1), 'save', 'the state file gets the waiting outcome');
  assert.equal(g.rt.client.pendingOutcomes, 0);
});

test('a queued outcome is the result as the hook saw it: the gateway changing the object later changes nothing', () => {
  const blockedAt = (mutate) => {
    const g = fakeGateway({ config: { compat: 'documented' } });
    let at = 0;
    for (let i = 1; i <= 22 && !at; i += 1) {
      const result = { content: [{ type: 'text', text: 'loop' }], details: { status: 'completed', exitCode: 0 } };
      if (g.toolCall({ result }).blocked) at = i;
      if (mutate) result.content[0].text = `changed ${i}`;
    }
    reset();
    return at;
  };
  assert.equal(blockedAt(false), 21);
  assert.equal(blockedAt(true), 21);
});

test('the hooks of every registration share one runtime', () => {
  const g = fakeGateway({ config: { compat: 'documented' }, modes: ['full', 'discovery', 'discovery'] });
  assert.equal(sharedState().registrations >= 3, true);
  // before_tool_call from the first registration, the middleware from the last: one history
  const first = (name) => g.hooks.get(name)[0].fn;
  for (let i = 1; i <= 10; i += 1) {
    const id = `x${i}`;
    const ctx = { sessionKey: 'agent:main:shared', runId: 'r', toolCallId: id };
    assert.equal(first('before_tool_call')({ toolName: 'exec', params: { command: 'ls' }, runId: 'r', toolCallId: id }, ctx), undefined);
    first('after_tool_call')({ toolName: 'exec', params: { command: 'ls' }, runId: 'r', toolCallId: id, result: { content: [{ type: 'text', text: 'a' }] } }, ctx);
  }
  const ctx = { sessionKey: 'agent:main:shared', runId: 'r', toolCallId: 'x11' };
  g.hooks.get('before_tool_call').at(-1).fn({ toolName: 'exec', params: { command: 'ls' }, runId: 'r', toolCallId: 'x11' }, ctx);
  const mw = g.middleware[0].fn({ toolCallId: 'x11', result: { content: [{ type: 'text', text: 'a' }] } }, {});
  assert.equal(mw.result.content.at(-1).text, warningNote(10));
});

test('post-compaction: armed for the session\'s last run, then the abort blocks every further call of that run', () => {
  const g = fakeGateway({ config: { compat: 'documented' } });
  const session = 'agent:main:pc';
  for (let i = 0; i < 2; i += 1) g.toolCall({ session, run: 'r1' });
  g.fire('after_compaction', { messageCount: 9, compactedCount: 8 }, { sessionKey: session, agentId: 'main' });
  const after = [1, 2, 3, 4].map(() => g.toolCall({ session, run: 'r1' }));
  assert.deepEqual(after.map((r) => r.blocked), [false, false, false, true]);
  assert.match(after[3].texts[0], /^CRITICAL: tool exec repeated 3 times with identical arguments and identical results within 3 attempts after auto-compaction\./);
  // another run of the session is not affected
  assert.equal(g.toolCall({ session, run: 'r2' }).blocked, false);
});

test('bot loop: suppressed over the pair budget (both directions counted), delivered again after the cooldown', async () => {
  const g = fakeGateway({
    config: { compat: 'documented', botIds: { telegram: ['222'] }, botLoopProtection: { channels: { telegram: { maxEventsPerWindow: 4, windowSeconds: 60, cooldownSeconds: 1 } } } },
  });
  const inbound = (n) => g.fire('before_dispatch', { messageId: String(n), senderId: '222', channel: 'telegram', timestamp: Date.now() }, { channelId: 'telegram', accountId: 'default', conversationId: '-100777' });
  const outbound = (n) => g.fire('message_sent', { to: 'telegram:-100777', success: true, messageId: `o${n}` }, { channelId: 'telegram', accountId: 'default', conversationId: 'telegram:-100777' });
  const human = g.fire('before_dispatch', { messageId: 'h', senderId: '555', channel: 'telegram' }, { channelId: 'telegram', accountId: 'default', conversationId: '-100777' });
  assert.equal(human, undefined, 'a human is never counted');
  const results = [];
  for (let n = 1; n <= 3; n += 1) {
    results.push(inbound(n));
    if (!results.at(-1)) outbound(n);
  }
  // events: in1 out1 in2 out2 in3 → the 5th event exceeds 4
  assert.deepEqual(results.map((r) => r?.handled === true), [false, false, true]);
  assert.equal(inbound(4)?.handled, true, 'still cooling down');
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(inbound(5), undefined, 'delivered again after the cooldown');
});

test('counts survive a restart through the state file', () => {
  const stateDir = tmpDir();
  let g = fakeGateway({ config: { compat: 'documented' }, stateDir });
  for (let i = 0; i < 15; i += 1) g.toolCall({ run: 'long' });
  assert.equal(g.rt.save(), true);
  assert.ok(fs.statSync(path.join(stateDir, 'plugins/loopguard/state.bin')).size > 0);
  reset({ save: true });
  g = fakeGateway({ config: { compat: 'documented' }, stateDir });
  const rest = [16, 17, 18, 19, 20, 21].map(() => g.toolCall({ run: 'long' }));
  assert.deepEqual(rest.map((r) => r.blocked), [false, false, false, false, false, true], 'the 21st call overall is blocked');
});

test('a changed config rebuilds the guard with the counts carried over', () => {
  const g = fakeGateway({ config: { compat: 'documented' } });
  for (let i = 0; i < 12; i += 1) g.toolCall({ run: 'cfg' });
  const before = g.rt;
  g.register({ compat: 'documented', criticalThreshold: 14 }, 'full');
  assert.notEqual(g.rt, before);
  const r = [13, 14, 15].map(() => g.toolCall({ run: 'cfg' }));
  assert.deepEqual(r.map((x) => x.blocked), [false, false, true], 'the new threshold over the old counts');
});

test('an invalid policy config is a failure: failMode answers and the path is logged', () => {
  const log = path.join(tmpDir(), 'decisions.jsonl');
  for (const failMode of ['open', 'closed']) {
    reset();
    const g = fakeGateway({ config: { compat: 'documented', warningThreshold: 20, criticalThreshold: 10, failMode, decisionLog: log } });
    const r = g.toolCall();
    assert.equal(r.blocked, failMode === 'closed');
    if (failMode === 'closed') assert.match(r.texts[0], /^loopguard: the loop guard failed \(unavailable: .*tools\.loopDetection/);
  }
  assert.ok(readLog(log).some((e) => e.event === 'load-failed' && /tools\.loopDetection/.test(e.path)));
});

test('enabled: false decides nothing', () => {
  const g = fakeGateway({ config: { enabled: false } });
  for (let i = 0; i < 25; i += 1) assert.equal(g.toolCall().blocked, false);
  assert.equal(g.rt.started, false, 'the policy worker never started');
});

test('a trapping policy: the gateway goes on in its fail mode and the guard recovers with its counts', { skip: !fs.existsSync(HOSTILE) && 'build target/hostile-gateway (tests/e2e/README.md)' }, async () => {
  for (const [isolation, failMode] of [['worker', 'open'], ['worker', 'closed'], ['inline', 'closed']]) {
    reset();
    const g = fakeGateway({ config: { compat: 'documented', policy: HOSTILE, failMode, isolation, callTimeoutMs: PATIENT_MS } });
    await waitFor(() => (g.rt.ensure(), g.rt.client.ready || (g.rt.client.call('ping'), g.rt.client.ready)));
    for (let i = 0; i < 15; i += 1) assert.equal(g.toolCall({ run: 't' }).blocked, false, `${isolation} call ${i + 1}`);
    // The restart point follows the calls on its own (at most a second behind on an idle
    // machine): waited for until it holds all 15, not for a fixed time.
    const now = Buffer.from(g.rt.client.call('exportState').value);
    await waitFor(() => g.rt.client.lastSnapshot && now.equals(Buffer.from(g.rt.client.lastSnapshot)));
    const trapped = g.toolCall({ session: 'agent:main:__trap__' });
    assert.equal(trapped.blocked, failMode === 'closed');
    if (failMode === 'closed') assert.match(trapped.texts[0], /^loopguard: the loop guard failed \(trap: /);
    assert.equal(g.rt.client.failures.traps, 1);
    await waitFor(() => g.rt.client.ready || (g.rt.client.call('ping'), g.rt.client.ready));
    const rest = [16, 17, 18, 19, 20, 21].map(() => g.toolCall({ run: 't' }));
    assert.deepEqual(rest.map((r) => r.blocked), [false, false, false, false, false, true], `${isolation}: counts kept across the replacement`);
  }
});

test('isolation auto: the package\'s own policy runs inline, a policy file in the worker', () => {
  assert.equal(resolveSettings({}).isolation, 'inline');
  assert.equal(resolveSettings({ policy: '/x.wasm' }).isolation, 'worker');
  assert.equal(resolveSettings({ policy: '/x.wasm', isolation: 'inline' }).isolation, 'inline');
  const g = fakeGateway({ config: { compat: 'documented' } });
  g.toolCall();
  assert.equal(g.rt.client.isolation, 'inline');
});

test('a spinning policy: the call is answered at its deadline and the policy replaced', { skip: !fs.existsSync(HOSTILE) && 'no hostile build' }, () => {
  // 1 s, not less: the ordinary calls around the spinning one must not miss it on a busy machine.
  const g = fakeGateway({ config: { compat: 'documented', policy: HOSTILE, failMode: 'closed', callTimeoutMs: 1000 } });
  for (let i = 0; i < 5; i += 1) g.toolCall({ run: 's' });
  g.rt.client.snapshot(); // the restart point (a spinning instance cannot export)
  // The call returns at all (a spinning policy would otherwise hold it for ever), as a timeout
  // counted once; how fast is the benchmarks' business.
  const r = g.toolCall({ session: 'agent:main:__loop__' });
  assert.equal(r.blocked, true);
  assert.match(r.texts[0], /\(timeout: [^)]*no answer within 1000 ms\)/);
  assert.equal(g.rt.client.failures.timeouts, 1);
  assert.equal(g.toolCall({ run: 's' }).blocked, false, 'the replacement answers');
});

test('hot swap: a changed policy file is swapped in with the counts; with expectDigest a wrong file is refused', { skip: (!fs.existsSync(HOSTILE) || !fs.existsSync(OTHER_POLICY)) && 'no second policy build' }, async () => {
  const dir = tmpDir();
  const file = path.join(dir, 'policy.wasm');
  const log = path.join(dir, 'decisions.jsonl');
  fs.copyFileSync(OTHER_POLICY, file);
  const g = fakeGateway({ config: { compat: 'documented', policy: file, policyWatchMs: 100, callTimeoutMs: PATIENT_MS, decisionLog: log } });
  // a policy file other than the package's own is transpiled first (seconds on a busy machine)
  await waitFor(() => (g.rt.ensure(), g.rt.client.ready || (g.rt.client.call('stats'), g.rt.client.ready)));
  for (let i = 0; i < 12; i += 1) g.toolCall({ run: 'hs' });
  fs.copyFileSync(HOSTILE, `${file}.new`);
  fs.renameSync(`${file}.new`, file);
  const swapped = await waitFor(() => readLog(log).find((e) => e.event === 'swapped'));
  assert.match(swapped.to.version, /\+hostile$/);
  const rest = [13, 14, 15, 16, 17, 18, 19, 20, 21].map(() => g.toolCall({ run: 'hs' }));
  assert.deepEqual(rest.map((r) => r.blocked), [false, false, false, false, false, false, false, false, true], 'the 21st call overall is blocked');
  // pinned: a file with another digest is refused and the active policy stays
  reset();
  fs.copyFileSync(OTHER_POLICY, file);
  const pinned = (await import('loopguard')).LoopGuard;
  const digest = (await pinned.load(file)).policy.blake3;
  const g2 = fakeGateway({ config: { compat: 'documented', policy: file, expectDigest: digest, policyWatchMs: 100, decisionLog: log } });
  g2.toolCall({ run: 'pin' });
  fs.copyFileSync(HOSTILE, `${file}.new`);
  fs.renameSync(`${file}.new`, file);
  const refused = await waitFor(() => readLog(log).find((e) => e.event === 'swap-refused'));
  assert.match(refused.error, /pinned/);
  assert.equal(g2.rt.client.info.policy.blake3, digest);
});

/** Polls `fn` until it returns something; the limit is a hang's, not a speed. */
async function waitFor(fn, ms = 60_000) {
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end && i < 10_000; i += 1) {
    const v = fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}

test('session_end frees a session on new/reset/deleted, not on shutdown; before_reset frees it', () => {
  const log = path.join(tmpDir(), 'decisions.jsonl');
  const g = fakeGateway({ config: { compat: 'documented', decisionLog: log } });
  const run = (session) => {
    for (let i = 0; i < 12; i += 1) g.toolCall({ session, run: 'r' });
  };
  run('agent:main:a');
  g.fire('session_end', { sessionId: 'x', sessionKey: 'agent:main:a', reason: 'shutdown' }, { sessionKey: 'agent:main:a' });
  assert.equal(g.rt.client.call('stats').value.sessions, 1, 'kept at shutdown');
  g.fire('session_end', { sessionId: 'x', sessionKey: 'agent:main:a', reason: 'reset' }, { sessionKey: 'agent:main:a' });
  assert.equal(g.rt.client.call('stats').value.sessions, 0, 'freed at reset');
  run('agent:main:b');
  g.fire('before_reset', { reason: 'new' }, { sessionKey: 'agent:main:b' });
  assert.equal(g.rt.client.call('stats').value.sessions, 0);
  assert.deepEqual(readLog(log).filter((e) => e.event === 'session-freed').map((e) => [e.session, e.reason]), [['agent:main:a', 'reset'], ['agent:main:b', 'reset']]);
});
