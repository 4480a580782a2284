// The Supervisor: every call answered (a failure is a value), inline or in a worker thread,
// restarts from the last snapshot after a trap or a missed deadline, hot swap of a watched policy
// file, the state file, and outcomes recorded off the tool call's path. The hostile policy
// (scripts/build-hostile-policy.sh) traps for the session agent:main:__trap__ and spins for agent:main:__loop__.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LoopGuardError, Supervisor } from '../index.js';

const here = dirname(fileURLToPath(import.meta.url));
const HOSTILE = join(here, '../../../target/hostile-gateway/wasm32-wasip2/release/hostile_policy.wasm');
const OWN = join(here, '../generated/loopguard_policy.wasm');
const noHostile = !existsSync(HOSTILE) && `${HOSTILE} not built (scripts/build-hostile-policy.sh)`;
const CONFIG = { tools: { loopDetection: { enabled: true } }, loopguard: { compat: 'documented' } };
const RESULT = { content: [{ type: 'text', text: 'loop' }], details: { status: 'completed', exitCode: 0 } };
const tmp = () => mkdtempSync(join(tmpdir(), 'lg-sup-'));
// A deadline per call in the worker that an ordinary call cannot miss on a busy machine (the
// default is 250 ms), where the test is not about the deadline: a trap is then never mistaken
// for a timeout.
const PATIENT_MS = 5000;

/** One identical no-progress tool call with its outcome; returns the check's result. */
function step(sup, session = 's', run = 'r') {
  const call = { session, tool: 'exec', args: { command: 'echo loop' }, run };
  const r = sup.call('beforeToolCall', call);
  if (r.ok && r.value.action !== 'block') sup.call('afterToolOutcome', call, { result: RESULT });
  return r;
}
const blocked = (r) => r.ok && r.value.action === 'block';
const steps = (sup, n, session, run) => Array.from({ length: n }, () => blocked(step(sup, session, run)));

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

