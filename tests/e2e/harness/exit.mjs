// The process exit/signal hook, installed once on import: kills the tracked children, removes the
// temp roots and releases the gateway lock. A module of its own because it needs both processes.mjs
// and resources.mjs (which itself imports processes.mjs): this keeps the imports free of cycles.
import { groupKill, stopAll, tracked } from "./processes.mjs";
import { cleanupAll, releaseGatewayLockSync } from "./resources.mjs";

let exitHooked = false;
function hookExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.on("exit", () => {
    for (const e of tracked) groupKill(e.child.pid, "SIGKILL");
    releaseGatewayLockSync();
  });
  for (const sig of ["SIGINT", "SIGTERM"]) {
    process.once(sig, async () => {
      await stopAll();
      await cleanupAll();
      process.exit(130);
    });
  }
}
hookExit();
