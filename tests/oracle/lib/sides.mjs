// The three event sides of the oracle: what the driver calls in the package for each event kind
// (tool calls, results and compactions; channel bot messages; agent group threads), shared by
// driver.mjs and gen-trace.mjs --oracle. See NOTES.md §1 and §7.
//
// This file only re-exports its parts: sides-config.mjs (UnsupportedError, UsageError,
// loadConfig, checkToolConfig), tool-side.mjs (ToolSide) and chat-sides.mjs (BotSide, GroupSide).

export { UnsupportedError, UsageError, loadConfig, checkToolConfig } from "./sides-config.mjs";
export { ToolSide } from "./tool-side.mjs";
export { BotSide, GroupSide } from "./chat-sides.mjs";
