// The loopguard OpenClaw plugin (packages/openclaw-plugin) inside the real gateway, installed the
// way an operator does it: its packed tarball through `plugins install npm-pack:`, then one config
// block. OpenClaw's own guard is off (tools.loopDetection.enabled: false), so every loop decision
// is the plugin's, and each scenario compares what the model received with what the core guard
// gave it in core-guard.test.mjs (baseline/core-*.json, written by the real core run).
//
// One gateway serves every scenario (separate session keys; the tool-loop history is per session
// and run, the bot budget per conversation). Order matters where noted: the hot swap installs the
// hostile policy the fail-mode scenarios then use, and the bot scenario restarts the gateway.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as h from "./harness.mjs";
import * as p from "./plugin-helpers.mjs";

const GROUP = -100777;
const BOT_COOLDOWN_S = 8;
const BOT_BUDGET = 6;

let dirs, model, tg, gw, decisionLog, policyFile, tgz;
let failed = false;
const t0 = Date.now();

const SCENARIOS = {
  // the exec poll, slowed down so that a test can act in the middle of the turn
  "exec-poll-slow": { maxToolsPerTurn: 24, delayMs: 250, steps: [{ call: "exec", args: { command: "echo loop" }, times: "forever" }] },
  // one call, then text (a session whose name makes the hostile policy trap)
  "one-exec": { steps: [{ call: "exec", args: { command: "echo once" } }, { text: "One call done." }] },
};

before(async () => {
  dirs = h.makeRoot("lgplugin");
  decisionLog = path.join(dirs.out, "loopguard-decisions.jsonl");
  policyFile = path.join(dirs.root, "policy", "loopguard_policy.wasm");
  await p.ensureHostilePolicy();
  tgz = await h.timed("pack the plugin", () => p.packPlugin(dirs.out));
  fs.mkdirSync(path.dirname(policyFile), { recursive: true });
  fs.copyFileSync(p.defaultPolicyWasm(), policyFile);
  model = await h.startModel({ out: dirs.out, config: { scenarios: SCENARIOS } });
  tg = await h.startTelegram({ out: dirs.out });
  gw = await h.timed("gateway start", () =>
    h.startGateway({
      model,
      dirs,
      label: "lgplugin",
      loopDetection: false,
      config: { ...h.telegramChannelConfig(tg.apiRoot), agents: { defaults: { compaction: { keepRecentTokens: 200 } } } },
      workspaceFiles: { "a.txt": "alpha\n", "b.txt": "beta\n" },
    }),
  );
});

