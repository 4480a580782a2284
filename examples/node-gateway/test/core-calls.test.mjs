// The direct calls (core-calls.mjs) against jco's glue, and their canonical-ABI lowering,
// lifting and trap handling on a fake core instance.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CoreCalls, coreCalls } from '../core-calls.mjs';
import { defaultPolicy } from '../policy.mjs';
import { run } from '../fixtures/tool-sequence.mjs';

const sequence = fileURLToPath(new URL('../fixtures/tool-sequence.mjs', import.meta.url));

// With LOOPGUARD_NODE_GLUE=jco (the whole suite run through jco's glue) there is nothing to compare.
const glueOnly = process.env.LOOPGUARD_NODE_GLUE === 'jco' && 'LOOPGUARD_NODE_GLUE=jco: no direct calls here';

describe('direct calls', { skip: glueOnly }, () => {
  it('are what the default policy uses', () => {
    assert.ok(defaultPolicy.core instanceof CoreCalls);
  });

  it('give every answer jco glue gives: verdicts, messages, errors, aborts, suppressions, stats', () => {
    const direct = run();
    const viaJco = JSON.parse(
      execFileSync(process.execPath, [sequence], { env: { ...process.env, LOOPGUARD_NODE_GLUE: 'jco' }, encoding: 'utf8' }),
    );
    assert.equal(direct.direct, true);
    assert.equal(viaJco.direct, false, 'LOOPGUARD_NODE_GLUE=jco turns the direct calls off');
    assert.ok(direct.answers.some((a) => a.action === 'block'));
    assert.ok(direct.answers.some((a) => a.action === 'abort'));
    assert.ok(direct.answers.some((a) => a.error === 'call.args-json'));
    assert.ok(direct.answers.some((a) => a.action === 'suppress'));
    assert.ok(direct.answers.some((a) => a.error === 'message.ts-ms'), 'a policy error of a bot message, from last-error');
    assert.deepEqual(direct.answers, viaJco.answers);
  });
});

/** A function of `arity` parameters (what `Function.length` reports) that calls `f` with them. */
function arity(n, f) {
  const names = Array.from({ length: n }, (_, i) => `a${i}`).join(', ');
  return new Function('f', `return (${names}) => f(${names});`)(f);
}

/**
 * A fake core instance: `cabi_realloc` is a bump allocator, and the quick functions record
 * what they were called with and answer with `reply(memory bytes, at)` written at a fixed spot.
 */
function fake({ check = 11, record = 13, bot = 13, reply = () => {}, fail = null } = {}) {
  const memory = new WebAssembly.Memory({ initial: 1 });
  let next = 1024;
  const calls = [];
  const answer = (...args) => {
    if (fail) throw fail;
    const bytes = new Uint8Array(memory.buffer);
    const [, ptr, len] = args;
    calls.push({ args, text: Buffer.from(bytes.subarray(ptr, ptr + len)).toString('utf8') });
    bytes.fill(0, 16, 48);
    reply(bytes, 16);
    return 16;
  };
  const exports = {
    memory,
    cabi_realloc(old, oldLen, align, len) {
      assert.deepEqual([old, oldLen, align], [0, 0, 1]);
      next += len;
      if (next > memory.buffer.byteLength) memory.grow(Math.ceil((next - memory.buffer.byteLength) / 65536));
      return next - len;
    },
    'loopguard:policy/guard@0.5.3#check-tool-call-quick': arity(check, answer),
    'loopguard:policy/guard@0.5.3#record-tool-outcome-quick': arity(record, answer),
    'loopguard:policy/guard@0.5.3#check-bot-message-quick': arity(bot, answer),
  };
  return { instance: { exports }, calls };
}

