// loopguard/mastra with the real Mastra (@mastra/core Agent, an OpenAI-compatible model config)
// against the scripted model: issue 59's six scenarios, asserted on the requests the model received.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';
import { loopGuard } from 'loopguard/mastra';
import { Scenario, startModel } from './model.mjs';
import * as spec from './spec.mjs';

let model;
before(async () => (model = await startModel()));
after(() => model?.close());

/** Runs one generate call of the scripted `turns` with `guard`. */
async function run(turns, guard = loopGuard()) {
  const scenario = await new Scenario(model.port).script(turns);
  const t = spec.tools();
  const agent = new Agent({
    id: 'ops',
    name: 'ops',
    instructions: 'Wait for job j1.',
    model: { id: 'scripted/scripted', url: scenario.openaiBase, apiKey: 'x' },
    tools: {
      poll: createTool({ id: 'poll', description: 'Poll a job', inputSchema: z.object({ job: z.string() }), execute: t.poll }),
      read: createTool({ id: 'read', description: 'Read a file', inputSchema: z.object({ path: z.string() }), execute: t.read }),
    },
    hooks: guard.hooks,
    inputProcessors: [guard.processor],
  });
  const out = await agent.generate('go', { maxSteps: 30 });
  return { scenario, runs: t.runs, out, gate: guard.gate };
}

describe('loopguard/mastra', () => {
  test('an unchanged poll is blocked at the 4th call; the model reads the block text as its result', async () => {
    const { scenario, runs } = await run(spec.polls(4));
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.deepEqual(results.slice(1, 4), [[spec.POLL_RESULT], [spec.POLL_RESULT], [spec.POLL_RESULT]]);
    assert.match(results[4][0], spec.BLOCK);
    assert.equal(results.length, 5, 'the model answered after the block');
  });

  test('a warning reaches the model once, as a user message after the call that warned', async () => {
    const { scenario } = await run(spec.polls(4));
    assert.equal(await spec.firstNoteAt(scenario), 3, 'the note comes with the 3rd call’s result');
    assert.equal(await spec.noteCount(scenario), 1);
    const requests = await scenario.requests();
    assert.ok(requests[3].results.every((r) => !r.text.includes(spec.NOTE)), 'the result itself is the tool’s own');
  });

  test('a healthy run of distinct calls is untouched', async () => {
    const { scenario, runs } = await run(spec.reads(8));
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.read, 8);
    assert.deepEqual(results.slice(1), Array.from({ length: 8 }, (_, i) => [`contents of /src/file${i}.ts`]));
    assert.ok((await scenario.requests()).every((r) => r.messages.every((m) => !m.startsWith('loopguard'))));
  });

  test('parallel calls in one step: every call checked, none lost, the count goes on into the next step', async () => {
    const { scenario, runs, gate } = await run(spec.parallel);
    const results = await spec.resultsByRequest(scenario);
    assert.deepEqual(results[1], ['contents of /a', spec.POLL_RESULT, spec.POLL_RESULT]);
    assert.deepEqual(results[2], [spec.POLL_RESULT, spec.POLL_RESULT]);
    assert.match(results[3][0], spec.BLOCK);
    assert.equal(results[3][1], 'contents of /b');
    assert.deepEqual(runs, { poll: 4, read: 2 });
    assert.equal(gate.pending, 0, 'every call that ran had its outcome recorded');
    assert.equal(await spec.noteCount(scenario), 1, 'the two alike warnings of step 2 are one note');
  });

  test('an end of run (recommended preset) ends the generation at the 6th call with Mastra’s tripwire', async () => {
    const { scenario, runs, out } = await run(spec.polls(10), loopGuard({ config: spec.ENDING }));
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.equal(results.length, 6, 'no request after the call that ended the run');
    assert.match(results[5][0], spec.BLOCK);
    assert.match(out.tripwire?.reason ?? '', spec.END, 'the result carries the policy’s end text');
  });

  test('hooks called without a call id pair outcomes with calls by order', async () => {
    const guard = loopGuard();
    const requestContext = {};
    const ctx = { toolName: 'poll', input: { job: 'j1' }, context: { requestContext } };
    const verdicts = [];
    for (let i = 0; i < 4; i++) {
      const before = await guard.hooks.beforeToolCall(ctx);
      verdicts.push(before?.proceed === false ? 'blocked' : 'ran');
      if (!before) await guard.hooks.afterToolCall({ ...ctx, output: spec.POLL_RESULT });
    }
    assert.deepEqual(verdicts, ['ran', 'ran', 'ran', 'blocked']);
    assert.equal(guard.gate.pending, 0);
  });

  test('a broken config is reported at construction with its path', () => {
    spec.assertBroken(() => loopGuard({ config: spec.BROKEN }));
  });
});
