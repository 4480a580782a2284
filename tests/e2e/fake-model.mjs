#!/usr/bin/env node
// A fake OpenAI-compatible model server for OpenClaw end-to-end tests. 127.0.0.1 only.
//
// It scripts tool calls. A *scenario* is a list of steps played per turn: the position in the
// turn is the number of tool results since the last real user message (OpenClaw appends a
// `<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>` user message after tool results; those are skipped).
// The scenario is chosen by a marker `[scenario:NAME]` in the user text (so one server serves
// several scenarios), else by the config's `defaultScenario`.
//
// Steps (see BUILTIN_SCENARIOS in fake-model/scenarios.mjs for examples):
//   {"call":"exec","args":{"command":"echo loop"},"times":25}   the same call N times
//   {"call":"exec","args":{...},"times":"forever"}              until the scenario's maxToolsPerTurn
//   {"alternate":[{"call":"read","args":{"path":"a.txt"}},{"call":"read","args":{"path":"b.txt"}}],"times":30}
//   {"text":"All done."}                                         answer text (ends the turn)
// Scenario options: maxToolsPerTurn (default 40; then text), delayMs (each answer to a request
//   with tools is sent this much later, at most 10 s: a slow model, so a test can act mid-turn), and
//   overflow: {"atToolResult":K, "whenUserTextIncludes":"OVERFLOW"}: answer HTTP 400
//   context_length_exceeded once (per distinct user text) when the turn has K tool results.
// A request with no tools (the compaction summary request) is answered with a text summary.
// When the script runs out, the answer is text.
//
// Config: --config FILE or FAKE_CONFIG (a JSON file) or FAKE_CONFIG_JSON (inline):
//   {"scenarios":{NAME:{steps:[...],...}}, "defaultScenario":NAME}; merged over the built-ins.
// Other: --port N / FAKE_PORT (0 = any free port), --log FILE / FAKE_LOG (JSONL, one line per
//   request), --lifetime-ms / FAKE_LIFETIME_MS (exit by itself afterwards; default 15 min),
//   FAKE_DUMP (a JSONL file receiving every full request body; debugging).
// On start it prints one JSON line to stdout: {"listening":PORT,"pid":PID}.
//
// The built-in scenarios are in fake-model/scenarios.mjs and the scenario logic (scenario choice,
// script positions, delays) in fake-model/script.mjs; this file is the HTTP server and the CLI,
// and re-exports both.
import http from "node:http";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { BUILTIN_SCENARIOS } from "./fake-model/scenarios.mjs";
import { textOf, lastRealUserIndex, pickScenarioName, actionAt, toolDelayFor } from "./fake-model/script.mjs";

export { BUILTIN_SCENARIOS } from "./fake-model/scenarios.mjs";
export {
  INTERNAL_CONTEXT_PREFIX,
  isInternalContext,
  lastRealUserIndex,
  pickScenarioName,
  actionAt,
  toolDelayFor,
} from "./fake-model/script.mjs";

export const MODEL_ID = "loop-1";

function parseCli(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      log: { type: "string" },
      config: { type: "string" },
      "lifetime-ms": { type: "string" },
    },
    allowPositionals: false,
  });
  return values;
}

function loadConfig(opts) {
  let cfg = {};
  const file = opts.config ?? process.env.FAKE_CONFIG;
  if (file) cfg = JSON.parse(fs.readFileSync(file, "utf8"));
  else if (process.env.FAKE_CONFIG_JSON) cfg = JSON.parse(process.env.FAKE_CONFIG_JSON);
  return {
    scenarios: { ...BUILTIN_SCENARIOS, ...(cfg.scenarios ?? {}) },
    defaultScenario: cfg.defaultScenario ?? "text",
  };
}

