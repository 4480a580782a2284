// The LoopGuard hooks on small cases (docs/spec/tool-loop.md, docs/spec/bot-loop.md), errors, snapshots and
// dispose. The example traces are covered by replay.test.mjs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoopGuard, LoopGuardError, replay, versions } from '../index.js';

const TIGHT = { tools: { loopDetection: { enabled: true, warningThreshold: 3, criticalThreshold: 5, globalCircuitBreakerThreshold: 8 } } };
const search = { session: 's1', tool: 'web_search', args: { q: 'nightly build red' } };
const same = { result: { content: [{ type: 'text', text: 'no results' }] } };

function withGuard(config, fn) {
  const guard = new LoopGuard(config);
  try {
    return fn(guard);
  } finally {
    guard[Symbol.dispose]();
  }
}

describe('tool hooks', () => {
  it('serializes a call object\'s arguments at each hook, so a replaced args is what counts', () =>
    withGuard(TIGHT, (g) => {
      let reads = 0;
      const counted = (path) => ({ toJSON: () => ((reads += 1), { path }) });
      const call = { session: 's9', tool: 'read', args: counted('/a') };
      g.beforeToolCall(call);
      g.afterToolOutcome(call, same);
      assert.equal(reads, 2);
      call.args = counted('/b');
      g.beforeToolCall(call);
      assert.equal(reads, 3);
      // a second object with the same arguments is the same call
      const again = { session: 's9', tool: 'read', args: { path: '/b' } };
      g.beforeToolCall(again);
      g.beforeToolCall(again);
      assert.equal(g.beforeToolCall(again).count, 3);
    }));

  it('allows a first call and records its outcome', () =>
    withGuard(TIGHT, (g) => {
      assert.deepEqual(g.beforeToolCall(search), { action: 'allow', count: 0, notify: false });
      assert.deepEqual(g.afterToolOutcome(search, same), { action: 'recorded' });
      assert.equal(g.stats().sessions, 1);
    }));

  it('warns once warningThreshold calls are in history, blocks at criticalThreshold with identical outcomes', () =>
    withGuard(TIGHT, (g) => {
      const actions = [];
      for (let i = 0; i < 6; i++) {
        const v = g.beforeToolCall(search);
        actions.push(`${v.action}${v.count ? v.count : ''}`);
        if (v.action !== 'block') g.afterToolOutcome(search, same);
        if (v.action !== 'allow') {
          assert.equal(v.detector, 'generic_repeat');
          assert.match(v.message, /web_search/);
        }
      }
      assert.deepEqual(actions, ['allow', 'allow', 'allow', 'warn3', 'warn4', 'block5']);
    }));

  it('is off by default (loopDetection.enabled is false unless configured)', () =>
    withGuard('{}', (g) => {
      for (let i = 0; i < 25; i++) assert.equal(g.beforeToolCall(search).action, 'allow');
    }));

  it('takes pre-serialized argsJson as the same call as args', () =>
    withGuard(TIGHT, (g) => {
      g.beforeToolCall(search);
      g.beforeToolCall({ session: 's1', tool: 'web_search', argsJson: '{ "q" : "nightly build red" }' });
      g.beforeToolCall(search);
      assert.equal(g.beforeToolCall({ ...search, args: undefined, argsJson: JSON.stringify(search.args) }).count, 3);
    }));

  it('takes a pre-serialized resultJson as the same outcome as result', () => {
    const run = (outcome) =>
      withGuard(TIGHT, (g) => {
        const seen = [];
        for (let i = 0; i < 5; i++) {
          const v = g.beforeToolCall(search);
          seen.push(`${v.action}${v.count || ''}`);
          assert.deepEqual(g.afterToolOutcome(search, outcome), { action: 'recorded' });
        }
        return seen;
      });
    const text = run({ resultJson: JSON.stringify(same.result) });
    assert.deepEqual(text, run(same));
    assert.deepEqual(text, ['allow', 'allow', 'allow', 'warn3', 'warn4']);
    withGuard(TIGHT, (g) => {
      assert.throws(() => g.afterToolOutcome(search, { resultJson: '{"content":' }), (e) => e instanceof LoopGuardError && e.path === 'outcome.result');
      assert.throws(() => g.afterToolOutcome(search, { resultJson: 7 }), (e) => e instanceof LoopGuardError && e.path === 'outcome.resultJson');
    });
  });

  it('ignores an undefined result and records a null one', () =>
    withGuard(TIGHT, (g) => {
      assert.deepEqual(g.afterToolOutcome(search, { result: undefined }), { action: 'ignored' });
      assert.deepEqual(g.afterToolOutcome(search, { result: null }), { action: 'recorded' });
      assert.deepEqual(g.afterToolOutcome(search, { error: new Error('boom') }), { action: 'recorded' });
      assert.deepEqual(g.afterToolOutcome(search, { error: null }), { action: 'recorded' });
    }));

  it('aborts a run whose loop survives a compaction', () =>
    withGuard({ tools: { loopDetection: { enabled: true } } }, (g) => {
      const exec = { session: 's2', run: 'r1', tool: 'exec', args: { command: 'npm test' } };
      assert.deepEqual(g.afterCompactionRetry('s2', 'r1'), { action: 'armed', remaining: 3 });
      const out = [];
      for (let i = 0; i < 3; i++) {
        g.beforeToolCall(exec);
        out.push(g.afterToolOutcome(exec, { result: { content: [{ type: 'text', text: 'FAIL' }] } }));
      }
      assert.deepEqual(out.slice(0, 2), [{ action: 'recorded' }, { action: 'recorded' }]);
      assert.equal(out[2].action, 'abort');
      assert.equal(out[2].detector, 'compaction_loop_persisted');
      assert.equal(out[2].tool, 'exec');
      assert.equal(out[2].count, 3);
      assert.equal(
        out[2].message,
        'CRITICAL: tool exec repeated 3 times with identical arguments and identical results within 3 attempts after auto-compaction. The compaction did not break the loop. Aborting to prevent runaway resource use.',
      );
    }));

  it('packs non-ASCII fields by their UTF-8 byte length (the same decisions as ASCII ones)', () => {
    const run = (call) =>
      withGuard(TIGHT, (g) => {
        const seen = [];
        for (let i = 0; i < 6; i++) {
          const v = g.beforeToolCall(call);
          seen.push(`${v.action}${v.count || ''}`);
          if (v.action !== 'allow') assert.ok(v.message.includes(call.tool), v.message);
          if (v.action !== 'block') assert.deepEqual(g.afterToolOutcome(call, same), { action: 'recorded' });
        }
        return seen;
      });
    const ascii = run({ session: 's', tool: 'read', args: { p: 'x' }, run: 'r', agent: 'a', callId: 'c' });
    const wide = run({ session: 'sé😀', tool: '読む', args: { p: 'ü€😀' }, run: 'rün', agent: 'ägent', callId: 'c-é' });
    assert.deepEqual(ascii, ['allow', 'allow', 'allow', 'warn3', 'warn4', 'block5']);
    assert.deepEqual(wide, ascii);
  });

  it('reports a disabled post-compaction guard', () =>
    withGuard({ tools: { loopDetection: { enabled: false } } }, (g) => {
      assert.deepEqual(g.afterCompactionRetry('s3'), { action: 'disabled' });
    }));
});

