// The two ways our plugin will be installed into the real gateway, proven now with a throwaway
// probe plugin (written at test time under the temp dir) whose before_tool_call hook blocks the
// 3rd exec call of each session carrying its marker:
//   1. plugins.load.paths + plugins.entries (addPluginLoadPath: config edit, hot-applied)
//   2. the published-package shape: npm pack -> `plugins install npm-pack:<tgz> --force
//      --accept-capabilities` -> `plugins enable <id> --accept-capabilities` (needs the npm
//      registry: OpenClaw runs npm install into $STATE/npm/projects/<pkg>)
// and that the block text reaches the model. The same gateway also proves the fake Telegram Bot
// API against the bundled telegram channel (one DM in, one reply out) and chat.send (WebChat).
//
// Core loop detection is off here (tools.loopDetection.enabled: false) so every block is the
// probe's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as h from "./harness.mjs";

let dirs, model, tg, gw, pluginsDir, probeLog;
let failed = false;
const t0 = Date.now();

before(async () => {
  dirs = h.makeRoot("plugins");
  pluginsDir = path.join(dirs.root, "plugins");
  fs.mkdirSync(pluginsDir);
  probeLog = path.join(dirs.out, "probe.jsonl");
  model = await h.startModel({ out: dirs.out });
  tg = await h.startTelegram({ out: dirs.out });
  gw = await h.timed("plugin gateway start", () =>
    h.startGateway({ model, dirs, loopDetection: false, config: h.telegramChannelConfig(tg.apiRoot) }),
  );
});

