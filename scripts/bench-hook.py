#!/usr/bin/env python3
"""The hook figures of docs/AGENT-CLIS.md (a benchmark, not a test).

1. One hook call, process start to exit, on a session whose state holds 200 calls: `loopguard
   hook claude-code` (a PreToolUse, then a PostToolUse) side by side with a trivial Python hook
   (`python3 -c` that reads stdin and prints {}) and with the other vehicle a plugin could ship,
   the Python wheel (`import loopguard`, a guard, one decision), in the same run, interleaved so
   that the machine's load hits all of them alike. p50 and p99 of each.
2. With --clis: a 30-turn looping session in each real CLI with loopguard's plugin, with the same
   plugin whose hook is a trivial shell script (what the CLI's hook dispatch costs by itself), with
   that trivial plugin carrying the binary's bytes beside the script, not run (what the plugin's
   size costs: Codex hashes every file of a plugin before each of its hook calls), and with no
   hooks, paired runs, wall time and ratios. The plugin's config keeps the default's detectors
   (OpenClaw's and the recommended preset's) on but raises their thresholds above 30 here (the
   streaks' re-run and other-arguments levels too), so that every run does the same 30 tool calls
   and the difference is the hooks' cost (under the default config the guard ends the session at
   the 6th call, or in Codex denies every call from then on).

Usage: scripts/bench-hook.py [--bin target/release/loopguard] [--runs 300] [--config FILE] [--host claude-code|copilot]
                             [--clis] [--cli-runs 3] [--cli claude|codex|gemini]

--cli times that CLI only (repeatable), e.g. `--clis --cli codex --cli-runs 5`.

--host copilot times `loopguard hook copilot preToolUse` / `postToolUse` on Copilot CLI's events.

--config runs the hook under that config document (LOOPGUARD_CONFIG) instead of none, e.g. one
with `loopguard.preset: "recommended"` to see what the preset's config costs each process.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The interpreter itself, not a version-manager shim on PATH (pyenv's adds ~100 ms).
PYTHON3 = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else "python3"
TRIVIAL = [PYTHON3, "-c", "import sys; sys.stdin.read(); print('{}')"]
WHEEL = [str(ROOT / ".venv" / "bin" / "python"), "-c",
         "import sys, json; e = json.loads(sys.stdin.read()); from loopguard import LoopGuard, ToolCall; "
         "g = LoopGuard({'tools': {'loopDetection': {'enabled': True}}}); "
         "g.before_tool_call(ToolCall(e['session_id'], e['tool_name'], e['tool_input'])); print('{}')"]


def event(name, i, **more):
    return json.dumps({"session_id": "bench-session", "hook_event_name": name, "tool_name": "Bash",
                       "tool_input": {"command": f"cargo test -p service --lib module_{i % 37}", "description": "run the tests"},
                       "tool_use_id": f"toolu_{i:05}", **more})


def copilot_event(name, i, tool_response=None):
    """The same call as Copilot CLI sends it (no event name, no call id; the shell's footer)."""
    e = {"sessionId": "bench-session", "timestamp": 1796650000000 + i, "cwd": "/tmp", "toolName": "bash",
         "toolArgs": {"command": f"cargo test -p service --lib module_{i % 37}", "description": "run the tests"}}
    if tool_response is not None:
        e["toolResult"] = {"resultType": "success",
                           "textResultForLlm": f"{tool_response['stdout']}\n<shellId: {i} completed with exit code 0>"}
    return json.dumps(e)


# Per host: the hook command's arguments for an event, and the event as that CLI sends it.
HOSTS = {
    "claude-code": (lambda name: ["claude-code"], event),
    "copilot": (lambda name: ["copilot", name[0].lower() + name[1:]], copilot_event),
}


def timed(cmd, stdin, env):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env)
    ms = (time.perf_counter() - t0) * 1000
    assert p.returncode == 0, (cmd, p.stderr)
    return ms


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def hook_figures(binary, runs, config=None, host="claude-code"):
    state = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    args, event = HOSTS[host]
    pre = [binary, "hook", *args("PreToolUse"), "--state-dir", str(state)]
    post = [binary, "hook", *args("PostToolUse"), "--state-dir", str(state)]
    env = {**os.environ, "LOOPGUARD_CACHE_DIR": str(state / "cache"), "LOOPGUARD_CONFIG": str(config or "")}
    result = {"stdout": "test result: FAILED. 11 passed; 1 failed"}
    for i in range(200):  # the session's first 200 calls (and the compile cache)
        subprocess.run(pre, input=event("PreToolUse", i), capture_output=True, text=True, env=env, check=True)
        subprocess.run(post, input=event("PostToolUse", i, tool_response=result), capture_output=True, text=True, env=env, check=True)
    size = sum(f.stat().st_size for f in state.glob("*.state"))
    wheel_ok = subprocess.run(WHEEL, input=event("PreToolUse", 0), capture_output=True, text=True).returncode == 0
    times = {"loopguard PreToolUse": [], "loopguard PostToolUse": [], "python3 -c trivial (/usr/bin/python3)": [], "python wheel (import + 1 decision)": []}
    for i in range(200, 200 + runs):
        times["loopguard PreToolUse"].append(timed(pre, event("PreToolUse", i), env))
        times["python3 -c trivial (/usr/bin/python3)"].append(timed(TRIVIAL, event("PreToolUse", i), env))
        times["loopguard PostToolUse"].append(timed(post, event("PostToolUse", i, tool_response=result), env))
        if wheel_ok:
            times["python wheel (import + 1 decision)"].append(timed(WHEEL, event("PreToolUse", i), env))
    print(f"`loopguard hook {host}`: one hook call, process start to exit; session state {size} bytes after 200 calls; {runs} paired runs; "
          f"config {config or 'none'}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'':38} {'p50 ms':>8} {'p99 ms':>8}")
    for name, values in times.items():
        if values:
            print(f"{name:38} {pct(values, 50):8.2f} {pct(values, 99):8.2f}")
    return times


