"""Feeds trace events (docs/spec/trace-format.md) through the LoopGuard hooks, one call per event, and
turns each result back into a decision line: the hooks must agree with apply_events."""

from __future__ import annotations

import json
from typing import Any

from loopguard import LoopGuard, ToolCall


def _call(ev: dict[str, Any]) -> ToolCall:
    return ToolCall(ev["session"], ev["tool"], ev.get("args"), ev.get("run"), ev.get("agent"), ev.get("call_id"))


def _thread(ev: dict[str, Any]) -> dict[str, Any]:
    return {k: ev.get(k) for k in ("channel", "account", "conversation", "root", "thread")}


def _group(d: Any) -> dict[str, Any]:
    if d.action in ("round",):
        return {"action": "round", "round": d.round, "participants": list(d.participants)}
    if d.action == "legacy":
        return {"action": "legacy", "participants": list(d.participants)}
    if d.action == "stop":
        return {"action": "stop", "reason": d.reason}
    return {"action": d.action}


def feed(guard: LoopGuard, ev: dict[str, Any]) -> dict[str, Any]:
    kind = ev["kind"]
    if kind == "tool_call":
        v = guard.before_tool_call(_call(ev))
        if v.action == "allow":
            return {"action": "allow"}
        out = {"action": v.action, "detector": v.detector, "count": v.count, "message": v.message}
        if v.action == "warn":
            out["notify"] = v.notify
        return out
    if kind == "tool_result":
        # the trace tells result and error apart by which key is present ("error": null is an error)
        o = guard.after_tool_outcome(_call(ev), error=ev["error"]) if "error" in ev else guard.after_tool_outcome(_call(ev), result=ev["result"])
        if o.action != "abort":
            return {"action": o.action}
        return {"action": "abort", "detector": o.detector, "count": o.count, "message": o.message}
    if kind == "compaction":
        c = guard.after_compaction_retry(ev["session"], ev.get("run"), ev.get("agent"))
        return {"action": "armed", "remaining": c.remaining} if c.action == "armed" else {"action": "disabled"}
    if kind == "bot_message":
        keys = ("channel", "account", "conversation", "sender", "receiver", "ts_ms", "room", "event_id")
        b = guard.on_bot_message({k: ev.get(k) for k in keys})
        if b.action == "allow":
            return {"action": "allow"}
        return {"action": "suppress", "cooldown_until_ms": b.cooldown_until_ms, "budget": b.budget}
    if kind == "group_message":
        return _group(guard.start_group_thread(_thread(ev), ev["peer"], ev["text"]))
    if kind == "group_replies":
        return _group(guard.finish_group_round(_thread(ev), ev["replies"]))
    if kind == "group_cancel":
        return _group(guard.cancel_group_thread(_thread(ev)))
    raise ValueError(f"unknown kind {kind!r}")


def feed_trace(guard: LoopGuard, trace: str) -> str:
    out = []
    for i, line in enumerate(trace.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        ev = json.loads(line)
        decision = {"line": i, "kind": ev["kind"], **feed(guard, ev)}
        out.append(json.dumps(decision, separators=(",", ":"), ensure_ascii=False) + "\n")
    return "".join(out)
