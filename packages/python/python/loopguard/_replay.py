"""Decisions for an LLM proxy from the history each request carries (used by ``loopguard.litellm``).

Why the history: a proxy in front of the model sees, in every request, the whole conversation
with its tool calls and results, while its workers and replicas share nothing. The decisions
must be what a replay of that history gives, whichever worker serves the request.

How it stays cheap: replaying 1,000 tool calls on every request costs milliseconds, so each
worker keeps, per session id, a cursor: the policy session the history was replayed into, how
many items of the conversation it has consumed (the first and the last one fingerprinted), and
the calls it checked in the last answer. A request whose conversation extends that (same
fingerprints; the next tool calls are the ones checked) only feeds the new items; anything else
(another worker served the last turns, the client edited or trimmed the history, retried a
request) replays the whole history into a fresh session. Either way the policy sees the same
events in the same order, so the decisions are the same. Requests without a session id, and a
second request of a session while one is in flight on this worker, replay into a session of their
own, dropped when they end.

Memory: at most ``max_sessions`` cursors (least recently used dropped, with their policy
session) and ``max_open`` requests between their two hooks.
"""

from __future__ import annotations

import hashlib
import json
import sys
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from . import _history
from ._errors import LoopGuardError
from ._guard import LoopGuard

Verdict = Optional[dict[str, Any]]


