// loopguard/openai-agents with the real OpenAI Agents SDK (JS; the Responses API, and Chat
// Completions once) against the scripted model: issue 59's six scenarios, asserted on the
// requests the model received.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import {
  Agent,
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  run as runAgent,
  setTracingDisabled,
  tool,
  ToolCallError,
  ToolInputGuardrailTripwireTriggered,
} from '@openai/agents';
import { z } from 'zod';
import { loopGuard } from 'loopguard/openai-agents';
import { Scenario, startModel } from './model.mjs';
import * as spec from './spec.mjs';

let model;
before(async () => {
  setTracingDisabled(true);
  model = await startModel();
});
after(() => model?.close());

/** Runs one agent run of the scripted `turns` with `guard`. */
async function run(turns, guard = loopGuard(), { api = 'responses' } = {}) {
  const scenario = await new Scenario(model.port).script(turns);
  const client = new OpenAI({ baseURL: scenario.openaiBase, apiKey: 'x', maxRetries: 0 });
  const t = spec.tools();
  const agent = new Agent({
    name: 'ops',
    instructions: 'Wait for job j1.',
    model: api === 'chat' ? new OpenAIChatCompletionsModel(client, 'scripted') : new OpenAIResponsesModel(client, 'scripted'),
    tools: guard.tools([
      tool({ name: 'poll', description: 'Poll a job', parameters: z.object({ job: z.string() }), execute: t.poll }),
      tool({ name: 'read', description: 'Read a file', parameters: z.object({ path: z.string() }), execute: t.read }),
    ]),
  });
  let out;
  let error;
  try {
    out = await runAgent(agent, 'go', { maxTurns: 30, callModelInputFilter: guard.callModelInputFilter });
  } catch (e) {
    error = e;
  }
  return { scenario, runs: t.runs, out, error, gate: guard.gate };
}

describe('loopguard/openai-agents', () => {
  test('an unchanged poll is blocked at the 4th call; the model reads the block text as its result', async () => {
    const { scenario, runs, error } = await run(spec.polls(4));
    assert.equal(error, undefined);
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.deepEqual(results.slice(1, 4), [[spec.POLL_RESULT], [spec.POLL_RESULT], [spec.POLL_RESULT]]);
    assert.match(results[4][0], spec.BLOCK);
    assert.equal(results.length, 5, 'the model answered after the block');
  });

  test('a warning reaches the model once, as a user item in the request after the call that warned', async () => {
    const { scenario } = await run(spec.polls(4));
    const requests = await scenario.requests();
    const carrying = requests.map((r, i) => (r.messages.some((m) => m.includes(spec.NOTE)) ? i : -1)).filter((i) => i >= 0);
    assert.deepEqual(carrying, [3], 'the note is in the request with the 3rd call’s result, and only there');
    assert.equal(requests[3].messages.filter((m) => m.includes(spec.NOTE)).length, 1);
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
    const requests = await scenario.requests();
    assert.equal(requests[2].messages.filter((m) => m.includes(spec.NOTE)).length, 1, 'the two alike warnings of step 2 are one note');
  });

  test('an end of run (recommended preset) ends the run at the 6th call with the SDK’s tripwire', async () => {
    const { scenario, runs, error } = await run(spec.polls(10), loopGuard({ config: spec.ENDING }));
    assert.ok(error instanceof ToolCallError, `run() rejected with the SDK's ToolCallError, not ${error}`);
    assert.ok(error.error instanceof ToolInputGuardrailTripwireTriggered, 'carrying the tripwire');
    assert.match(error.error.result.output.outputInfo.loopguard, spec.END);
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.equal(results.length, 6, 'no request after the call that ended the run');
    assert.match(results[5][0], spec.BLOCK);
  });

  test('Chat Completions: the same mapping (block, one note)', async () => {
    const { scenario, runs } = await run(spec.polls(4), loopGuard(), { api: 'chat' });
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.match(results[4][0], spec.BLOCK);
    assert.equal(await spec.firstNoteAt(scenario), 3);
  });

  test('a broken config is reported at construction with its path', () => {
    spec.assertBroken(() => loopGuard({ config: spec.BROKEN }));
  });
});
