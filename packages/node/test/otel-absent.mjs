// A child process of metrics.test.mjs: makes decisions on every kind of guard with no
// OpenTelemetry set up, and prints which @opentelemetry modules were resolved meanwhile (a
// module hook, registered before loopguard is imported, sees every import and require) and
// whether the API's global registry exists. With `control`, it then imports @opentelemetry/api
// itself: the hook must see that, or the check could not fail.
import { registerHooks } from 'node:module';

const resolved = [];
registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    // the first step into @opentelemetry (its own imports inside it are not listed again)
    if (r.url.includes('/@opentelemetry/') && !context.parentURL?.includes('/@opentelemetry/')) resolved.push(specifier);
    return r;
  },
});
const { LoopGuard, StoredLoopGuard, Supervisor } = await import('../index.js');
const config = { tools: { loopDetection: { enabled: true } } };
const call = { session: 's', tool: 'read', args: { path: '/a' } };
const guard = new LoopGuard(config);
const sup = new Supervisor({ config });
const stored = new StoredLoopGuard(config, { store: 'memory' });
const actions = new Set();
for (let i = 0; i < 40; i++) {
  actions.add(guard.beforeToolCall(call).action);
  guard.afterToolOutcome(call, { result: 'same' });
  actions.add(sup.call('beforeToolCall', call).value.action);
  actions.add((await stored.beforeToolCall(call)).action);
}
sup.stop({ save: false });
await stored.close();
if (process.argv[2] === 'control') await import('@opentelemetry/api');
const global = globalThis[Symbol.for('opentelemetry.js.api.1')] !== undefined;
process.stdout.write(JSON.stringify({ resolved, global, actions: [...actions].sort() }));