def _fingerprint(item: Any) -> str:
    text = json.dumps(item, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _decoded(verdict: Any) -> Verdict:
    """A verdict kept as the native check's tuple, as a dict."""
    return _history.verdict(verdict) if isinstance(verdict, tuple) else verdict


@dataclass
class _Cursor:
    key: str
    consumed: int = 0
    first: str = ""
    last: str = ""
    #: The calls checked in the last answer (id -> tool, arguments) and their verdicts.
    checked: dict[str, tuple[str, str]] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    owner: Optional[str] = None


@dataclass
class _Open:
    key: str
    cursor: Optional[_Cursor]


class HistoryReplay:
    """One worker's view: ``start`` when a request arrives, ``decide`` on the model's answer."""

    def __init__(self, guard: LoopGuard, max_sessions: int = 1024, max_open: int = 4096) -> None:
        self.guard = guard
        self.max_sessions = max_sessions
        self.max_open = max_open
        self.cursors: OrderedDict[str, _Cursor] = OrderedDict()
        self.open: OrderedDict[str, _Open] = OrderedDict()

    def start(self, rid: str, sid: Optional[str], data: Mapping[str, Any]) -> list[Verdict]:
        """Brings the request's session up to its history; the verdicts of the calls whose
        results the request brings (when its last item is a tool result), else ``[]``."""
        conversation = _history.items(data)
        cursor = self.cursors.get(sid) if sid else None
        known = None
        if cursor is not None and cursor.owner is None:
            self.cursors.move_to_end(str(sid))
            known = self._extend(cursor, conversation)
        elif cursor is not None:  # a request of this session is in flight here: replay on its own
            sid = None
        if known is None:
            cursor = self._fresh(sid) if sid else _Cursor(key=f"litellm:{rid}#{uuid.uuid4().hex[:8]}")
            known = self._replay(cursor, conversation)
        if sid:
            cursor.owner = rid
            self.open[rid] = _Open(key=cursor.key, cursor=cursor)
        else:
            self.open[rid] = _Open(key=cursor.key, cursor=None)
        while len(self.open) > self.max_open:
            self._close(self.open.popitem(last=False)[1])
        if not _history.ends_with_result(conversation):
            return []
        return [_decoded(known.get(i)) for i in _history.last_turn_ids(conversation)]

    def decide(self, rid: str, data: Mapping[str, Any], calls: list[_history.Call]) -> list[Verdict]:
        """The verdicts on the calls the model returned (in order); ends the request."""
        op = self.open.pop(rid, None)
        if op is None or (op.cursor is not None and op.cursor.owner != rid):
            # Evicted or taken over: replay this request on its own.
            self.start(rid, None, data)
            op = self.open.pop(rid)
        verdicts = self._apply(op.key, calls) if calls else []
        verdicts += [None] * (len(calls) - len(verdicts))
        cursor = op.cursor
        if cursor is None:
            self._end(op.key)
            return verdicts
        cursor.owner = None
        cursor.checked, cursor.verdicts = {}, {}
        for (cid, tool, args), v in zip(calls, verdicts):
            if not (v and v.get("action") == "block"):  # a blocked call is not recorded
                cursor.checked[cid] = (tool, args)
                cursor.verdicts[cid] = v
        return verdicts

    # -- internals --

    def _extend(self, cursor: _Cursor, conversation: list[Any]) -> Optional[dict[str, Any]]:
        """Feeds the new items; None when the conversation does not extend the cursor's."""
        n = cursor.consumed
        if len(conversation) < n or n == 0:
            return None
        if _fingerprint(conversation[0]) != cursor.first or _fingerprint(conversation[n - 1]) != cursor.last:
            return None
        new = _history.read(conversation[n:])
        head = [item[0] for kind, item in new if kind == "call"][: len(cursor.checked)]
        if head != list(cursor.checked):
            return None
        skip = set(cursor.checked)
        fed = [(k, item) for k, item in new if not (k == "call" and item[0] in skip)]
        known: dict[str, Any] = dict(cursor.verdicts)
        calls = dict(cursor.checked)
        known.update(self._feed(cursor.key, fed, calls))
        self._mark(cursor, conversation)
        return known

    def _replay(self, cursor: _Cursor, conversation: list[Any]) -> dict[str, Any]:
        known = self._feed(cursor.key, _history.read(conversation), {})
        self._mark(cursor, conversation)
        return known

    def _feed(self, key: str, steps: list[tuple[str, Any]], calls: dict[str, tuple[str, str]]) -> dict[str, Any]:
        """Feeds ``steps``; each call's verdict (as a dict only when asked for)."""
        out, checks = self._decisions(key, steps, calls)
        ids = [item[0] for kind, item in steps if kind == "call"]
        return {cid: out[i] if i < len(out) else None for cid, i in zip(ids, checks)}

    def _decisions(
        self, key: str, steps: list[tuple[str, Any]], calls: dict[str, tuple[str, str]]
    ) -> tuple[list[Any], list[int]]:
        """The verdicts of ``steps``, made as typed calls in one batch, and the index of each
        call's check. A call whose arguments are not JSON is refused by the policy and made again
        mended (``_history.mend``: the text as a JSON string); if the policy still refuses it, the
        steps from it on are not decided and the reason is logged."""
        items, checks = _history.calls(key, steps, dict(calls))
        out: list[Any] = []
        mended = -1
        while len(out) < len(items):
            made, error = self._apply_calls(items[len(out):])
            out += made
            if error is None:
                break
            at = len(out)
            if mended == at:
                print(f"loopguard: history not replayed from its item {at}: {LoopGuardError(*error)}", file=sys.stderr)
                break
            items[at], mended = _history.mend(items[at]), at
        return out, checks

    def _apply_calls(self, items: list[_history.Item]) -> tuple[list[Any], Optional[tuple[str, str, str]]]:
        """The native guard's batch of typed calls (one guest call)."""
        return self.guard._live().apply_calls(items)

    def _apply(self, key: str, calls: list[_history.Call]) -> list[Verdict]:
        out, checks = self._decisions(key, [("call", c) for c in calls], {})
        return [_history.verdict(out[i]) if i < len(out) else None for i in checks]

    def _mark(self, cursor: _Cursor, conversation: list[Any]) -> None:
        cursor.consumed = len(conversation)
        if conversation:
            cursor.first, cursor.last = _fingerprint(conversation[0]), _fingerprint(conversation[-1])

    def _fresh(self, sid: str) -> _Cursor:
        self.cursors.pop(sid, None)
        cursor = self.cursors[sid] = _Cursor(key=f"litellm:{sid}")
        self._end(cursor.key)  # whatever an earlier cursor of this session fed
        while len(self.cursors) > self.max_sessions:
            self._end(self.cursors.popitem(last=False)[1].key)
        return cursor

    def _close(self, op: _Open) -> None:
        if op.cursor is None:
            self._end(op.key)
        else:
            op.cursor.owner = None

    def _end(self, key: str) -> None:
        try:
            self.guard.end_session(key)
        except LoopGuardError as e:
            print(f"loopguard: {e}", file=sys.stderr)
