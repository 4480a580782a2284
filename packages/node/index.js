// loopguard for Node.js gateways: the loopguard policy component (the same `.wasm` the Rust
// host, Python and the wasmtime CLI run), shipped transpiled by jco.
//
// Why a wrapper over jco's bindings: they speak WIT (kebab-case enums, tagged variants, bigint
// for s64, `ComponentError` with a `payload`). A gateway wants hook names, plain objects whose
// vocabulary matches the decision lines of `applyEvents` / `loopguard replay`, and errors with a
// kind and a path. Every decision is made inside the component; this package converts
// (lib/convert.js), and supervises (lib/supervisor.js: a guard that must not take the gateway
// down with it, inline or in a worker thread, with deadlines, restarts from the last snapshot,
// hot swap and a state file).
//
//   import { LoopGuard } from 'loopguard';
//   const guard = new LoopGuard({ tools: { loopDetection: { enabled: true } } }); // one per process
//   const verdict = guard.beforeToolCall({ session: 's1', tool: 'read', args: { path: '/a' } });
//   if (verdict.action === 'block') return verdict.message; // hand it to the model as the result
//
// Several replicas sharing one budget (docs/SCALING.md): the same calls, awaited.
//   const shared = new StoredLoopGuard(config, { store: 'redis://127.0.0.1:6379' });
//   const v = await shared.beforeToolCall({ session: 's1', tool: 'read', args: { path: '/a' } });
export { LoopGuard, replay, versions } from './lib/guard.js';
export { LoopGuardError } from './lib/errors.js';
export { Supervisor } from './lib/supervisor.js';
export { StoredLoopGuard } from './lib/stored.js';
export { agentConfig, agentDefaults } from './lib/agent.js';
// The one before/after mapping the framework adapters and the coding-CLI plugins share.
export { ToolGate, OrderedTickets } from './lib/adapters/gate.js';
