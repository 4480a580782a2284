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
are the same. With a stored guard (``LoopGuard(store=…)``) the cursors are also kept in its store
(``_cursors``): a worker that has no cursor the request extends continues the one another worker
wrote, and replays only when none fits.

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
import sys
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping, Optional

from . import _history
from ._cursors import CursorStore, _body, _Cursor, _fingerprint, _opening
from ._errors import LoopGuardError
from ._guard import LoopGuard
from ._stored import Stored

Verdict = Optional[dict[str, Any]]

def _last_turn(conversation: list[Any]) -> list[str]:
    """The ids of the calls whose verdicts the request is due (its last item brings their
    results: the model is about to read them), else none."""
    return _history.last_turn_ids(conversation) if _history.ends_with_result(conversation) else []


def _decoded(verdict: Any) -> Verdict:
    """A verdict kept as the native check's tuple, as a dict."""
    return _history.verdict(verdict) if isinstance(verdict, tuple) else verdict


@dataclass
class _Open:
    cursor: _Cursor
    #: A cursor of this request alone (replayed on its own, ended with it).
    own: bool


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
        #: With a stored guard, the cursors' records in its store (``_cursors``); their state is
        #: a blob each cursor carries instead of a session of the guard.
        live = guard._live()
        self.store = CursorStore(live, per_opening, clock) if isinstance(live, Stored) else None

    def start(self, rid: str, sid: Optional[str], data: Mapping[str, Any]) -> list[Verdict]:
        """Brings the request's conversation up to its history; the verdicts of the calls whose
        results the request brings (when its last item is a tool result), else ``[]``."""
        conversation = _history.items(data)
        self._expire()
        found = self._by_session(str(sid), conversation) if sid else self._by_opening(conversation)
        if found is None:
            cursor, known = self._own(conversation)
            self.open[rid] = _Open(cursor, own=True)
        else:
            cursor, known = found
            cursor.owner = rid
            self.open[rid] = _Open(cursor, own=False)
        while len(self.open) > self.max_open:
            self._close(self.open.popitem(last=False)[1])
        return [_decoded(known.get(i)) for i in _last_turn(conversation)]

    def decide(self, rid: str, data: Mapping[str, Any], calls: list[_history.Call]) -> list[Verdict]:
        """The verdicts on the calls the model returned (in order); ends the request."""
        op = self.open.pop(rid, None)
        if op is None or (not op.own and op.cursor.owner != rid):
            # Evicted or taken over: replay this request on its own.
            op = _Open(self._own(_history.items(data))[0], own=True)
        cursor = op.cursor
        verdicts = self._apply(cursor, calls) if calls else []
        verdicts += [None] * (len(calls) - len(verdicts))
        live = self.guard._live()
        for v in verdicts:  # the decisions the guardrail answers with, for the metrics
            if v:
                live.count_decision("tool_call", v["action"], v["detector"])
        if op.own:
            self._end(cursor)
            return verdicts
        cursor.owner = None
        cursor.checked, cursor.verdicts = {}, {}
        for (cid, tool, args), v in zip(calls, verdicts):
            if not (v and v.get("action") == "block"):  # a blocked call is not recorded
                cursor.checked[cid] = (tool, args)
                cursor.verdicts[cid] = v
        if self.store is not None:
            self.store.save(cursor)
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
        if self.store is not None:  # another worker's cursor of this session
            for stored in self.store.by_session(f"litellm:{sid}"):
                known = self._extend(stored, conversation)
                if known is not None:
                    self.store.continued()
                    return self._fresh(sid, stored), known
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
        if self.store is not None:  # another worker's cursors of this opening
            for stored in self.store.by_opening(opening):
                known = self._extend(stored, conversation, body)
                if known is not None:
                    self.store.continued()
                    return self._add(opening, stored), known
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
        try:
            known.update(self._feed(cursor, fed, calls))
        except LoopGuardError as e:  # a state this policy cannot read (a newer policy's record)
            print(f"loopguard: {e}: the history is replayed", file=sys.stderr)
            return None
        self._mark(cursor, conversation, digest)
        return known

    def _replay(
        self, cursor: _Cursor, conversation: list[Any], steps: Optional[list[tuple[str, Any]]] = None
    ) -> dict[str, Any]:
        known = self._feed(cursor, _history.read(conversation) if steps is None else steps, {})
        self._mark(cursor, conversation, None)
        return known

    def _own(self, conversation: list[Any]) -> tuple[_Cursor, dict[str, Any]]:
        """The conversation replayed into a session of its own, ended with the request."""
        cursor = _Cursor(key=f"litellm:own#{uuid.uuid4().hex}")
        return cursor, self._replay(cursor, conversation)

    def _feed(self, cursor: _Cursor, steps: list[tuple[str, Any]], calls: dict[str, tuple[str, str]]) -> dict[str, Any]:
        """Feeds ``steps``; each call's verdict (as a dict only when asked for)."""
        out, checks = self._decisions(cursor, steps, calls)
        ids = [item[0] for kind, item in steps if kind == "call"]
        return {cid: out[i] if i < len(out) else None for cid, i in zip(ids, checks)}

    def _decisions(
        self, cursor: _Cursor, steps: list[tuple[str, Any]], calls: dict[str, tuple[str, str]]
    ) -> tuple[list[Any], list[int]]:
        """The verdicts of ``steps``, made as typed calls in one batch, and the index of each
        call's check. A call whose arguments are not JSON is refused by the policy and made again
        mended (``_history.mend``: the text as a JSON string); if the policy still refuses it, the
        steps from it on are not decided and the reason is logged."""
        items, checks = _history.calls(cursor.key, steps, dict(calls))
        out: list[Any] = []
        mended = -1
        while len(out) < len(items):
            made, error = self._apply_calls(cursor, items[len(out):])
            out += made
            if error is None:
                break
            at = len(out)
            if mended == at:
                print(f"loopguard: history not replayed from its item {at}: {LoopGuardError(*error)}", file=sys.stderr)
                break
            items[at], mended = _history.mend(items[at]), at
        return out, checks

    def _apply_calls(
        self, cursor: _Cursor, items: list[_history.Item]
    ) -> tuple[list[Any], Optional[tuple[str, str, str]]]:
        """The native guard's batch of typed calls: on the cursor's session (one guest call), or
        with a store on the state the cursor carries."""
        live = self.guard._live()
        if self.store is None:
            return live.apply_calls(items)
        made, error, state = live.apply_calls_on(cursor.state, items)
        if error is not None and error[0] == "snapshot":
            raise LoopGuardError(*error)  # the blob, not the call: the cursor is not continued
        cursor.state = state
        return made, error

    def _apply(self, cursor: _Cursor, calls: list[_history.Call]) -> list[Verdict]:
        out, checks = self._decisions(cursor, [("call", c) for c in calls], {})
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

    def _fresh(self, sid: str, stored: Optional[_Cursor] = None) -> _Cursor:
        """The session's cursor: a new one, or ``stored`` (read from the store and extended)."""
        if sid in self.cursors:
            self._drop(sid)
        cursor = stored or _Cursor(key=f"litellm:{sid}")
        cursor.used = self.clock()
        self.cursors[sid] = cursor
        if stored is None:
            self._end(cursor)  # whatever an earlier cursor of this session fed
        self._cap()
        return cursor

    def _add(self, opening: str, stored: Optional[_Cursor] = None) -> _Cursor:
        """A cursor of ``opening``: a new one, or ``stored`` (read and extended; this worker's
        own copy of it, older, goes)."""
        if stored is not None:
            for old in [k for k in self.openings.get(opening, []) if self.cursors[k].key == stored.key]:
                self._drop(old)
        key = ("opening", next(self._serial))
        cursor = stored or _Cursor(key=f"litellm:~{uuid.uuid4().hex}", opening=opening)
        cursor.used = self.clock()
        self.cursors[key] = cursor
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
        self._end(cursor)

    def _close(self, op: _Open) -> None:
        if op.own:
            self._end(op.cursor)
        else:
            op.cursor.owner = None

    def _end(self, cursor: _Cursor) -> None:
        """Ends the cursor's policy state: its session of the guard, or the blob it carries (its
        record in the store expires with the store's TTL)."""
        if self.store is not None:
            cursor.state = None
            return
        try:
            self.guard.end_session(cursor.key)
        except LoopGuardError as e:
            print(f"loopguard: {e}", file=sys.stderr)
