// The environment and the openclaw.json config of one OpenClaw root (§2.2), and the deep merge
// that lays a test's config parts over the base config.
import path from "node:path";
import { FAKE_MODEL, FAKE_PROVIDER, GATEWAY_TOKEN, NODE_BIN_DIR } from "./constants.mjs";

// ---------------------------------------------------------------------------------------------
// env and config

/** The environment for every OpenClaw process of one root. */
export function openclawEnv(dirs, extra = {}) {
  const pass = {};
  for (const k of ["LANG", "LC_ALL", "TZ", "TERM"]) if (process.env[k]) pass[k] = process.env[k];
  // registry/proxy settings, if any (plugins install npm-pack: runs npm install)
  for (const [k, v] of Object.entries(process.env)) {
    // (the registry is reached through a TLS-intercepting proxy here: npm needs the extra CA)
    if (/^(https?_proxy|no_proxy|npm_config_registry|npm_config_cafile|node_extra_ca_certs|ssl_cert_file|ssl_cert_dir)$/i.test(k)) pass[k] = v;
  }
  return {
    ...pass,
    PATH: `${NODE_BIN_DIR}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: dirs.home,
    TMPDIR: dirs.tmp,
    OPENCLAW_STATE_DIR: dirs.stateDir,
    OPENCLAW_CONFIG_PATH: dirs.configPath,
    OPENCLAW_DISABLE_BONJOUR: "1",
    OPENCLAW_NO_AUTO_UPDATE: "1",
    OPENCLAW_OFFLINE: "1",
    // opt-in shared npm cache for `plugins install npm-pack:` (OpenClaw resolves the plugin's
    // openclaw peer and fetches ~160 MB on a cold cache); default: a fresh cache under HOME
    ...(process.env.E2E_NPM_CACHE ? { npm_config_cache: path.resolve(process.env.E2E_NPM_CACHE) } : {}),
    NO_COLOR: "1",
    FORCE_COLOR: "0",
    ...extra,
  };
}

export function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
/** Deep merge (objects merge, everything else, arrays included, replaces). */
export function deepMerge(a, b) {
  if (!isPlainObject(a) || !isPlainObject(b)) return b === undefined ? a : b;
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = k in out ? deepMerge(out[k], v) : v;
  return out;
}

/** The §2.2 config for one gateway, merged with the test's parts. */
export function baseConfig({ port, modelPort, dirs, loopDetection = true }) {
  return {
    gateway: { mode: "local", bind: "loopback", port, auth: { mode: "token", token: GATEWAY_TOKEN } },
    logging: { file: path.join(dirs.out, "openclaw.log") },
    agents: {
      defaults: {
        model: { primary: `${FAKE_PROVIDER}/${FAKE_MODEL}` },
        workspace: dirs.workspace,
        heartbeat: { every: "0m" },
      },
    },
    models: {
      mode: "merge",
      providers: {
        [FAKE_PROVIDER]: {
          baseUrl: `http://127.0.0.1:${modelPort}/v1`,
          apiKey: "fake-key",
          api: "openai-completions",
          models: [
            { id: FAKE_MODEL, name: "Loop Fake", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096 },
          ],
        },
      },
    },
    tools: { loopDetection: { enabled: loopDetection } },
    plugins: { entries: { "memory-core": { config: { dreaming: { enabled: false } } } } },
  };
}
