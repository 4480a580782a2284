"""What the gateway hands the guard: a tool call, a bot message, a group thread.

Each ``LoopGuard`` method that takes one of these also takes a mapping with the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
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
    #: decision's cost in Python).
    _native_call: Optional[tuple[str, str, str, Optional[str], Optional[str], Optional[str]]] = field(
        default=None, init=False, repr=False, compare=False
    )


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
