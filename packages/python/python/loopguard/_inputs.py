"""What the gateway hands the guard: a tool call, a bot message, a group thread.

Each ``LoopGuard`` method that takes one of these also takes a mapping with the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True, init=False)
class ToolCall:
    """A tool call as the gateway sees it. ``args`` is serialized as JSON unless ``args_json``
    (the arguments as JSON text, e.g. straight from the model) is given.

    The arguments are read once per ``ToolCall``, at its first use: ``after_tool_outcome`` with
    the call that ``before_tool_call`` checked records the outcome of that call as it was
    checked, even if the ``args`` dict was changed in between. Make a new ``ToolCall`` per call."""

    session: str
    tool: str
    args: Any = None
    run: Optional[str] = None
    agent: Optional[str] = None
    call_id: Optional[str] = None
    args_json: Optional[str] = None
    #: The call as the native module takes it, once read and checked (a cache: the check and
    #: the outcome of a call need the same arguments text, and making it is a large part of a
    #: decision's cost; ``src/call.rs``).
    _native_call: Any = field(default=None, init=False, repr=False, compare=False)

    def __init__(
        self,
        session: str,
        tool: str,
        args: Any = None,
        run: Optional[str] = None,
        agent: Optional[str] = None,
        call_id: Optional[str] = None,
        args_json: Optional[str] = None,
    ) -> None:
        # The dataclass's own ``__init__`` for a frozen class sets each field through
        # ``object.__setattr__``: 0.76 µs a call against 0.29 µs written into the instance's
        # dict, on a decision of ~10 µs that makes a ToolCall each time (``bench/decision.py``,
        # floor 10 µs). The same fields in the same order (tests/test_hooks.py checks it).
        fields = self.__dict__
        fields["session"] = session
        fields["tool"] = tool
        fields["args"] = args
        fields["run"] = run
        fields["agent"] = agent
        fields["call_id"] = call_id
        fields["args_json"] = args_json

    def __getstate__(self) -> dict[str, Any]:
        # Pickled and copied without the native module's read of it (which neither pickles nor
        # needs to travel: it is made again at the first hook).
        state = dict(self.__dict__)
        state.pop("_native_call", None)
        return state


@dataclass(frozen=True)
class BotMessage:
    """A bot-authored inbound message the channel already admitted."""

    channel: str
    account: str
    conversation: str
    sender: str
    receiver: str
    ts_ms: int
    room: Optional[str] = None
    event_id: Optional[str] = None


@dataclass(frozen=True)
class GroupThread:
    """One group thread (its budget lives as long as the thread)."""

    channel: str
    account: str
    conversation: str
    root: str
    thread: Optional[str] = None
