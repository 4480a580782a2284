// loopguard/claude-agent-sdk with the real Claude Agent SDK 0.3.337, driving the Claude Code CLI of
// tests/agent-clis (CLAUDE_CODE_EXECUTABLE) against the scripted model's Anthropic Messages API:
// what the model receives when the hooks refuse, warn, let be, and end the run.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSdkMcpServer, query, tool } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';
import { LoopGuardError } from 'loopguard';
import { loopGuardHooks } from 'loopguard/claude-agent-sdk';
import { Scenario, startModel } from '../node/model.mjs';

const CLAUDE = process.env.CLAUDE_CODE_EXECUTABLE
  ?? new URL('../../agent-clis/node_modules/@anthropic-ai/claude-code/bin/claude.exe', import.meta.url).pathname;
// The policy names the tool as Claude Code does: the SDK MCP server's `mcp__t__poll`.
const BLOCK = 'loopguard: mcp__t__poll returned the same result 3 times in a row for this same call; blocked.';
const WARN = 'loopguard: mcp__t__poll returned the same result 2 times in a row';
const POLL = { tool: 'poll', args: { job: 'build-7' } };
const denied = (text) => `PreToolUse:mcp__t__poll hook error: ${text}`;

let model;
const homes = [];
before(async () => {
  assert.ok(existsSync(CLAUDE), `no Claude Code at ${CLAUDE}: run scripts/setup-agent-clis.sh`);
  model = await startModel();
});
after(() => {
  model?.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** One prompt through query() with the hooks; what ran, and the result message. */
async function run(scenario, hooks) {
  const ran = [];
  const text = (t) => ({ content: [{ type: 'text', text: t }] });
  const t = createSdkMcpServer({ name: 't', version: '1.0.0', tools: [
    tool('poll', 'The status of a job', { job: z.string() }, async ({ job }) => (ran.push(['poll', job]), text('status: running'))),
    tool('read', 'A file', { path: z.string() }, async ({ path }) => (ran.push(['read', path]), text(`contents of ${path}`))),
  ] });
  const home = mkdtempSync(join(tmpdir(), 'lg-claude-sdk-'));
  homes.push(home);
  const env = { PATH: process.env.PATH, HOME: home, ANTHROPIC_BASE_URL: scenario.anthropicBase, ANTHROPIC_API_KEY: 'test-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1' };
  let result = null;
  for await (const m of query({ prompt: 'Do the task.', options: {
    pathToClaudeCodeExecutable: CLAUDE, env, cwd: home, model: 'claude-sonnet-4-5', maxTurns: 20,
    settingSources: [], tools: [], mcpServers: { t }, allowedTools: ['mcp__t__poll', 'mcp__t__read'], hooks,
  } })) {
    if (m.type === 'result') result = m;
  }
  return { ran, result };
}

/** A result's own text: Claude Code appends <system-reminder> blocks (token counts, hook context). */
const own = (text) => text.split('\n\n<system-reminder>')[0];
const texts = (results) => results.map((r) => own(r.text));
const carrying = async (scenario, text) => (await scenario.requests()).filter((r) => r.messages.some((m) => m.includes(text)));

test('an unchanged poll is blocked at the fourth call with the policy\'s text', async () => {
  const scenario = await new Scenario(model.port).script(Array(5).fill([POLL]), 'gave up');
  const { ran, result } = await run(scenario, loopGuardHooks());
  const results = await scenario.results();
  assert.deepEqual(texts(results.slice(0, 3)), Array(3).fill('status: running'));
  assert.ok(results[3].text.startsWith(denied(BLOCK)) && results[3].isError, results[3].text);
  assert.ok(results[4].text.startsWith(denied(BLOCK)));
  assert.deepEqual(ran, Array(3).fill(['poll', 'build-7']));
  assert.equal(result.result, 'gave up');
});

test('a warning reaches the model once, as additional context with the third result', async () => {
  const scenario = await new Scenario(model.port).script(Array(4).fill([POLL]));
  await run(scenario, loopGuardHooks());
  const requests = await scenario.requests();
  const results = requests.flatMap((r) => r.results);
  assert.deepEqual(results.map((r) => r.text.split(WARN).length - 1), [0, 0, 1, 0], 'the note comes with the third result only');
  assert.ok(results[2].text.includes(`PostToolUse:mcp__t__poll hook additional context: ${WARN}`), results[2].text);
  assert.deepEqual(texts(results.slice(0, 3)), Array(3).fill('status: running'));
});

test('a healthy run of distinct calls is untouched', async () => {
  const paths = Array.from({ length: 8 }, (_, i) => `/src/file${i}.py`);
  const scenario = await new Scenario(model.port).script(paths.map((path) => [{ tool: 'read', args: { path } }]), 'read them all');
  const { ran, result } = await run(scenario, loopGuardHooks());
  assert.deepEqual(texts(await scenario.results()), paths.map((p) => `contents of ${p}`));
  assert.equal((await carrying(scenario, 'loopguard')).length, 0);
  assert.equal(JSON.stringify(await scenario.requests()).includes('loopguard'), false);
  assert.deepEqual(ran, paths.map((p) => ['read', p]));
  assert.equal(result.result, 'read them all');
});

test('parallel calls in one step are each checked and the count goes on', async () => {
  // Claude Code asks PreToolUse for every call of a step before their outcomes come back, so a
  // repeat within one step is judged on the outcomes of the steps before it; none is lost.
  const read = { tool: 'read', args: { path: '/a' } };
  const scenario = await new Scenario(model.port).script([[POLL, read, POLL], [POLL, POLL], [POLL]]);
  const { ran } = await run(scenario, loopGuardHooks());
  const byTurn = Object.fromEntries((await scenario.requests()).map((r) => [r.turn, texts(r.results)]));
  assert.deepEqual(byTurn[1], ['status: running', 'contents of /a', 'status: running']);
  assert.deepEqual(byTurn[2], ['status: running', 'status: running']);
  assert.equal(byTurn[3].length, 1);
  assert.ok(byTurn[3][0].startsWith(denied(BLOCK)), byTurn[3][0]);
  assert.equal(ran.filter(([t]) => t === 'poll').length, 4);
  assert.equal(ran.filter(([t]) => t === 'read').length, 1);
});

test('the recommended ladder ends the run at the sixth call', async () => {
  const scenario = await new Scenario(model.port).script(Array(10).fill([POLL]), 'never');
  const { ran, result } = await run(scenario, loopGuardHooks({ config: { loopguard: { preset: 'recommended' } } }));
  const requests = await scenario.requests();
  assert.equal(Math.max(...requests.map((r) => r.turn)), 5, 'no request after the sixth call');
  assert.ok(requests.at(-1).results[0].text.startsWith(denied(BLOCK)));
  assert.deepEqual(ran, Array(3).fill(['poll', 'build-7']));
  assert.equal(result.terminal_reason, 'hook_stopped');
  assert.notEqual(result.result, 'never');
});

test('a broken config is reported at construction with its path', () => {
  assert.throws(() => loopGuardHooks({ config: { loopguard: { preset: 'loud' } } }),
    (e) => e instanceof LoopGuardError && e.path === 'loopguard.preset');
});
