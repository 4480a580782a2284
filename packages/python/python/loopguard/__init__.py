"""loopguard for Python gateways: the loop guard that stops tool-call loops and bot-to-bot loops.

The decisions are OpenClaw's (``tools.loopDetection``, the channel ``botLoopProtection``
budgets, the broadcast group-thread budget), made by a sandboxed WebAssembly policy
(``loopguard:policy@1.x``) that ships inside this package and runs under wasmtime through the
``loopguard-host`` embedding. This module only converts between Python values and the native
module's; every decision is made inside the policy.

Example::

    from loopguard import LoopGuard, ToolCall

    with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as guard:
        call = ToolCall(session="s1", tool="read", args={"path": "/a"})
        verdict = guard.before_tool_call(call)
        if verdict.action == "block":
            ...  # hand verdict.message to the model as the tool result
        guard.after_tool_outcome(call, result={"content": [{"type": "text", "text": "x"}]})
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from . import _native
from ._errors import LoopGuardError

__all__ = [
    "LoopGuard",
    "LoopGuardError",
    "ToolCall",
    "BotMessage",
    "GroupThread",
    "ToolVerdict",
    "OutcomeVerdict",
    "CompactionVerdict",
    "BotVerdict",
    "GroupDecision",
    "Stats",
    "PolicyInfo",
    "replay",
    "versions",
    "DEFAULT_POLICY",
]

#: The policy component shipped in this package.
DEFAULT_POLICY = Path(__file__).with_name("loopguard_policy.wasm")
_MISSING: Any = object()

PathLike = Union[str, Path]


# ---- inputs ----


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


# ---- results (the vocabulary of the decision lines: generic_repeat, all_passed, ...) ----


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


def _policy_file(policy: Optional[PathLike]) -> str:
    """The policy to load: ``policy``, or the one shipped in the package (which must be there)."""
    if policy is not None:
        return str(policy)
    if not DEFAULT_POLICY.is_file():
        raise LoopGuardError(
            "policy",
            str(DEFAULT_POLICY),
            "the policy shipped in this package is missing; reinstall the loopguard package",
        )
    return str(DEFAULT_POLICY)


def replay(config: Union[str, Mapping[str, Any]], trace: str, *, policy: Optional[PathLike] = None) -> str:
    """Replays a whole trace (JSON Lines) on a fresh gateway; returns the decisions as JSON
    Lines, byte for byte what ``loopguard replay`` prints."""
    return _native.replay(_config_text(config), _require_str(trace, "trace"), _policy_file(policy))


def versions(*, policy: Optional[PathLike] = None) -> dict[str, str]:
    """The policy's version, its interface version and its blake3 digest."""
    version, interface, digest = _native.versions(_policy_file(policy))
    return {"policy": version, "interface": interface, "blake3": digest}


