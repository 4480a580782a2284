// Tool-event episodes of gen-trace.mjs (repeat loops, ping-pong, unknown tools, argument churn,
// compaction, noise) and the call/result pair they emit. Methods of Gen (lib/gen/generator.mjs),
// kept here so the generator file holds only the state and the scheduler.

import { FAMILIES, SPEC_CHOICE_FAMILIES, textResult } from "./families.mjs";

export const toolEpisodes = {
  // The families an episode may use (--without-spec-choices leaves out the deliberate spec
  // differences: lone surrogates, update_plan).
  familyNames() {
    return Object.keys(FAMILIES).filter((f) => this.specChoices || !SPEC_CHOICE_FAMILIES.includes(f));
  },

  // One call + its outcome, with the usual defects of real hosts sprinkled in.
  *callPair(s, shape, opts = {}) {
    const id = this.rng.chance(0.9) ? this.callId() : undefined;
    const ts = this.tick();
    const call = { kind: "tool_call", ...this.base(s), tool: shape.tool, args: shape.args };
    if (id) call.call_id = id;
    if (this.rng.chance(0.7)) call.ts_ms = ts;
    if (!opts.resultOnly) {
      const blocked = yield call; // the oracle's decision (see run() in generator.mjs), or undefined
      if (blocked) {
        // 2026.9.6: the wrapper never runs a blocked call, no result follows. 2026.7.35: the
        // wrapper returns the blocked result, and the host reports it.
        if (blocked.mode === "batch") return;
        const res = { kind: "tool_result", ...this.base(s), tool: shape.tool, args: shape.args };
        if (id) res.call_id = id;
        res.result = textResult(blocked.message, { status: "blocked", deniedReason: "tool-loop", reason: blocked.message });
        yield res;
        return;
      }
    }
    if (opts.noResult || this.rng.chance(0.01)) return;
    const res = { kind: "tool_result", ...this.base(s), tool: shape.tool, args: shape.args };
    const rid = this.rng.chance(0.97) ? id : this.rng.chance(0.5) ? undefined : `call_orphan_${this.callSeq}`;
    if (rid) res.call_id = rid;
    if ("error" in shape) res.error = shape.error;
    else res.result = shape.result;
    if (this.rng.chance(0.5)) res.ts_ms = this.tick(1, 50);
    yield res;
  },

  familyState(fam) {
    const r = this.rng;
    return {
      path: `/src/${r.word()}/${r.int(0, 99)}.ts`,
      query: `${r.word()} ${r.word()}`,
      text: `${r.word()} ${r.word()} ${r.int(0, 9)}`,
      command: `${r.pick(["npm test", "make build", "git status", "gh run view 123 --json status", "ls -la"])}${r.chance(0.3) ? " --verbose" : ""}`,
      sid: `proc_${r.hex(4)}`,
      url: `https://${r.word()}.example/${r.int(0, 9)}`,
      tool: r.pick(["browser_open", "browser.navigate", "code-interpreter", "shell_run"]),
      err: r.pick(["boom", 404, { code: "E", message: "m" }, null, "404"]),
      value: r.pick(["ok", 42, [1, 2], null, true]),
      escapes: r.pick([0, 0, 1, 2, 3]),
      exitCode: r.pick([1, 2, 127]),
      action: r.pick(["send", "reply", "thread-reply", "poll", "read", "Send"]),
      i: 0,
      stable: true,
      fam,
    };
  },

  // ---- tool episodes
  *episodeRepeat(s) {
    const fam = this.rng.weighted([
      [6, "read"],
      [4, "web_search"],
      [6, "exec_completed"],
      [4, "exec_failed"],
      [2, "exec_failed_plain"],
      [3, "exec_running"],
      [2, "exec_approval"],
      [5, "process_poll"],
      [3, "process_log"],
      [3, "command_status"],
      [4, "message_send"],
      [2, "sessions_send"],
      [this.specChoices ? 3 : 0, "update_plan"],
      [3, "write_unchanged"],
      [3, "web_fetch_untrusted"],
      [1, "web_fetch_nested"],
      [3, "error_mixed"],
      [2, "non_object"],
      [2, "content_join"],
      [this.specChoices ? 1 : 0, "surrogate"],
      [this.specChoices ? 1 : 0, "surrogate_keys"],
      [this.specChoices ? 1 : 0, "raw_names"],
      [1, "conversations_send"],
      [1, "veto_like"],
    ]);
    const st = this.familyState(fam);
    const len = this.rng.weighted([
      [3, this.rng.int(5, 12)],
      [4, this.rng.int(18, 26)],
      [3, this.rng.int(28, 40)],
    ]);
    const progressRate = this.rng.pick([0, 0, 0, 0.05, 0.3]);
    const resultOnly = this.rng.chance(0.12);
    let vetoAfter = this.rng.chance(0.5) ? 20 : Infinity;
    if (this.oracle) vetoAfter = Infinity; // the oracle knows which calls are blocked
    for (let i = 0; i < len; i++) {
      st.i = i;
      st.stable = !this.rng.chance(progressRate);
      const shape = FAMILIES[fam](this.rng, st);
      if (i >= vetoAfter && !resultOnly && this.rng.chance(0.8)) {
        // what a host reports for a call its loop guard refused (buildBlockedToolResult's shape)
        const msg = `CRITICAL: Called ${shape.tool} with identical arguments and identical outcomes ${i} times. Session execution blocked to prevent runaway loops.`;
        delete shape.error;
        shape.result = textResult(msg, { status: "blocked", deniedReason: "tool-loop", reason: msg });
      }
      yield* this.callPair(s, shape, { resultOnly });
    }
  },

  *episodePingPong(s) {
    const a = this.familyState("read");
    const b = this.familyState("web_search");
    const famA = this.rng.pick(["read", "exec_completed", "process_poll"]);
    const famB = this.rng.pick(["web_search", "read", "command_status"]);
    const len = this.rng.int(10, 36);
    const progress = this.rng.chance(0.35);
    for (let i = 0; i < len; i++) {
      const st = i % 2 === 0 ? a : b;
      st.i = i;
      st.stable = !(progress && this.rng.chance(0.5));
      yield* this.callPair(s, FAMILIES[i % 2 === 0 ? famA : famB](this.rng, st));
    }
  },

  *episodeUnknown(s) {
    const st = this.familyState("unknown_tool");
    const len = this.rng.int(6, 16);
    for (let i = 0; i < len; i++) {
      st.i = i;
      if (this.rng.chance(0.08)) {
        st.tool = this.rng.pick(["browser_open", "browser.navigate"]);
      }
      yield* this.callPair(s, FAMILIES.unknown_tool(this.rng, st));
    }
  },

  *episodeChurn(s) {
    // Same tool, 2-3 argument variants, each repeated with one stable no-progress outcome.
    const variants = this.rng.int(2, 3);
    const paths = Array.from({ length: variants }, () => `/src/${this.rng.word()}-${this.rng.int(0, 99)}.md`);
    const useErr = this.rng.chance(0.5);
    const err = `ENOENT: ${this.rng.word()}`;
    const len = this.rng.int(9, 24);
    const block = this.rng.pick([1, 3, 3, 4]);
    for (let i = 0; i < len; i++) {
      const p = this.rng.chance(0.9) ? paths[Math.floor(i / block) % variants] : this.rng.pick(paths);
      const shape = useErr
        ? { tool: "edit", args: { path: p, oldText: "a", newText: "b" }, error: err }
        : { tool: "write", args: { path: p, content: "same" }, result: textResult(`Wrote ${p}`, { changed: false }) };
      yield* this.callPair(s, shape);
    }
  },

  *episodeCompaction(s) {
    const st = this.familyState("exec_completed");
    const fam = this.rng.pick(["exec_completed", "read", "web_fetch_untrusted", "process_poll"]);
    const pre = this.rng.int(0, 6);
    for (let i = 0; i < pre; i++) yield* this.callPair(s, FAMILIES[fam](this.rng, st));
    const c = { kind: "compaction", session: s.key };
    if (s.run !== undefined) c.run = s.run;
    if (s.agent !== undefined) c.agent = s.agent;
    yield c;
    const post = this.rng.int(2, 5);
    const same = this.rng.chance(0.6);
    for (let i = 0; i < post; i++) {
      st.i = i;
      st.stable = same || i === 0;
      yield* this.callPair(s, FAMILIES[fam](this.rng, st));
      if (this.rng.chance(0.1)) yield* this.callPair(s, FAMILIES.read(this.rng, this.familyState("read")));
    }
  },

  *episodeNoise(s) {
    const n = this.rng.int(1, 6);
    for (let i = 0; i < n; i++) {
      const fam = this.rng.pick(this.familyNames());
      const st = this.familyState(fam);
      st.stable = this.rng.chance(0.5);
      st.i = this.rng.int(0, 1000);
      yield* this.callPair(s, FAMILIES[fam](this.rng, st), { noResult: this.rng.chance(0.05) });
    }
  },

  toolEpisode() {
    const s = this.rng.pick(this.sessions);
    if (this.rng.chance(0.12)) this.newRun(s);
    const kind = this.rng.weighted([
      [40, "repeat"],
      [14, "pingpong"],
      [9, "unknown"],
      [8, "churn"],
      [10, "compaction"],
      [19, "noise"],
    ]);
    if (kind === "repeat") return this.episodeRepeat(s);
    if (kind === "pingpong") return this.episodePingPong(s);
    if (kind === "unknown") return this.episodeUnknown(s);
    if (kind === "churn") return this.episodeChurn(s);
    if (kind === "compaction") return this.episodeCompaction(s);
    return this.episodeNoise(s);
  },
};
