// The loopguard/OpenClaw config gen-trace.mjs writes with --config-out, one per --profile (see the
// profiles in gen-trace.mjs's header). The trace shapes do not depend on the profile; the agents,
// channels and broadcast groups named here are the ones the bot and group episodes address.

export const GROUP_AGENTS = ["planner", "coder", "reviewer", "concierge", "scribe"];

export function buildConfig(profile) {
  const cfg = {};
  if (profile !== "off") cfg.tools = { loopDetection: { enabled: true } };
  const list = [
    { id: "main" },
    { id: "ops", tools: { loopDetection: {} } },
    { id: "cron", tools: { loopDetection: { enabled: false } } },
    { id: "planner", groupChat: { mentionPatterns: ["@planner"] } },
    { id: "coder", groupChat: { mentionPatterns: ["@coder"] } },
    { id: "reviewer", groupChat: { mentionPatterns: ["@reviewer", "@rev"] } },
    { id: "concierge", groupChat: { mentionPatterns: ["@concierge"] } },
    { id: "scribe", name: "Scribe" },
  ];
  if (profile === "off") list[2].tools.loopDetection = { enabled: false };
  if (profile === "thresholds") {
    list[1].tools.loopDetection = { warningThreshold: 4, criticalThreshold: 8, globalCircuitBreakerThreshold: 12, historySize: 20 };
    list.push({ id: "scout", tools: { loopDetection: { detectors: { genericRepeat: false }, postCompactionGuard: { windowSize: 2 } } } });
  } else {
    list.push({ id: "scout" });
  }
  cfg.agents = { list };
  cfg.messages = { groupChat: { mentionPatterns: ["@team"] } };
  const burst = profile === "burst";
  cfg.channels = {
    defaults: { botLoopProtection: { maxEventsPerWindow: 12, ...(burst ? { maxConversationBotEvents: 30 } : {}) } },
    discord: {
      allowBots: true,
      botLoopProtection: { maxEventsPerWindow: 8 },
      accounts: { secondary: { allowBots: true, botLoopProtection: { maxEventsPerWindow: 5, cooldownSeconds: 90 } }, tertiary: { botLoopProtection: { enabled: false } } },
    },
    slack: {
      allowBots: true,
      botLoopProtection: { windowSeconds: 30 },
      channels: {
        "*": { botLoopProtection: { cooldownSeconds: 45 } },
        C0ABC: { botLoopProtection: { maxEventsPerWindow: 6 } },
        "channel:c0def": { botLoopProtection: { maxEventsPerWindow: 4 } },
      },
    },
    matrix: {
      allowBots: true,
      groups: { "!room1:example.org": { botLoopProtection: { maxEventsPerWindow: 5 } } },
      accounts: { bot2: { botLoopProtection: { cooldownSeconds: 30 } } },
    },
    googlechat: {
      allowBots: true,
      groups: { "spaces/AAAA": { botLoopProtection: { maxEventsPerWindow: 4 } } },
      accounts: { default: { botLoopProtection: { windowSeconds: 20 } }, other: { botLoopProtection: { cooldownSeconds: 15 } } },
    },
    feishu: { botLoopProtection: { maxEventsPerWindow: 3 } },
    telegram: { botLoopProtection: { maxEventsPerWindow: 10, windowSeconds: 40 } },
  };
  cfg.broadcast = {
    strategy: "parallel",
    "slack:C0123": { agents: ["planner", "coder", "reviewer"], maxRounds: 3, maxTurns: 6 },
    "discord:998877": { agents: ["reviewer", "coder", "planner"], mentionGating: false, maxRounds: 4, maxTurns: 5 },
    "telegram:-100123": ["planner", "coder", "scribe"],
    "slack:C0BIG": { agents: ["planner", "coder", "reviewer", "concierge", "scribe"], maxRounds: 4 },
    "120363012345@g.us": ["concierge", "planner"],
    "whatsapp:120363099999@g.us": { agents: ["coder", "reviewer"] },
    "120363099999@g.us": ["concierge"],
  };
  return cfg;
}
