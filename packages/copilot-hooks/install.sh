#!/usr/bin/env bash
# Installs loopguard's hooks for GitHub Copilot CLI for this user: the prebuilt `loopguard`
# binary beside this script goes to ~/.copilot/loopguard/bin/, and hooks.json's entries are
# added to the `hooks` of ~/.copilot/settings.json (the other settings and hooks stay).
# Why user settings: Copilot CLI in `-p` mode loads hooks from there; a repository's
# .github/hooks/ (github-hooks/loopguard.json here, `loopguard` on the PATH) only in a trusted
# folder. Run it again to update; `install.sh --remove` takes the entries out.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOME_DIR="${COPILOT_HOME:-$HOME/.copilot}"
SETTINGS="$HOME_DIR/settings.json"
mode="${1:-install}"
mkdir -p "$HOME_DIR/loopguard/bin"
if [ "$mode" != "--remove" ]; then
    install -m 755 "$HERE/bin/loopguard" "$HOME_DIR/loopguard/bin/loopguard"
fi
# Merging JSON: node (Copilot CLI's npm package runs on it) or python3, whichever is there.
merge='
const fs = require("fs");
const [file, hooksFile, mode] = process.argv.slice(1);
const settings = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8") || "{}") : {};
const ours = JSON.parse(fs.readFileSync(hooksFile, "utf8"));
settings.hooks ??= {};
for (const [event, entries] of Object.entries(ours)) {
  const kept = (settings.hooks[event] ?? []).filter((h) => !String(h.bash ?? "").includes("loopguard hook copilot"));
  settings.hooks[event] = mode === "--remove" ? kept : [...kept, ...entries];
  if (settings.hooks[event].length === 0) delete settings.hooks[event];
}
fs.writeFileSync(file, JSON.stringify(settings, null, 2) + "\n");
'
if command -v node >/dev/null 2>&1; then
    node -e "$merge" "$SETTINGS" "$HERE/hooks.json" "$mode"
else
    python3 - "$SETTINGS" "$HERE/hooks.json" "$mode" <<'PY'
import json, os, sys
file, hooks_file, mode = sys.argv[1:]
settings = json.load(open(file)) if os.path.exists(file) and os.path.getsize(file) else {}
ours = json.load(open(hooks_file))
hooks = settings.setdefault("hooks", {})
for event, entries in ours.items():
    kept = [h for h in hooks.get(event, []) if "loopguard hook copilot" not in str(h.get("bash", ""))]
    hooks[event] = kept if mode == "--remove" else kept + entries
    if not hooks[event]:
        del hooks[event]
json.dump(settings, open(file, "w"), indent=2)
PY
fi
if [ "$mode" = "--remove" ]; then echo "loopguard: Copilot CLI hooks removed from $SETTINGS" >&2; else echo "loopguard: Copilot CLI hooks installed in $SETTINGS" >&2; fi
