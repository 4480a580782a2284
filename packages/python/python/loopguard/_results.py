"""What the guard answers: verdicts, group decisions, counters and the active policy.

The words in them are the vocabulary of the decision lines (``generic_repeat``, ``all_passed``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class ToolVerdict:
    """``allow`` | ``warn`` | ``block``; ``detector``/``message`` are None for ``allow``. For a
    block, ``message`` is the text to hand to the model; for a warning, ``notify`` says that it
    was newly emitted (tell the model now)."""

    action: str
    count: int = 0
    detector: Optional[str] = None
    message: Optional[str] = None
    notify: bool = False


@dataclass(frozen=True)
class OutcomeVerdict:
    """``recorded`` | ``ignored`` | ``abort`` (then ``detector``, ``count``, ``tool``, ``message``)."""

    action: str
    detector: Optional[str] = None
    count: int = 0
    tool: Optional[str] = None
    message: Optional[str] = None


@dataclass(frozen=True)
class CompactionVerdict:
    """``armed`` (for ``remaining`` outcomes) | ``disabled``."""

    action: str
    remaining: int = 0


@dataclass(frozen=True)
class BotVerdict:
    """``allow`` | ``suppress`` (drop until ``cooldown_until_ms``, set by ``budget``)."""

    action: str
    cooldown_until_ms: Optional[int] = None
    budget: Optional[str] = None


@dataclass(frozen=True)
class GroupDecision:
    """``round`` (``round``, ``participants``) | ``legacy`` (``participants``) | ``none`` |
    ``stop`` (``reason``: all_passed, max_rounds, max_turns, no_eligible, cancelled)."""

    action: str
    round: int = 0
    participants: tuple[str, ...] = field(default_factory=tuple)
    reason: Optional[str] = None


@dataclass(frozen=True)
class Stats:
    """Counters for metrics."""

    sessions: int
    evicted_sessions: int
    bot_pairs: int
    evicted_pairs: int
    group_threads: int
    memory_bytes: int


@dataclass(frozen=True)
class PolicyInfo:
    """The active policy: its versions, its blake3 digest and where it came from."""

    version: str
    interface_version: str
    blake3: str
    source: str
