"""The published loop rules of loopguard's peers, re-implemented from their documentation and
source for scripts/realdata/eval.py (our own code; nothing copied).

Each rule reads one trajectory (its trace events) and returns the guard's actions as
[(call_index, "warn" | "block")], call indices 1-based like labels.jsonl. A rule that speaks
after a call (its note is attached to that call's result) is counted on the NEXT call: that is
the first call the model makes knowing it. Read at:
- gemini-cli, packages/core/src/services/loopDetectionService.ts @ 022f913dc748: the same tool
  call (name + JSON args) 5 times in a row is a loop and ends the turn (TOOL_CALL_LOOP_THRESHOLD
  = 5). Its other checks read streamed text (content chanting) or ask an LLM after 30 turns; a
  trace of tool calls has neither. The version read has no multi-call cycle rule.
- OpenHands, StuckDetector (docs: openhands.sdk.conversation.stuck_detector; SDK example
  20_stuck_detector.py): stuck when the last 4 action/observation pairs are identical, when
  the last 3 actions are identical and each got an error, or when the last 6 pairs alternate
  between two identical pairs; stuck ends the run. No warning step.
- Hermes, agent/tool_guardrails.py @ 06c25ac90be8 (defaults; hard stops on, as for an
  unattended gateway): exact failure (same tool and args failing) warns after 2 and blocks
  after 5; same-tool failure with any args warns after 3 and halts after 8 (never halts the
  failure-tolerant tools: terminal, execute_code, process...); a read-only tool of its list
  returning the same result for the same args warns after 2 and blocks after 5; the same call
  with the same result in a row gets a note from the 3rd and halts at the 5th; cycles of period
  2 to 4 with identical calls and results get a note from 3 laps and halt at 5.
"""

from __future__ import annotations

import hashlib
import json


def _text(v) -> str:
    """A result's text: the text parts of `{"content": [...]}`, else its JSON."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict) and isinstance(v.get("content"), list):
        return "\n".join(str(c.get("text", "")) for c in v["content"] if isinstance(c, dict))
    return json.dumps(v, sort_keys=True)


def _pairs(events: list[dict]) -> list[tuple[str, str, str, bool]]:
    """(tool, canonical args, outcome text, failed) per call, in order."""
    out: list[tuple[str, str, str, bool]] = []
    pending: dict[str, int] = {}
    for ev in events:
        key = json.dumps(ev.get("args"), sort_keys=True)
        if ev["kind"] == "tool_call":
            pending[ev.get("call_id") or f"{ev['tool']}{key}"] = len(out)
            out.append((ev["tool"], key, "", False))
        elif ev["kind"] == "tool_result":
            i = pending.pop(ev.get("call_id") or f"{ev['tool']}{key}", None)
            if i is None:
                continue
            if "error" in ev:
                text, failed = _text(ev["error"]), True
            else:
                text, failed = _text(ev.get("result")), False
            out[i] = (out[i][0], out[i][1], text, failed)
    return out


def gemini_cli(events: list[dict]) -> list[tuple[int, str]]:
    last, n = None, 0
    for i, (tool, args, _, _) in enumerate(_pairs(events), start=1):
        key = (tool, args)
        n = n + 1 if key == last else 1
        last = key
        if n >= 5:
            return [(i, "block")]
    return []


def openhands(events: list[dict]) -> list[tuple[int, str]]:
    ps = _pairs(events)
    for k in range(1, len(ps)):
        # Checked before call k + 1, over the pairs 1..k.
        h = ps[:k]
        stuck = len(h) >= 4 and all(p[:3] == h[-1][:3] for p in h[-4:])
        stuck |= len(h) >= 3 and all(p[:2] == h[-1][:2] and p[3] for p in h[-3:])
        if len(h) >= 6:
            a, b = h[-1][:3], h[-2][:3]
            stuck |= a != b and all(h[-1 - j][:3] == (a if j % 2 == 0 else b) for j in range(6))
        if stuck:
            return [(k + 1, "block")]
    return []


_HERMES_IDEMPOTENT = {"read_file", "search_files", "web_search", "web_extract", "session_search",
                      "skill_view", "skills_list", "browser_snapshot"}
_HERMES_TOLERANT = {"terminal", "execute_code", "process_manage", "process", "browser_navigate",
                    "web_extract"}
_HERMES_PROGRESS = {"write_file", "patch", "terminal", "execute_code", "todo", "memory"}


def _hermes_failed(text: str, failed: bool) -> bool:
    """classify_tool_failure's generic rule: an error outcome, a JSON "error"/"failed" key in
    the first 500 characters, or a text starting with "Error"."""
    lower = text[:500].lower()
    return failed or '"error"' in lower or '"failed"' in lower or text.startswith("Error")


def hermes(events: list[dict]) -> list[tuple[int, str]]:
    acts: list[tuple[int, str]] = []
    exact: dict = {}
    same_tool: dict = {}
    progress: dict = {}
    no_prog: dict = {}
    streak_key, streak = None, 0
    history: list = []
    ps = _pairs(events)
    for i, (tool, args, text, failed) in enumerate(ps, start=1):
        sig = (tool, args)
        # before_call: blocks.
        n_exact = 0 if progress.get(sig) else exact.get(sig, 0)
        rec = no_prog.get(sig) if tool in _HERMES_IDEMPOTENT else None
        if n_exact >= 5 or (rec and rec[1] >= 5):
            acts.append((i, "block"))
            continue
        # after_call: warnings and halts, counted on the next call.
        nxt = i + 1
        h = hashlib.sha256(text.encode()).hexdigest()
        if _hermes_failed(text, failed):
            if progress.pop(sig, False):
                exact.pop(sig, None)
            exact[sig] = exact.get(sig, 0) + 1
            same_tool[tool] = same_tool.get(tool, 0) + 1
            no_prog.pop(sig, None)
            if tool not in _HERMES_TOLERANT and same_tool[tool] >= 8:
                acts.append((nxt, "block"))
            elif exact[sig] >= 2 or same_tool[tool] >= 3:
                acts.append((nxt, "warn"))
        else:
            exact.pop(sig, None)
            same_tool.pop(tool, None)
            if tool in _HERMES_PROGRESS:
                for s in exact:
                    progress[s] = True
                same_tool.clear()
            if tool in _HERMES_IDEMPOTENT:
                prev = no_prog.get(sig)
                cnt = prev[1] + 1 if prev and prev[0] == h else 1
                no_prog[sig] = (h, cnt)
                if cnt >= 2:
                    acts.append((nxt, "warn"))
        # observe_call: identical streak and cycles (tool-agnostic).
        streak = streak + 1 if (sig, h) == streak_key else 1
        streak_key = (sig, h)
        history.append((sig, h))
        if streak >= 3:
            acts.append((nxt, "block" if streak >= 5 else "warn"))
        else:
            for p in range(2, 5):
                laps = 1
                while len(history) >= p * (laps + 1) and history[-p * (laps + 1):][:p] == history[-p:]:
                    laps += 1
                if laps >= 3:
                    acts.append((nxt, "block" if laps >= 5 else "warn"))
                    break
    return [(i, a) for i, a in acts if i <= len(ps)]


PEERS = {"gemini-cli": gemini_cli, "openhands-stuck": openhands, "hermes-guardrails": hermes}