class LoopGuard:
    """All loop-guard state of one gateway process, in a supervised policy instance (a trap or
    a timeout is answered with the failure mode and the instance is replaced). Use it as a
    context manager (or call :meth:`close`). Threads may share it."""

    def __init__(
        self,
        config: Union[str, Mapping[str, Any]] = "{}",
        *,
        policy: Optional[PathLike] = None,
        expect_digest: Optional[str] = None,
        deadline_ms: Optional[int] = None,
        memory_mib: Optional[int] = None,
        fail_closed: bool = False,
    ) -> None:
        """``config``: an OpenClaw-style config as JSON/JSON5 text (passed through unchanged) or
        a mapping (serialized with ``json.dumps``); ``{}`` means all defaults. ``policy``: a
        policy component to use instead of the shipped one, refused unless its blake3 digest is
        ``expect_digest`` when that is given."""
        self._guard: Optional[_native.Guard] = _native.Guard(
            _config_text(config), _policy_file(policy), expect_digest, deadline_ms, memory_mib, fail_closed
        )

    # -- tool loop --

    def before_tool_call(self, call: Union[ToolCall, Mapping[str, Any]]) -> ToolVerdict:
        """Before a tool runs: allow, warn or block. Recorded unless blocked or disabled."""
        v = self._live().check_tool_call(_tool_call(call))
        return _ALLOW if v == _ALLOW_TUPLE else ToolVerdict(v[0], v[2], v[1], v[3], v[4])

    def after_tool_outcome(
        self,
        call: Union[ToolCall, Mapping[str, Any]],
        *,
        result: Any = _MISSING,
        error: Any = _MISSING,
    ) -> OutcomeVerdict:
        """After a tool ran: records ``result=`` (any JSON value) or ``error=`` (a string, an
        exception, or any JSON value); may say to abort the run (post-compaction guard).

        OpenClaw's rule (spec/tool-loop.md §1.3): an error, even ``None``, wins; no result at all
        (JS ``undefined``) has no hash and is neither recorded nor observed, so that one case is
        answered here: JSON cannot carry it to the policy.
        """
        if error is not _MISSING:
            threw, text = True, _json(_error_value(error), "outcome.error")
        elif result is _MISSING:
            self._live()
            return _IGNORED
        else:
            threw, text = False, _json(result, "outcome.result")
        v = self._live().record_tool_outcome(_tool_call(call), threw, text)
        return _RECORDED if v == _RECORDED_TUPLE else OutcomeVerdict(*v)

    def after_compaction_retry(
        self, session: str, run: Optional[str] = None, agent: Optional[str] = None
    ) -> CompactionVerdict:
        """A context compaction succeeded and the run is being retried: arm the guard."""
        armed = self._live().compaction_retried(
            _require_str(session, "session"), _opt_str(run, "run"), _opt_str(agent, "agent")
        )
        return CompactionVerdict("disabled") if armed is None else CompactionVerdict("armed", armed)

    def end_session(self, session: str) -> None:
        """Forget a session (closed, or ``/new`` gave it a new id)."""
        self._live().end_session(_require_str(session, "session"))

    # -- bots and groups --

    def on_bot_message(self, msg: Union[BotMessage, Mapping[str, Any]]) -> BotVerdict:
        """A bot-authored inbound message the channel already admitted: allow or suppress."""
        action, until, budget = self._live().check_bot_message(_bot_message(msg))
        return BotVerdict(action, until, budget)

    def start_group_thread(self, thread: Union[GroupThread, Mapping[str, Any]], peer: str, text: str) -> GroupDecision:
        """An inbound message to a conversation: round 1, a legacy pass, or ``none``."""
        step = self._live().start_group_thread(_group_thread(thread), _require_str(peer, "peer"), _require_str(text, "text"))
        return _group(step)

    def finish_group_round(
        self, thread: Union[GroupThread, Mapping[str, Any]], replies: Sequence[Mapping[str, Any]]
    ) -> GroupDecision:
        """The finals of the round just run (``[{"agent": id, "reply": text or None}]``)."""
        items = [
            (_require_str(r.get("agent"), f"replies[{i}].agent"), _opt_str(r.get("reply"), f"replies[{i}].reply"))
            for i, r in enumerate(replies)
        ]
        return _group(self._live().finish_group_round(_group_thread(thread), items))

    def cancel_group_thread(self, thread: Union[GroupThread, Mapping[str, Any]]) -> GroupDecision:
        """The thread was cancelled: forget it."""
        return _group(self._live().cancel_group_thread(_group_thread(thread)))

    # -- batch, snapshots, swaps, metrics --

    def apply_events(self, jsonl: str, first_line: int = 1) -> str:
        """Applies trace events (JSON Lines, spec/trace-format.md) and returns their decisions
        (JSON Lines). ``first_line`` is the 1-based trace line number of the first line, so
        errors and decisions carry the trace's own numbering."""
        if not isinstance(first_line, int) or not 1 <= first_line <= 0xFFFFFFFF:
            raise LoopGuardError("input", "first_line", f"must be an integer >= 1, not {first_line!r}")
        return self._live().apply_events(_require_str(jsonl, "jsonl"), first_line)

    def check_many(self, events: Sequence[Mapping[str, Any]], first_line: int = 1) -> list[dict[str, Any]]:
        """Like :meth:`apply_events` for event dicts: decisions as dicts."""
        text = "\n".join(_json(e, f"events[{i}]") for i, e in enumerate(events))
        return [json.loads(line) for line in self.apply_events(text, first_line).splitlines()]

    def export_state(self) -> bytes:
        """The whole state as a versioned snapshot (bytes owned by the policy)."""
        return self._live().export_state()

    def import_state(self, snapshot: bytes) -> None:
        """Replaces the state with a snapshot from :meth:`export_state`; on error it is kept."""
        if not isinstance(snapshot, (bytes, bytearray, memoryview)):
            raise LoopGuardError("input", "snapshot", "must be bytes")
        self._live().import_state(bytes(snapshot))

    def swap(self, policy: PathLike, *, expect_digest: Optional[str] = None) -> dict[str, Any]:
        """Hot swap to the policy component at ``policy`` with every count carried over; on any
        failure the active policy stays and a LoopGuardError says why."""
        f, t, fd, td, snap, prepare, paused = self._live().swap(str(policy), expect_digest)
        return {
            "from": {"version": f, "blake3": fd},
            "to": {"version": t, "blake3": td},
            "snapshot_bytes": snap,
            "prepare_ms": prepare,
            "paused_ms": paused,
        }

    @property
    def policy(self) -> PolicyInfo:
        """The active policy."""
        return PolicyInfo(*self._live().policy())

    def health(self) -> dict[str, int]:
        """The supervisor's counters (recoveries, timeouts, traps, swaps, …)."""
        return dict(self._live().health())

    def stats(self) -> Stats:
        """Counters: sessions, bot pairs, group threads and the policy's memory."""
        return Stats(*self._live().stats())

    # -- lifetime --

    @property
    def closed(self) -> bool:
        return self._guard is None

    def close(self) -> None:
        """Releases the policy instance; later calls raise LoopGuardError. Safe to call twice."""
        self._guard = None

    def __enter__(self) -> "LoopGuard":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _live(self) -> _native.Guard:
        guard = self._guard
        if guard is None:
            raise LoopGuardError("policy", "gateway", "this LoopGuard was closed; create a new one")
        return guard


