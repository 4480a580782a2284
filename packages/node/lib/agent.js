// The agent-facing hosts' one default document, for the framework adapters: the same document
// `loopguard hook`, `loopguard mcp` and the LiteLLM guardrail start from. It is not written
// here: scripts/build.mjs copies host/src/agent-defaults.json (the file the Rust hosts include)
// into generated/policy.json, so there is one copy in the repository.
import { LoopGuardError, message } from './errors.js';
import { readManifest } from './policy.js';

let defaults = null;

/** The default document, as an object (a fresh copy each time). */
export function agentDefaults() {
  defaults ??= readManifest().agentDefaults ?? null;
  if (defaults === null || typeof defaults !== 'object') {
    throw new LoopGuardError('policy', 'generated/policy.json', 'has no agentDefaults; reinstall the loopguard package');
  }
  return structuredClone(defaults);
}

/**
 * The user's config (an object, or JSON text) with the default document filled in wherever it
 * is silent, key by key; a value the user gives wins, also one of another type (the policy then
 * reports it by its path). Returns JSON text for `new LoopGuard(...)`.
 * Why JSON only: a JSON5 document would need a parser in this package; pass an object instead.
 * @param {string | Record<string, unknown>} [config]
 */
export function agentConfig(config = {}) {
  let doc = config;
  if (typeof config === 'string') {
    try {
      doc = JSON.parse(config.replace(/^\uFEFF/, '') || '{}');
    } catch (e) {
      throw new LoopGuardError('config', 'config', `is not JSON (${message(e)}); pass an object or JSON text`);
    }
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new LoopGuardError('config', 'config', 'must be an object at the top, like {"tools":{…}}');
  }
  return JSON.stringify(fill(structuredClone(doc), agentDefaults()));
}

function fill(doc, given) {
  for (const [key, value] of Object.entries(given)) {
    if (!(key in doc)) doc[key] = value;
    else if (isObject(doc[key]) && isObject(value)) fill(doc[key], value);
  }
  return doc;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
