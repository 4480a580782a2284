// The three event sides of the oracle: what the driver calls in the package for each event kind
// (tool calls, results and compactions; channel bot messages; agent group threads), shared by
// driver.mjs and gen-trace.mjs --oracle. See NOTES.md §1 and §7.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

export class UnsupportedError extends Error {}
export class UsageError extends Error {}

export function loadConfig(file, pkgDir) {
  const text = fs.readFileSync(file, "utf8");
  let JSON5;
  try {
    JSON5 = createRequire(path.join(path.resolve(pkgDir), "package.json"))("json5");
  } catch {
    JSON5 = null;
  }
  let cfg;
  try {
    cfg = JSON5 ? JSON5.parse(text) : JSON.parse(text);
  } catch (e) {
    throw new UsageError(`config ${file}: ${e.message}`);
  }
  if (cfg === null || typeof cfg !== "object" || Array.isArray(cfg)) throw new UsageError(`config ${file}: not an object`);
  return cfg;
}

// ---------------------------------------------------------------------------------------------
// Config checks against what the package reads.

function loopDetectionBlocks(cfg) {
  const out = [];
  if (cfg.tools?.loopDetection !== undefined) out.push(["tools.loopDetection", cfg.tools.loopDetection]);
  const list = Array.isArray(cfg.agents?.list) ? cfg.agents.list : [];
  list.forEach((a, i) => {
    if (a?.tools?.loopDetection !== undefined) out.push([`agents.list[${i}].tools.loopDetection`, a.tools.loopDetection]);
  });
  return out;
}

export function checkToolConfig(cfg, T, opts, version) {
  // 2026.9.6's detectToolCallLoop reads only `config.enabled` (thresholds, history size, detector
  // switches and the post-compaction window are constants), and resolveToolLoopDetectionConfig
  // merges only `enabled`. 2026.7.35 reads every documented key.
  if (T.mode !== "batch") return;
  for (const [where, block] of loopDetectionBlocks(cfg)) {
    if (block === null || typeof block !== "object") continue;
    const extra = Object.keys(block).filter((k) => k !== "enabled");
    if (extra.length === 0) continue;
    const msg = `openclaw ${version} reads only \`enabled\` from ${where} (its config schema rejects ${extra.join(", ")}; the runtime uses fixed values)`;
    if (opts.strictConfig) throw new UnsupportedError(msg);
    process.stderr.write(`driver: note: ${msg}; ignored\n`);
  }
}

// ---------------------------------------------------------------------------------------------
// Tool events.

class ObservedMap extends Map {
  constructor(entries, flag) {
    super(entries ?? []);
    this.flag = flag;
  }
  set(k, v) {
    if (this.flag) this.flag.set = true;
    return super.set(k, v);
  }
}

const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && Object.prototype.toString.call(v) === "[object Object]";
function isLoopVetoResult(result) {
  if (!isPlainObject(result) || !isPlainObject(result.details)) return false;
  return result.details.status === "blocked" && result.details.deniedReason === "tool-loop";
}

export class ToolSide {
  constructor(T, cfg) {
    this.T = T;
    this.R = T.runtime;
    this.cfg = cfg;
    this.guards = new Map(); // session \0 run -> {guard, enabled}
    this.recovery = new Map(); // session \0 run -> true after a critical tool-loop intervention (2026.9.6)
    this.bucketFlag = { set: false };
  }

  loopConfig(ev) {
    return this.T.resolveToolLoopDetectionConfig({ cfg: this.cfg, agentId: ev.agent });
  }

  runKey(ev) {
    return `${ev.session}\u0000${ev.run ?? ""}`;
  }

  guardFor(ev, ld) {
    const key = this.runKey(ev);
    let g = this.guards.get(key);
    if (!g) {
      const enabled = ld?.enabled !== false;
      const guard = this.T.guardTakesConfig
        ? this.T.createPostCompactionLoopGuard(ld?.postCompactionGuard, { enabled })
        : this.T.createPostCompactionLoopGuard({ enabled });
      g = { guard, enabled };
      this.guards.set(key, g);
    }
    return g;
  }

  state(ev) {
    const st = this.R.getDiagnosticSessionState({ sessionKey: ev.session });
    if (!(st.toolLoopWarningBuckets instanceof ObservedMap)) st.toolLoopWarningBuckets = new ObservedMap(st.toolLoopWarningBuckets, this.bucketFlag);
    return st;
  }