describe('warmUp', () => {
  it('changes no decision and no count of the guard it is called on', () => {
    const run = (warm) =>
      withGuard(TIGHT, (g) => {
        const seen = [];
        for (let i = 0; i < 12; i += 1) {
          if (warm && i === 3) g.warmUp();
          if (warm && i === 7) g.warmUp({ rounds: 1 });
          seen.push(g.beforeToolCall(search), g.afterToolOutcome(search, same));
          seen.push(g.onBotMessage({ channel: 'discord', account: 'a', conversation: 'c', sender: 'b1', receiver: 'b2', tsMs: 1000 * i }));
        }
        const { sessions, botPairs, groupThreads } = g.stats();
        return { seen, sessions, botPairs, groupThreads };
      });
    const cold = run(false);
    assert.ok(cold.seen.some((v) => v.action === 'block'), 'the case reaches a block');
    assert.deepEqual(run(true), cold);
  });

  it('refuses a rounds option that is not an integer from 1 to 10000, naming it', () =>
    withGuard(TIGHT, (g) => {
      for (const rounds of [0, -1, 1.5, 10_001, '3']) {
        assert.throws(() => g.warmUp({ rounds }), (e) => e instanceof LoopGuardError && e.kind === 'input' && e.path === 'options.rounds', String(rounds));
      }
    }));

  it('throws a LoopGuardError on a disposed guard', () => {
    const g = new LoopGuard(TIGHT);
    g[Symbol.dispose]();
    assert.throws(() => g.warmUp(), (e) => e instanceof LoopGuardError && e.kind === 'policy');
  });
});

describe('bot and group hooks', () => {
  const bots = { channels: { discord: { botLoopProtection: { maxEventsPerWindow: 3 } } } };
  it('suppresses a bot pair past its budget, with a cooldown deadline', () =>
    withGuard(bots, (g) => {
      const msg = (i) => ({ channel: 'discord', account: 'default', conversation: 'c1', sender: 'b1', receiver: 'b2', tsMs: 1000 + i });
      const actions = [0, 1, 2, 3].map((i) => g.onBotMessage(msg(i)));
      assert.deepEqual(actions.slice(0, 3), [{ action: 'allow' }, { action: 'allow' }, { action: 'allow' }]);
      assert.equal(actions[3].action, 'suppress');
      assert.equal(actions[3].budget, 'pair');
      assert.equal(typeof actions[3].cooldownUntilMs, 'number');
      assert.ok(actions[3].cooldownUntilMs > 1003);
      assert.equal(g.stats().botPairs, 1);
    }));

  it('runs a broadcast group thread round by round', () =>
    withGuard({ agents: { list: [{ id: 'planner' }, { id: 'coder' }] }, broadcast: { 'slack:C1': { agents: ['planner', 'coder'], maxRounds: 2 } } }, (g) => {
      const thread = { channel: 'slack', account: 'default', conversation: 'C1', root: 'm1' };
      assert.deepEqual(g.startGroupThread(thread, 'C1', 'hello all'), { action: 'round', round: 1, participants: ['planner', 'coder'] });
      assert.equal(g.stats().groupThreads, 1);
      assert.deepEqual(g.finishGroupRound(thread, [{ agent: 'planner', reply: null }, { agent: 'coder' }]), { action: 'stop', reason: 'all_passed' });
      assert.deepEqual(g.startGroupThread({ ...thread, root: 'm2' }, 'C1', 'again'), { action: 'round', round: 1, participants: ['planner', 'coder'] });
      assert.deepEqual(g.cancelGroupThread({ ...thread, root: 'm2' }), { action: 'stop', reason: 'cancelled' });
      assert.deepEqual(g.startGroupThread({ ...thread, conversation: 'C9' }, 'C9', 'x'), { action: 'none' });
    }));
});

