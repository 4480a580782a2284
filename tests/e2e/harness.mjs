// End-to-end harness: the real OpenClaw gateway (tests/openclaw/node_modules/openclaw), a fake
// OpenAI-compatible model (fake-model.mjs) and a fake Telegram Bot API (fake-telegram.mjs).
//
// Rules it keeps: everything on 127.0.0.1; free ports chosen at run time; every process it
// starts is tracked and stopped by PID (its own process group: SIGTERM, wait <= 10 s, SIGKILL),
// also on failure, timeout and exit; each gateway gets a fresh HOME, TMPDIR, OPENCLAW_STATE_DIR,
// OPENCLAW_CONFIG_PATH and logging.file under one temp dir, removed afterwards (kept when
// E2E_KEEP=1); one gateway at a time per machine (a lock directory in the system temp dir).
//
// This file is the facade the tests import (`import * as h from "./harness.mjs"`); the code lives
// in harness/, one concern per module, and each module-level state in exactly one of them:
//   constants.mjs     paths, fixed names, the Node version check
//   processes.mjs     log/sleep/waitFor and the tracked child processes
//   resources.mjs     ports, temp roots, OpenClaw lock files, the one-gateway lock
//   exit.mjs          the exit/signal hook (installed on import, below)
//   config.mjs        OpenClaw env and base config, deepMerge
//   fake-servers.mjs  the fake model and fake Telegram processes
//   cli.mjs           the openclaw CLI, --json parsing, runAgentTurn/chatSend
//   gateway.mjs       startGateway, tailFile, listeningSockets
//   transcripts.mjs   reading transcripts from SQLite
//   plugins.mjs       packing, installing, loading and inspecting plugins
// Named re-exports (not `export *`) so the public names stay exactly these, while the modules can
// share internals (the tracked set, temp roots, the lock) with each other.
export {
  E2E_DIR,
  REPO,
  OPENCLAW_DIR,
  OPENCLAW_ENTRY,
  NODE,
  NODE_BIN_DIR,
  GATEWAY_TOKEN,
  FAKE_PROVIDER,
  FAKE_MODEL,
  OPENCLAW_LEGACY_ENTRY,
} from "./harness/constants.mjs";
export { log, timed, sleep, waitFor, spawnTracked, stopProcess, runCommand, stopAll } from "./harness/processes.mjs";
export { freePort, freeGatewayPort, makeRoot, cleanupLockFiles, cleanupRoot, cleanupAll } from "./harness/resources.mjs";
// installs the exit/signal hook, as importing the single-file harness did
import "./harness/exit.mjs";
export { openclawEnv, isPlainObject, deepMerge, baseConfig } from "./harness/config.mjs";
export { startModel, startTelegram, telegramChannelConfig } from "./harness/fake-servers.mjs";
export { openclaw, parseJsonOutput, runAgentTurn, chatSend } from "./harness/cli.mjs";
export { startGateway, tailFile, listeningSockets } from "./harness/gateway.mjs";
export {
  agentDbPath,
  fullSessionKey,
  decodeEventRow,
  openAgentDb,
  sessionIdFor,
  readTranscript,
  messagesOf,
  toolCallsOf,
  toolResultsOf,
  blockedResults,
  compactionsOf,
} from "./harness/transcripts.mjs";
export {
  npmPack,
  installPluginFromTarball,
  addPluginLoadPath,
  inspectPlugin,
  writeProbePlugin,
} from "./harness/plugins.mjs";
