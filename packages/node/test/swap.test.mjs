// Hot swap: `LoopGuard.load` and `guard.swap` on the policy .wasm cargo built (the one
// generated/ was transpiled from), on a byte-different but equivalent copy of it (an extra
// custom section: it takes the run-time jco path in a worker), and on files that must be refused.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LoopGuard, LoopGuardError, versions } from '../index.js';

const interfaceVersion = versions().interface;

const here = dirname(fileURLToPath(import.meta.url));
const WASM = join(here, '../../../target/policy/wasm32-wasip2/release/loopguard_policy.wasm');
const skip = !existsSync(WASM) && `${WASM} not built`;
const example = join(here, '../../../examples/traces/exec-poll-no-progress');
const config = readFileSync(join(example, 'config.json5'), 'utf8');
const lines = readFileSync(join(example, 'trace.jsonl'), 'utf8').split('\n');
const expected = readFileSync(join(example, 'expected.jsonl'), 'utf8');
const STAYS = /the active policy stays \(loopguard-policy /;

/** Lines [from, to) of the trace through applyEvents (1-based line numbers kept). */
function feed(guard, from, to) {
  return guard.applyEvents(lines.slice(from, to).join('\n'), from + 1);
}

/** A valid component with the same behaviour and other bytes: a custom section appended. */
function withCustomSection(bytes, name, payload) {
  const body = Buffer.concat([Buffer.from([name.length]), Buffer.from(name), Buffer.from(payload)]);
  assert.ok(body.length < 128);
  return Buffer.concat([bytes, Buffer.from([0, body.length]), body]);
}

/** The component with its interface version string (not the WIT names) changed: the next major
 * (`major` true) or the next minor. */
function withVersionBump(bytes, major) {
  const [maj, minor, patch] = interfaceVersion.split('.');
  const next = major ? `${Number(maj) + 1}.${minor}.${patch}` : `${maj}.${Number(minor) + 1}.${patch}`;
  assert.equal(next.length, interfaceVersion.length, 'same-length patch only');
  const out = Buffer.from(bytes);
  let patched = 0;
  for (let i = out.indexOf(interfaceVersion); i !== -1; i = out.indexOf(interfaceVersion, i + 1)) {
    const prev = out[i - 1];
    const nextByte = out[i + interfaceVersion.length];
    const inName = prev === 0x40; /* '@' in `loopguard:policy/guard@1.0.0` */
    // A digit may follow: the compiler lays string constants end to end (`0.5.00.2.0` is the
    // interface version followed by the policy version), so only a following '.' means longer.
    const longer = nextByte === 0x2e || (prev >= 0x30 && prev <= 0x39) || prev === 0x2e;
    if (!inName && !longer) {
      out.write(next, i, 'latin1');
      patched++;
    }
  }
  assert.ok(patched >= 1, 'found the interface version string in the component');
  return { bytes: out, next };
}

describe('hot swap', { skip }, () => {
  let bytes;
  let variant;
  let dir;
  before(() => {
    bytes = readFileSync(WASM);
    variant = withCustomSection(bytes, 'loopguard-swap-test', 'v2');
    dir = mkdtempSync(join(tmpdir(), 'loopguard-swap-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a swap to the same module keeps the state: half, swap, rest = expected.jsonl', async () => {
    const guard = new LoopGuard(config);
    const half = Math.floor(lines.length / 2);
    let out = feed(guard, 0, half);
    const report = await guard.swap(WASM);
    out += feed(guard, half, lines.length);
    assert.equal(out, expected);
    assert.equal(report.to.source, WASM);
    assert.equal(report.to.interfaceVersion, interfaceVersion);
    assert.ok(report.snapshotBytes > 0);
    assert.ok(report.prepareMs >= 0 && report.switchMs >= 0);
    assert.equal(guard.policy.source, WASM);
    guard[Symbol.dispose]();
  });

  it('a swap to other bytes (run-time jco in a worker) keeps the state; calls during it count', async () => {
    const guard = new LoopGuard(config);
    const third = Math.floor(lines.length / 3);
    let out = feed(guard, 0, third);
    const pending = guard.swap(variant); // the old policy keeps answering while it is prepared
    out += feed(guard, third, 2 * third);
    const report = await pending;
    out += feed(guard, 2 * third, lines.length);
    assert.equal(out, expected);
    assert.notEqual(report.to.blake3, report.from.blake3);
    assert.equal(guard.policy.blake3, report.to.blake3);
    // and back: the default policy's bytes reuse its compiled modules
    const back = await guard.swap(bytes);
    assert.equal(back.from.blake3, report.to.blake3);
    assert.notEqual(back.to.blake3, report.to.blake3);
    assert.equal(guard.stats().sessions, 1);
    guard[Symbol.dispose]();
  });

  it('failed swaps leave the old policy answering', async () => {
    const notWasm = join(dir, 'not-a-component.wasm');
    writeFileSync(notWasm, 'this is not WebAssembly\n');
    const core = new URL('../generated/loopguard_policy.core.wasm', import.meta.url); // a core module
    const truncated = bytes.subarray(0, bytes.length - 4096);
    const flipped = Buffer.from(bytes);
    for (let i = 64; i < flipped.length; i += 997) flipped[i] ^= 0xff;
    const bad = [
      [notWasm, /not WebAssembly/],
      [core, /a core WebAssembly module, not a component/],
      [truncated, /not a loadable policy component/],
      [flipped, /not a loadable policy component/],
      [join(dir, 'missing.wasm'), /cannot be read/],
      [42, /must be a path/],
    ];
    const guard = new LoopGuard(config);
    const before = guard.policy;
    const half = Math.floor(lines.length / 2);
    let out = feed(guard, 0, half);
    for (const [source, why] of bad) {
      await assert.rejects(guard.swap(source), (e) => {
        assert.ok(e instanceof LoopGuardError, `${String(source).slice(0, 60)}: ${e}`);
        assert.match(e.message, why);
        assert.match(e.message, STAYS);
        return true;
      });
      assert.deepEqual(guard.policy, before);
    }
    out += feed(guard, half, lines.length);
    assert.equal(out, expected);
    guard[Symbol.dispose]();
  });

  it('a policy with another interface major is refused, naming both versions; a newer minor is taken', async () => {
    const { bytes: other, next } = withVersionBump(bytes, true);
    const file = join(dir, 'next-major.wasm');
    writeFileSync(file, other);
    const guard = new LoopGuard(config);
    const half = Math.floor(lines.length / 2);
    let out = feed(guard, 0, half);
    await assert.rejects(guard.swap(file), (e) => {
      assert.ok(e instanceof LoopGuardError);
      assert.equal(e.kind, 'policy');
      assert.equal(e.path, file);
      assert.ok(e.reason.includes(`loopguard:policy@${next}`), e.reason);
      assert.ok(e.reason.includes(`loopguard:policy@${interfaceVersion.split('.')[0]}.x`), e.reason);
      assert.match(e.reason, STAYS);
      return true;
    });
    out += feed(guard, half, lines.length);
    assert.equal(out, expected);
    await assert.rejects(LoopGuard.load(pathToFileURL(file), config), (e) => {
      assert.equal(e.kind, 'policy');
      assert.match(e.reason, /implements loopguard:policy@2\.\d+\.\d+, but this package drives loopguard:policy@1\.x/);
      return true;
    });
    const { bytes: minor, next: nextMinor } = withVersionBump(bytes, false);
    const report = await guard.swap(minor);
    assert.equal(report.to.interfaceVersion, nextMinor);
    guard[Symbol.dispose]();
  });

  it('LoopGuard.load: two policies side by side, each with its own state', async () => {
    const a = new LoopGuard(config);
    const b = await LoopGuard.load(variant, config);
    const c = await LoopGuard.load(WASM, config);
    assert.equal(feed(b, 0, lines.length), expected);
    assert.equal(a.stats().sessions, 0);
    assert.equal(c.stats().sessions, 0);
    assert.equal(feed(a, 0, lines.length), expected);
    assert.equal(feed(c, 0, lines.length), expected);
    // a snapshot moves between them
    const d = await LoopGuard.load(variant, config);
    d.importState(c.exportState());
    assert.equal(d.stats().sessions, 1);
    for (const g of [a, b, c, d]) g[Symbol.dispose]();
    await assert.rejects(LoopGuard.load(WASM, '{tools: {loopDetection: {historySize: "x"}}}'), (e) => {
      assert.ok(e instanceof LoopGuardError);
      assert.match(e.path, /historySize/);
      return true;
    });
  });

  it('a swap keeps the config; swaps run one after the other; none after dispose', async () => {
    const guard = new LoopGuard(config);
    const half = Math.floor(lines.length / 2);
    let out = feed(guard, 0, half);
    const swaps = [guard.swap(variant), guard.swap(WASM), guard.swap(Buffer.from('nope')), guard.swap(variant)];
    const results = await Promise.allSettled(swaps);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    assert.equal(results[1].value.from.blake3, results[0].value.to.blake3);
    assert.equal(results[3].value.from.blake3, results[1].value.to.blake3);
    out += feed(guard, half, lines.length);
    assert.equal(out, expected); // the config (enabled: true) survived three swaps
    const late = guard.swap(WASM);
    guard[Symbol.dispose]();
    await assert.rejects(late, /disposed/);
    await assert.rejects(guard.swap(WASM), /disposed/);
  });
});