describe('canonical ABI of the quick functions', () => {
  it('finds the functions of any 0.5.x interface, and only with the expected arity', () => {
    assert.ok(coreCalls([{ exports: {} }, fake().instance]) instanceof CoreCalls);
    assert.equal(coreCalls([fake({ check: 10 }).instance]), null);
    assert.equal(coreCalls([fake({ record: 12 }).instance]), null);
    assert.equal(coreCalls([fake({ bot: 12 }).instance]), null);
    const { instance } = fake();
    delete instance.exports.cabi_realloc;
    assert.equal(coreCalls([instance]), null);
  });

  it('lowers the fields end to end, with UTF-8 lengths and options as two flat values', () => {
    const { instance, calls } = fake();
    const core = coreCalls([instance]);
    core.check(7n, { session: 'séss', tool: 'read', argsJson: '{"q":"😀"}', agent: '' });
    assert.equal(calls[0].text, 'séssread{"q":"😀"}');
    // total (5 + 4 + 12: the emoji is four bytes), session, tool, run (absent), agent (present, empty), call id
    assert.deepEqual(calls[0].args.slice(2), [21, 5, 4, 0, 0, 1, 0, 0, 0]);
    assert.equal(calls[0].args[0], 7n);
    core.record(8n, { session: 's', tool: 't', argsJson: '{}', run: 'r\ud800', callId: 'c' }, '["é"]', true);
    assert.equal(calls[1].text, 'str\ufffdc{}["é"]');
    // total, session, tool, run (1, 4: the lone surrogate is three bytes), agent (absent), call id, args, threw
    assert.deepEqual(calls[1].args.slice(2), [15, 1, 1, 1, 4, 0, 0, 1, 1, 2, 1]);
    core.check(9n, { session: 's', tool: 't', argsJson: 'x'.repeat(200_000) });
    assert.equal(calls[2].args[2], 200_002, 'a text past the kept scratch buffer, after the memory grew');
    assert.equal(calls[2].text, `st${'x'.repeat(200_000)}`);
    core.checkBot(5n, { channel: 'slack', account: 'A', conversation: 'C1', room: 'R', sender: 'bøt', receiver: 'b2', tsMs: -3n, eventId: 'e' });
    assert.equal(calls[3].text, 'slackAC1Rbøtb2e');
    // total, channel, account, conversation, room (1, 1), sender (ø is two bytes), receiver, ts, event id (1, 1)
    assert.deepEqual(calls[3].args.slice(2), [16, 5, 1, 2, 1, 1, 4, 2, -3n, 1, 1]);
    core.checkBot(5n, { channel: 'x', account: 'a', conversation: 'c', sender: 's', receiver: 'r', tsMs: 0n });
    assert.deepEqual(calls[4].args.slice(2), [5, 1, 1, 1, 0, 0, 1, 1, 0n, 0, 0]);
  });

  it('lifts verdicts as jco does, and refuses discriminants the WIT does not have', () => {
    const verdict = (bytes) => {
      const { instance } = fake({ reply: (m, at) => m.set(bytes, at) });
      return coreCalls([instance]).check(1n, { session: 's', tool: 't', argsJson: '{}' });
    };
    assert.deepEqual(verdict([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), { action: 'allow', detector: undefined, count: 0, notify: false });
    assert.deepEqual(verdict([0, 0, 0, 0, 2, 1, 3, 0, 0x2c, 0x01, 0, 0, 1]), {
      action: 'block',
      detector: 'unknown-tool-repeat',
      count: 300,
      notify: true,
    });
    assert.equal(verdict([1]), null, "the result's error: last-error says why");
    assert.throws(() => verdict([2]), TypeError);
    assert.throws(() => verdict([0, 0, 0, 0, 3]), TypeError);
    assert.throws(() => verdict([0, 0, 0, 0, 1, 1, 6]), TypeError);
    assert.throws(() => verdict([0, 0, 0, 0, 1, 2]), TypeError);
    assert.throws(() => verdict([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2]), TypeError);

    const outcome = (bytes) => {
      const { instance } = fake({ reply: (m, at) => m.set(bytes, at) });
      return coreCalls([instance]).record(1n, { session: 's', tool: 't', argsJson: '{}' }, 'null', false);
    };
    assert.deepEqual(outcome([0, 0, 0, 0, 0]), { tag: 'recorded' });
    assert.deepEqual(outcome([0, 0, 0, 0, 1]), { tag: 'ignored' });
    assert.deepEqual(outcome([0, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]), { tag: 'abort', val: 3 });
    assert.equal(outcome([1]), null);
    assert.throws(() => outcome([0, 0, 0, 0, 3]), TypeError);

    const bot = (bytes) => {
      const { instance } = fake({ reply: (m, at) => m.set(bytes, at) });
      const msg = { channel: 'c', account: 'a', conversation: 'v', sender: 's', receiver: 'r', tsMs: 1n };
      return coreCalls([instance]).checkBot(1n, msg);
    };
    assert.deepEqual(bot([0, 0, 0, 0, 0, 0, 0, 0, 0]), { tag: 'allow' });
    const suppress = [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0x27, 0, 0, 0, 0, 0, 0, 1];
    assert.deepEqual(bot(suppress), { tag: 'suppress', val: { cooldownUntilMs: 10_000n, budget: 'burst' } });
    const negative = [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0];
    assert.deepEqual(bot(negative), { tag: 'suppress', val: { cooldownUntilMs: -1n, budget: 'pair' } });
    assert.equal(bot([1]), null);
    assert.throws(() => bot([0, 0, 0, 0, 0, 0, 0, 0, 2]), TypeError);
    assert.throws(() => bot([...suppress.slice(0, 24), 2]), TypeError);
  });

  it('a trap poisons the instance; any other exception does not', () => {
    const overflow = fake({ fail: new RangeError('Maximum call stack size exceeded') });
    const core = coreCalls([overflow.instance]);
    assert.throws(() => core.check(1n, { session: 's', tool: 't', argsJson: '{}' }), RangeError);
    assert.equal(core.trapped, null);

    const trap = new WebAssembly.RuntimeError('unreachable');
    const trapping = fake({ fail: trap });
    const poisoned = coreCalls([trapping.instance]);
    assert.throws(() => poisoned.check(1n, { session: 's', tool: 't', argsJson: '{}' }), (e) => e === trap);
    assert.equal(poisoned.trapped, trap);
    assert.throws(
      () => poisoned.record(1n, { session: 's', tool: 't', argsJson: '{}' }, 'null', false),
      (e) => e instanceof WebAssembly.RuntimeError && /cannot enter component instance/.test(e.message),
    );
  });
});
