// Binds the guard functions of one installed OpenClaw package (its built `dist/`), found by content.
//
// dist/ files are hashed chunks (`tool-loop-detection-6ndMMrbS.mjs`) whose exports are minified
// aliases (`export { detectToolCallLoop as t, ... }`). Each binding below names a file-name prefix
// (a hint only: when no file with that prefix holds the needle, every top-level dist file is
// searched) and a distinctive needle string that must occur in the chunk, then maps the wanted
// local function names to their export aliases by parsing the chunk's export statement. Nothing in
// the package is modified and nothing is copied into this project: the functions are imported and
// called at run time.
//
// Two pieces are not exported by any chunk and are evaluated from the package's own source text
// (see NOTES.md, "How the driver binds the package"):
//   * createPostCompactionLoopGuard: the `//#region src/agents/embedded-agent-runner/
//     post-compaction-loop-guard.ts` region of the embedded-agent chunk, evaluated with
//     `new Function` and the package's own createSubsystemLogger passed in;
//   * (2026.9.6 only) the expression that builds the text of a critical tool-loop result in
//     agent-core's completeToolLoopInterventionBatch (`const text = params.terminal ? ... ;`),
//     evaluated with `params` and `isTrigger` as its only inputs.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

export class BindError extends Error {}

export class PackageBinder {
  constructor(pkgDir) {
    this.pkgDir = path.resolve(pkgDir);
    this.distDir = path.join(this.pkgDir, "dist");
    const pj = JSON.parse(fs.readFileSync(path.join(this.pkgDir, "package.json"), "utf8"));
    if (pj.name !== "openclaw") throw new BindError(`${this.pkgDir} is not an openclaw package (name ${pj.name})`);
    this.version = pj.version;
    this.files = fs
      .readdirSync(this.distDir)
      .filter((f) => /\.m?js$/.test(f))
      .sort();
    this.textCache = new Map();
    this.moduleCache = new Map();
  }

  text(file) {
    let t = this.textCache.get(file);
    if (t === undefined) {
      t = fs.readFileSync(path.join(this.distDir, file), "utf8");
      this.textCache.set(file, t);
    }
    return t;
  }

  /** The chunk file whose text contains `needle`, preferring files that start with `prefix`. */
  findChunk(prefix, needle) {
    const prefixes = Array.isArray(prefix) ? prefix : [prefix];
    const hinted = this.files.filter((f) => prefixes.some((p) => f.startsWith(p)));
    for (const f of hinted) if (this.text(f).includes(needle)) return f;
    for (const f of this.files) {
      if (hinted.includes(f)) continue;
      const st = fs.statSync(path.join(this.distDir, f));
      if (st.size > 4_000_000) continue;
      if (this.text(f).includes(needle)) return f;
    }
    return undefined;
  }