after(async () => {
  await gw?.stop();
  await model?.stop();
  await tg?.stop();
  if (gw) await gw.cleanup({ keep: failed });
  else await h.cleanupRoot(dirs?.root, { keep: failed });
  h.log(`plugin-install.test.mjs total: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
});

async function scenario(name, fn) {
  try {
    await h.timed(name, fn);
  } catch (err) {
    failed = true;
    throw err;
  }
}

/** run the probe-exec scenario in a session and check the 3rd exec was blocked by `probeId` */
async function assertProbeBlocks(sessionKey, probeId) {
  const marker = `[session:${sessionKey}]`;
  const res = await h.runAgentTurn(gw, { sessionKey, message: `[scenario:probe-exec] ${marker} run the probe` });
  assert.equal(res.code, 0, res.stderr.slice(-2000));
  const events = h.readTranscript(gw.stateDir, "main", sessionKey);
  const results = h.toolResultsOf(events);
  assert.equal(results.length, 6, `tool results: ${results.length}`);
  const reason = `${probeId.toUpperCase()}: blocked exec call #3 (limit 3)`;
  const statuses = results.map((r) => r.details.status);
  assert.deepEqual(statuses, ["completed", "completed", "blocked", "completed", "completed", "completed"]);
  const b = results[2];
  assert.equal(b.details.deniedReason, "plugin-before-tool-call");
  assert.equal(b.details.reason, reason);
  assert.equal(b.isError, true);
  assert.deepEqual(b.texts, [reason]);
  // the model's next request carries exactly the blockReason as the tool message
  const reqs = model.chatRequests(marker);
  assert.equal(reqs[3].lastTool.text, reason, "the block text reached the model");
  assert.equal(res.json?.result?.meta?.toolSummary?.failures, 1);
  return { res, results, reason };
}

test("probe plugin through plugins.load.paths (hot-applied config edit) blocks the 3rd exec and the model sees it", async () => {
  await scenario("probe via load.paths", async () => {
    const probe = h.writeProbePlugin(pluginsDir, { id: "lg-probe-path", sessionMarker: "probe-path" });
    await h.addPluginLoadPath(gw, probe.dir, { id: probe.id, config: { sessionMarker: "probe-path", logPath: probeLog }, restart: false });
    // the gateway watches its config: wait until the probe registered in the gateway
    await h.timed("wait for hot reload", () =>
      h.waitFor(() => fs.existsSync(probeLog) && fs.readFileSync(probeLog, "utf8").includes('"register"'), {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: "the probe's register() in the gateway",
      }),
    );
    // (`plugins inspect` costs 10-17 s of CLI start-up: only the npm-pack test runs it)
    const regs = fs.readFileSync(probeLog, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.event === "register");
    assert.ok(regs.length >= 1, "register() ran in the gateway");
    await h.timed("turn", () => assertProbeBlocks("probe-path-1", probe.id));
    const calls = fs.readFileSync(probeLog, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.event === "before_tool_call");
    assert.equal(calls.length, 6, "the hook saw every exec of its session");
  });
});

test("probe plugin through npm pack + plugins install npm-pack: + enable blocks the 3rd exec and the model sees it", async () => {
  await scenario("probe via npm-pack", async () => {
    const probe = h.writeProbePlugin(pluginsDir, { id: "lg-probe-pack", sessionMarker: "probe-pack" });
    const tgz = await h.npmPack(probe.dir, dirs.out);
    const { install, enable, id } = await h.timed("plugins install npm-pack + enable", () => h.installPluginFromTarball(gw, tgz));
    assert.equal(id, "lg-probe-pack");
    assert.match(install.stdout, /Installed plugin: lg-probe-pack/);
    assert.match(enable.stdout + enable.stderr, /Enabled plugin "lg-probe-pack"|already enabled/i);
    const info = await h.timed("inspect", () => h.inspectPlugin(gw, id));
    assert.equal(info.plugin?.status, "loaded", JSON.stringify(info).slice(0, 1000));
    assert.equal(info.plugin?.origin, "global");
    assert.ok(info.plugin?.source?.startsWith(path.join(gw.stateDir, "npm", "projects")), info.plugin?.source);
    assert.deepEqual((info.typedHooks ?? []).map((x) => x.name), ["before_tool_call"]);
    // hot-applied ("Applied in Gateway generation N"): no restart needed
    await h.timed("turn", () => assertProbeBlocks("probe-pack-1", id));
    // the load.paths probe stays out of this session (marker), and vice versa
    const pathCalls = fs.readFileSync(probeLog, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    assert.ok(!pathCalls.some((r) => String(r.sessionKey ?? "").includes("probe-pack")));
  });
});

test("fake Telegram Bot API: a DM reaches the agent and the reply is sent back", async () => {
  await scenario("telegram round trip", async () => {
    await h.timed("wait for getUpdates", () =>
      h.waitFor(async () => (await tg.calls()).some((c) => c.method === "getUpdates"), {
        timeoutMs: 60_000,
        what: "the telegram channel to poll getUpdates",
      }),
    );
    const methods = new Set((await tg.calls()).map((c) => c.method));
    assert.ok(methods.has("getMe"), [...methods].join(","));
    await tg.inject({ text: "[scenario:text] hello from telegram", chatId: 555, chatType: "private", fromId: 555 });
    const sent = await h.timed("wait for sendMessage", () =>
      h.waitFor(
        async () => {
          const s = await tg.sent();
          return s.length ? s : null;
        },
        { timeoutMs: 90_000, intervalMs: 500, what: "sendMessage" },
      ),
    );
    assert.equal(Number(sent[0].params.chat_id), 555);
    assert.match(String(sent[0].params.text), /Hello from the fake model\./);
    const reqs = model.chatRequests("hello from telegram");
    assert.equal(reqs.length, 1);
  });
});

test("chat.send (WebChat path) reaches the model and the reply is stored", async () => {
  await scenario("chat.send", async () => {
    const sessionKey = "agent:main:chat-send-1";
    const res = await h.chatSend(gw, { sessionKey, message: "[scenario:text] [session:chat-send-1] hello over chat.send", idempotencyKey: "e2e-chat-send-1" });
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const reply = await h.waitFor(
      () => h.messagesOf(h.readTranscript(gw.stateDir, "main", sessionKey), "assistant").find((m) => m.content?.some?.((p) => p.text === "Hello from the fake model.")),
      { timeoutMs: 60_000, intervalMs: 500, what: "the assistant reply in the transcript" },
    );
    assert.ok(reply);
    const user = h.messagesOf(h.readTranscript(gw.stateDir, "main", sessionKey), "user")[0];
    assert.equal(user.idempotencyKey, "e2e-chat-send-1:user", "the user record's idempotencyKey is chat.send's key + ':user'");
    assert.equal(model.chatRequests("[session:chat-send-1]").length, 1);
  });
});

test("after gateway.restart() both installs are still active (the npm-pack install persisted)", async () => {
  await scenario("restart", async () => {
    const registersBefore = fs.readFileSync(probeLog, "utf8").split("\n").filter((l) => l.includes('"register"')).length;
    const pidBefore = gw.pid;
    await h.timed("gateway restart", () => gw.restart());
    assert.notEqual(gw.pid, pidBefore);
    await h.timed("turn", () => assertProbeBlocks("probe-pack-2", "lg-probe-pack"));
    const registersAfter = fs.readFileSync(probeLog, "utf8").split("\n").filter((l) => l.includes('"register"')).length;
    assert.ok(registersAfter > registersBefore, "the load.paths probe registered again in the new gateway process");
  });
});