after(async () => {
  await gw?.stop();
  await model?.stop();
  await tg?.stop();
  if (gw) await gw.cleanup({ keep: failed });
  else await h.cleanupRoot(dirs?.root, { keep: failed });
  h.log(`plugin-guard.test.mjs total: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
});

async function scenario(name, fn) {
  try {
    await h.timed(name, fn);
  } catch (err) {
    failed = true;
    throw err;
  }
}

const decisions = () => p.readDecisions(decisionLog, { pid: gw.pid });

function sessionView(key, marker) {
  const events = h.readTranscript(gw.stateDir, "main", key);
  return { events, calls: h.toolCallsOf(events), results: h.toolResultsOf(events), requests: model.chatRequests(marker) };
}

/**
 * The config block of the README's operator path, plus test knobs (short budgets, the decision
 * log). No `policy`: the package's own policy, on the gateway thread (isolation auto → inline);
 * the hot-swap scenario later adds a policy file (→ worker).
 */
const PLUGIN_CONFIG = () => ({
  stateIntervalSeconds: 2,
  decisionLog,
  botIds: { telegram: ["222"] },
  botLoopProtection: { channels: { telegram: { maxEventsPerWindow: BOT_BUDGET, windowSeconds: 300, cooldownSeconds: BOT_COOLDOWN_S } } },
});

test("install from the packed tarball (npm-pack:), configure, and the gateway runs it", async () => {
  await scenario("install", async () => {
    const { install, id } = await h.timed("plugins install npm-pack + enable", () => h.installPluginFromTarball(gw, tgz));
    assert.equal(id, p.PLUGIN_ID);
    assert.match(install.stdout, /Installed plugin: loopguard/);
    // the config block; the gateway applies it hot (the plugin re-registers with it), the
    // operator's restart is exercised by the bot-loop scenario below
    p.setPluginConfig(gw, PLUGIN_CONFIG());
    await h.waitFor(() => decisions().filter((r) => r.event === "registered").length >= 2, { timeoutMs: 60_000, what: "the plugin to register with its config" });
    const regs = decisions().filter((r) => r.event === "registered");
    assert.ok(regs.length >= 2, `registrations in the gateway: ${regs.map((r) => r.mode)}`);
    // it runs from the npm install (and its per-registration captures), not from this repo
    assert.ok(regs.every((r) => r.rootDir?.startsWith(path.join(gw.stateDir, "npm"))), JSON.stringify(regs.map((r) => r.rootDir)));
    // each registration imports its own capture copy, and `loopguard` resolves from that copy too
    const inGateway = regs.filter((r) => r.pid === gw.pid);
    h.log(`registrations: ${inGateway.map((r) => `${r.mode} ${r.module.replace(gw.stateDir, "$STATE")} → loopguard ${r.loopguardFromCopy?.replace(gw.stateDir, "$STATE") ?? r.loopguardFromCopyError}`).join("; ")}`);
    assert.ok(inGateway.length >= 2 && inGateway.every((r) => r.module.includes("/plugin-captures/")), JSON.stringify(inGateway.map((r) => r.module)));
    assert.ok(inGateway.every((r) => r.loopguardFromCopy), JSON.stringify(inGateway.map((r) => r.loopguardFromCopyError)));
    const info = await h.timed("inspect", () => h.inspectPlugin(gw, p.PLUGIN_ID));
    assert.equal(info.plugin?.status, "loaded", JSON.stringify(info).slice(0, 1500));
    const hooks = (info.typedHooks ?? []).map((x) => x.name).sort();
    for (const name of ["before_tool_call", "after_tool_call", "after_compaction", "before_dispatch", "message_sent", "session_end", "before_reset", "gateway_stop"]) {
      assert.ok(hooks.includes(name), `typed hook ${name} (got ${hooks})`);
    }
    assert.deepEqual(info.diagnostics?.filter?.((d) => d.level === "error") ?? [], []);
  });
});

test("an invalid plugin config is refused by `openclaw config validate`, with the path", async () => {
  await scenario("config validate", async () => {
    const bad = gw.config;
    bad.plugins.entries.loopguard.config = { ...bad.plugins.entries.loopguard.config, failMode: "sometimes", historySise: 30 };
    const badPath = path.join(dirs.root, "bad-openclaw.json");
    fs.writeFileSync(badPath, JSON.stringify(bad, null, 2));
    const res = await gw.cli(["config", "validate", "--json"], { env: { OPENCLAW_CONFIG_PATH: badPath }, timeoutMs: 90_000 });
    const text = res.stdout + res.stderr;
    assert.notEqual(res.code, 0, text.slice(-2000));
    assert.match(text, /plugins\.entries\.loopguard\.config/, text.slice(-2000));
    assert.match(text, /failMode|historySise/, text.slice(-2000));
    const good = await gw.cli(["config", "validate", "--json"], { timeoutMs: 90_000 });
    assert.equal(good.code, 0, good.stdout + good.stderr);
  });
});

test("exec poll: the same note at the 11th call and the same block text at the 21st as the core guard", async () => {
  await scenario("exec poll", async () => {
    const base = p.readBaseline("core-exec-poll.json");
    const key = "lg-exec-poll";
    const marker = `[session:${key}]`;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:exec-poll] ${marker} Run echo loop please` });
    const { calls, results, requests } = sessionView(key, marker);
    assert.ok(calls.length >= 22, `tool calls: ${calls.length}`);
    // calls 1..21: what the model got is what the core gave it
    for (let i = 0; i < 21; i += 1) {
      assert.deepEqual(results[i].texts, base.perCall[i].texts, `call ${i + 1}: ${JSON.stringify(results[i].texts)}`);
    }
    assert.equal(requests[11].lastTool.text, base.warning.modelReceived, "request 12 (the 11th result) as with the core");
    assert.equal(requests[21].lastTool.text, base.block.modelReceived, "request 22 (the 21st result) as with the core");
    const r21 = results[20];
    assert.equal(r21.isError, true);
    assert.equal(r21.details.status, "blocked");
    assert.equal(r21.details.deniedReason, "plugin-before-tool-call");
    // the plugin cannot end the run: every later call is blocked too
    const later = results.slice(21);
    assert.ok(later.every((r) => r.details.status === "blocked"), later.map((r) => r.details.status).join(","));
    const ds = p.toolDecisions(decisions(), `agent:main:${key}`);
    assert.equal(ds[0].compat, "openclaw-2026.9", "the profile of the running gateway's version");
    assert.equal(decisions().find((d) => d.event === "ready")?.isolation, "inline", "the package's own policy runs on the gateway thread");
    assert.deepEqual(ds.filter((d) => d.notify).map((d) => [d.action, d.count]), [["warn", 10]]);
    p.writeBaseline("plugin-exec-poll.json", {
      producedBy: "tests/e2e/plugin-guard.test.mjs (exec poll, loopguard plugin, core guard off)",
      compat: ds[0]?.compat,
      toolCallsIssued: calls.length,
      cli: { exitCode: res.code, status: res.json?.status ?? null, payloads: (res.json?.result?.payloads ?? []).map((x) => x.text) },
      warning: { atCall: 11, modelReceived: requests[11].lastTool.text, sameAsCore: requests[11].lastTool.text === base.warning.modelReceived },
      block: { atCall: 21, modelReceived: requests[21].lastTool.text, sameAsCore: requests[21].lastTool.text === base.block.modelReceived },
      secondBlock: { atCall: 22, modelReceived: requests[22]?.lastTool?.text ?? null, coreTerminalText: base.terminal.text, coreStoppedTheRun: true },
      perCall: results.map((r, i) => ({ call: i + 1, status: r.details.status, texts: r.texts })),
    });
  });
});