  /** local name -> exported name, from the chunk's `export { a as b, c };` statements. */
  exportMap(file) {
    const map = new Map();
    const re = /export\s*\{([^}]*)\}\s*;?/g;
    for (const m of this.text(file).matchAll(re)) {
      for (const part of m[1].split(",")) {
        const p = part.trim();
        if (!p) continue;
        const mm = /^([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(p);
        if (mm) map.set(mm[1], mm[2] ?? mm[1]);
      }
    }
    return map;
  }

  async importFile(file) {
    let mod = this.moduleCache.get(file);
    if (!mod) {
      mod = await import(pathToFileURL(path.join(this.distDir, file)).href);
      this.moduleCache.set(file, mod);
    }
    return mod;
  }

  /**
   * Import the named local functions/values of the chunk that defines them.
   * `needle` defaults to `function <first name>(`. Throws a BindError naming what is missing.
   */
  async bind(prefix, names, needle, { optional = false } = {}) {
    const ndl = needle ?? `function ${names[0]}(`;
    const file = this.findChunk(prefix, ndl);
    if (!file) {
      if (optional) return undefined;
      throw new BindError(`openclaw ${this.version}: no dist chunk contains ${JSON.stringify(ndl)} (wanted ${names.join(", ")})`);
    }
    const map = this.exportMap(file);
    const mod = await this.importFile(file);
    const out = { __file: file };
    for (const n of names) {
      const alias = map.get(n);
      if (!alias || !(alias in mod)) {
        if (optional) return undefined;
        throw new BindError(`openclaw ${this.version}: ${n} is defined in dist/${file} but not exported by it`);
      }
      out[n] = mod[alias];
    }
    return out;
  }

  /** Evaluate one `//#region <name>` ... `//#endregion` block of a chunk; `deps` are its free names. */
  evalRegion(prefix, regionName, needle, deps, returns) {
    const file = this.findChunk(prefix, needle);
    if (!file) throw new BindError(`openclaw ${this.version}: no dist chunk contains ${JSON.stringify(needle)}`);
    const src = this.text(file);
    const marker = `//#region ${regionName}`;
    const start = src.indexOf(marker);
    if (start < 0) throw new BindError(`openclaw ${this.version}: dist/${file} has no region ${regionName}`);
    const end = src.indexOf("//#endregion", start);
    const body = src.slice(start, end < 0 ? undefined : end);
    const names = Object.keys(deps);
    // eslint-disable-next-line no-new-func
    const fn = new Function(...names, `"use strict";\n${body}\nreturn { ${returns.join(", ")} };`);
    const out = fn(...names.map((n) => deps[n]));
    out.__file = file;
    return out;
  }
}

/**
 * All the bindings the driver uses, loaded lazily per area (tool, bot, group) so that a trace
 * with only bot events does not load the agent runtime graph.
 */
export class OpenClaw {
  constructor(pkgDir) {
    this.b = new PackageBinder(pkgDir);
    this.version = this.b.version;
    this.files = {};
  }

  async tool() {
    if (this._tool) return this._tool;
    const b = this.b;
    const t = {};
    const det = await b.bind("tool-loop-detection-", ["detectToolCallLoop", "recordToolCall", "recordToolCallOutcome"]);
    Object.assign(t, det);
    this.files.toolLoopDetection = det.__file;
    const rt = await b.bind("agent-tools.before-tool-call.runtime-", ["beforeToolCallRuntime"], "const beforeToolCallRuntime");
    t.runtime = rt.beforeToolCallRuntime;
    this.files.runtime = rt.__file;
    const cfg = await b.bind("tool-loop-detection-config-", ["resolveToolLoopDetectionConfig"]);
    t.resolveToolLoopDetectionConfig = cfg.resolveToolLoopDetectionConfig;
    this.files.config = cfg.__file;
    // The caller: 2026.9.6 admits tool batches (agent-core's beforeToolBatch); 2026.7.35 runs
    // runBeforeToolCallHook from the tool wrapper.
    const batch = await b.bind("agent-tools.before-tool-call-", ["admitToolCallBatch"], "async function admitToolCallBatch(", { optional: true });
    if (batch) {
      t.mode = "batch";
      t.admitToolCallBatch = batch.admitToolCallBatch;
      this.files.caller = batch.__file;
      const norm = await b.bind("tool-policy-shared-", ["normalizeToolPolicyName"]);
      t.normalizeToolName = norm.normalizeToolPolicyName;
      this.files.normalize = norm.__file;
      // The text of a critical tool-loop result (agent-core completeToolLoopInterventionBatch).
      const coreFile = b.findChunk("agent-core-", "async function completeToolLoopInterventionBatch(");
      if (!coreFile) throw new BindError(`openclaw ${b.version}: agent-core's completeToolLoopInterventionBatch not found`);
      const src = b.text(coreFile);
      const fnStart = src.indexOf("async function completeToolLoopInterventionBatch(");
      const m = /const text = (params\.terminal \?[^\n]*?);\n/.exec(src.slice(fnStart));
      if (!m) throw new BindError(`openclaw ${b.version}: the text expression of completeToolLoopInterventionBatch was not found in dist/${coreFile}`);
      // eslint-disable-next-line no-new-func
      t.interventionText = new Function("params", "isTrigger", `"use strict"; return (${m[1]});`);
      this.files.agentCore = coreFile;
    } else {
      t.mode = "hook";
      const hook = await b.bind("agent-tools.before-tool-call-", ["runBeforeToolCallHook", "buildBlockedToolResult"], "async function runBeforeToolCallHook(");
      t.runBeforeToolCallHook = hook.runBeforeToolCallHook;
      t.buildBlockedToolResult = hook.buildBlockedToolResult;
      this.files.caller = hook.__file;
      const norm = await b.bind("tool-policy-", ["normalizeToolName"]);
      t.normalizeToolName = norm.normalizeToolName;
      this.files.normalize = norm.__file;
    }
    const sub = await b.bind("subsystem-", ["createSubsystemLogger"]);
    const pcg = b.evalRegion(
      "embedded-agent-",
      "src/agents/embedded-agent-runner/post-compaction-loop-guard.ts",
      "function createPostCompactionLoopGuard(",
      { createSubsystemLogger: sub.createSubsystemLogger },
      ["createPostCompactionLoopGuard"],
    );
    t.createPostCompactionLoopGuard = pcg.createPostCompactionLoopGuard;
    // 2026.7.35: createPostCompactionLoopGuard(config, {enabled}); 2026.9.6: createPostCompactionLoopGuard({enabled}).
    t.guardTakesConfig = t.createPostCompactionLoopGuard.length >= 2;
    this.files.postCompaction = pcg.__file;
    this._tool = t;
    return t;
  }

