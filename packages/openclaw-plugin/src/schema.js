// The plugin's config schema: the source of `configSchema` in openclaw.plugin.json (written by
// scripts/build.mjs; test/schema.test.mjs checks they agree). OpenClaw validates
// `plugins.entries.loopguard.config` against it before the gateway starts and names the failing
// path, so everything a schema can say is said here: strict keys everywhere, integer ranges,
// enums. What it cannot say (warningThreshold < criticalThreshold < globalCircuitBreakerThreshold
// after the per-agent merge) the policy checks when it loads, naming the same path.

const posInt = (description, dflt) => ({ type: 'integer', minimum: 1, description, ...(dflt !== undefined ? { default: dflt } : {}) });

/** The tool-loop knobs, with OpenClaw's names (tools.loopDetection) and defaults. */
function loopKnobs({ withDefaults }) {
  const d = (v) => (withDefaults ? v : undefined);
  return {
    historySize: posInt('Tool calls remembered per session.', d(30)),
    warningThreshold: posInt('Identical calls before a warning note is appended to the result.', d(10)),
    criticalThreshold: posInt('Identical no-progress calls before the next one is blocked.', d(20)),
    unknownToolThreshold: posInt('Calls of a tool that does not exist before the next one is blocked.', d(10)),
    globalCircuitBreakerThreshold: posInt('No-progress calls of any kind before every call is blocked.', d(30)),
    detectors: {
      type: 'object',
      additionalProperties: false,
      description: 'Switch single detectors off.',
      properties: {
        genericRepeat: { type: 'boolean', ...(withDefaults ? { default: true } : {}) },
        knownPollNoProgress: { type: 'boolean', ...(withDefaults ? { default: true } : {}) },
        pingPong: { type: 'boolean', ...(withDefaults ? { default: true } : {}) },
      },
    },
    postCompactionGuard: {
      type: 'object',
      additionalProperties: false,
      description: 'After an auto-compaction retry: abort when the same call gives the same result this many times.',
      properties: { windowSize: posInt('Attempts watched after a compaction.', d(3)) },
    },
  };
}

/** One `botLoopProtection` layer (OpenClaw's ChannelBotLoopProtectionConfig). */
function botLayer(extra = {}, { withDefaults = false } = {}) {
  const d = (v) => (withDefaults ? { default: v } : {});
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      enabled: { type: 'boolean', ...d(true) },
      maxEventsPerWindow: { type: 'integer', minimum: 1, description: 'Messages one bot pair may exchange per window.', ...d(20) },
      windowSeconds: { type: 'integer', minimum: 1, description: 'The sliding window.', ...d(60) },
      cooldownSeconds: { type: 'integer', minimum: 1, description: 'Suppression after the budget trips.', ...d(60) },
      maxConversationBotEvents: {
        type: 'integer',
        minimum: 1,
        maximum: 500,
        description: 'Opt-in burst budget: bot messages per conversation and receiving bot in 10 minutes (off when unset).',
      },
      ...extra,
    },
  };
}

const layerMap = (description, layer) => ({ type: 'object', description, additionalProperties: layer });

/** A channel's layer, with its accounts, and rooms where the channel has them. */
function channelLayer(withRooms) {
  return botLayer({
    accounts: layerMap('Per account id.', botLayer()),
    ...(withRooms ? { rooms: layerMap('Per room (Matrix room, Google Chat space, Slack channel; Slack also takes "*").', botLayer()) } : {}),
  });
}