test("ping-pong between two reads: every result as with the core guard", async () => {
  await scenario("ping-pong", async () => {
    const base = p.readBaseline("core-read-pingpong.json");
    const key = "lg-read-pingpong";
    const marker = `[session:${key}]`;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:read-pingpong] ${marker} read a.txt and b.txt until they change` });
    assert.equal(res.code, 0, res.stderr.slice(-2000));
    const { calls, results } = sessionView(key, marker);
    assert.equal(calls.length, base.toolCallsIssued);
    const mismatches = results.map((r, i) => ({ call: i + 1, got: r.texts, core: base.perCall[i].texts })).filter((x) => JSON.stringify(x.got) !== JSON.stringify(x.core));
    assert.deepEqual(mismatches, [], "per-call texts differ from the core's");
    const blocked = results.map((r, i) => (r.details.status === "blocked" ? i + 1 : 0)).filter(Boolean);
    assert.deepEqual(blocked, [base.block.atCall]);
    p.writeBaseline("plugin-read-pingpong.json", {
      producedBy: "tests/e2e/plugin-guard.test.mjs (ping-pong, loopguard plugin, core guard off)",
      blockedCalls: blocked,
      block: { modelReceived: results[base.block.atCall - 1].text, sameAsCore: results[base.block.atCall - 1].text === base.block.modelReceived },
      perCall: results.map((r, i) => ({ call: i + 1, path: calls[i]?.arguments?.path, status: r.details.status ?? null, texts: r.texts })),
    });
  });
});

test("a tool that does not exist: the gateway's own stream guard answers, as with the core on; the plugin never sees the call", async () => {
  await scenario("unknown tool", async () => {
    const base = p.readBaseline("core-unknown-tool.json");
    const key = "lg-unknown-tool";
    const marker = `[session:${key}]`;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:unknown-tool] ${marker} frobnicate the widget` });
    assert.equal(res.code, 0, res.stderr.slice(-2000));
    const { events, results, requests } = sessionView(key, marker);
    assert.equal(requests.length, base.modelRequests);
    assert.deepEqual(results.map((r) => ({ text: r.text, isError: r.isError, details: r.details })), base.toolResults);
    assert.deepEqual(h.messagesOf(events, "assistant").at(-1).content, [{ type: "text", text: base.eleventhCall.rewrittenAssistantText }]);
    assert.equal(p.toolDecisions(decisions(), `agent:main:${key}`).length, 0, "before_tool_call never fires for a tool that does not exist");
  });
});

