// The fake model's built-in scenarios (re-exported by ../fake-model.mjs as BUILTIN_SCENARIOS).
// A config's `scenarios` are merged over these; the step and option format is described in the
// header of ../fake-model.mjs.

export const BUILTIN_SCENARIOS = {
  // text only, no tools
  text: { steps: [{ text: "Hello from the fake model." }] },
  // the same exec forever (bounded by maxToolsPerTurn)
  "exec-poll": {
    maxToolsPerTurn: 30,
    steps: [{ call: "exec", args: { command: "echo loop" }, times: "forever" }],
  },
  // ping-pong between two reads of unchanging files
  "read-pingpong": {
    maxToolsPerTurn: 24,
    steps: [
      {
        alternate: [
          { call: "read", args: { path: "a.txt" } },
          { call: "read", args: { path: "b.txt" } },
        ],
        times: "forever",
      },
    ],
  },
  // a tool that does not exist, retried
  "unknown-tool": {
    maxToolsPerTurn: 16,
    steps: [{ call: "frobnicate_widget", args: { target: "x" }, times: "forever" }],
  },
  // six identical exec calls then text (for probe plugins that block the 3rd)
  "probe-exec": {
    steps: [
      { call: "exec", args: { command: "echo probe" }, times: 6 },
      { text: "Probe turn done." },
    ],
  },
  // a few calls then text (warm-up turns)
  warmup: {
    steps: [
      { call: "exec", args: { command: "echo warmup" }, times: 2 },
      { text: "Warm-up done." },
    ],
  },
  // the same exec, overflowing at the 2nd tool result of an OVERFLOW turn
  "overflow-loop": {
    maxToolsPerTurn: 12,
    overflow: { atToolResult: 2, whenUserTextIncludes: "OVERFLOW" },
    steps: [{ call: "exec", args: { command: "echo loop" }, times: "forever" }],
  },
  // a healthy turn: different tools, no loop
  healthy: {
    steps: [
      { call: "ls", args: { path: "." } },
      { call: "read", args: { path: "a.txt" } },
      { call: "write", args: { path: "notes.txt", content: "healthy session notes\n" } },
      { call: "exec", args: { command: "wc -c notes.txt" } },
      { call: "read", args: { path: "notes.txt" } },
      { text: "Everything looks fine: a.txt read, notes.txt written and checked." },
    ],
  },
  // long tool outputs (>1.4 KB events are stored zstd-compressed by OpenClaw)
  "long-output": {
    steps: [
      { call: "exec", args: { command: "seq 1 600" } },
      { call: "exec", args: { command: "seq 1000 1600" } },
      { call: "exec", args: { command: "seq 5000 5400" } },
      { text: "Printed three long sequences." },
    ],
  },
};