describe('errors carry a path', () => {
  function throwsAt(fn, path) {
    assert.throws(fn, (e) => {
      assert.ok(e instanceof LoopGuardError, `expected a LoopGuardError, got ${e}`);
      assert.ok(e instanceof Error);
      assert.equal(e.path, path);
      assert.equal(e.message, `${e.path}: ${e.reason}`);
      assert.ok(e.reason.length > 0);
      return true;
    });
  }
  it('bad config names the config path', () => throwsAt(() => new LoopGuard('{tools: {loopDetection: {historySize: "x"}}}'), 'tools.loopDetection.historySize'));
  it('a JSON5 syntax error is an error, not a crash', () => assert.throws(() => new LoopGuard('{tools: '), LoopGuardError));
  it('malformed argsJson names the field', () => withGuard('{}', (g) => throwsAt(() => g.beforeToolCall({ session: 's', tool: 't', argsJson: '{' }), 'call.args-json')));
  it('unserializable args name call.args', () => withGuard('{}', (g) => throwsAt(() => g.beforeToolCall({ session: 's', tool: 't', args: { n: 1n } }), 'call.args')));
  it('a missing session names call.session', () => withGuard('{}', (g) => throwsAt(() => g.beforeToolCall({ tool: 't' }), 'call.session')));
  it('a negative bot timestamp is a policy error', () =>
    withGuard('{}', (g) => assert.throws(() => g.onBotMessage({ channel: 'discord', account: 'a', conversation: 'c', sender: 'x', receiver: 'y', tsMs: -1 }), LoopGuardError)));
  it('a bad trace line names the line and field', () => withGuard('{}', (g) => throwsAt(() => g.applyEvents('\n{"kind":"tool_call"}\n', 7), 'line 8: session')));
  it('replay errors are LoopGuardErrors too', () => assert.throws(() => replay('{}', '{"kind":"nope"}'), LoopGuardError));
  it('an unreadable snapshot leaves the state as it was', () =>
    withGuard(TIGHT, (g) => {
      g.beforeToolCall(search);
      throwsAt(() => g.importState(new Uint8Array([1, 2, 3])), 'snapshot');
      assert.equal(g.stats().sessions, 1);
    }));
});

describe('snapshots', () => {
  it('a snapshot carries the counts into a new gateway', () => {
    const a = new LoopGuard(TIGHT);
    a.beforeToolCall(search);
    a.afterToolOutcome(search, same);
    a.beforeToolCall(search);
    a.afterToolOutcome(search, same);
    const bytes = a.exportState();
    assert.ok(bytes instanceof Uint8Array && bytes.length > 0);
    const b = new LoopGuard(TIGHT);
    b.importState(bytes);
    assert.deepEqual(b.beforeToolCall(search), a.beforeToolCall(search));
    assert.equal(b.stats().sessions, 1);
    a[Symbol.dispose]();
    b[Symbol.dispose]();
  });
});

describe('dispose', () => {
  it('releases the gateway; later calls throw a LoopGuardError; twice is fine', () => {
    const g = new LoopGuard('{}');
    assert.equal(g.disposed, false);
    g[Symbol.dispose]();
    g[Symbol.dispose]();
    assert.equal(g.disposed, true);
    assert.throws(() => g.beforeToolCall(search), (e) => e instanceof LoopGuardError && e.path === 'gateway');
    assert.throws(() => g.stats(), LoopGuardError);
  });
  it('Symbol.dispose is the well-known symbol', () => assert.equal(typeof LoopGuard.prototype[Symbol.dispose], 'function'));
  it('many gateways can be created and released', () => {
    for (let i = 0; i < 500; i++) new LoopGuard(TIGHT)[Symbol.dispose]();
  });
});

describe('versions', () => {
  it('reports the policy and interface versions and the component digest', () => {
    const v = versions();
    assert.match(v.policy, /^\d+\.\d+\.\d+/);
    assert.match(v.interface, /^1\./);
    assert.match(v.blake3, /^[0-9a-f]{64}$/);
    assert.deepEqual(new LoopGuard().policy, { version: v.policy, interfaceVersion: v.interface, blake3: v.blake3, source: 'the default policy' });
  });
});