test("context overflow → auto-compaction → the same loop: the post-compaction abort blocks with the core's text", async () => {
  await scenario("overflow-compaction", async () => {
    const base = p.readBaseline("core-post-compaction.json");
    const key = "lg-overflow";
    const marker = `[session:${key}]`;
    for (const n of ["one", "two"]) {
      const w = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:warmup] ${marker} warmup ${n}` });
      assert.equal(w.code, 0, w.stderr.slice(-2000));
    }
    const before = model.requests().length;
    const res = await h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:overflow-loop] ${marker} OVERFLOW turn three: run echo` });
    const reqs = model.requests().slice(before).filter((r) => r.method === "POST");
    const kinds = reqs.map((r) => r.answer?.kind);
    assert.deepEqual(kinds.slice(0, 4), ["tool", "tool", "error", "summary"], JSON.stringify(kinds));
    const events = h.readTranscript(gw.stateDir, "main", key);
    assert.equal(h.compactionsOf(events).length, 1);
    const armed = decisions().filter((d) => d.hook === "after_compaction" && d.session === `agent:main:${key}`);
    assert.equal(armed.length, 1);
    assert.equal(armed[0].action, "armed");
    const runId = res.json?.runId;
    const runResults = h.toolResultsOf(events).filter((r) => !runId || r.runId === runId);
    // 2 calls before the overflow, then 3 identical calls after the compaction ran; the 4th is blocked
    const statuses = runResults.map((r) => r.details.status);
    assert.deepEqual(statuses.slice(0, 5), ["completed", "completed", "completed", "completed", "completed"], statuses.join(","));
    assert.equal(statuses[5], "blocked", statuses.join(","));
    assert.ok(statuses.slice(5).every((s) => s === "blocked"), "every later call of the run is blocked");
    assert.equal(runResults[5].text, base.abortText, "the abort text is the core's");
    const seen = reqs.find((r) => r.lastTool?.text === base.abortText);
    assert.ok(seen, "the model received the abort text");
  });
});

/** The group conversation's bot-loop decisions in the gateway's log. */
const botDecisions = () => p.readDecisions(decisionLog).filter((d) => d.event === "decision" && (d.hook === "before_dispatch" || d.hook === "message_sent"));

async function waitSent(n, what) {
  return h.waitFor(async () => ((await tg.sent()).length >= n ? tg.sent() : null), { timeoutMs: 60_000, intervalMs: 300, what });
}