  async bot() {
    if (this._bot) return this._bot;
    const b = this.b;
    const o = {};
    const w = await b.bind(["execution-", "kernel-"], ["recordChannelBotPairLoopAndCheckSuppression"]);
    o.recordChannelBotPairLoopAndCheckSuppression = w.recordChannelBotPairLoopAndCheckSuppression;
    o.wrapperPassesEventId = /eventId:\s*params\.eventId/.test(
      b.text(w.__file).slice(b.text(w.__file).indexOf("function recordChannelBotPairLoopAndCheckSuppression(")).slice(0, 800),
    );
    this.files.botWrapper = w.__file;
    const pg = await b.bind("pair-loop-guard-runtime-", ["mergePairLoopGuardConfig", "resolvePairLoopGuardSettings"]);
    o.mergePairLoopGuardConfig = pg.mergePairLoopGuardConfig;
    o.resolvePairLoopGuardSettings = pg.resolvePairLoopGuardSettings;
    o.guardHasEventIds = b.text(pg.__file).includes("eventId");
    o.guardHasBurst = b.text(pg.__file).includes("maxConversationBotEvents");
    this.files.pairGuard = pg.__file;
    let acc = await b.bind("channel-account-config-", ["resolveMergedAccountConfig"], undefined, { optional: true });
    if (!acc) acc = await b.bind("account-helpers-", ["resolveMergedAccountConfig"]);
    o.resolveMergedAccountConfig = acc.resolveMergedAccountConfig;
    this.files.accountConfig = acc.__file;
    const look = await b.bind("account-lookup-", ["resolveAccountEntry"]);
    o.resolveAccountEntry = look.resolveAccountEntry;
    this._bot = o;
    return o;
  }

  async group() {
    if (this._group) return this._group;
    const b = this.b;
    const g = await b.bind("dispatch-", ["runGroupThread", "resolveGroupThreadConfig"], "async function runGroupThread(", { optional: true });
    if (!g) return (this._group = null);
    const hooks = await b.bind("hooks-", ["recordGroupThreadReply"]);
    const tokens = await b.bind("tokens-", ["isSilentReplyText"]);
    this.files.group = g.__file;
    this._group = {
      runGroupThread: g.runGroupThread,
      resolveGroupThreadConfig: g.resolveGroupThreadConfig,
      recordGroupThreadReply: hooks.recordGroupThreadReply,
      isSilentReplyText: tokens.isSilentReplyText,
    };
    return this._group;
  }
}
