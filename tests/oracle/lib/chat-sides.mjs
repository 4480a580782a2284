// The chat sides of the oracle (re-exported by sides.mjs): what the driver calls in the package
// for channel bot messages (BotSide) and agent group threads (GroupSide). See NOTES.md §1 and §7.

import { UnsupportedError } from "./sides-config.mjs";

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

  // Layers (docs/spec/bot-loop.md §4): the package primitives resolveMergedAccountConfig (account over
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