test("two bots answering each other on Telegram: suppressed after the budget, delivered after the cooldown; the counts survive a gateway restart", async () => {
  await scenario("bot loop", async () => {
    await h.waitFor(async () => (await tg.calls()).some((c) => c.method === "getUpdates"), { timeoutMs: 60_000, what: "getUpdates" });
    // A: a human starts it, the other bot (222) echoes every message of ours
    await tg.setEchoMax(4);
    await tg.inject({ text: "[scenario:text] hello bots", chatId: GROUP, fromId: 555 });
    await waitSent(4, "4 replies");
    const trip = await h.waitFor(() => botDecisions().find((d) => d.action === "suppress"), { timeoutMs: 30_000, what: "a suppression" });
    await h.sleep(2_000);
    assert.equal((await tg.sent()).length, 4, "the loop stopped: no reply to the 4th echo");
    assert.equal(model.chatRequests("other_bot echo #4").length, 0, "no model call for the suppressed message");
    assert.equal(model.chatRequests("other_bot echo #3").length, 1);
    const counted = botDecisions().filter((d) => d.ts <= trip.ts);
    assert.deepEqual(counted.map((d) => `${d.hook === "before_dispatch" ? "in" : "out"}:${d.action}`), ["in:allow", "out:allow", "in:allow", "out:allow", "in:allow", "out:allow", "in:suppress"]);
    // B: after the cooldown the bot is heard again
    await h.sleep(Math.max(0, trip.cooldownUntilMs - Date.now()) + 300);
    await tg.setEchoMax(5);
    await tg.inject({ text: "[scenario:text] bot ping B1", chatId: GROUP, isBot: true });
    await waitSent(6, "the reply to B1 and to echo #5");
    assert.equal(model.chatRequests("bot ping B1").length, 1, "delivered after the cooldown");
    // C: restart; the pair has 4 events in its window (B1, out, echo #5, out); 2 more are allowed
    await h.sleep(500);
    await h.timed("gateway restart", () => gw.restart());
    await h.waitFor(async () => (await tg.calls()).filter((c) => c.method === "getMe").length >= 2, { timeoutMs: 60_000, what: "the channel to come back" });
    // the new gateway reads the state file as it starts the plugin: waited for, not slept on
    await h.waitFor(() => decisions().some((d) => d.event === "state-read"), { timeoutMs: 60_000, what: "the new gateway to read the state file" });
    await tg.inject({ text: "[scenario:text] bot ping B2", chatId: GROUP, isBot: true });
    await waitSent(7, "the reply to B2");
    await tg.inject({ text: "[scenario:text] bot ping B3", chatId: GROUP, isBot: true });
    const b3 = await h.waitFor(() => botDecisions().find((d) => d.pid === gw.pid && d.action === "suppress"), { timeoutMs: 30_000, what: "B3 suppressed" });
    assert.equal(b3.hook, "before_dispatch");
    await h.sleep(1_500);
    assert.equal(model.chatRequests("bot ping B3").length, 0, "over the budget carried across the restart");
    assert.equal((await tg.sent()).length, 7);
  });
});

test("the policy file replaced mid-turn: hot-swapped, and the counts continue (block still at the 21st call)", async () => {
  await scenario("hot swap", async () => {
    const key = "lg-swap";
    const marker = `[session:${key}]`;
    const session = `agent:main:${key}`;
    // the operator points the plugin at a policy file (a config change: rebuilt hot, counts kept,
    // and now in the worker behind its deadline)
    const readyBefore = decisions().filter((d) => d.event === "ready").length;
    p.setPluginConfig(gw, { policy: policyFile, policyWatchMs: 300 });
    const ready = await h.waitFor(() => decisions().filter((d) => d.event === "ready")[readyBefore], { timeoutMs: 60_000, what: "the rebuilt guard" });
    assert.equal(ready.isolation, "worker");
    const turn = h.runAgentTurn(gw, { sessionKey: key, message: `[scenario:exec-poll-slow] ${marker} poll slowly` });
    await h.waitFor(() => p.toolDecisions(decisions(), session).length >= 5, { timeoutMs: 60_000, intervalMs: 100, what: "5 calls" });
    p.replaceFile(policyFile, p.HOSTILE_WASM);
    const swapped = await h.waitFor(() => decisions().find((d) => d.event === "swapped"), { timeoutMs: 30_000, what: "the swap" });
    const res = await turn;
    assert.equal(res.code, 0, res.stderr.slice(-1500));
    assert.match(swapped.to.version, /\+hostile$/);
    const ds = p.toolDecisions(decisions(), session);
    const beforeSwap = ds.filter((d) => d.ts < swapped.ts);
    assert.ok(beforeSwap.length >= 5 && beforeSwap.length < 20, `calls before the swap: ${beforeSwap.length}`);
    assert.ok(ds.slice(beforeSwap.length + 1).every((d) => /\+hostile$/.test(d.policy)), "the later calls were decided by the new policy");
    assert.equal(ds[20].action, "block", `21st: ${JSON.stringify(ds[20])}`);
    assert.equal(ds[20].count, 20);
    assert.deepEqual(ds.slice(0, 20).map((d) => d.action).filter((a) => a === "block"), []);
  });
});