  async toolCall(ev, line) {
    const T = this.T;
    const ld = this.loopConfig(ev);
    const name = T.normalizeToolName(ev.tool || "tool");
    const scope = ev.run ? { runId: ev.run } : undefined;
    const ctx = { sessionKey: ev.session, runId: ev.run, loopDetection: ld };
    if (T.mode === "batch") {
      // 2026.9.6 embedded runner: agent-core's beforeToolBatch -> createToolLoopBatchAdmission ->
      // admitToolCallBatch (only when the resolved enabled === true); the wrapper's own check is
      // then skipped for admitted calls (consumeBatchAdmittedToolCall).
      if (!ctx.sessionKey || ld?.enabled !== true) return { action: "allow" };
      const st = this.state(ev);
      const pre = T.detectToolCallLoop(st, name, ev.args, ld, scope);
      const callId = ev.call_id ?? "";
      const res = await T.admitToolCallBatch([{ toolCall: { id: callId, name: ev.tool }, args: ev.args }], ctx);
      if (res.intervention) {
        const iv = res.intervention;
        if (!pre.stuck || pre.level !== "critical" || pre.count !== iv.count) throw new Error(`line ${line}: internal: detector preview disagrees with admitToolCallBatch`);
        const key = this.runKey(ev);
        const terminal = this.recovery.get(key) === true;
        this.recovery.set(key, true);
        const message = T.interventionText({ terminal, intervention: iv }, callId === iv.toolCallId);
        return { action: "block", detector: iv.detector, count: iv.count, message };
      }
      res.commitReadyCalls?.([{ toolCallId: callId, args: ev.args }]);
      res.releaseSkippedCalls?.([callId]);
      if (pre.stuck && pre.level === "critical") throw new Error(`line ${line}: internal: critical preview but no intervention`);
      if (pre.stuck) {
        const warned = (res.warnings ?? []).some((w) => w.kind === "tool-loop-warning");
        return { action: "warn", detector: pre.detector, count: pre.count, message: pre.message, notify: warned };
      }
      return { action: "allow" };
    }
    // 2026.7.35: the tool wrapper calls runBeforeToolCallHook (detection, warning bucketing and
    // recording); a block becomes buildBlockedToolResult(...) and that result goes through
    // recordLoopOutcome (it hashes to nothing: the loop-veto rule).
    let pre = { stuck: false };
    if (ctx.sessionKey) pre = T.detectToolCallLoop(this.state(ev), name, ev.args, ld, scope);
    this.bucketFlag.set = false;
    const res = await T.runBeforeToolCallHook({ toolName: ev.tool, params: ev.args, toolCallId: ev.call_id, ctx });
    const emitted = this.bucketFlag.set;
    this.bucketFlag.set = false;
    if (res.blocked) {
      if (res.deniedReason !== "tool-loop" || !pre.stuck || pre.level !== "critical") throw new Error(`line ${line}: internal: unexpected block (${res.deniedReason})`);
      const blocked = T.buildBlockedToolResult({ reason: res.reason, deniedReason: res.deniedReason, toolCallId: ev.call_id, runId: ctx.runId });
      this.outcome({ ...ev, args: res.params ?? ev.args }, { result: blocked }, ld);
      return { action: "block", detector: pre.detector, count: pre.count, message: blocked.content[0].text };
    }
    if (pre.stuck && pre.level === "critical") throw new Error(`line ${line}: internal: critical preview but no block`);
    if (pre.stuck) return { action: "warn", detector: pre.detector, count: pre.count, message: pre.message, notify: emitted };
    return { action: "allow" };
  }

  // recordLoopOutcome as the tool wrapper does it, then the run's onToolOutcome ->
  // postCompactionGuard.observe when the record has a result hash.
  outcome(ev, payload, ld) {
    if (!ev.session) return { action: "ignored" };
    const T = this.T;
    const name = T.normalizeToolName(ev.tool || "tool");
    const st = this.state(ev);
    const params = { toolName: name, toolParams: ev.args, toolCallId: ev.call_id, config: ld, ...(ev.run ? { runId: ev.run } : {}) };
    if ("error" in payload) params.error = payload.error;
    else params.result = payload.result;
    const rec = T.recordToolCallOutcome(st, params);
    if (!rec?.resultHash) return { action: "ignored" };
    const { guard } = this.guardFor(ev, ld);
    const v = guard.observe({ toolName: rec.toolName, argsHash: rec.argsHash, resultHash: rec.resultHash });
    if (v.shouldAbort) return { action: "abort", detector: v.detector, count: v.count, message: v.message };
    return { action: "recorded" };
  }

  toolResult(ev) {
    const ld = this.loopConfig(ev);
    if (this.T.mode === "batch" && !("error" in ev) && isLoopVetoResult(ev.result)) {
      // 2026.9.6: a `tool-loop` veto result is made by agent-core (completeToolLoopInterventionBatch)
      // for a call that admitToolCallBatch refused, and that admission already recorded the veto
      // in the history (recordLoopVeto). The tool wrapper never runs for it, so recordLoopOutcome
      // is never called with it: feeding it to recordToolCallOutcome would add a second veto record.
      return { action: "ignored" };
    }
    return this.outcome(ev, "error" in ev ? { error: ev.error } : { result: ev.result }, ld);
  }

