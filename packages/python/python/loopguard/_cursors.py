"""The LiteLLM guardrail's cursors (``_replay``), and with a store, the cursors kept in it so that
any worker continues any conversation.

A cursor is a conversation's policy state together with how much of its history that state has
consumed (``_Cursor``). Without a store the state is a session of the worker's own guard. With a
store (``LoopGuard(store=…)``) the state is a blob carried by the cursor (the policy's
``decide-call`` state, the same blob the store keeps per key), and after each answer the cursor
is written to the store as one record: state and position together, so that a record never
describes a state it does not hold. A worker that has no cursor extending a request's history
reads the records of the request's session id, or of its opening, and continues the first one
the history extends (the same checks as its own cursors: ``HistoryReplay._extend``); only when
none does is the history replayed from the start.

Records are JSON (never ``pickle``: a shared store is not trusted to hold code), read strictly;
one that does not read is a miss, named once on stderr. Keys, beside the policy's under the
store's prefix: ``litellm:cursor:s:<sha256 of the session's key>`` (one record) and
``litellm:cursor:o:<opening>`` (a list of at most ``per_opening`` records, most recent first).
Each lives the store's TTL after its last write. Writes are compare-and-set at the version last
seen (a conflict merges and tries again, twice at most); a lost write costs a replay later,
never a wrong decision, because a record is used only when the history extends it.

When the store fails, the worker goes on with its own cursors (one line on stderr per episode),
and leaves the store alone for ``RETRY_AFTER`` seconds, so that a store that does not answer costs
a request one deadline at most now and then, not two on every request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import pickle
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from ._errors import LoopGuardError

Verdict = Optional[dict[str, Any]]

#: The record format; a record of another version is a miss.
FORMAT = 1
#: Record versions remembered (for compare-and-set without a read); oldest forgotten first.
VERSIONS_KEPT = 4096
#: Tries of one write before it is given up (the next answer writes again).
WRITE_TRIES = 3
#: Seconds the store is left alone after it failed.
RETRY_AFTER = 1.0


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
    #: (``_replay._body``) and its length.
    opening: Optional[str] = None
    digest: bytes = b""
    size: int = 0
    used: float = 0.0
    #: With a store: the policy's state of the conversation (None: no state yet).
    state: Optional[bytes] = None


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


def _record(cursor: _Cursor) -> dict[str, Any]:
    return {
        "format": FORMAT, "key": cursor.key, "consumed": cursor.consumed, "first": cursor.first,
        "last": cursor.last, "checked": [[cid, tool, args] for cid, (tool, args) in cursor.checked.items()],
        "verdicts": cursor.verdicts, "opening": cursor.opening, "digest": cursor.digest.hex(), "size": cursor.size,
        "state": None if cursor.state is None else base64.b64encode(cursor.state).decode(),
    }


def _str(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if not isinstance(value, str):
        raise ValueError(f"{name} is not a string")
    return value


def _count(record: dict[str, Any], name: str) -> int:
    value = record.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} is not a count")
    return value


def _verdict(value: Any, where: str) -> Verdict:
    if value is None:
        return None
    ok = (isinstance(value, dict) and isinstance(value.get("action"), str)
          and isinstance(value.get("count"), int) and isinstance(value.get("notify"), bool)
          and all(value.get(k) is None or isinstance(value.get(k), str) for k in ("detector", "message")))
    if not ok:
        raise ValueError(f"{where} is not a verdict")
    return {k: value.get(k) for k in ("action", "detector", "count", "message", "notify")}


def _cursor(record: Any) -> _Cursor:
    """A record read back; ValueError naming the field that does not read."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError(f"not a cursor record of format {FORMAT}")
    checked: dict[str, tuple[str, str]] = {}
    for i, entry in enumerate(record.get("checked") or []):
        if not (isinstance(entry, list) and len(entry) == 3 and all(isinstance(x, str) for x in entry)):
            raise ValueError(f"checked[{i}] is not [id, tool, arguments]")
        checked[entry[0]] = (entry[1], entry[2])
    verdicts = record.get("verdicts")
    if not isinstance(verdicts, dict):
        raise ValueError("verdicts is not an object")
    opening = record.get("opening")
    if opening is not None and not isinstance(opening, str):
        raise ValueError("opening is not a string")
    state = record.get("state")
    try:
        digest = bytes.fromhex(_str(record, "digest"))
        blob = None if state is None else base64.b64decode(_str(record, "state"), validate=True)
    except (ValueError, binascii.Error) as e:
        raise ValueError(f"digest or state does not decode: {e}") from None
    return _Cursor(
        key=_str(record, "key"), consumed=_count(record, "consumed"), first=_str(record, "first"),
        last=_str(record, "last"), checked=checked,
        verdicts={str(k): _verdict(v, f"verdicts.{k}") for k, v in verdicts.items()},
        opening=opening, digest=digest, size=_count(record, "size"), state=blob,
    )


