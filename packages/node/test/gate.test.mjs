// ToolGate and OrderedTickets, the framework adapters' shared core: the bookkeeping between a
// call's before and after points (tickets, notes once, a refused call without an outcome, the
// bound on what waits), on a scripted stand-in guard and once on the real policy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoopGuard, LoopGuardError } from '../index.js';
import { endsRun, MAX_PENDING, OrderedTickets, ToolGate } from '../lib/adapters/gate.js';

/** A guard that answers from a script and records what it was asked. */
function scripted(verdicts = [], outcomes = []) {
  const seen = { before: [], after: [] };
  return {
    seen,
    beforeToolCall: (call) => (seen.before.push(call), verdicts.shift() ?? { action: 'allow', count: 1, notify: false }),
    afterToolOutcome: (call, outcome) => (seen.after.push({ call, outcome }), outcomes.shift() ?? { action: 'recorded' }),
  };
}

const call = (n, tool = 'poll') => ({ session: 's', tool, args: { n }, callId: `c${n}` });
const block = (detector = 'known_poll_no_progress') => ({ action: 'block', detector, count: 4, message: 'blocked', notify: true });

test('tickets pair each outcome with its own call, in any order', async () => {
  const guard = scripted();
  const gate = new ToolGate({ guard });
  const [a, b] = [await gate.before(call(1)), await gate.before(call(2))];
  assert.notEqual(a.ticket, b.ticket);
  assert.equal(gate.pending, 2);
  await gate.after(b.ticket, { result: 'two' });
  await gate.after(a.ticket, { error: 'one failed' });
  assert.deepEqual(guard.seen.after.map((x) => [x.call.callId, x.outcome]), [['c2', { result: 'two' }], ['c1', { error: 'one failed' }]]);
  assert.equal(gate.pending, 0);
  assert.deepEqual(await gate.after(a.ticket, { result: 'again' }), { note: null, endRun: false, message: null }, 'a ticket is used once');
  assert.equal(guard.seen.after.length, 2);
});

test('a refused call has no outcome: its ticket records nothing', async () => {
  const guard = scripted([block()]);
  const gate = new ToolGate({ guard });
  const refused = await gate.before(call(1));
  assert.deepEqual(refused, { ticket: refused.ticket, run: false, message: 'blocked', endRun: false });
  assert.equal(gate.pending, 0);
  assert.deepEqual(await gate.after(refused.ticket, { result: 'blocked' }), { note: null, endRun: false, message: null });
  assert.equal(guard.seen.after.length, 0, 'the adapter’s own refusal never reaches the policy as an outcome');
});

test('a warning is handed over once, with the outcome of the call that warned', async () => {
  const warn = { action: 'warn', detector: 'known_poll_no_progress', count: 3, message: 'loopguard: note', notify: true };
  const gate = new ToolGate({ guard: scripted([{ action: 'allow', count: 1, notify: false }, warn, { ...warn, notify: false }]) });
  const tickets = [await gate.before(call(1)), await gate.before(call(2)), await gate.before(call(3))];
  const notes = [];
  for (const t of tickets) notes.push((await gate.after(t.ticket, { result: 'same' })).note);
  assert.deepEqual(notes, [null, 'loopguard: note', null], 'a warning the policy does not notify is not handed over');
});

test('the ladder ends the run, from before or from an outcome', async () => {
  const gate = new ToolGate({ guard: scripted([block('ladder')], [{ action: 'abort', message: 'loopguard: over' }]) });
  assert.equal((await gate.before(call(1))).endRun, true);
  assert.equal(endsRun(block()), false);
  const t = await gate.before(call(2));
  assert.deepEqual(await gate.after(t.ticket, { result: 'x' }), { note: null, endRun: true, message: 'loopguard: over' });
});

test('on the real policy: the default document blocks an unchanged poll at the 4th call', async () => {
  const gate = new ToolGate();
  const runs = [];
  for (let i = 1; i <= 4; i++) {
    const v = await gate.before({ session: 's', tool: 'poll', args: { job: 1 } });
    runs.push(v.run);
    if (v.run) await gate.after(v.ticket, { result: 'pending' });
  }
  assert.deepEqual(runs, [true, true, true, false]);
});

test('OrderedTickets: first checked, first paired, per (session, tool)', () => {
  const q = new OrderedTickets();
  q.push('s', 'poll', 't1');
  q.push('s', 'read', 't2');
  q.push('s', 'poll', 't3');
  q.push('other', 'poll', 't4');
  assert.equal(q.shift('s', 'poll'), 't1');
  assert.equal(q.shift('s', 'poll'), 't3');
  assert.equal(q.shift('s', 'poll'), undefined);
  assert.equal(q.shift('s', 'read'), 't2');
  assert.equal(q.shift('other', 'poll'), 't4');
  assert.equal(q.shift('nobody', 'poll'), undefined);
});

test('OrderedTickets keeps at most MAX_PENDING; the oldest is forgotten first', () => {
  const q = new OrderedTickets();
  for (let i = 0; i <= MAX_PENDING; i++) q.push('s', 'poll', `t${i}`);
  assert.equal(q.shift('s', 'poll'), 't1', 't0 was dropped');
  let n = 1;
  while (q.shift('s', 'poll') !== undefined) n++;
  assert.equal(n, MAX_PENDING);
});

test('a gate whose framework never reports outcomes stays bounded', async () => {
  const gate = new ToolGate({ guard: scripted() });
  for (let i = 0; i < MAX_PENDING + 10; i++) await gate.before(call(i));
  assert.equal(gate.pending, MAX_PENDING);
});

test('a config and a guard both given is an error; a broken config names its path', () => {
  assert.throws(
    () => new ToolGate({ config: {}, guard: new LoopGuard() }),
    (e) => e instanceof LoopGuardError && e.kind === 'config' && e.path === 'options.config',
  );
  assert.throws(() => new ToolGate({ config: { loopguard: { preset: 'loud' } } }), (e) => e instanceof LoopGuardError && e.path === 'loopguard.preset');
  assert.throws(() => new ToolGate(null), (e) => e instanceof LoopGuardError && e.kind === 'input');
});
