// A scripted model on 127.0.0.1 for the agent CLIs: Anthropic Messages (Claude Code), OpenAI
// Responses (Codex), Gemini generateContent (Gemini CLI), OpenAI Chat Completions (`chat`: Copilot
// CLI, Qwen Code, OpenCode and Cline, whose shell tools are `bash`, `run_shell_command` and
// `run_commands`, whichever the request offers). It asks for shell commands turn
// after turn and logs, for every request of the main conversation, the tool results the model
// received, so that the tests assert on what the model saw.
//
//   node fake-model.mjs <anthropic|openai|gemini|chat> <portfile> <log.jsonl>
//
// Env: FAKE_TURNS (30) tool turns before the final answer, counted over the whole conversation
// (a resumed session goes on from where it was); FAKE_CMDS (JSON list, default
// ["echo still-running"]) the command of turn k is FAKE_CMDS[(k-1) % length]: a string is a shell
// command (described as "Check build status" where the shell tool takes a description), an
// object {"command": CMD, "description": TEXT} a shell command with its own description, an
// object {"tool": NAME, "input": {...}} calls that tool of the CLI with that input; FAKE_PARALLEL
// (1) calls per turn; FAKE_MAX_SECONDS (600) the server exits by itself.
import http from 'node:http';
import fs from 'node:fs';

const [api, portFile, logFile] = process.argv.slice(2);
const TURNS = Number(process.env.FAKE_TURNS || 30);
const CMDS = JSON.parse(process.env.FAKE_CMDS || '["echo still-running"]');
const PAR = Number(process.env.FAKE_PARALLEL || 1);
const FINAL = 'The build is done (final answer from the fake model).';
let reqNo = 0;
// Ids are unique across runs: a resumed conversation holds the ids of the earlier run, and a CLI
// may merge messages with the same id.
const RUN = `${process.pid.toString(36)}${Date.now().toString(36)}`;
let idNo = 0;
const log = (o) => fs.appendFileSync(logFile, JSON.stringify(o) + '\n');
const cmdOf = (turn) => CMDS[(turn - 1) % CMDS.length];
// The tool call of a turn: [name, input], the shell tool's input built by `shell` from a command
// and its description.
const callOf = (turn, shellName, shell) => {
  const c = cmdOf(turn);
  if (typeof c === 'string') return [shellName, shell(c, 'Check build status')];
  return c.command !== undefined ? [shellName, shell(c.command, c.description)] : [c.tool, c.input];
};
const text = (c) => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => p.text ?? JSON.stringify(p)).join('\n') : JSON.stringify(c));