describe('Supervisor', () => {
  for (const isolation of ['inline', 'worker']) {
    it(`${isolation}: the package's own policy decides (the 21st identical call is blocked)`, (t) => {
      const sup = new Supervisor({ config: CONFIG, isolation, callTimeoutMs: PATIENT_MS });
      t.after(() => sup.stop({ save: false }));
      assert.deepEqual(steps(sup, 21), [...Array(20).fill(false), true]);
      assert.equal(sup.ready, true);
      assert.equal(sup.health().isolation, isolation);
      assert.equal(sup.call('stats').value.sessions, 1);
    });
  }

  it('a failure is a value: bad config, an unknown call, bad input, a stopped supervisor', (t) => {
    const events = [];
    const bad = new Supervisor({ config: { tools: { loopDetection: { warningThreshold: 20, criticalThreshold: 10 } } }, onEvent: (e) => events.push(e) });
    t.after(() => bad.stop({ save: false }));
    const r = bad.call('beforeToolCall', { session: 's', tool: 'exec' });
    assert.equal(r.ok, false);
    assert.equal(r.reason, 'unavailable');
    assert.ok(r.error instanceof LoopGuardError);
    assert.equal(r.error.kind, 'config');
    assert.match(events.find((e) => e.event === 'load-failed').path, /tools\.loopDetection/);
    const sup = new Supervisor({ config: CONFIG });
    t.after(() => sup.stop({ save: false }));
    assert.equal(sup.call('nope').error.path, 'op');
    const input = sup.call('beforeToolCall', { tool: 'exec' });
    assert.deepEqual([input.reason, input.error.kind, input.error.path], ['error', 'input', 'call.session']);
    assert.equal(sup.failures.errors, 1);
    sup.stop();
    assert.equal(sup.call('stats').reason, 'unavailable');
    assert.throws(() => new Supervisor({ isolation: 'thread' }), /options\.isolation/);
  });

  it('the state file: written when the state changed, read back at start', (t) => {
    const stateFile = join(tmp(), 'state', 'loopguard.bin');
    const events = [];
    let sup = new Supervisor({ config: CONFIG, stateFile, onEvent: (e) => events.push(e.event) });
    t.after(() => sup.stop({ save: false }));
    assert.equal(sup.save(), false, 'nothing to write before the first decision');
    steps(sup, 15);
    assert.equal(sup.save(), true);
    assert.equal(sup.save(), false, 'unchanged since');
    sup.stop();
    sup = new Supervisor({ config: CONFIG, stateFile, onEvent: (e) => events.push(e.event) });
    assert.deepEqual(steps(sup, 6), [false, false, false, false, false, true], 'the 21st call overall is blocked');
    sup.stop({ save: false });
    assert.deepEqual(events.filter((e) => e.startsWith('state-')), ['state-written', 'state-read']);
  });

  it('outcomes recorded later: in order before the next call, at flushOutcomes, or by the timer', async (t) => {
    const sup = new Supervisor({ config: CONFIG });
    t.after(() => sup.stop({ save: false }));
    const at = [];
    const call = { session: 's', tool: 'exec', args: { command: 'echo loop' }, run: 'r' };
    const result = RESULT;
    for (let i = 0; i < 20; i += 1) {
      assert.equal(sup.call('beforeToolCall', call).value.action === 'block', false);
      sup.afterToolOutcomeLater(call, { result }, (r, when) => at.push([r.value.action, when]));
      assert.equal(sup.pendingOutcomes, 1);
    }
    assert.equal(sup.call('beforeToolCall', call).value.action, 'block', 'the queued outcomes count before the check');
    sup.afterToolOutcomeLater(call, { result }, (r, when) => at.push([r.value.action, when]));
    assert.equal(sup.flushOutcomes('model_call_started'), 1);
    sup.afterToolOutcomeLater(call, { result }, (r, when) => at.push([r.value.action, when]));
    // the timer fires 250 ms later on an idle machine; waited for, not timed
    await waitFor(() => at.length === 22);
    assert.deepEqual(at.slice(-3).map((x) => x[1]), ['beforeToolCall', 'model_call_started', 'timer']);
  });

  for (const isolation of ['inline', 'worker']) {
    it(`${isolation}: a trap is answered, and the policy comes back from the last snapshot with its counts`, { skip: noHostile }, async (t) => {
      const sup = new Supervisor({ config: CONFIG, policy: HOSTILE, isolation, callTimeoutMs: PATIENT_MS });
      t.after(() => sup.stop({ save: false }));
      await waitFor(() => sup.ready || (sup.call('stats'), sup.ready));
      assert.deepEqual(steps(sup, 15, 's', 't'), Array(15).fill(false));
      // The restart point follows the calls on its own (at most a second behind on an idle
      // machine): waited for until it holds all 15, not for a fixed time.
      const now = Buffer.from(sup.call('exportState').value);
      await waitFor(() => sup.lastSnapshot && now.equals(Buffer.from(sup.lastSnapshot)));
      const trapped = sup.call('beforeToolCall', { session: 'agent:main:__trap__', tool: 'exec' });
      assert.deepEqual([trapped.ok, trapped.reason], [false, 'trap']);
      assert.equal(sup.failures.traps, 1);
      await waitFor(() => sup.ready || (sup.call('stats'), sup.ready));
      assert.deepEqual(steps(sup, 6, 's', 't'), [false, false, false, false, false, true], 'counts kept across the replacement');
      assert.equal(sup.failures.restarts, 1);
    });
  }

  it('worker: a spinning policy is answered at its deadline and replaced', { skip: noHostile }, async (t) => {
    // 1 s, not less: the ordinary calls around the spinning one must not miss it on a busy machine.
    const sup = new Supervisor({ config: CONFIG, policy: HOSTILE, callTimeoutMs: 1000 });
    t.after(() => sup.stop({ save: false }));
    assert.equal(sup.isolation, 'worker', 'a policy file runs in the worker by default');
    await waitFor(() => sup.ready || (sup.call('stats'), sup.ready));
    steps(sup, 5);
    sup.snapshot(); // the restart point (a spinning instance cannot export)
    // The call returns at all (a spinning policy would otherwise hold it for ever), as a timeout
    // counted once; how fast is the benchmarks' business.
    const r = sup.call('beforeToolCall', { session: 'agent:main:__loop__', tool: 'exec' });
    assert.deepEqual([r.reason, r.error.reason], ['timeout', 'no answer within 1000 ms']);
    assert.equal(sup.failures.timeouts, 1);
    assert.equal(step(sup).ok, true, 'the replacement answers');
  });

  it('hot swap of a watched policy file: the counts carry over; a file with another digest than the pinned one is refused', { skip: noHostile }, async (t) => {
    const file = join(tmp(), 'policy.wasm');
    copyFileSync(OWN, file);
    const events = [];
    const sup = new Supervisor({ config: CONFIG, policy: file, watchPolicyMs: 100, callTimeoutMs: PATIENT_MS, onEvent: (e) => events.push(e) });
    t.after(() => sup.stop({ save: false }));
    await waitFor(() => sup.ready || (sup.call('stats'), sup.ready));
    steps(sup, 12);
    copyFileSync(HOSTILE, `${file}.new`);
    renameSync(`${file}.new`, file);
    const swapped = await waitFor(() => events.find((e) => e.event === 'swapped'));
    assert.match(swapped.to.version, /\+hostile$/);
    assert.match(sup.info.policy.version, /\+hostile$/);
    assert.deepEqual(steps(sup, 9), [...Array(8).fill(false), true], 'the 21st call overall is blocked');
    sup.stop({ save: false });
    const pinned = new Supervisor({ config: CONFIG, policy: HOSTILE, expectDigest: 'ab'.repeat(32), isolation: 'inline' });
    t.after(() => pinned.stop());
    pinned.start();
    await waitFor(() => pinned.health().startError);
    assert.match(pinned.call('stats').error.message, /pinned/);
    pinned.stop();
  });
});