# ---- conversions (no policy logic below) ----


#: The answers of nearly every call, made once: a frozen dataclass costs about a microsecond to
#: make, and these carry nothing but their action.
_ALLOW, _ALLOW_TUPLE = ToolVerdict("allow"), ("allow", None, 0, None, False)
_RECORDED, _RECORDED_TUPLE = OutcomeVerdict("recorded"), ("recorded", None, 0, None, None)
_IGNORED = OutcomeVerdict("ignored")


def _tool_call(call: Union[ToolCall, Mapping[str, Any]]) -> tuple[str, str, str, Optional[str], Optional[str], Optional[str]]:
    if isinstance(call, ToolCall):
        cached = call._native_call
        if cached is None:
            c = call
            cached = _checked_call(c.session, c.tool, _args_text(c.args_json, c.args), c.run, c.agent, c.call_id)
            object.__setattr__(c, "_native_call", cached)  # frozen: the cache is set once, here
        return cached
    if isinstance(call, Mapping):
        text = _args_text(call.get("args_json"), call.get("args"))
        return _checked_call(call.get("session"), call.get("tool"), text, call.get("run"), call.get("agent"), call.get("call_id"))
    raise LoopGuardError("input", "call", f"must be a ToolCall or a mapping, not {type(call).__name__}")


def _checked_call(
    session: Any, tool: Any, text: str, run: Any, agent: Any, call_id: Any
) -> tuple[str, str, str, Optional[str], Optional[str], Optional[str]]:
    return (
        _require_str(session, "call.session"),
        _require_str(tool, "call.tool"),
        text,
        _opt_str(run, "call.run"),
        _opt_str(agent, "call.agent"),
        _opt_str(call_id, "call.call_id"),
    )


def _args_text(args_json: Any, args: Any) -> str:
    return _require_str(args_json, "call.args_json") if args_json is not None else _json(args, "call.args")


def _bot_message(
    msg: Union[BotMessage, Mapping[str, Any]],
) -> tuple[str, str, str, Optional[str], str, str, int, Optional[str]]:
    m: Mapping[str, Any] = msg.__dict__ if isinstance(msg, BotMessage) else msg
    if not isinstance(m, Mapping):
        raise LoopGuardError("input", "message", f"must be a BotMessage or a mapping, not {type(msg).__name__}")
    ts = m.get("ts_ms")
    if not isinstance(ts, int) or isinstance(ts, bool):
        raise LoopGuardError("input", "message.ts_ms", f"must be an integer (milliseconds), not {ts!r}")
    return (
        _require_str(m.get("channel"), "message.channel"),
        _require_str(m.get("account"), "message.account"),
        _require_str(m.get("conversation"), "message.conversation"),
        _opt_str(m.get("room"), "message.room"),
        _require_str(m.get("sender"), "message.sender"),
        _require_str(m.get("receiver"), "message.receiver"),
        ts,
        _opt_str(m.get("event_id"), "message.event_id"),
    )


def _group_thread(t: Union[GroupThread, Mapping[str, Any]]) -> tuple[str, str, str, Optional[str], str]:
    m: Mapping[str, Any] = t.__dict__ if isinstance(t, GroupThread) else t
    if not isinstance(m, Mapping):
        raise LoopGuardError("input", "thread", f"must be a GroupThread or a mapping, not {type(t).__name__}")
    return (
        _require_str(m.get("channel"), "thread.channel"),
        _require_str(m.get("account"), "thread.account"),
        _require_str(m.get("conversation"), "thread.conversation"),
        _opt_str(m.get("thread"), "thread.thread"),
        _require_str(m.get("root"), "thread.root"),
    )


def _group(step: tuple[str, int, list[str], Optional[str]]) -> GroupDecision:
    action, round_, participants, reason = step
    return GroupDecision(action, round_, tuple(participants), reason)


def _error_value(error: Any) -> Any:
    """formatError's Error case: an exception gives its message (or its class name if empty)."""
    if isinstance(error, BaseException):
        return str(error) or type(error).__name__
    return error


def _config_text(config: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(config, str):
        return config
    if isinstance(config, Mapping):
        return _json(config, "config")
    raise LoopGuardError("config", "config", "must be JSON/JSON5 text or a mapping")


#: One encoder for every value: ``json.dumps`` with options builds a new encoder per call, a
#: third of its time on a 300-byte dict. ASCII output carries lone surrogates (which a Python
#: ``str`` may hold) as ``\udXXX`` escapes, as ``JSON.stringify`` writes them; the policy reads
#: them with JavaScript's rules.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def _json(value: Any, path: str) -> str:
    """The native writer first (a third of a decision's time with ``json`` alone); it leaves
    every value that is not plain JSON data of built-in types to ``json``."""
    text = _native.dumps(value)
    if text is not None:
        return text
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError) as e:
        raise LoopGuardError("input", path, f"cannot be serialized as JSON ({e})") from e


def _require_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise LoopGuardError("input", path, f"must be a string, not {type(value).__name__}")
    return value


def _opt_str(value: Any, path: str) -> Optional[str]:
    return None if value is None else _require_str(value, path)