// --- Anthropic Messages --------------------------------------------------------------------
function anthropic(body, res) {
  if (!(body.tools || []).some((t) => t.name === 'Bash')) return { side: true, send: () => anthropicSend(res, body, [{ type: 'text', text: 'ok' }], 'end_turn') };
  const msgs = body.messages || [];
  const turns = msgs.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_use')).length;
  const users = msgs.filter((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((c) => c.type === 'tool_result'));
  const last = users.length ? users[users.length - 1].content.filter((c) => c.type === 'tool_result') : [];
  const results = last.map((c) => ({ id: c.tool_use_id, text: text(c.content), error: !!c.is_error }));
  const all = JSON.stringify(msgs);
  let content;
  if (turns < TURNS) {
    const [name, input] = callOf(turns + 1, 'Bash', (command, description) => ({ command, description }));
    content = Array.from({ length: PAR }, () => ({ type: 'tool_use', id: `toolu_${RUN}_${String(++idNo).padStart(4, '0')}`, name, input }));
  } else content = [{ type: 'text', text: FINAL }];
  return { turn: turns + 1, results, all, send: () => anthropicSend(res, body, content, turns < TURNS ? 'tool_use' : 'end_turn') };
}
function anthropicSend(res, body, content, stop) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  ev('message_start', { message: { id: `msg_${RUN}_${++idNo}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      ev('content_block_start', { index, content_block: { ...block, input: {} } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    ev('content_block_stop', { index });
  });
  ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } });
  ev('message_stop', {});
  res.end();
}

// --- OpenAI Responses ----------------------------------------------------------------------
function openai(body, res) {
  const names = (body.tools || []).map((t) => t.name || t.type);
  if (!names.includes('exec_command')) return { side: true, send: () => openaiSend(res, [{ type: 'message', role: 'assistant', id: `msg_${RUN}_${++idNo}`, status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }]) };
  const input = Array.isArray(body.input) ? body.input : [];
  const turns = Math.ceil(input.filter((i) => i.type === 'function_call').length / PAR);
  // The outputs of the last turn's calls.
  const lastIds = new Set(input.filter((i) => i.type === 'function_call').slice(-PAR).map((c) => c.call_id));
  const results = input.filter((i) => i.type === 'function_call_output' && lastIds.has(i.call_id))
    .map((o) => ({ id: o.call_id, text: text(o.output), error: false }));
  let items;
  if (turns < TURNS) {
    const [name, input] = callOf(turns + 1, 'exec_command', (cmd) => ({ cmd }));
    items = Array.from({ length: PAR }, () => { const k = ++idNo; return { type: 'function_call', id: `fc_${RUN}_${k}`, call_id: `call_${RUN}_${String(k).padStart(4, '0')}`, name, arguments: JSON.stringify(input), status: 'completed' }; });
  } else items = [{ type: 'message', role: 'assistant', id: `msg_${RUN}_${++idNo}`, status: 'completed', content: [{ type: 'output_text', text: FINAL, annotations: [] }] }];
  return { turn: turns + 1, results, all: JSON.stringify(input), send: () => openaiSend(res, items) };
}
function openaiSend(res, items) {
  const id = `resp_${RUN}_${++idNo}`;
  const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (e) => res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  ev({ type: 'response.created', response: { id, object: 'response', status: 'in_progress', output: [] } });
  items.forEach((item, output_index) => {
    ev({ type: 'response.output_item.added', output_index, item: item.type === 'message' ? { ...item, content: [], status: 'in_progress' } : { ...item, arguments: '', status: 'in_progress' } });
    if (item.type === 'message') ev({ type: 'response.output_text.delta', output_index, content_index: 0, item_id: item.id, delta: item.content[0].text });
    ev({ type: 'response.output_item.done', output_index, item });
  });
  ev({ type: 'response.completed', response: { id, object: 'response', status: 'completed', output: items, usage } });
  res.end();
}

// --- OpenAI Chat Completions ---------------------------------------------------------------
// Each CLI's shell tool and its input from a command: Copilot CLI's and OpenCode's `bash`, Qwen
// Code's `run_shell_command`, Cline's `run_commands`.
const CHAT_SHELLS = {
  bash: (command, description) => ({ command, description }),
  run_shell_command: (command, description) => ({ command, description }),
  run_commands: (command) => ({ commands: [command] }),
};
function chat(body, res) {
  const names = (body.tools || []).map((t) => t.function?.name ?? t.name);
  const shellName = Object.keys(CHAT_SHELLS).find((s) => names.includes(s));
  if (!shellName) return { side: true, send: () => chatSend(res, body, { role: 'assistant', content: 'ok' }, 'stop') };
  const msgs = body.messages || [];
  const turns = msgs.filter((m) => m.role === 'assistant' && m.tool_calls?.length).length;
  const results = [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i].role === 'tool') results.unshift({ id: msgs[i].tool_call_id, text: text(msgs[i].content ?? ''), error: false });
    else if (results.length || msgs[i].role === 'assistant') break;
  }
  let message;
  if (turns < TURNS) {
    const [name, input] = callOf(turns + 1, shellName, CHAT_SHELLS[shellName]);
    const calls = Array.from({ length: PAR }, (_, index) => ({ index, id: `call_${RUN}_${String(++idNo).padStart(4, '0')}`, type: 'function', function: { name, arguments: JSON.stringify(input) } }));
    message = { role: 'assistant', content: null, tool_calls: calls };
  } else message = { role: 'assistant', content: FINAL };
  return { turn: turns + 1, results, all: JSON.stringify(msgs), send: () => chatSend(res, body, message, turns < TURNS ? 'tool_calls' : 'stop') };
}
function chatSend(res, body, message, finish) {
  const base = { id: `chatcmpl_${RUN}_${++idNo}`, created: 0, model: body.model || 'fake' };
  const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (choices, extra = {}) => res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`);
  chunk([{ index: 0, delta: message, finish_reason: null }]);
  chunk([{ index: 0, delta: {}, finish_reason: finish }]);
  if (body.stream_options?.include_usage) chunk([], { usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

// --- Gemini --------------------------------------------------------------------------------
function fill(schema, key) {
  if (!schema || typeof schema !== 'object') return 'fake';
  const type = String(Array.isArray(schema.type) ? schema.type[0] : schema.type || '').toLowerCase();
  if (schema.enum) return schema.enum.find((e) => ['user', 'flash', 'simple'].includes(e)) ?? schema.enum[0];
  if (type === 'object' || schema.properties) return Object.fromEntries(Object.entries(schema.properties || {}).map(([k, v]) => [k, fill(v, k)]));
  if (type === 'array') return [];
  if (type === 'number' || type === 'integer') return Math.max(1, schema.minimum ?? 1);
  if (type === 'boolean') return false;
  return key === 'next_speaker' ? 'user' : 'fake';
}
function gemini(body, res, op) {
  const gc = body.generationConfig || {};
  const schema = gc.responseJsonSchema || gc.responseSchema;
  const funcs = (body.tools || []).flatMap((t) => (t.functionDeclarations || []).map((f) => f.name));
  if (schema || !funcs.includes('run_shell_command')) return { side: true, send: () => geminiSend(res, op, [{ text: schema ? JSON.stringify(fill(schema)) : 'ok' }]) };
  const contents = body.contents || [];
  const turns = contents.filter((c) => c.role === 'model' && (c.parts || []).some((p) => p.functionCall)).length;
  const withResp = contents.filter((c) => (c.parts || []).some((p) => p.functionResponse));
  const last = withResp.length ? withResp[withResp.length - 1].parts.filter((p) => p.functionResponse) : [];
  const results = last.map((p) => ({ id: p.functionResponse.id ?? null, text: JSON.stringify(p.functionResponse.response), error: 'error' in (p.functionResponse.response || {}) }));
  const [name, args] = callOf(turns + 1, 'run_shell_command', (command, description) => ({ command, description }));
  const parts = turns < TURNS ? Array.from({ length: PAR }, () => ({ functionCall: { name, args } })) : [{ text: FINAL }];
  return { turn: turns + 1, results, all: JSON.stringify(contents), send: () => geminiSend(res, op, parts) };
}
function geminiSend(res, op, parts) {
  const obj = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 } };
  if (op === 'countTokens') { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify({ totalTokens: 1000 })); }
  if (op === 'streamGenerateContent') { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.write(`data: ${JSON.stringify(obj)}\r\n\r\n`); return res.end(); }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = {};
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'); } catch { body = {}; }
    const n = ++reqNo;
    const url = req.url || '';
    let plan = null;
    if (api === 'anthropic' && req.method === 'POST' && url.startsWith('/v1/messages') && !url.includes('count_tokens')) plan = anthropic(body, res);
    else if (api === 'openai' && req.method === 'POST' && url.includes('/responses')) plan = openai(body, res);
    else if (api === 'chat' && req.method === 'POST' && url.includes('/chat/completions')) plan = chat(body, res);
    else if (api === 'gemini' && req.method === 'POST' && /\/models\/[^:/?]+:\w+/.test(url)) plan = gemini(body, res, url.match(/:(\w+)/)[1]);
    if (!plan) {
      log({ n, url, kind: 'other' });
      res.writeHead(404, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'fake model: not found' } }));
    }
    if (!plan.side) log({ n, t: Date.now(), url, kind: 'main', turn: plan.turn, results: plan.results, all: plan.all });
    plan.send();
  });
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
setTimeout(() => process.exit(0), Number(process.env.FAKE_MAX_SECONDS || 600) * 1000).unref();
