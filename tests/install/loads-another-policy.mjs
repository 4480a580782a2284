// LoopGuard.load on a policy other than the shipped one, from an installed package: the run-time
// transpile path (jco's transpiler inside the package, no jco-transpile, no binaryen installed).
// The other policy is the shipped .wasm with a custom section appended: other bytes, same rules.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LoopGuard, versions } from 'loopguard';

const pkg = dirname(createRequire(import.meta.url).resolve('loopguard/package.json'));
const shipped = readFileSync(join(pkg, 'generated/loopguard_policy.wasm'));
const name = Buffer.from('install-test');
const body = Buffer.concat([Buffer.from([name.length]), name, Buffer.from('v2')]);
const other = join(process.cwd(), 'other-policy.wasm');
writeFileSync(other, Buffer.concat([shipped, Buffer.from([0, body.length]), body]));

const guard = await LoopGuard.load(other, { tools: { loopDetection: { enabled: true } } });
const call = { session: 's', tool: 'exec', args: { command: 'make test' } };
let v;
for (let i = 0; i < 21; i++) {
  v = guard.beforeToolCall(call);
  if (v.action !== 'block') guard.afterToolOutcome(call, { result: { content: [{ type: 'text', text: 'FAILED' }] } });
}
console.log(v.action, v.detector, v.count, guard.policy.blake3 === versions().blake3 ? 'the shipped policy' : 'another policy');
