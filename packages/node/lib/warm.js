// Warming up a policy: made-up tool calls and bot messages on a scratch gateway, so that V8
// compiles and optimizes the policy's hot WebAssembly functions before the first real call
// (`LoopGuard#warmUp` says what it buys). No policy logic: the traffic only exercises code paths,
// and its decisions are thrown away with the scratch gateway.
import { disposeQuietly } from './swap.js';

/** Made-up decisions per warm-up: enough for V8 to optimize the hot functions (measured). */
export const WARM_ROUNDS = 200;

/**
 * Made-up tool calls of the common shapes: an `exec` with the details OpenClaw's exec tool
 * returns, a `read` with a text result, a `process` poll, and an error.
 */
function warmCall(i) {
  const session = `warm-${i % 4}`;
  const n = i % 3;
  switch (i % 4) {
    case 0:
      return [{ session, tool: 'exec', args: { command: `echo ${n}` }, run: 'warm' }, { result: { content: [{ type: 'text', text: String(n) }], details: { status: 'completed', exitCode: 0, aggregated: String(n) } } }];
    case 1:
      return [{ session, tool: 'read', args: { path: `/warm/${n}` }, run: 'warm' }, { result: { content: [{ type: 'text', text: `line ${n}\n` }] } }];
    case 2:
      return [{ session, tool: 'process', args: { action: 'poll', sessionId: `p${n}` }, run: 'warm' }, { result: { content: [{ type: 'text', text: 'running' }], details: { status: 'running' } } }];
    default:
      return [{ session, tool: 'web_fetch', args: { url: `https://warm.invalid/${n}` }, run: 'warm' }, { error: new Error('fetch failed') }];
  }
}

/**
 * Runs made-up tool calls and bot messages on a scratch gateway of `policy` and `config`.
 * `newGuard(policy, config)` creates it: index.js passes its factory for a LoopGuard of a given
 * policy instance (this module cannot import the class, which imports this module).
 */
export function warmPolicy(newGuard, policy, config, rounds = WARM_ROUNDS) {
  let scratch;
  try {
    scratch = newGuard(policy, config);
    for (let i = 0; i < rounds; i += 1) {
      const [call, outcome] = warmCall(i);
      scratch.beforeToolCall(call);
      scratch.afterToolOutcome(call, outcome);
      scratch.onBotMessage({ channel: 'warm', account: 'warm', conversation: 'warm', sender: `b${i % 2}`, receiver: `b${(i + 1) % 2}`, tsMs: i * 1000 });
    }
  } catch {
    // Warming is only about speed: a policy that refuses made-up traffic is judged on real calls.
  } finally {
    disposeQuietly(scratch);
  }
}
