// loopguard/langchain with the real LangChain.js (`createAgent` on LangGraph.js, ChatOpenAI)
// against the scripted model: issue 59's six scenarios, asserted on the requests the model received.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, tool } from 'langchain';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { loopGuardMiddleware } from 'loopguard/langchain';
import { Scenario, startModel } from './model.mjs';
import * as spec from './spec.mjs';

let model;
before(async () => (model = await startModel()));
after(() => model?.close());

/** Runs one agent invocation of the scripted `turns` with `middleware`. */
async function run(turns, middleware = loopGuardMiddleware(), { thread = 'thread-1' } = {}) {
  const scenario = await new Scenario(model.port).script(turns);
  const t = spec.tools();
  const agent = createAgent({
    model: new ChatOpenAI({ model: 'scripted', apiKey: 'x', configuration: { baseURL: scenario.openaiBase }, maxRetries: 0 }),
    tools: [
      tool(t.poll, { name: 'poll', description: 'Poll a job', schema: z.object({ job: z.string() }) }),
      tool(t.read, { name: 'read', description: 'Read a file', schema: z.object({ path: z.string() }) }),
    ],
    middleware: [middleware],
  });
  const out = await agent.invoke({ messages: [{ role: 'user', content: 'Wait for job j1.' }] }, { recursionLimit: 60, configurable: { thread_id: thread } });
  return { scenario, runs: t.runs, out, gate: middleware.gate };
}

describe('loopguard/langchain', () => {
  test('an unchanged poll is blocked at the 4th call; the model reads the block text as its result', async () => {
    const { scenario, runs } = await run(spec.polls(4));
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.deepEqual(results.slice(1, 4), [[spec.POLL_RESULT], [spec.POLL_RESULT], [spec.POLL_RESULT]]);
    assert.match(results[4][0], spec.BLOCK);
    assert.equal(results.length, 5, 'the model answered after the block');
  });

  test('a warning reaches the model once, as a human message after the call that warned', async () => {
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

  test('an end of run (recommended preset) ends the agent at the 6th call', async () => {
    const { scenario, runs, out } = await run(spec.polls(10), loopGuardMiddleware({ config: spec.ENDING }));
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 3);
    assert.equal(results.length, 6, 'no request after the call that ended the run');
    assert.match(results[4][0], spec.BLOCK);
    assert.match(results[5][0], spec.BLOCK);
    assert.match(out.messages.at(-1).content, spec.END, 'the run’s last message is the policy’s end text');
  });

  test('the session is the thread: a second invoke on the same thread goes on counting', async () => {
    const middleware = loopGuardMiddleware();
    await run(spec.polls(2), middleware, { thread: 'same' });
    const { scenario, runs } = await run(spec.polls(2), middleware, { thread: 'same' });
    const results = await spec.resultsByRequest(scenario);
    assert.equal(runs.poll, 1);
    assert.match(results[2][0], spec.BLOCK);
  });

  test('a tool that throws is recorded as an error, not lost', async () => {
    const middleware = loopGuardMiddleware();
    const scenario = await new Scenario(model.port).script(spec.polls(2));
    const agent = createAgent({
      model: new ChatOpenAI({ model: 'scripted', apiKey: 'x', configuration: { baseURL: scenario.openaiBase }, maxRetries: 0 }),
      tools: [tool(async () => { throw new Error('job store down'); }, { name: 'poll', description: 'Poll a job', schema: z.object({ job: z.string() }) })],
      middleware: [middleware],
    });
    await agent.invoke({ messages: [{ role: 'user', content: 'x' }] }, { configurable: { thread_id: 'errors' } }).catch(() => {});
    assert.equal(middleware.gate.pending, 0);
  });

  test('a broken config is reported at construction with its path', () => {
    spec.assertBroken(() => loopGuardMiddleware({ config: spec.BROKEN }));
  });
});