/** Channels whose OpenClaw config has a per-conversation botLoopProtection layer. */
export const ROOM_CHANNELS = ['matrix', 'googlechat', 'slack'];

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean', default: true, description: 'false: the plugin registers its hooks but decides nothing.' },
    compat: {
      type: 'string',
      minLength: 1,
      description:
        'The OpenClaw behaviour to reproduce (loopguard.compat). Default: the profile of the running gateway ("openclaw-2026.9" on 2026.9.x), else "documented".',
    },
    ...loopKnobs({ withDefaults: true }),
    agents: {
      type: 'object',
      description: 'Per-agent overrides (by agent id), merged over the top-level knobs.',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { enabled: { type: 'boolean' }, ...loopKnobs({ withDefaults: false }) },
      },
    },
    botLoopProtection: {
      type: 'object',
      additionalProperties: false,
      description: "Bot-to-bot budgets, layered like OpenClaw's channels.*.botLoopProtection.",
      properties: {
        countOutbound: {
          type: 'boolean',
          default: true,
          description: 'Count our own messages to a conversation where a known bot talks as events of that pair (message_sent), not only the bot\'s messages to us.',
        },
        defaults: { ...botLayer({}, { withDefaults: true }), description: 'channels.defaults.botLoopProtection' },
        channels: {
          type: 'object',
          description: 'Per channel id (telegram, discord, slack, matrix, …), each with accounts and, for Matrix, Google Chat and Slack, rooms.',
          properties: Object.fromEntries(ROOM_CHANNELS.map((c) => [c, channelLayer(true)])),
          additionalProperties: channelLayer(false),
        },
      },
    },
    botIds: {
      type: 'object',
      description: 'Per channel id: the sender ids that are bots (hook payloads carry no is-bot flag).',
      additionalProperties: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
    },
    policy: { type: 'string', minLength: 1, description: "A policy component (.wasm); default: the one in the loopguard package. Watched: a changed file is hot-swapped." },
    expectDigest: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: 'Refuse a policy file whose blake3 digest differs.' },
    failMode: { type: 'string', enum: ['open', 'closed'], default: 'open', description: 'When the policy fails: open lets the call run, closed blocks it.' },
    isolation: {
      type: 'string',
      enum: ['auto', 'inline', 'worker'],
      default: 'auto',
      description:
        'Where the policy runs: "inline" on the gateway thread (fastest; a spinning policy cannot be stopped), "worker" in a worker thread behind callTimeoutMs. "auto": inline for the package\'s own policy, worker for a `policy` file.',
    },
    callTimeoutMs: { type: 'integer', minimum: 1, maximum: 10000, default: 250, description: 'Deadline of one policy call (isolation worker); past it the worker is replaced and the call answered by failMode.' },
    stateFile: { type: 'string', minLength: 1, description: 'Where the counts are saved (default: <state dir>/plugins/loopguard/state.bin).' },
    stateIntervalSeconds: { type: 'integer', minimum: 1, maximum: 86400, default: 30, description: 'How often changed counts are saved (also at shutdown).' },
    policyWatchMs: { type: 'integer', minimum: 100, maximum: 600000, default: 2000, description: 'How often the policy file is checked for a change.' },
    decisionLog: { type: 'string', minLength: 1, description: 'Optional JSON Lines file: every decision, swap and failure, with its cost in ms.' },
    store: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      description:
        'Keep the counts in Valkey/Redis shared by the gateway replicas (Slack HTTP or Telegram webhooks behind a load balancer), so a budget counts across replicas. Unset: in this process (and stateFile).',
      properties: {
        url: { type: 'string', minLength: 1, description: 'redis://[user:pass@]host:port[/db] or rediss://… (Valkey or Redis >= 7.0); a cluster: redis+cluster://host:port,host:port (rediss+cluster://… for TLS); "memory": this process only (tests).' },
        prefix: { type: 'string', default: 'lg:1:', description: 'Prefix of every store key; replicas of one gateway use the same.' },
        ttlSeconds: { type: 'integer', minimum: 1, maximum: 2592000, default: 3600, description: 'A key expires this long after its last write: longer than the longest window plus cooldown.' },
        deadlineMs: { type: 'integer', minimum: 1, maximum: 60000, default: 20, description: 'How long a decision waits for the store before it is made on this replica\'s own counts.' },
        failMode: { type: 'string', enum: ['open', 'closed'], default: 'open', description: 'When the store fails: open decides on this replica\'s own counts, closed blocks the tool call / drops the bot message.' },
        ca: { type: 'string', minLength: 1, description: 'With rediss://: the CA (PEM file) the server\'s certificate must chain to, instead of the system\'s roots.' },
        cert: { type: 'string', minLength: 1, description: 'With rediss://: a client certificate (PEM file) for a server that asks for one; needs key.' },
        key: { type: 'string', minLength: 1, description: 'The private key (PEM file) of cert.' },
      },
    },
  },
};
