"""What the gateway hands the guard: a tool call, a bot message, a group thread.

Each ``LoopGuard`` method that takes one of these also takes a mapping with the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the gateway sees it. ``args`` is serialized as JSON unless ``args_json``
    (the arguments as JSON text, e.g. straight from the model) is given. The arguments are read
    at each hook: ``after_tool_outcome`` records the outcome of the call as its ``args`` are then."""

    session: str
    tool: str
    args: Any = None
    run: Optional[str] = None
    agent: Optional[str] = None
    call_id: Optional[str] = None
    args_json: Optional[str] = None


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
