"""``LoopGuard(store=...)``: the decisions on state kept in a store shared by replicas
(docs/SCALING.md).

Each typed call becomes one trace line (docs/spec/trace-format.md), decided by the native
``StoredGuard`` on its key's state (read, decide, compare-and-set); the decision line comes back
as the tuple the native ``Guard`` would have returned, so ``LoopGuard`` builds the same result
types. No policy logic lives here: the mapping is the trace format's, field for field.

Calls that are not decisions (``stats``, ``health``, ``policy``, ``swap``, snapshots) go to the
process's own guard. ``end_session`` forgets nothing in the store: a session's key expires with
the store's TTL.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Tuple

from . import _native
from ._errors import LoopGuardError

_dumps = json.dumps


def _thread_fields(t: tuple[str, str, str, Optional[str], str]) -> dict[str, Any]:
    channel, account, conversation, thread, root = t
    out: dict[str, Any] = {"channel": channel, "account": account, "conversation": conversation, "root": root}
    if thread is not None:
        out["thread"] = thread
    return out


def _call_fields(c: tuple[str, str, str, Optional[str], Optional[str], Optional[str]]) -> str:
    """The fields of a tool event; ``args`` is the call's JSON text as given."""
    session, tool, args_json, run, agent, call_id = c
    text = f'"session":{_dumps(session)},"tool":{_dumps(tool)},"args":{args_json}'
    for name, value in (("run", run), ("agent", agent), ("call_id", call_id)):
        if value is not None:
            text += f",{_dumps(name)}:{_dumps(value)}"
    return text


def _step(d: dict[str, Any]) -> tuple[str, int, list[str], Optional[str]]:
    action = d["action"]
    if action == "round":
        return ("round", d["round"], d["participants"], None)
    if action == "legacy":
        return ("legacy", 0, d["participants"], None)
    if action == "stop":
        return ("stop", 0, [], d["reason"])
    return ("none", 0, [], None)


def _tls_file(value: Any, name: str) -> Optional[str]:
    """A TLS file argument (``store_ca``, …): None, or a path."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise LoopGuardError("input", name, f"must be a path to a PEM file, not {type(value).__name__}")
    return os.fspath(value)


class Stored:
    """The native guard's decision calls, made on the store's state; everything else is the
    process's own guard (``local``)."""

    def __init__(self, local: Any, config: str, store: str, prefix: str, ttl_s: Optional[int],
                 deadline_ms: Optional[int], fail_closed: bool, policy: Optional[str],
                 expect_digest: Optional[str],
                 tls: Tuple[Optional[str], Optional[str], Optional[str]] = (None, None, None)) -> None:
        self._local = local
        ca, cert, key = tls
        self._stored = _native.StoredGuard(config, store, prefix, ttl_s, deadline_ms, fail_closed, policy,
                                           expect_digest, ca, cert, key)
        self._line = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._local, name)

    def _decide(self, line: str) -> dict[str, Any]:
        self._line = self._line % 0xFFFFFFFF + 1
        decision, key, _version, via = self._stored.decide(line, self._line)
        if decision is None:
            raise LoopGuardError("store", "store", f"the store failed and store_fail_closed is set: no decision "
                                 f"for {key} ({via})")
        return json.loads(decision)

    def health(self) -> list[tuple[str, int]]:
        """The supervisor's counters and the store's (``store_on_store``, ``store_on_local``, …)."""
        return list(self._local.health()) + [(f"store_{k}", v) for k, v in self._stored.stats()]

    def check_tool_call(self, c: tuple) -> tuple:
        d = self._decide('{"kind":"tool_call",' + _call_fields(c) + "}")
        return (d["action"], d.get("detector"), d.get("count", 0), d.get("message"), d.get("notify", False))

    def record_tool_outcome(self, c: tuple, threw: bool, text: str) -> tuple:
        field = "error" if threw else "result"
        d = self._decide('{"kind":"tool_result",' + _call_fields(c) + f',"{field}":{text}}}')
        if d["action"] == "abort":
            return ("abort", d["detector"], d["count"], c[1], d["message"])
        return (d["action"], None, 0, None, None)

    def compaction_retried(self, session: str, run: Optional[str], agent: Optional[str]) -> Optional[int]:
        e: dict[str, Any] = {"kind": "compaction", "session": session}
        e.update({k: v for k, v in (("run", run), ("agent", agent)) if v is not None})
        d = self._decide(_dumps(e))
        return d["remaining"] if d["action"] == "armed" else None

    def end_session(self, session: str) -> None:
        """The session's key expires with the store's TTL; its local state (if any) goes now."""
        self._local.end_session(session)

    def check_bot_message(self, m: tuple) -> tuple:
        channel, account, conversation, room, sender, receiver, ts, event_id = m
        e: dict[str, Any] = {"kind": "bot_message", "channel": channel, "account": account,
                             "conversation": conversation, "sender": sender, "receiver": receiver, "ts_ms": ts}
        e.update({k: v for k, v in (("room", room), ("event_id", event_id)) if v is not None})
        d = self._decide(_dumps(e))
        if d["action"] == "suppress":
            return ("suppress", d["cooldown_until_ms"], d["budget"])
        return ("allow", None, None)

    def start_group_thread(self, t: tuple, peer: str, text: str) -> tuple:
        e = {"kind": "group_message", **_thread_fields(t), "peer": peer, "text": text}
        return _step(self._decide(_dumps(e)))

    def finish_group_round(self, t: tuple, replies: list[tuple[str, Optional[str]]]) -> tuple:
        e = {"kind": "group_replies", **_thread_fields(t), "replies": [{"agent": a, "reply": r} for a, r in replies]}
        return _step(self._decide(_dumps(e)))

    def cancel_group_thread(self, t: tuple) -> tuple:
        return _step(self._decide(_dumps({"kind": "group_cancel", **_thread_fields(t)})))

    def apply_events(self, jsonl: str, first_line: int) -> str:
        """Each line decided on its key's state, numbered from ``first_line``; blank lines skipped."""
        out = []
        for i, line in enumerate(jsonl.split("\n")):
            if line.strip():
                decision, key, _v, via = self._stored.decide(line.rstrip("\r"), first_line + i)
                if decision is None:
                    raise LoopGuardError("store", "store", f"line {first_line + i}: the store failed and "
                                         f"store_fail_closed is set: no decision for {key} ({via})")
                out.append(decision)
        return "".join(out)
