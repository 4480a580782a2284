// Every example trace (examples/traces/*/) through Node, three ways, against expected.jsonl:
// the `replay` export, `applyEvents` on one gateway, and one hook call per event. The example
// gateway's replay.mjs (which imports the package by name) is also run as a process to check its
// exact stdout bytes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LoopGuard, replay } from '../index.js';
import { feedTrace } from './trace-events.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..', 'examples', 'traces');
const replayMjs = join(here, '..', '..', '..', 'examples', 'node-gateway', 'replay.mjs');
const examples = readdirSync(root).filter((d) => existsSync(join(root, d, 'trace.jsonl'))).sort();
const read = (name, file) => readFileSync(join(root, name, file), 'utf8');

describe('example traces', () => {
  it('there are examples', () => assert.ok(examples.length >= 1));
  for (const name of examples) {
    describe(name, () => {
      const config = read(name, 'config.json5');
      const trace = read(name, 'trace.jsonl');
      const expected = read(name, 'expected.jsonl');
      it('replay export', () => assert.equal(replay(config, trace), expected));
      it('applyEvents in batches of 7 lines', () => {
        const guard = new LoopGuard(config);
        const lines = trace.split('\n');
        let out = '';
        for (let i = 0; i < lines.length; i += 7) out += guard.applyEvents(lines.slice(i, i + 7).join('\n'), i + 1);
        guard[Symbol.dispose]();
        assert.equal(out, expected);
      });
      it('one hook call per event', () => {
        const guard = new LoopGuard(config);
        assert.equal(feedTrace(guard, trace), expected);
        guard[Symbol.dispose]();
      });
      it('replay.mjs prints the same bytes', () => {
        const out = execFileSync(process.execPath, [replayMjs, '--config', join(root, name, 'config.json5'), join(root, name, 'trace.jsonl')]);
        assert.equal(out.toString('utf8'), expected);
      });
    });
  }
  it('replay.mjs exits 2 with one line on stderr for a bad trace', () => {
    try {
      execFileSync(process.execPath, [replayMjs, '--config', join(root, examples[0], 'config.json5'), '-'], { input: '{"kind":"nope"}\n', stdio: 'pipe' });
      assert.fail('expected exit 2');
    } catch (e) {
      assert.equal(e.status, 2);
      assert.match(e.stderr.toString(), /^replay\.mjs: line 1: kind: .*\n$/);
    }
  });
});
