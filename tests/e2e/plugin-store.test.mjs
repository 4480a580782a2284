// The loopguard plugin inside the real gateway with a `store` block (docs/SCALING.md): its hooks answer
// with Promises, and OpenClaw waits for them. A real redis-server (started here on 127.0.0.1,
// persistence off, stopped by PID) holds the session's state: the exec poll is warned at the
// 11th call and blocked at the 21st, as in-process (plugin-guard.test.mjs), and the session's key
// in the store has one version per decision. The plugin is loaded from packages/openclaw-plugin
// (plugins.load.paths; its node_modules/loopguard comes from scripts/pack.mjs, which this runs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as h from "./harness.mjs";
import * as p from "./plugin-helpers.mjs";
import { resp, startRedis } from "../../packages/node/test/redis-server.mjs";

let dirs, model, gw, redis, decisionLog;
let failed = false;

before(async () => {
  dirs = h.makeRoot("lgstore");
  decisionLog = path.join(dirs.out, "loopguard-decisions.jsonl");
  redis = await startRedis();
  await h.timed("pack the plugin", () => p.packPlugin(dirs.out));
  model = await h.startModel({ out: dirs.out });
  gw = await h.timed("gateway start", () => h.startGateway({ model, dirs, label: "lgstore", loopDetection: false }));
  const config = { decisionLog, store: { url: redis.url, prefix: "lg:e2e:", deadlineMs: 500 } };
  await h.timed("load the plugin from its folder + restart", () => h.addPluginLoadPath(gw, p.PLUGIN_DIR, { id: p.PLUGIN_ID, config }));
});

after(async () => {
  await gw?.stop();
  await model?.stop();
  if (gw) await gw.cleanup({ keep: failed });
  else await h.cleanupRoot(dirs?.root, { keep: failed });
  await redis?.close();
});

test("exec poll on the shared store: warned at the 11th call, blocked at the 21st; the state is in redis", async () => {
  try {
    const key = "lg-store-exec";
    const marker = `[session:${key}]`;
    await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:exec-poll] ${marker} Run echo loop please` });
    const events = h.readTranscript(gw.stateDir, "main", key);
    const results = h.toolResultsOf(events);
    assert.ok(results.length >= 21, `tool results: ${results.length}`);
    assert.ok(results.slice(0, 20).every((r) => r.details.status !== "blocked"), results.slice(0, 20).map((r) => r.details.status).join(","));
    assert.equal(results[20].details.status, "blocked");
    assert.equal(results[20].details.deniedReason, "plugin-before-tool-call");
    assert.match(results[20].texts.join(" "), /CRITICAL/);
    const ds = p.toolDecisions(p.readDecisions(decisionLog, { pid: gw.pid }), `agent:main:${key}`);
    assert.deepEqual(ds.filter((d) => d.notify).map((d) => [d.action, d.count]), [["warn", 10]]);
    assert.deepEqual(p.readDecisions(decisionLog).filter((r) => r.event === "policy-failed"), [], "no decision failed");
    // one version per decision of the session: 21 checks and 20 outcomes at least
    const value = await resp(redis.port, ["GET", `lg:e2e:{session["agent:main:${key}"]}`]);
    const version = Number.parseInt(/^\$\d+\r\n([0-9a-f]{16})/.exec(value)?.[1] ?? "0", 16);
    assert.ok(version >= 41, `the session's version in redis: ${version} (${value.slice(0, 40)})`);
  } catch (err) {
    failed = true;
    throw err;
  }
});