export function startFakeModel(options = {}) {
  const cfg = options.config ?? loadConfig(options);
  const logFile = options.log ?? process.env.FAKE_LOG;
  const dumpFile = options.dump ?? process.env.FAKE_DUMP;
  const overflowDone = new Set();
  let reqNo = 0;
  let toolCallNo = 0;

  const log = (rec) => {
    if (logFile) fs.appendFileSync(logFile, JSON.stringify(rec) + "\n");
  };

  const sse = (res, chunks) => {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
    res.write("data: [DONE]\n\n");
    res.end();
  };

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      // a scenario's delayMs holds tool-call answers back (a slow model: time to act mid-turn)
      const delay = toolDelayFor(Buffer.concat(chunks).toString("utf8"), cfg);
      if (delay > 0) setTimeout(respond, delay);
      else respond();
    });
    const respond = () => {
      const n = ++reqNo;
      const url = (req.url ?? "").replace(/\?.*$/, "");
      try {
        if (req.method === "GET" && /\/models$/.test(url)) {
          log({ n, ts: Date.now(), method: "GET", path: url });
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              object: "list",
              data: [{ id: MODEL_ID, object: "model", created: 0, owned_by: "fake" }],
            }),
          );
          return;
        }
        if (req.method !== "POST" || !/\/chat\/completions$/.test(url)) {
          log({ n, ts: Date.now(), method: req.method, path: url, status: 404 });
          res.writeHead(404, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: "not found" } }));
          return;
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        const body = JSON.parse(raw);
        if (dumpFile) fs.appendFileSync(dumpFile, JSON.stringify({ n, body }) + "\n");
        const messages = Array.isArray(body.messages) ? body.messages : [];
        const tools = Array.isArray(body.tools) ? body.tools : [];
        const toolNames = tools.map((t) => t?.function?.name ?? t?.name).filter(Boolean);
        const uIdx = lastRealUserIndex(messages);
        const userText = uIdx >= 0 ? textOf(messages[uIdx].content) : "";
        const toolResultsInTurn = messages.slice(uIdx + 1).filter((m) => m.role === "tool").length;
        let lastTool = null;
        for (let i = messages.length - 1; i >= 0; i -= 1) {
          if (messages[i].role === "tool") {
            lastTool = {
              index: i,
              tool_call_id: messages[i].tool_call_id,
              content: messages[i].content,
              text: textOf(messages[i].content),
            };
            break;
          }
        }
        const scenarioName = pickScenarioName(messages, cfg.scenarios, cfg.defaultScenario);
        const scenario = cfg.scenarios[scenarioName] ?? BUILTIN_SCENARIOS.text;
        const rec = {
          n,
          ts: Date.now(),
          method: "POST",
          path: url,
          stream: body.stream !== false,
          model: body.model,
          scenario: scenarioName,
          messageCount: messages.length,
          roles: messages.map((m) => m.role).join(","),
          userText: userText.slice(0, 400),
          toolResultsInTurn,
          tools: toolNames,
          lastTool,
          // the last message the model sees (tool result or internal context or user)
          lastMessage: messages.length
            ? { role: messages.at(-1).role, text: textOf(messages.at(-1).content).slice(0, 4000) }
            : null,
        };
        const promptTokens = Math.ceil(raw.length / 4);
        const created = Math.floor(Date.now() / 1000);
        const id = `chatcmpl-fake-${n}`;
        const base = { id, object: "chat.completion.chunk", created, model: body.model ?? MODEL_ID };

        // overflow, once per distinct user text
        const ov = scenario.overflow;
        if (
          tools.length > 0 &&
          ov &&
          toolResultsInTurn === ov.atToolResult &&
          (!ov.whenUserTextIncludes || userText.includes(ov.whenUserTextIncludes)) &&
          !overflowDone.has(`${scenarioName}\u0000${userText}`)
        ) {
          overflowDone.add(`${scenarioName}\u0000${userText}`);
          const message = `This model's maximum context length is 128000 tokens. However, your messages resulted in ${128000 + 4321} tokens. Please reduce the length of the messages.`;
          rec.answer = { kind: "error", status: 400, code: "context_length_exceeded", message };
          log(rec);
          res.writeHead(400, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              error: { message, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" },
            }),
          );
          return;
        }

        let action;
        if (tools.length === 0) {
          action = {
            text:
              "## Decisions\nFake compaction summary: the user asked for a command; the agent ran it.\n" +
              "## Open TODOs\n- none\n",
            summary: true,
          };
        } else {
          action = actionAt(scenario, toolResultsInTurn);
        }
        const usage = { prompt_tokens: promptTokens, completion_tokens: 12, total_tokens: promptTokens + 12 };
        if (action.call) {
          const callId = `call_fake_${++toolCallNo}`;
          const args = JSON.stringify(action.args ?? {});
          rec.answer = { kind: "tool", tool: action.call, args: action.args, id: callId };
          log(rec);
          if (body.stream === false) {
            res.writeHead(200, { "content-type": "application/json" });
            res.end(
              JSON.stringify({
                id,
                object: "chat.completion",
                created,
                model: base.model,
                choices: [
                  {
                    index: 0,
                    message: {
                      role: "assistant",
                      content: null,
                      tool_calls: [{ id: callId, type: "function", function: { name: action.call, arguments: args } }],
                    },
                    finish_reason: "tool_calls",
                  },
                ],
                usage,
              }),
            );
            return;
          }
          sse(res, [
            {
              ...base,
              choices: [
                {
                  index: 0,
                  delta: {
                    role: "assistant",
                    content: null,
                    tool_calls: [
                      { index: 0, id: callId, type: "function", function: { name: action.call, arguments: "" } },
                    ],
                  },
                  finish_reason: null,
                },
              ],
            },
            {
              ...base,
              choices: [
                { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] }, finish_reason: null },
              ],
            },
            { ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
            { ...base, choices: [], usage },
          ]);
          return;
        }
        rec.answer = { kind: action.summary ? "summary" : "text", text: action.text };
        log(rec);
        if (body.stream === false) {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              id,
              object: "chat.completion",
              created,
              model: base.model,
              choices: [{ index: 0, message: { role: "assistant", content: action.text }, finish_reason: "stop" }],
              usage,
            }),
          );
          return;
        }
        sse(res, [
          { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
          { ...base, choices: [{ index: 0, delta: { content: action.text }, finish_reason: null }] },
          { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
          { ...base, choices: [], usage },
        ]);
      } catch (err) {
        log({ n, ts: Date.now(), error: String(err?.stack ?? err) });
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(err?.message ?? err) } }));
      }
    };
  });
  server.keepAliveTimeout = 5000;
  return server;
}

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("fake-model.mjs");
if (isMain) {
  const opts = parseCli(process.argv.slice(2));
  const port = Number(opts.port ?? process.env.FAKE_PORT ?? 0);
  const lifetime = Number(opts["lifetime-ms"] ?? process.env.FAKE_LIFETIME_MS ?? 15 * 60 * 1000);
  const server = startFakeModel({ config: loadConfig(opts), log: opts.log });
  server.listen(port, "127.0.0.1", () => {
    process.stdout.write(JSON.stringify({ listening: server.address().port, pid: process.pid }) + "\n");
  });
  const timer = setTimeout(() => {
    process.stderr.write(`fake-model: lifetime of ${lifetime} ms reached, exiting\n`);
    process.exit(0);
  }, lifetime);
  timer.unref?.();
  // keep the process alive while the server listens; exit on SIGTERM/SIGINT
  for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
}
