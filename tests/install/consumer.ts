// A TypeScript gateway's use of the shipped types: must pass `tsc --noEmit --strict`.
import { LoopGuard, LoopGuardError, Supervisor, replay, versions, type Isolation, type ToolVerdict, type Stats } from 'loopguard';

const guard = new LoopGuard({ tools: { loopDetection: { enabled: true } } });
const call = { session: 'agent:main:s1', tool: 'exec', args: { command: 'make test' }, run: 'r1' };
const verdict: ToolVerdict = guard.beforeToolCall(call);
if (verdict.action === 'block') {
  const text: string = verdict.message;
  console.log(text, verdict.detector, verdict.count);
}
const outcome = guard.afterToolOutcome(call, { result: { content: [] } });
if (outcome.action === 'abort') console.log(outcome.message.length);
const bot = guard.onBotMessage({ channel: 'discord', account: 'a', conversation: 'c', sender: 'b1', receiver: 'b2', tsMs: 1 });
if (bot.action === 'suppress') console.log(bot.cooldownUntilMs + 1, bot.budget);
const stats: Stats = guard.stats();
console.log(stats.sessions + stats.botPairs, versions().interface, replay('{}', '').length);
try {
  guard.importState(new Uint8Array([1]));
} catch (e) {
  if (e instanceof LoopGuardError) console.log(e.kind, e.path, e.reason);
}
async function swap(): Promise<string> {
  const report = await guard.swap('/srv/loopguard_policy.wasm', { expectDigest: '00' });
  const other = await LoopGuard.load(new Uint8Array(), '{}');
  other[Symbol.dispose]();
  return report.to.blake3;
}
void swap;
guard[Symbol.dispose]();

// The Supervisor: every call answered, a failure a value the gateway maps to its fail mode.
const sup = new Supervisor({ config: { tools: { loopDetection: { enabled: true } } }, stateFile: '/tmp/lg.bin', saveEveryMs: 30_000, onEvent: (e) => console.log(e.level, e.event, e.message) });
const checked = sup.call('beforeToolCall', call);
if (checked.ok) {
  if (checked.value.action === 'block') console.log(checked.value.message);
} else {
  const why: 'error' | 'trap' | 'timeout' | 'unavailable' = checked.reason;
  console.log(why, checked.error.kind, checked.error.path);
}
sup.afterToolOutcomeLater(call, { result: { content: [] } }, (r, at) => console.log(r.ok && r.value.action, at));
const counted: number = sup.flushOutcomes('model_call_started') + sup.failures.traps;
const isolation: Isolation = sup.health().isolation;
console.log(counted, isolation, sup.ready, sup.save(), sup.stop({ save: false })?.length);
