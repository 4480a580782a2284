// loopguard/ai-sdk with the real Vercel AI SDK (ai 7, an OpenAI-compatible provider) against the
// scripted model: issue 59's six scenarios, asserted on the requests the model received.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { loopGuard } from 'loopguard/ai-sdk';
import { Scenario, startModel } from './model.mjs';
import * as spec from './spec.mjs';

let model;
before(async () => (model = await startModel()));
after(() => model?.close());

/** Runs one generation of the scripted `turns` with `guard`; returns the scenario and tool runs. */
async function run(turns, guard = loopGuard(), { stream = false } = {}) {
  const scenario = await new Scenario(model.port).script(turns);
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: scenario.openaiBase, apiKey: 'x' });
  const t = spec.tools();
  const settings = guard.wrap({
    model: provider('scripted'),
    prompt: 'Wait for job j1.',
    tools: {
      poll: tool({ description: 'Poll a job', inputSchema: z.object({ job: z.string() }), execute: t.poll }),
      read: tool({ description: 'Read a file', inputSchema: z.object({ path: z.string() }), execute: t.read }),
    },
    stopWhen: isStepCount(20),
  });
  let text;
  if (stream) {
    const result = streamText(settings);
    text = await result.text;
  } else {
    text = (await generateText(settings)).text;
  }
  return { scenario, runs: t.runs, text, guard };
}

describe('loopguard/ai-sdk', () => {
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
    const { scenario, runs, guard } = await run(spec.parallel);
    const results = await spec.resultsByRequest(scenario);
    assert.deepEqual(results[1], ['contents of /a', spec.POLL_RESULT, spec.POLL_RESULT]);
    assert.deepEqual(results[2], [spec.POLL_RESULT, spec.POLL_RESULT]);
    assert.match(results[3][0], spec.BLOCK);
    assert.equal(results[3][1], 'contents of /b');
    assert.deepEqual(runs, { poll: 4, read: 2 });
    assert.equal(guard.gate.pending, 0, 'every call that ran had its outcome recorded');
    assert.equal(await spec.noteCount(scenario), 1, 'the two alike warnings of step 2 are one note');
  });

  test('an end of run (recommended preset) stops the generation at the 6th call', async () => {
    const { scenario, runs } = await run(spec.polls(10), loopGuard({ config: spec.ENDING }));
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.equal(results.length, 6, 'no request after the call that ended the run');
    assert.match(results[4][0], spec.BLOCK);
    assert.match(results[5][0], spec.BLOCK);
  });

  test('streamText: the same mapping (block, one note)', async () => {
    const { scenario, runs } = await run(spec.polls(4), loopGuard(), { stream: true });
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.match(results[4][0], spec.BLOCK);
    assert.equal(await spec.noteCount(scenario), 1);
  });

  test('your own toolApproval runs first: a call it denies never reaches the policy', async () => {
    const guard = loopGuard();
    const scenario = await new Scenario(model.port).script(spec.polls(5));
    const provider = createOpenAICompatible({ name: 'scripted', baseURL: scenario.openaiBase, apiKey: 'x' });
    let runs = 0;
    let asked = 0;
    await generateText(
      guard.wrap({
        model: provider('scripted'),
        prompt: 'Wait for job j1.',
        tools: { poll: tool({ inputSchema: z.object({ job: z.string() }), execute: async () => (++runs, spec.POLL_RESULT) }) },
        toolApproval: { poll: () => (++asked === 1 ? { type: 'denied', reason: 'not now' } : undefined) },
        stopWhen: isStepCount(20),
      }),
    );
    const results = await spec.resultsByRequest(scenario);
    assert.equal(results[1][0], 'not now', 'the first call: your denial');
    assert.equal(runs, 3, 'calls 2-4 ran: the policy counted from the 2nd call');
    assert.match(results[5][0], spec.BLOCK);
  });

  test('a tool that throws is recorded as an error, not lost', async () => {
    const guard = loopGuard();
    const scenario = await new Scenario(model.port).script(spec.polls(2));
    const provider = createOpenAICompatible({ name: 'scripted', baseURL: scenario.openaiBase, apiKey: 'x' });
    await generateText(
      guard.wrap({
        model: provider('scripted'),
        prompt: 'x',
        tools: { poll: tool({ inputSchema: z.object({ job: z.string() }), execute: async () => { throw new Error('job store down'); } }) },
        stopWhen: isStepCount(20),
      }),
    );
    assert.equal(guard.gate.pending, 0);
  });

  test('a broken config is reported at construction with its path', () => {
    spec.assertBroken(() => loopGuard({ config: spec.BROKEN }));
  });
});
