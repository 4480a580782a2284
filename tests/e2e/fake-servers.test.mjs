// The fake model and the fake Telegram Bot API on their own (no gateway; a few hundred ms).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeModel, actionAt, pickScenarioName, BUILTIN_SCENARIOS, INTERNAL_CONTEXT_PREFIX } from "./fake-model.mjs";
import { startFakeTelegram } from "./fake-telegram.mjs";

const listen = (server) =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`)));
const close = (server) => new Promise((resolve) => server.close(() => resolve()));

function parseSse(text) {
  return text
    .split("\n\n")
    .map((b) => b.trim())
    .filter((b) => b.startsWith("data: "))
    .map((b) => b.slice(6))
    .map((d) => (d === "[DONE]" ? d : JSON.parse(d)));
}

test("fake model: script positions, alternation, bounds", () => {
  const s = BUILTIN_SCENARIOS["read-pingpong"];
  assert.deepEqual(actionAt(s, 0), { call: "read", args: { path: "a.txt" } });
  assert.deepEqual(actionAt(s, 1), { call: "read", args: { path: "b.txt" } });
  assert.deepEqual(actionAt(s, 22), { call: "read", args: { path: "a.txt" } });
  assert.ok(actionAt(s, 24).text, "bound reached -> text");
  const w = BUILTIN_SCENARIOS.warmup;
  assert.equal(actionAt(w, 1).call, "exec");
  assert.equal(actionAt(w, 2).text, "Warm-up done.");
});

test("fake model: the scenario marker comes from the last real user message, skipping internal context", () => {
  const msgs = [
    { role: "system", content: "sys" },
    { role: "user", content: "[Tue] [scenario:exec-poll] go" },
    { role: "assistant", content: null, tool_calls: [] },
    { role: "tool", content: "loop", tool_call_id: "callfake1" },
    { role: "user", content: [{ type: "text", text: `${INTERNAL_CONTEXT_PREFIX}\n[scenario:text]\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>` }] },
  ];
  assert.equal(pickScenarioName(msgs, BUILTIN_SCENARIOS, "text"), "exec-poll");
  assert.equal(pickScenarioName([{ role: "user", content: "no marker" }], BUILTIN_SCENARIOS, "text"), "text");
});

test("fake model over HTTP: SSE tool call, overflow once, text summary without tools, JSONL log", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "loopguard-e2e-unit-"));
  const log = path.join(dir, "m.jsonl");
  const server = startFakeModel({ config: { scenarios: BUILTIN_SCENARIOS, defaultScenario: "text" }, log });
  const base = await listen(server);
  try {
    const models = await (await fetch(`${base}/v1/models`)).json();
    assert.equal(models.data[0].id, "loop-1");
    const tools = [{ type: "function", function: { name: "exec", parameters: {} } }];
    const post = (messages, withTools = true) =>
      fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "loop-1", stream: true, messages, ...(withTools ? { tools } : {}) }),
      });
    const user = { role: "user", content: "[scenario:overflow-loop] OVERFLOW now" };
    const r1 = await post([user]);
    assert.equal(r1.status, 200);
    const chunks = parseSse(await r1.text());
    assert.equal(chunks.at(-1), "[DONE]");
    assert.equal(chunks[0].choices[0].delta.tool_calls[0].function.name, "exec");
    assert.equal(chunks[1].choices[0].delta.tool_calls[0].function.arguments, JSON.stringify({ command: "echo loop" }));
    assert.equal(chunks[2].choices[0].finish_reason, "tool_calls");
    assert.ok(chunks[3].usage.prompt_tokens > 0);
    const turn2 = [user, { role: "assistant", tool_calls: [] }, { role: "tool", content: "loop" }, { role: "assistant", tool_calls: [] }, { role: "tool", content: "loop" }];
    const over = await post(turn2);
    assert.equal(over.status, 400);
    assert.equal((await over.json()).error.code, "context_length_exceeded");
    const again = await post(turn2);
    assert.equal(again.status, 200, "the overflow is answered once per user text");
    await again.text();
    const summary = parseSse(await (await post([user], false)).text());
    assert.match(summary[1].choices[0].delta.content, /## Decisions/);
    const lines = fs.readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.filter((l) => l.method === "POST").map((l) => l.answer.kind), ["tool", "error", "tool", "summary"]);
    assert.equal(lines.find((l) => l.answer?.kind === "error").lastTool.text, "loop");
  } finally {
    await close(server);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("fake telegram: long poll honours offset, sendMessage recorded, the other bot echoes at most N times", async () => {
  const server = startFakeTelegram({ echoMax: 2 });
  const base = await listen(server);
  const api = (m, body) =>
    fetch(`${base}/bot123:abc/${m}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body ?? {}) }).then((r) => r.json());
  try {
    assert.equal((await api("getMe")).result.id, 1000);
    const t = Date.now();
    const empty = await api("getUpdates", { offset: 0, timeout: 30 });
    assert.deepEqual(empty.result, []);
    // Held about 2 s, never the 30 s asked for; the upper bound is that of a missing cap, not a
    // speed (a loaded machine answers late, never early).
    const held = Date.now() - t;
    assert.ok(held >= 1800 && held < 20_000, `long poll capped at 2 s (held ${held} ms)`);
    await fetch(`${base}/__inject`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "hi", chatId: -100777 }) });
    const u = await api("getUpdates", { offset: 0, timeout: 1 });
    assert.equal(u.result.length, 1);
    assert.equal(u.result[0].message.text, "hi");
    const next = u.result[0].update_id + 1;
    // the bot replies in the group three times; the other bot echoes the first two
    for (let i = 0; i < 3; i += 1) assert.equal((await api("sendMessage", { chat_id: -100777, text: `reply ${i}` })).ok, true);
    // The echoes come 50 ms after each reply on an idle machine: polled for (a minute is a
    // hang's limit), not slept on.
    let echoes;
    for (const end = Date.now() + 60_000; Date.now() < end; ) {
      echoes = await api("getUpdates", { offset: next, timeout: 1 });
      if (echoes.result.length >= 2) break;
    }
    assert.equal(echoes.result.length, 2);
    assert.ok(echoes.result.every((x) => x.message.from.id === 222 && x.message.from.is_bot === true));
    const afterAck = await api("getUpdates", { offset: echoes.result.at(-1).update_id + 1, timeout: 0 });
    assert.deepEqual(afterAck.result, []);
    const sent = (await (await fetch(`${base}/__sent`)).json()).result;
    assert.equal(sent.length, 3);
    const calls = (await (await fetch(`${base}/__calls`)).json()).result;
    assert.ok(calls.some((c) => c.method === "sendMessage"));
    assert.equal((await api("setMyCommands", { commands: [] })).result, true);
  } finally {
    server.closeAllConnections?.();
    await close(server);
  }
});
