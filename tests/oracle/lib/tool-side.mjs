// The tool side of the oracle (re-exported by sides.mjs): what the driver calls in the package
// for tool calls, tool results and compactions. See NOTES.md §1 and §7.

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
