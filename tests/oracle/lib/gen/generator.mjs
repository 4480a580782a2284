// The trace generator of gen-trace.mjs: sessions, clocks and counters, the scheduler that
// interleaves episodes (run), and the feedback from an attached oracle. The episodes themselves
// are in tool-episodes.mjs and chat-episodes.mjs and are installed on Gen.prototype below.

import { Rng } from "./rng.mjs";
import { BASE_TS } from "./families.mjs";
import { toolEpisodes } from "./tool-episodes.mjs";
import { chatEpisodes } from "./chat-episodes.mjs";

export class Gen {
  constructor(opts) {
    this.opts = opts;
    this.specChoices = !opts.withoutSpecChoices;
    this.oracle = undefined;
    this.rng = new Rng(opts.seed);
    this.out = [];
    this.callSeq = 0;
    this.clock = BASE_TS;
    this.botClock = BASE_TS;
    this.rootSeq = 0;
    this.evSeq = 0;
    this.sessions = [];
    const agents = [undefined, "", "main", "ops", "cron", "scout", "MAIN", "Ops "];
    for (let i = 0; i < 8; i++) this.sessions.push({ key: `agent:${i % 3 === 0 ? "main" : "ops"}:s${i}`, agent: agents[i], run: undefined, runSeq: 0 });
    this.sessions.forEach((s) => this.newRun(s));
  }

  emit(ev) {
    this.out.push(JSON.stringify(ev));
  }

  // Feeds an emitted event to the oracle's tool side; for a tool_call, returns {mode, message}
  // when the package blocks it.
  async observe(line) {
    if (!this.oracle || !line.includes('"kind":"tool_')) {
      if (this.oracle && line.includes('"kind":"compaction"')) this.oracle.side.compaction(this.oracle.parse(line));
      return undefined;
    }
    const ev = this.oracle.parse(line);
    if (ev.kind === "tool_result") {
      this.oracle.side.toolResult(ev);
      return undefined;
    }
    const d = await this.oracle.side.toolCall(ev, this.out.length);
    return d.action === "block" ? { mode: this.oracle.side.T.mode, message: d.message } : undefined;
  }

  tick(lo = 20, hi = 2500) {
    this.clock += this.rng.int(lo, hi);
    return this.clock;
  }

  newRun(s) {
    s.runSeq += 1;
    const base = `run_${s.key.slice(-2)}_${s.runSeq}`;
    s.run = this.rng.weighted([
      [70, base],
      [8, undefined],
      [4, ""],
      [4, "   "],
      [6, ` ${base} `],
      [8, `${base}`],
    ]);
  }

  base(s, extra = {}) {
    const ev = { session: s.key };
    if (s.run !== undefined) ev.run = s.run;
    if (s.agent !== undefined) ev.agent = s.agent;
    return Object.assign(ev, extra);
  }

  callId() {
    this.callSeq += 1;
    return `call_${this.callSeq}`;
  }

  async run() {
    const { events, mix } = this.opts;
    const feedback = new Map(); // episode -> the oracle's decision on the call it just yielded
    const kinds = mix === "all" ? [[60, "tool"], [25, "bot"], [15, "group"]] : [[1, mix]];
    const active = [];
    let guard = 0;
    while (this.out.length < events && guard++ < events * 50 + 1000) {
      if (active.length < 3 && (active.length === 0 || this.rng.chance(0.3))) {
        const k = this.rng.weighted(kinds);
        active.push(k === "tool" ? this.toolEpisode() : k === "bot" ? this.botEpisode() : this.groupEpisode());
      }
      const i = this.rng.int(0, active.length - 1);
      const steps = this.rng.int(1, 4);
      for (let j = 0; j < steps && this.out.length < events; j++) {
        const ep = active[i];
        const n = ep.next(feedback.get(ep));
        feedback.delete(ep);
        if (n.done) {
          active.splice(i, 1);
          break;
        }
        this.emit(n.value);
        const blocked = await this.observe(this.out[this.out.length - 1]);
        if (blocked) feedback.set(ep, blocked);
      }
    }
    return this.out;
  }
}

// Episodes are plain methods on the same object (they share this.rng, the clocks and the counters,
// and draw in the same order as when they were written inside the class).
Object.assign(Gen.prototype, toolEpisodes, chatEpisodes);