  compaction(ev) {
    const ld = this.loopConfig(ev);
    const g = this.guardFor(ev, ld);
    g.guard.armPostCompaction();
    // A compaction retry is a new attempt: agent-core's Agent.prompt() resets
    // toolLoopRecoveryState.criticalToolLoopSeen.
    this.recovery.delete(this.runKey(ev));
    if (!g.enabled) return { action: "disabled" };
    return { action: "armed", remaining: g.guard.snapshot().remainingAttempts };
  }
}

// ---------------------------------------------------------------------------------------------
// Channel bot events.

function slackChannelEntry(channels, id) {
  if (!channels || typeof channels !== "object") return undefined;
  const obj = (v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined);
  const keys = [id, id.toLowerCase(), id.toUpperCase()];
  for (const k of [...keys, ...keys.map((k2) => `channel:${k2}`)]) {
    if (Object.hasOwn(channels, k) && obj(channels[k])) return channels[k];
  }
  return undefined;
}

export class BotSide {
  constructor(B, cfg, opts, version) {
    this.B = B;
    this.cfg = cfg;
    this.opts = opts;
    this.version = version;
  }

  // Layers (spec/bot-loop.md §4): the package primitives resolveMergedAccountConfig (account over
  // channel, botLoopProtection merged key by key) and mergePairLoopGuardConfig (room over account).
  settingsInput(ev) {
    const B = this.B;
    const channels = this.cfg.channels ?? {};
    const defaultsConfig = channels.defaults?.botLoopProtection;
    const room = ev.room ?? ev.conversation;
    const ch = channels[ev.channel];
    const layers = [defaultsConfig];
    let config;
    if (ev.channel === "feishu") {
      config = undefined;
    } else {
      const merged = B.resolveMergedAccountConfig({
        channelConfig: ch,
        accounts: ch?.accounts,
        accountId: ev.account,
        nestedObjectKeys: ["botLoopProtection"],
      });
      config = merged.botLoopProtection;
      layers.push(ch?.botLoopProtection, B.resolveAccountEntry(ch?.accounts, ev.account)?.botLoopProtection);
      if (ev.channel === "googlechat" && ev.account !== "default") {
        const def = B.resolveAccountEntry(ch?.accounts, "default");
        layers.push(def?.botLoopProtection);
        config = B.mergePairLoopGuardConfig(def?.botLoopProtection, config);
      }
      if (ev.channel === "matrix" || ev.channel === "googlechat") {
        const roomCfg = ch?.groups?.[room]?.botLoopProtection;
        layers.push(roomCfg);
        config = B.mergePairLoopGuardConfig(config, roomCfg);
      } else if (ev.channel === "slack") {
        const entry = slackChannelEntry(ch?.channels, room)?.botLoopProtection;
        const wild = ch?.channels?.["*"]?.botLoopProtection;
        layers.push(entry, wild);
        config = B.mergePairLoopGuardConfig(config, B.mergePairLoopGuardConfig(wild, entry));
      }
    }
    return { config, defaultsConfig, layers };
  }

  message(ev, line) {
    const { config, defaultsConfig, layers } = this.settingsInput(ev);
    if (!this.B.guardHasBurst && !this.opts.ignoreUnsupported) {
      for (const l of layers) {
        if (l && typeof l === "object" && l.maxConversationBotEvents !== undefined) {
          throw new UnsupportedError(
            `line ${line}: botLoopProtection.maxConversationBotEvents (the conversation burst budget, budget "burst") has no code in openclaw ${this.version}; ` +
              `its pair guard ignores the key (rerun with --ignore-unsupported to replay with it ignored)`,
          );
        }
      }
    }
    const r = this.B.recordChannelBotPairLoopAndCheckSuppression({
      scopeId: ev.account,
      conversationId: ev.conversation,
      senderId: ev.sender,
      receiverId: ev.receiver,
      eventId: ev.event_id,
      config,
      defaultsConfig,
      defaultEnabled: true,
      nowMs: ev.ts_ms,
    });
    if (r.suppressed) return { action: "suppress", cooldown_until_ms: r.cooldownUntilMs, budget: "pair" };
    return { action: "allow" };
  }
}

// ---------------------------------------------------------------------------------------------
// Agent group (broadcast) events: the package's runGroupThread, driven through its runTurn callback.

async function settle() {
  // runGroupThread only awaits promises (no timers), so a few macrotask turns let it reach its
  // next stable point (every launched turn waiting in runTurn, or the run finished).
  for (let i = 0; i < 8; i++) await new Promise((r) => setImmediate(r));
}

