// Channel-message episodes of gen-trace.mjs: bot pair storms (bot_message, with redeliveries, late
// and future-dated events) and broadcast group threads (group_message/_replies/_cancel). Methods
// of Gen (lib/gen/generator.mjs), kept apart from the tool episodes they interleave with.

import { GROUP_AGENTS } from "./config.mjs";

export const chatEpisodes = {
  // ---- bot episodes
  *botEpisode() {
    const r = this.rng;
    const where = r.weighted([
      [5, { channel: "discord", account: r.pick(["default", "secondary", "tertiary"]), conversation: `13987654321${r.int(0, 3)}` }],
      [4, { channel: "slack", account: r.pick(["default", "T2"]), conversation: r.pick(["C0ABC", "c0abc", "C0DEF", "C0XYZ"]), room: undefined }],
      [3, { channel: "matrix", account: r.pick(["default", "bot2"]), conversation: r.pick(["!room1:example.org", "!room2:example.org"]) }],
      [3, { channel: "googlechat", account: r.pick(["default", "other", "third"]), conversation: r.pick(["spaces/AAAA", "spaces/BBBB"]) }],
      [2, { channel: "feishu", account: "default", conversation: `oc_${r.hex(6)}` }],
      [2, { channel: "telegram", account: "default", conversation: `-100${r.int(1, 3)}` }],
    ]);
    const bots = ["1300000000000000011", "1300000000000000022", "1300000000000000033", "B_four", "b_five"];
    const a = r.pick(bots);
    let b = r.pick(bots);
    if (b === a && r.chance(0.9)) b = bots[(bots.indexOf(a) + 1) % bots.length];
    const len = r.weighted([
      [2, r.int(4, 10)],
      [5, r.int(12, 30)],
      [2, r.int(30, 60)],
    ]);
    const gap = r.pick([300, 1000, 2000, 4000]);
    const recent = [];
    for (let i = 0; i < len; i++) {
      this.botClock += r.chance(0.05) ? r.int(30000, 100000) : r.chance(0.1) ? 0 : r.int(Math.floor(gap / 2), gap * 2);
      let ts = this.botClock;
      const fwd = i % 2 === 0;
      const ev = { kind: "bot_message", channel: where.channel, account: where.account, conversation: where.conversation, sender: fwd ? a : b, receiver: fwd ? b : a, ts_ms: ts };
      if (where.channel === "slack" && r.chance(0.2)) ev.room = r.pick(["C0ABC", "c0def", "C0ZZZ"]);
      if (where.channel !== "slack" && r.chance(0.05)) ev.room = where.conversation;
      const roll = r.float();
      if (roll < 0.08 && recent.length) {
        // provider redelivery of a recent event (same id, same or later clock)
        const old = r.pick(recent);
        ev.sender = old.sender;
        ev.receiver = old.receiver;
        ev.event_id = r.chance(0.8) ? old.event_id : ` ${old.event_id} `;
        ev.ts_ms = r.chance(0.5) ? old.ts_ms : ts;
      } else if (roll < 0.13) {
        ev.ts_ms = ts - r.int(500, 20000); // late, out of order
        ev.event_id = `ev_${++this.evSeq}`;
      } else if (roll < 0.17) {
        ev.ts_ms = ts + r.int(2000, 9000); // future-dated (clock skew), kept through a trip
        ev.event_id = `ev_${++this.evSeq}`;
      } else if (roll < 0.2) {
        if (r.chance(0.5)) ev.event_id = r.pick(["", "   "]);
      } else {
        ev.event_id = `ev_${++this.evSeq}`;
      }
      if (ev.event_id && ev.event_id.trim()) recent.push(ev);
      if (recent.length > 8) recent.shift();
      yield ev;
    }
  },

  // ---- group episodes
  *groupEpisode() {
    const r = this.rng;
    const target = r.weighted([
      [5, { channel: "slack", peer: "C0123", agents: ["planner", "coder", "reviewer"] }],
      [3, { channel: "discord", peer: "998877", agents: ["reviewer", "coder", "planner"] }],
      [2, { channel: "telegram", peer: "-100123", agents: ["planner", "coder", "scribe"] }],
      [3, { channel: "slack", peer: "C0BIG", agents: GROUP_AGENTS }],
      [2, { channel: "whatsapp", peer: "120363012345@g.us", agents: ["concierge", "planner"] }],
      [2, { channel: "whatsapp", peer: "120363099999@g.us", agents: ["coder", "reviewer"] }],
      [1, { channel: "slack", peer: "C0999", agents: ["coder"] }],
      [1, { channel: "telegram", peer: "120363012345@g.us", agents: ["planner"] }],
    ]);
    const account = r.chance(0.85) ? "default" : "Work";
    const root = `${1767225600 + ++this.rootSeq}.000${r.int(100, 999)}`;
    const thread = r.chance(0.3) ? `${1767225600 + r.int(0, this.rootSeq)}.000100` : undefined;
    // Addresses as written in chat; `x@id` is an e-mail-like text, not an address in 2026.9.6.
    const mention = (id) => r.pick([`@${id}`, `@${id}`, id === "reviewer" ? "@rev" : `@${id}`, id === "scribe" ? "Scribe" : `@${id}`, `(@${id})`, `x@${id}`, `@${id.toUpperCase()}`]);
    const mentions = r.weighted([
      [3, []],
      [4, [r.pick(target.agents)]],
      [2, [r.pick(target.agents), r.pick(target.agents)]],
      [1, ["team"]],
    ]);
    const text = mentions.length === 0 ? `status update ${r.word()}?` : mentions[0] === "team" ? "@team anyone?" : `${mentions.map(mention).join(" and ")} please look at ${r.word()}`;
    const base = { channel: target.channel, account, conversation: target.peer };
    const withThread = (ev) => (thread ? { ...ev, thread } : ev);
    yield withThread({ kind: "group_message", ...base, peer: target.peer, root, text });
    if (r.chance(0.05)) yield withThread({ kind: "group_message", ...base, peer: target.peer, root, text: "duplicate delivery" });
    const rounds = r.int(1, 5);
    for (let k = 0; k < rounds; k++) {
      if (r.chance(0.08)) {
        yield withThread({ kind: "group_cancel", ...base, root });
        if (r.chance(0.5)) continue;
        return;
      }
      const replies = [];
      for (const agent of target.agents) {
        if (r.chance(0.15)) continue;
        const other = r.pick(target.agents);
        const reply = r.weighted([
          [4, null],
          [5, `${r.word()} done`],
          [3, `${r.word()}; ${mention(other)} can you check?`],
          [1, `ask ${other === "scribe" ? "Scribe" : other} about it`],
          [1, "NO_REPLY"],
          [1, ""],
          [1, "  "],
        ]);
        replies.push({ agent, reply });
      }
      if (r.chance(0.1)) replies.push({ agent: r.pick(GROUP_AGENTS), reply: "stray" });
      yield withThread({ kind: "group_replies", ...base, root, replies });
    }
  },
};