def cli_figures(runs, only=None):
    sys.path.insert(0, str(ROOT / "tests" / "agent-clis"))
    import clis  # noqa: E402

    work = Path(tempfile.mkdtemp(prefix="bench-clis-"))
    plugins = clis.pack_plugins(work / "plugins")
    # The same plugins with a trivial hook in place of loopguard (a shell script that reads the
    # event and answers {}): what the CLI's own hook dispatch costs, whatever the hook does.
    trivial = work / "plugins-trivial"
    shutil.copytree(plugins, trivial)
    for binary in trivial.glob("**/bin/loopguard"):
        binary.write_text("#!/bin/sh\ncat >/dev/null\necho '{}'\n")
    # And with the binary's bytes beside that script (never run): a CLI that reads the plugin's
    # files on every hook call (Codex fingerprints them for its trust check) pays for its size.
    sized = work / "plugins-trivial-sized"
    shutil.copytree(trivial, sized)
    for script in sized.glob("**/bin/loopguard"):
        shutil.copy(plugins / script.relative_to(sized), script.with_name("loopguard.bytes"))
    late = {"warnAt": 40, "blockAt": 60, "rerunWarnAt": 40, "rerunBlockAt": 60, "variedWarnAt": 40, "variedBlockAt": 60}
    high = json.dumps({"tools": {"loopDetection": {"enabled": True, "warningThreshold": 50, "criticalThreshold": 100,
                                                   "globalCircuitBreakerThreshold": 200}},
                       "loopguard": {"preset": "recommended", "detectors": {
                           "sameError": late, "sameResult": late, "growingArgs": late,
                           "cycle": {"warnAt": 20, "blockAt": 30}}}})
    (work / "high.json").write_text(high)
    print(f"\n30-turn looping session (the same echo), wall seconds, median of {runs} paired runs; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'CLI':12} {'no hooks':>9} {'trivial hook':>13} {'trivial, same bytes':>20} {'loopguard':>10} {'ratio':>6} "
          f"{'trivial ratio':>14} {'vs trivial':>11} {'vs same bytes':>14}")
    for kind in (clis.Claude, clis.Codex, clis.Gemini):
        if only and kind.name not in only:
            continue
        bare = kind(work / f"{kind.name}-bare", plugins)
        guarded = kind(work / f"{kind.name}-guarded", plugins).install()
        floor = kind(work / f"{kind.name}-trivial", trivial).install()
        floor_sized = kind(work / f"{kind.name}-trivial-sized", sized).install()
        if kind is clis.Codex:
            bare.config().parent.mkdir(parents=True, exist_ok=True)
            bare.config().write_text(clis.CODEX_CONFIG.replace("PORT", "9"))
        if kind is clis.Gemini:
            settings = guarded.home / ".gemini" / "settings.json"
            (bare.home / ".gemini").mkdir(parents=True, exist_ok=True)
            (bare.home / ".gemini" / "settings.json").write_text(settings.read_text())
        walls = {"bare": [], "trivial": [], "sized": [], "guarded": []}
        for _ in range(runs):
            for name, cli, env in (("bare", bare, {}), ("trivial", floor, {}), ("sized", floor_sized, {}),
                                   ("guarded", guarded, {"LOOPGUARD_CONFIG": work / "high.json"})):
                p, reqs = cli.session({"FAKE_TURNS": 30}, env=env)
                assert max(r["turn"] for r in reqs) == 31, cli.describe()
                # Every run makes the same 30 calls, none denied (a denied call skips the tool and
                # its after-tool hook, and the session would not be the same).
                assert "loopguard:" not in json.dumps([r.get("results") for r in reqs]), cli.describe()
                walls[name].append(p.elapsed)
        b, t, s, g = (statistics.median(walls[k]) for k in ("bare", "trivial", "sized", "guarded"))
        print(f"{kind.name:12} {b:9.2f} {t:13.2f} {s:20.2f} {g:10.2f} {g / b:6.2f} {t / b:14.2f} {g / t:11.2f} {g / s:14.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "loopguard"))
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--config", help="the hook's config document (default: none)")
    ap.add_argument("--host", choices=sorted(HOSTS), default="claude-code", help="whose hook protocol (default claude-code)")
    ap.add_argument("--clis", action="store_true")
    ap.add_argument("--cli-runs", type=int, default=3)
    ap.add_argument("--cli", action="append", choices=["claude", "codex", "gemini"], help="with --clis: this CLI only (repeatable)")
    args = ap.parse_args()
    os.environ.setdefault("LOOPGUARD_BIN", args.bin)
    hook_figures(args.bin, args.runs, args.config, args.host)
    if args.clis:
        cli_figures(args.cli_runs, args.cli)


if __name__ == "__main__":
    main()
