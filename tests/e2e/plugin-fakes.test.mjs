// What the plugin's e2e tests added to the fakes, on their own (no gateway): a slow scenario
// (delayMs) and the other bot's echo budget changed at run time (POST /__echo).
import { test } from "node:test";
import assert from "node:assert/strict";
import { startFakeModel, BUILTIN_SCENARIOS, toolDelayFor } from "./fake-model.mjs";
import { startFakeTelegram } from "./fake-telegram.mjs";

const listen = (server) =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`)));
const close = (server) => new Promise((resolve) => server.close(() => resolve()));

test("fake model: delayMs holds tool answers back, not text-only requests", async () => {
  const scenarios = { ...BUILTIN_SCENARIOS, slow: { delayMs: 300, steps: [{ call: "exec", args: { command: "x" }, times: 2 }] } };
  const cfg = { scenarios, defaultScenario: "text" };
  const tools = [{ type: "function", function: { name: "exec", parameters: {} } }];
  const body = (text, withTools = true) => JSON.stringify({ model: "loop-1", stream: true, messages: [{ role: "user", content: text }], ...(withTools ? { tools } : {}) });
  assert.equal(toolDelayFor(body("[scenario:slow] go"), cfg), 300);
  assert.equal(toolDelayFor(body("[scenario:slow] go", false), cfg), 0, "a summary request is not delayed");
  assert.equal(toolDelayFor(body("[scenario:exec-poll] go"), cfg), 0);
  const server = startFakeModel({ config: cfg });
  const base = await listen(server);
  try {
    const t = Date.now();
    const res = await fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: body("[scenario:slow] go") });
    assert.match(await res.text(), /tool_calls/);
    assert.ok(Date.now() - t >= 280, `answered after ${Date.now() - t} ms`);
  } finally {
    await close(server);
  }
});

test("fake telegram: POST /__echo changes the other bot's echo budget", async () => {
  const server = startFakeTelegram({ echoMax: 0 });
  const base = await listen(server);
  const call = async (p, body) =>
    (await (await fetch(base + p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body ?? {}) })).json()).result;
  try {
    await call("/bot1:x/sendMessage", { chat_id: -5, text: "one" });
    await new Promise((r) => setTimeout(r, 120));
    assert.equal((await call("/bot1:x/getUpdates", { offset: 0, timeout: 0 })).length, 0, "no echo with budget 0");
    assert.deepEqual(await call("/__echo", { max: 1 }), { echoMax: 1, echoes: 0 });
    await call("/bot1:x/sendMessage", { chat_id: -5, text: "two" });
    await call("/bot1:x/sendMessage", { chat_id: -5, text: "three" });
    // the budget is spent when a reply is sent; the echo itself comes 50 ms later on an idle
    // machine, so it is polled for (a minute is a hang's limit), not slept on
    assert.deepEqual(await call("/__echo", {}), { echoMax: 1, echoes: 1 }, "one echo, then the budget is used up");
    let ups = [];
    for (const end = Date.now() + 60_000; ups.length === 0 && Date.now() < end; ) {
      ups = await call("/bot1:x/getUpdates", { offset: 0, timeout: 1 });
    }
    assert.equal(ups.length, 1, "one echo, then the budget is used up");
    assert.equal(ups[0].message.from.id, 222);
  } finally {
    await close(server);
  }
});
