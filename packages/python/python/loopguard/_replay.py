"""Decisions for an LLM proxy from the history each request carries (used by ``loopguard.litellm``).

Why the history: a proxy in front of the model sees, in every request, the whole conversation
with its tool calls and results, while its workers and replicas share nothing. The decisions
must be what a replay of that history gives, whichever worker serves the request.

How it stays cheap: replaying 1,000 tool calls on every request costs milliseconds, so each
worker keeps cursors: the policy session a conversation was replayed into, how many items of it
the cursor has consumed (the first and the last one fingerprinted), and the calls it checked in
the last answer. A request whose conversation extends that (same fingerprints; the next tool calls
are the ones checked) only feeds the new items; anything else (another worker served the last
turns, the client edited or trimmed the history, retried a request) replays the whole history into
a fresh session. Either way the policy sees the same events in the same order, so the decisions
are the same.

Which cursor a request continues:
- with a session id (LiteLLM's), the session's cursor: the client says which conversation it is;
- without one (most clients), the cursors of the conversations with the same opening: the items up
  to and including the first user message (the system prompt and the task), which a client sends
  unchanged in every request of a conversation and which tell most conversations apart, at the cost
  of hashing a few items. Two conversations may open alike (the same agent run twice), and nothing
  from the client vouches for the rest, so such a cursor also keeps a digest of everything it
  consumed (SHA-256 of the items as ``pickle`` writes them: exact types, so ``1``, ``1.0`` and
  ``true`` differ as they do in the JSON the policy is fed), and is continued only by a request
  whose prefix has that very digest. A miss replays into a new cursor of that opening (at most
  ``per_opening`` of them, least recently used dropped); a conversation without tool calls gets
  none (its replay costs nothing, and one-off requests would push agents' cursors out).

A second request of a cursor while one is in flight on this worker replays into a session of its
own (with a session id), or into another cursor (without), so that the two never feed one policy
session at once.

Memory: at most ``max_sessions`` cursors in all (least recently used dropped, with their policy
session), none unused for more than ``max_age`` seconds (without a session id nothing says that a
conversation ended; dropping a cursor costs at most one full replay later), and ``max_open``
requests between their two hooks.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import io
import pickle
import sys
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Mapping, Optional

from . import _history
from ._errors import LoopGuardError
from ._guard import LoopGuard

Verdict = Optional[dict[str, Any]]

#: How far the opening is looked for: a few system or developer items come before the first user
#: message; the bound keeps the hash small for a conversation that has none (Responses tool items).
OPENING_ITEMS = 8


def _fingerprint(item: Any) -> str:
    text = json.dumps(item, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _opening(conversation: list[Any]) -> str:
    """The fingerprint of the conversation's items up to and including its first user message."""
    head = []
    for item in conversation[:OPENING_ITEMS]:
        head.append(item)
        if isinstance(item, Mapping) and item.get("role") == "user":
            break
    return _fingerprint(head)


#: Written before the items so that ``pickle`` writes a tuple of any length alike (MARK, items,
#: TUPLE); ``_body`` cuts it off with the protocol header.
_PAD = (None,) * 4


