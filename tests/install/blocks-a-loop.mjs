import { LoopGuard } from 'loopguard';
const guard = new LoopGuard({ tools: { loopDetection: { enabled: true } } });
const call = { session: 's', tool: 'exec', args: { command: 'make test' } };
let v;
for (let i = 0; i < 21; i++) {
  v = guard.beforeToolCall(call);
  if (v.action !== 'block') guard.afterToolOutcome(call, { result: { content: [{ type: 'text', text: 'FAILED' }] } });
}
console.log(v.action, v.detector, v.count);