class CursorStore:
    """The cursors' records in the store of a stored guard (``_stored.Stored``)."""

    def __init__(self, stored: Any, per_opening: int, clock: Callable[[], float]) -> None:
        self.stored = stored
        self.per_opening = per_opening
        self.clock = clock
        self.versions: OrderedDict[str, int] = OrderedDict()
        self.down = False
        self.retry_at = 0.0
        #: Records read and continued, records written, and store or record failures.
        self.counts = {"continued": 0, "written": 0, "failed": 0}

    @staticmethod
    def key(cursor: _Cursor) -> str:
        if cursor.opening is not None:
            return f"litellm:cursor:o:{cursor.opening}"
        return f"litellm:cursor:s:{hashlib.sha256(cursor.key.encode()).hexdigest()[:32]}"

    def by_session(self, key: str) -> list[_Cursor]:
        """The record of the session whose cursor key is ``key`` (none or one)."""
        return self._read(self.key(_Cursor(key=key)))

    def by_opening(self, opening: str) -> list[_Cursor]:
        """The records of the conversations with this opening, most recent first."""
        return self._read(self.key(_Cursor(key="", opening=opening)))

    def continued(self) -> None:
        self.counts["continued"] += 1

    def save(self, cursor: _Cursor) -> None:
        """Writes the cursor's record (for an opening: first in its list, its older record out)."""
        if self._resting():
            return
        key = self.key(cursor)
        record = _record(cursor)
        expected = self.versions.get(key, 0)
        current: Any = None
        for _ in range(WRITE_TRIES):
            if cursor.opening is None:
                value: Any = record
            else:
                others = [r for r in current if isinstance(r, dict) and r.get("format") == FORMAT
                          and r.get("key") != cursor.key] if isinstance(current, list) else []
                value = [record] + others
                value = value[: self.per_opening]
            try:
                written, version, now = self.stored.record_cas(key, expected, json.dumps(value).encode())
            except LoopGuardError as e:
                self._failed(e)
                return
            self._up()
            expected = version
            if written:
                self._remember(key, version)
                self.counts["written"] += 1
                return
            try:
                current = json.loads(bytes(now)) if now else None
            except ValueError:
                current = None  # another writer's record that does not read: replaced
        self._remember(key, expected)

    def _read(self, key: str) -> list[_Cursor]:
        if self._resting():
            return []
        try:
            version, value = self.stored.record_get(key)
        except LoopGuardError as e:
            self._failed(e)
            return []
        self._up()
        self._remember(key, version)
        if not value:
            return []
        try:
            data = json.loads(bytes(value))
        except ValueError as e:
            self._unreadable(key, e)
            return []
        out = []
        for i, record in enumerate(data if isinstance(data, list) else [data]):
            try:
                out.append(_cursor(record))
            except ValueError as e:  # that one is not continued; the others may be
                self._unreadable(f"{key}[{i}]", e)
        return out

    def _unreadable(self, where: str, e: ValueError) -> None:
        self.counts["failed"] += 1
        print(f"loopguard: the store's record {where} does not read ({e}): not continued", file=sys.stderr)

    def _remember(self, key: str, version: int) -> None:
        self.versions[key] = version
        self.versions.move_to_end(key)
        while len(self.versions) > VERSIONS_KEPT:
            self.versions.popitem(last=False)

    def _resting(self) -> bool:
        return self.down and self.clock() < self.retry_at

    def _failed(self, e: LoopGuardError) -> None:
        self.counts["failed"] += 1
        self.retry_at = self.clock() + RETRY_AFTER
        if not self.down:
            self.down = True
            print(f"loopguard: {e}; the guardrail goes on with this worker's own cursors", file=sys.stderr)

    def _up(self) -> None:
        if self.down:
            self.down = False
            print("loopguard: the store answers again; cursors are shared again", file=sys.stderr)