def _body(items: list[Any]) -> memoryview:
    """``items`` as ``pickle`` writes them (exact types: ``1``, ``1.0`` and ``True`` differ, as in
    the JSON the policy is fed), one after the other. The fast mode writes no memo, so an item's
    bytes depend on its value alone (not on which objects are shared or referenced elsewhere)
    and the body of a conversation begins with the body of any of its prefixes: one pass both
    checks the prefix and digests the whole. Protocol 3: no framing. Faster than ``json`` or
    ``marshal`` without references; an object pickle does not write raises."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, 3)
    pickler.fast = True
    pickler.dump((*_PAD, *items))
    return out.getbuffer()[7:-2]  # PROTO 3, MARK, the pad; TUPLE, STOP


def _last_turn(conversation: list[Any]) -> list[str]:
    """The ids of the calls whose verdicts the request is due (its last item brings their
    results: the model is about to read them), else none."""
    return _history.last_turn_ids(conversation) if _history.ends_with_result(conversation) else []


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
    #: Without a session id: the conversation's opening, the digest of the consumed items' body
    #: (``_body``) and its length.
    opening: Optional[str] = None
    digest: bytes = b""
    size: int = 0
    used: float = 0.0


@dataclass
class _Open:
    key: str
    cursor: Optional[_Cursor]


class HistoryReplay:
    """One worker's view: ``start`` when a request arrives, ``decide`` on the model's answer."""

    def __init__(
        self,
        guard: LoopGuard,
        max_sessions: int = 1024,
        max_open: int = 4096,
        max_age: float = 3600.0,
        per_opening: int = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.guard = guard
        self.max_sessions = max_sessions
        self.max_open = max_open
        self.max_age = max_age
        self.per_opening = per_opening
        self.clock = clock
        #: Least recently used first: a session id's cursor under the id, the others under a key
        #: of their own (``_add``), also listed by opening in ``openings``.
        self.cursors: OrderedDict[Hashable, _Cursor] = OrderedDict()
        self.openings: dict[str, list[Hashable]] = {}
        self.open: OrderedDict[str, _Open] = OrderedDict()
        self._serial = itertools.count()

    def start(self, rid: str, sid: Optional[str], data: Mapping[str, Any]) -> list[Verdict]:
        """Brings the request's conversation up to its history; the verdicts of the calls whose
        results the request brings (when its last item is a tool result), else ``[]``."""
        conversation = _history.items(data)
        self._expire()
        found = self._by_session(str(sid), conversation) if sid else self._by_opening(conversation)
        if found is None:
            cursor, known = self._own(conversation)
            self.open[rid] = _Open(key=cursor.key, cursor=None)
        else:
            cursor, known = found
            cursor.owner = rid
            self.open[rid] = _Open(key=cursor.key, cursor=cursor)
        while len(self.open) > self.max_open:
            self._close(self.open.popitem(last=False)[1])
        return [_decoded(known.get(i)) for i in _last_turn(conversation)]

    def decide(self, rid: str, data: Mapping[str, Any], calls: list[_history.Call]) -> list[Verdict]:
        """The verdicts on the calls the model returned (in order); ends the request."""
        op = self.open.pop(rid, None)
        if op is None or (op.cursor is not None and op.cursor.owner != rid):
            # Evicted or taken over: replay this request on its own.
            op = _Open(key=self._own(_history.items(data))[0].key, cursor=None)
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

    # -- which cursor --

    def _by_session(self, sid: str, conversation: list[Any]) -> Optional[tuple[_Cursor, dict[str, Any]]]:
        """The session's cursor brought up to the conversation; None while a request of the
        session is in flight here (this one then replays on its own)."""
        cursor = self.cursors.get(sid)
        if cursor is not None and cursor.owner is not None:
            return None
        if cursor is not None:
            self._touch(sid)
            known = self._extend(cursor, conversation)
            if known is not None:
                return cursor, known
        cursor = self._fresh(sid)
        return cursor, self._replay(cursor, conversation)

    def _by_opening(self, conversation: list[Any]) -> Optional[tuple[_Cursor, dict[str, Any]]]:
        """The cursor, among the free ones with the same opening (most recently used first), that
        the conversation extends; else a new one replayed from the start; None for a conversation
        without tool calls (replayed on its own)."""
        opening = _opening(conversation)
        body: list[memoryview] = []  # the conversation's body, written once for all candidates
        for key in reversed(self.openings.get(opening, [])):
            cursor = self.cursors[key]
            if cursor.owner is None:
                known = self._extend(cursor, conversation, body)
                if known is not None:
                    self._touch(key)
                    return cursor, known
        steps = _history.read(conversation)
        if not steps:
            return None
        cursor = self._add(opening)
        return cursor, self._replay(cursor, conversation, steps)

    # -- feeding --

    def _extend(
        self, cursor: _Cursor, conversation: list[Any], body: Optional[list[memoryview]] = None
    ) -> Optional[dict[str, Any]]:
        """Feeds the new items; None when the conversation does not extend the cursor's.
        ``body``: where the conversation's ``_body`` is kept once written (a cursor without a
        session id compares it with its digest)."""
        n = cursor.consumed
        if len(conversation) < n or n == 0:
            return None
        if _fingerprint(conversation[0]) != cursor.first or _fingerprint(conversation[n - 1]) != cursor.last:
            return None
        digest = None
        if cursor.opening is not None:  # nothing vouches for the items between: compare them all
            body = [] if body is None else body
            if not body:
                try:
                    body.append(_body(conversation))
                except Exception:  # not plain data: never continued
                    return None
            digest = (hashlib.sha256(body[0][: cursor.size]), body[0])
            if cursor.size > len(body[0]) or digest[0].digest() != cursor.digest:
                return None
        new = _history.read(conversation[n:])
        ids = [item[0] for kind, item in new if kind == "call"]
        if ids[: len(cursor.checked)] != list(cursor.checked):
            return None
        if not set(_last_turn(conversation)) <= set(ids).union(cursor.checked):
            return None  # the verdicts due now are of calls made before (a retried request): not kept
        skip = set(cursor.checked)
        fed = [(k, item) for k, item in new if not (k == "call" and item[0] in skip)]
        known: dict[str, Any] = dict(cursor.verdicts)
        calls = dict(cursor.checked)
        known.update(self._feed(cursor.key, fed, calls))
        self._mark(cursor, conversation, digest)
        return known

    def _replay(
        self, cursor: _Cursor, conversation: list[Any], steps: Optional[list[tuple[str, Any]]] = None
    ) -> dict[str, Any]:
        known = self._feed(cursor.key, _history.read(conversation) if steps is None else steps, {})
        self._mark(cursor, conversation, None)
        return known

    def _own(self, conversation: list[Any]) -> tuple[_Cursor, dict[str, Any]]:
        """The conversation replayed into a session of its own, ended with the request."""
        cursor = _Cursor(key=f"litellm:own#{uuid.uuid4().hex}")
        return cursor, self._replay(cursor, conversation)

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

    def _mark(self, cursor: _Cursor, conversation: list[Any], digest: Any) -> None:
        """Records what the cursor consumed; ``digest``: the running digest of the consumed
        prefix and the conversation's body (``_extend``), or None to write and digest it all."""
        if cursor.opening is not None:
            try:
                if digest is None:
                    body = _body(conversation)
                    digest = (hashlib.sha256(body), body)
                else:
                    digest[0].update(digest[1][cursor.size:])
                cursor.digest, cursor.size = digest[0].digest(), len(digest[1])
            except Exception:  # not plain data: never continued
                cursor.digest, cursor.size = b"", 0
        cursor.consumed = len(conversation)
        if conversation:
            cursor.first, cursor.last = _fingerprint(conversation[0]), _fingerprint(conversation[-1])

    # -- the cursors' memory --

    def _fresh(self, sid: str) -> _Cursor:
        if sid in self.cursors:
            self._drop(sid)
        cursor = self.cursors[sid] = _Cursor(key=f"litellm:{sid}", used=self.clock())
        self._end(cursor.key)  # whatever an earlier cursor of this session fed
        self._cap()
        return cursor

    def _add(self, opening: str) -> _Cursor:
        key = ("opening", next(self._serial))
        cursor = self.cursors[key] = _Cursor(key=f"litellm:~{uuid.uuid4().hex}", opening=opening, used=self.clock())
        keys = self.openings.setdefault(opening, [])
        keys.append(key)
        if len(keys) > self.per_opening:
            self._drop(keys[0])
        self._cap()
        return cursor

    def _touch(self, key: Hashable) -> None:
        """Marks a cursor used now (the cursors stay in order of use: ``_expire`` reads the first)."""
        cursor = self.cursors[key]
        cursor.used = self.clock()
        self.cursors.move_to_end(key)
        if cursor.opening is not None:
            keys = self.openings[cursor.opening]
            keys.remove(key)
            keys.append(key)

    def _cap(self) -> None:
        while len(self.cursors) > self.max_sessions:
            self._drop(next(iter(self.cursors)))

    def _expire(self) -> None:
        cutoff = self.clock() - self.max_age
        while self.cursors:
            key, cursor = next(iter(self.cursors.items()))
            if cursor.used > cutoff:
                break
            self._drop(key)

    def _drop(self, key: Hashable) -> None:
        """Forgets a cursor and ends its policy session; a request in flight on it then
        decides on its own (``decide``)."""
        cursor = self.cursors.pop(key)
        if cursor.opening is not None:
            keys = self.openings[cursor.opening]
            keys.remove(key)
            if not keys:
                del self.openings[cursor.opening]
        cursor.owner = None
        self._end(cursor.key)

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
