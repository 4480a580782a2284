"""The one mapping every framework adapter shares: a tool call's before and after points onto the
policy's ``before_tool_call`` / ``after_tool_outcome``, and the verdicts onto four things an
adapter can do in its framework: let the call run, refuse it with a text the model reads, hand
the model a note (a warning, once), end the run. No loop rule lives here or in an adapter: the
policy decides; this module only keeps the bookkeeping between the two points (the same as the
Node package's ``lib/adapters/gate.js``)."""

from __future__ import annotations

import itertools
import json
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Union

from . import _native
from ._errors import LoopGuardError
from ._guard import LoopGuard
from ._results import ToolVerdict

#: How many calls may wait between their before and after points (a framework that never
#: reports an outcome must not grow this without bound); the oldest is forgotten first.
MAX_PENDING = 4096

_MISSING: Any = object()


@dataclass(frozen=True)
class Before:
    """``run``: let the call run. Otherwise refuse it with ``message`` as its result, and with
    ``end_run`` end the run too. ``ticket`` goes to :meth:`ToolGate.after`."""

    ticket: str
    run: bool
    message: Optional[str] = None
    end_run: bool = False


@dataclass(frozen=True)
class After:
    """``note``: a warning to hand the model once (with this result, or before its next step);
    ``end_run``: end the run, with ``message``."""

    note: Optional[str] = None
    end_run: bool = False
    message: Optional[str] = None


def agent_config(config: Union[str, Mapping[str, Any], None]) -> str:
    """``config`` (JSON/JSON5 text or a mapping) with the agent-facing hosts' one default document
    filled in where it is silent (``loopguard hook``, ``loopguard mcp``, the LiteLLM guardrail)."""
    if config is None:
        text = "{}"
    elif isinstance(config, str):
        text = config
    elif isinstance(config, Mapping):
        try:
            text = json.dumps(config)
        except (TypeError, ValueError) as e:
            raise LoopGuardError("config", "config", f"is not JSON-serializable ({e})") from e
    else:
        raise LoopGuardError("config", "config", "must be JSON/JSON5 text or a mapping")
    try:
        return _native.agent_config(text)
    except ValueError as e:
        raise LoopGuardError("config", "config", str(e)) from e


class ToolGate:
    """Between a framework's before and after points. Threads may share it."""

    def __init__(self, config: Union[str, Mapping[str, Any], None] = None, *, guard: Optional[Any] = None) -> None:
        """``guard``: a :class:`LoopGuard` to share (its own config applies); otherwise a
        LoopGuard of ``config`` with the agent-facing default document filled in. A broken
        config raises :class:`LoopGuardError` here, naming its path."""
        if guard is not None and config is not None:
            raise LoopGuardError("config", "config", "give a config or a guard, not both (a guard has its own)")
        self.guard = guard if guard is not None else LoopGuard(agent_config(config))
        self._pending: OrderedDict[str, dict] = OrderedDict()
        self._notes: OrderedDict[str, str] = OrderedDict()
        self._tickets = itertools.count(1)
        self._lock = threading.Lock()

    def before(self, session: str, tool: str, args: Any = None, *, call_id: Optional[str] = None,
               run: Optional[str] = None, agent: Optional[str] = None) -> Before:
        """A tool call is about to run: what to do, and a ticket for :meth:`after`."""
        call = {"session": session, "tool": tool, "args": args, "call_id": call_id, "run": run, "agent": agent}
        verdict: ToolVerdict = self.guard.before_tool_call(call)
        ticket = f"t{next(self._tickets)}"
        if verdict.action == "block":
            return Before(ticket, False, verdict.message, ends_run(verdict))
        with self._lock:
            _remember(self._pending, ticket, call)
            if verdict.action == "warn" and verdict.notify and verdict.message:
                _remember(self._notes, ticket, verdict.message)
        return Before(ticket, True)

    def after(self, ticket: str, *, result: Any = _MISSING, error: Any = _MISSING) -> After:
        """The call of ``ticket`` ran. A refused call has no outcome: never call this for one (the
        policy would count the adapter's own refusal as the tool's answer)."""
        with self._lock:
            call = self._pending.pop(ticket, None)
            note = self._notes.pop(ticket, None)
        if call is None:
            return After()
        if error is not _MISSING:
            verdict = self.guard.after_tool_outcome(call, error=error)
        elif result is not _MISSING:
            verdict = self.guard.after_tool_outcome(call, result=result)
        else:
            verdict = self.guard.after_tool_outcome(call)
        if verdict.action == "abort":
            return After(note, True, verdict.message)
        return After(note)

    @property
    def pending(self) -> int:
        """Calls waiting for their outcome."""
        return len(self._pending)


class OrderedTickets:
    """Pairs outcomes with calls by order where a framework passes no call id: tickets wait per
    (session, tool) in the order the calls were checked; the first to finish takes the first."""

    def __init__(self) -> None:
        self._queues: OrderedDict[tuple, deque] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def push(self, session: str, tool: str, ticket: str) -> None:
        with self._lock:
            self._queues.setdefault((session, tool), deque()).append(ticket)
            self._size += 1
            if self._size > MAX_PENDING:
                key, queue = next(iter(self._queues.items()))
                queue.popleft()
                self._size -= 1
                if not queue:
                    del self._queues[key]

    def shift(self, session: str, tool: str) -> Optional[str]:
        with self._lock:
            queue = self._queues.get((session, tool))
            if not queue:
                return None
            self._size -= 1
            ticket = queue.popleft()
            if not queue:
                del self._queues[(session, tool)]
            return ticket


def ends_run(verdict: ToolVerdict) -> bool:
    """The policy's ladder: the agent sent a blocked call again and again (the same rule as the
    Rust host's ``ToolVerdict::ends_run``)."""
    return verdict.action == "block" and verdict.detector == "ladder"


def _remember(table: OrderedDict, key: str, value: Any) -> None:
    table[key] = value
    if len(table) > MAX_PENDING:
        table.popitem(last=False)