export class GroupSide {
  constructor(G, cfg, version) {
    this.G = G;
    this.cfg = cfg;
    this.version = version;
    this.threads = new Map();
  }

  key(ev) {
    return JSON.stringify([ev.channel, ev.account, ev.conversation, ev.thread ?? "", ev.root]);
  }

  requireSupported(ev, line) {
    if (!this.G) throw new UnsupportedError(`line ${line}: ${ev.kind}: openclaw ${this.version} has no group-thread (broadcast) coordinator (no runGroupThread in dist/)`);
    if ((this.cfg.broadcast?.strategy ?? "parallel") === "sequential")
      throw new UnsupportedError(
        `line ${line}: broadcast.strategy "sequential": runGroupThread launches each participant only after the previous one's reply, so a round's participants cannot be observed before its replies (unsupported by this driver)`,
      );
  }

  async message(ev, line) {
    this.requireSupported(ev, line);
    const G = this.G;
    const group = G.resolveGroupThreadConfig({ cfg: this.cfg, channel: ev.channel, peerId: ev.peer });
    if (!group) return { action: "none" };
    const th = { group, pending: [], launched: [], round: 0, done: false, replies: new Map(), ac: new AbortController(), repliedInRound: new Map() };
    const old = this.threads.get(this.key(ev));
    // A second message with the root of a thread that is still running: runGroupThread's own
    // activeThreads check returns at once without launching anyone; the running thread stays.
    if (!old || old.done || old.cancelled) this.threads.set(this.key(ev), th);
    const runTurn = async (turn) => {
      th.launched.push(turn);
      const reply = await new Promise((resolve) => th.pending.push({ turn, resolve }));
      if (reply !== null && reply !== undefined) G.recordGroupThreadReply({ text: reply });
      return { counts: { tool: 0, block: 0, final: 0 } };
    };
    th.promise = G.runGroupThread({
      cfg: this.cfg,
      group,
      channel: ev.channel,
      accountId: ev.account,
      peerId: ev.peer,
      threadId: ev.thread,
      messageId: ev.root,
      text: ev.text,
      abortSignal: th.ac.signal,
      runTurn,
    }).then(
      (r) => {
        th.done = true;
        th.result = r;
      },
      (e) => {
        th.done = true;
        th.error = e;
      },
    );
    await settle();
    const started = th.launched.filter((t) => t.round === 1).map((t) => t.agentId);
    th.round = 1;
    if (!group.qualified) return { action: "legacy", participants: started };
    return { action: "round", round: 1, participants: started };
  }

  async replies(ev, line) {
    this.requireSupported(ev, line);
    const th = this.threads.get(this.key(ev));
    if (!th || th.done || th.cancelled) return { action: "stop", reason: "no_eligible" };
    const G = this.G;
    const byAgent = new Map();
    for (const r of ev.replies) if (!byAgent.has(r.agent)) byAgent.set(r.agent, r.reply);
    const round = th.round;
    let anyReplied = false;
    const waiting = th.pending.splice(0);
    for (const p of waiting) {
      const reply = byAgent.has(p.turn.agentId) ? byAgent.get(p.turn.agentId) : null;
      const text = typeof reply === "string" ? reply.trim() : "";
      if (text && !G.isSilentReplyText(reply)) anyReplied = true;
      p.resolve(reply);
    }
    await settle();
    if (th.error) throw th.error;
    const next = th.launched.filter((t) => t.round === round + 1).map((t) => t.agentId);
    if (next.length > 0) {
      th.round = round + 1;
      return { action: "round", round: round + 1, participants: next };
    }
    if (!th.done) throw new Error(`line ${line}: internal: group thread neither launched a round nor finished`);
    // runGroupThread returns no reason; it is read off the package's loop conditions (in the
    // order its loop tests them after a round): nobody replied -> all_passed; the round just run
    // was maxRounds -> max_rounds; turnsStarted >= maxTurns -> max_turns; else no eligible agent.
    const turns = th.launched.length;
    let reason;
    if (!anyReplied) reason = "all_passed";
    else if (round >= th.group.maxRounds) reason = "max_rounds";
    else if (turns >= th.group.maxTurns) reason = "max_turns";
    else reason = "no_eligible";
    return { action: "stop", reason };
  }

  async cancel(ev, line) {
    this.requireSupported(ev, line);
    const th = this.threads.get(this.key(ev));
    if (th && !th.done) {
      th.cancelled = true;
      th.ac.abort();
      for (const p of th.pending.splice(0)) p.resolve(null);
      await settle();
    }
    return { action: "stop", reason: "cancelled" };
  }
}

