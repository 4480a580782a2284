// agentConfig: the framework adapters' default document is the Rust hosts' one (the file they
// include), filled in where the user's config is silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { agentConfig, agentDefaults, LoopGuard, LoopGuardError } from '../index.js';

const rustDefaults = JSON.parse(readFileSync(new URL('../../../host/src/agent-defaults.json', import.meta.url), 'utf8'));

test('the default document is the one the Rust hosts include', () => {
  assert.deepEqual(agentDefaults(), rustDefaults);
  assert.deepEqual(JSON.parse(agentConfig()), rustDefaults);
  assert.deepEqual(JSON.parse(agentConfig('{}')), rustDefaults);
});

test('what the user gives wins, and the defaults fill in beside it', () => {
  const doc = JSON.parse(agentConfig({ tools: { loopDetection: { warningThreshold: 3 } }, loopguard: { preset: 'off' } }));
  assert.deepEqual(doc, { tools: { loopDetection: { warningThreshold: 3, enabled: true } }, loopguard: { preset: 'off' } });
  const off = JSON.parse(agentConfig({ tools: { loopDetection: { enabled: false } } }));
  assert.equal(off.tools.loopDetection.enabled, false);
});

test('a filled document is one the policy accepts; a bad one is refused with its path', () => {
  assert.doesNotThrow(() => new LoopGuard(agentConfig({})));
  assert.throws(() => agentConfig('{not json'), (e) => e instanceof LoopGuardError && e.kind === 'config' && e.path === 'config');
  assert.throws(() => agentConfig([]), (e) => e instanceof LoopGuardError && e.kind === 'config');
  assert.throws(() => new LoopGuard(agentConfig({ loopguard: { preset: 'loud' } })), (e) => e instanceof LoopGuardError && /preset/.test(e.message));
});
