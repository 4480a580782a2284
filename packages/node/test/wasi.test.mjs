// The WASI imports a policy gets (lib/wasi.js): loading the package starts no thread, and what a
// policy writes to stderr (a panic's message) reaches the process's stderr. Each case runs in a
// fresh Node process, so nothing this test runner loaded counts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const INDEX = pathToFileURL(join(here, '../index.js')).href;
const HOSTILE = join(here, '../../../target/hostile-gateway/wasm32-wasip2/release/hostile_policy.wasm');

/** Runs an ES module script in a fresh Node; returns its stdout, stderr and exit status. */
function node(script) {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-wasi-'));
  try {
    writeFileSync(join(dir, 'script.mjs'), script);
    const r = spawnSync(process.execPath, [join(dir, 'script.mjs')], { encoding: 'utf8', timeout: 60_000 });
    return { stdout: r.stdout, stderr: r.stderr, status: r.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('WASI imports', () => {
  it('loading the package, creating a guard and deciding start no thread', { skip: !existsSync('/proc/self/status') && 'needs /proc' }, () => {
    const r = node(`
      import { readFileSync } from 'node:fs';
      import { readFile } from 'node:fs/promises';
      const threads = () => Number(readFileSync('/proc/self/status', 'utf8').match(/Threads:\\s+(\\d+)/)[1]);
      await readFile('/proc/self/status'); // libuv's thread pool starts at the first async call
      const before = threads();
      const { LoopGuard } = await import(${JSON.stringify(INDEX)});
      const guard = new LoopGuard({ tools: { loopDetection: { enabled: true } } });
      const verdict = guard.beforeToolCall({ session: 's', tool: 'read', args: { path: '/a' } });
      guard.afterToolOutcome({ session: 's', tool: 'read', args: { path: '/a' } }, { result: { ok: true } });
      console.log(JSON.stringify({ before, after: threads(), action: verdict.action }));`);
    assert.equal(r.status, 0, r.stderr);
    const { before, after, action } = JSON.parse(r.stdout);
    assert.equal(action, 'allow');
    assert.equal(after, before, `threads before ${before}, after ${after}`);
  });

  it('a policy that panics: its message reaches stderr and the call fails with a LoopGuardError', { skip: !existsSync(HOSTILE) && `${HOSTILE} not built (scripts/build-hostile-policy.sh)` }, () => {
    const r = node(`
      const { LoopGuard, LoopGuardError } = await import(${JSON.stringify(INDEX)});
      const guard = await LoopGuard.load(${JSON.stringify(HOSTILE)}, '{}');
      try {
        guard.beforeToolCall({ session: '__trap__', tool: 'read', args: {} });
        console.log('no error');
      } catch (e) {
        console.log(e instanceof LoopGuardError ? 'LoopGuardError ' + e.kind : 'other ' + e);
      }`);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^LoopGuardError policy/);
    assert.match(r.stderr, /hostile policy: trap requested by session __trap__/);
  });
});