test("a trapping policy: the gateway keeps answering, in fail mode open, then closed", async () => {
  await scenario("trap", async () => {
    // the hostile policy (swapped in above) traps for sessions named __trap__
    const open = await h.runAgentTurn(gw, { sessionKey: "__trap__", message: "[scenario:one-exec] [session:trap-open] run it" });
    assert.equal(open.code, 0, open.stderr.slice(-1500));
    let events = h.readTranscript(gw.stateDir, "main", "__trap__");
    assert.deepEqual(h.toolResultsOf(events).map((r) => r.details.status), ["completed"], "fail open: the call ran");
    const failedOpen = decisions().filter((d) => d.event === "policy-failed" && d.reason === "trap");
    assert.equal(failedOpen.length, 1);
    // another session is decided normally by the replacement
    const ok = await h.runAgentTurn(gw, { sessionKey: "lg-after-trap", message: "[scenario:one-exec] [session:lg-after-trap] run it" });
    assert.equal(ok.code, 0);
    assert.equal(p.toolDecisions(decisions(), "agent:main:lg-after-trap")[0]?.action, "allow");
    // failMode closed (a config change: the guard is rebuilt, hot)
    const regsBefore = decisions().filter((d) => d.event === "registered").length;
    p.setPluginConfig(gw, { failMode: "closed" });
    await h.waitFor(() => decisions().filter((d) => d.event === "registered").length > regsBefore, { timeoutMs: 60_000, what: "the re-registration" });
    await h.sleep(1_000);
    const closed = await h.runAgentTurn(gw, { sessionKey: "__trap__", message: "[scenario:one-exec] [session:trap-closed] run it" });
    assert.equal(closed.code, 0, closed.stderr.slice(-1500));
    events = h.readTranscript(gw.stateDir, "main", "__trap__");
    const last = h.toolResultsOf(events).at(-1);
    assert.equal(last.details.status, "blocked");
    assert.match(last.text, /^loopguard: the loop guard failed \(trap: .*\); this call is blocked because failMode is "closed"\.$/);
    assert.equal(model.chatRequests("[session:trap-closed]").at(-1).lastTool.text, last.text, "the model got the fail-closed text");
  });
});

test("an invalid plugin config: the gateway refuses to start; `config validate` names the path", async () => {
  await scenario("invalid config at start", async () => {
    await gw.stop();
    const cfg = gw.config;
    cfg.plugins.entries.loopguard.config = { ...cfg.plugins.entries.loopguard.config, failMode: "sometimes" };
    gw.writeConfig(cfg);
    // `gateway run` by hand: it exits at once (no /readyz to wait for)
    const entry = h.spawnTracked("gateway (invalid config)", h.NODE, [h.OPENCLAW_ENTRY, "gateway", "run", "--port", String(gw.port), "--bind", "loopback"], { env: gw.env, cwd: dirs.workspace, capture: true });
    try {
      await h.waitFor(() => entry.exited, { timeoutMs: 60_000, intervalMs: 250, what: "the gateway to refuse the config" });
      const said = entry.stdout + entry.stderr;
      assert.notEqual(entry.code, 0, said.slice(-2000));
      assert.match(said, /config is invalid/i, said.slice(-2000));
      h.log(`gateway start with an invalid plugin config: exit ${entry.code}: ${said.trim().split("\n").at(-1).slice(0, 200)}`);
    } finally {
      await h.stopProcess(entry);
    }
    const res = await gw.cli(["config", "validate", "--json"], { timeoutMs: 90_000 });
    assert.match(res.stdout + res.stderr, /plugins\.entries\.loopguard\.config\.failMode/, (res.stdout + res.stderr).slice(-2000));
  });
});
