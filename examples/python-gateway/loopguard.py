"""LoopGuard for Python gateways: the loopguard policy component, run by wasmtime-py.

Why a component and not a Python port: every gateway (Rust, Node, Python, the wasmtime CLI) loads
the same ``loopguard_policy.wasm``, so a Python gateway blocks exactly the loops the others block,
and a policy update is a file swap. This module only converts between Python values and the WIT
types of ``wit/policy.wit``; every decision is made inside the component.

Why ``apply_events``: each typed call crosses the wasmtime-py boundary through ctypes, which costs
tens of microseconds in Python. A gateway that can queue events (or replays logs) sends many at
once as JSON Lines and pays that cost once per batch.

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

import hashlib
import importlib.metadata
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

import wasmtime
from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker, Record, Variant

__all__ = [
    "SUPPORTED_INTERFACE",
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
    "replay",
    "policy_version",
    "interface_version",
]

#: The WIT interface (major.minor) this module accepts; another 0.x minor is refused at load.
SUPPORTED_INTERFACE = "0.5"
_GUARD = "loopguard:policy/guard@0.5.0"
_ROOT = Path(__file__).resolve().parents[2]
#: The one policy every host loads; ``LOOPGUARD_POLICY_WASM`` points elsewhere.
DEFAULT_WASM = _ROOT / "target/policy/wasm32-wasip2/release/loopguard_policy.wasm"
_BUILD = "cargo build -p loopguard-policy --release --target wasm32-wasip2 --target-dir target/policy"
_MISSING: Any = object()


class LoopGuardError(Exception):
    """Bad config, malformed input or an unreadable snapshot; ``str()`` is ``<path>: <reason>``.

    ``path`` says where (``tools.loopDetection.historySize``, ``line 3: args``, ``call.args-json``),
    ``reason`` what is wrong and how to fix it.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


# ---- inputs ----


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the gateway sees it. ``args`` is serialized with ``json.dumps`` unless
    ``args_json`` (the arguments as JSON text, e.g. straight from the model) is given."""

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


# ---- results (the vocabulary of the decision lines: generic_repeat, all_passed, ...) ----


@dataclass(frozen=True)
class ToolVerdict:
    """``allow`` | ``warn`` | ``block``; ``detector``/``message`` are None for ``allow``."""

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
    pairs: int
    evicted_pairs: int
    group_threads: int


# ---- the loaded policy (compiled once per process) ----


class _Policy:
    """The compiled component and its export indexes, shared by every LoopGuard."""

    _lock = threading.Lock()
    _loaded: dict[Path, "_Policy"] = {}

    def __init__(self, wasm: Path) -> None:
        if not wasm.is_file():
            raise LoopGuardError(str(wasm), f"policy component not found; build it with `{_BUILD}`")
        self.engine = Engine()
        self.component = _compile(self.engine, wasm)
        self.linker = Linker(self.engine)
        self.linker.add_wasip2()
        guard = self.component.get_export_index(_GUARD)
        if guard is None:
            raise LoopGuardError(str(wasm), f"does not export {_GUARD}; is it a loopguard policy?")
        self.index = {
            name: self.component.get_export_index(name, guard)
            for name in (
                "[static]gateway.create",
                "[method]gateway.check-tool-call",
                "[method]gateway.record-tool-outcome",
                "[method]gateway.compaction-retried",
                "[method]gateway.end-session",
                "[method]gateway.apply-events",
                "[method]gateway.export-state",
                "[method]gateway.import-state",
                "[method]gateway.stats",
                "[method]gateway.check-bot-message",
                "[method]gateway.start-group-thread",
                "[method]gateway.finish-group-round",
                "[method]gateway.cancel-group-thread",
                "[method]gateway.bot-stats",
            )
        }
        for name in ("version", "interface-version", "replay"):
            self.index[name] = self.component.get_export_index(name)
        store, funcs = self.instantiate()
        self.version: str = funcs["version"](store)
        self.interface_version: str = funcs["interface-version"](store)
        major_minor = ".".join(self.interface_version.split(".")[:2])
        if major_minor != SUPPORTED_INTERFACE:
            raise LoopGuardError(
                "interface-version",
                f"the policy implements loopguard:policy@{self.interface_version}, this module needs "
                f"{SUPPORTED_INTERFACE}.x; rebuild the policy or update examples/python-gateway",
            )

    @classmethod
    def get(cls, wasm: Union[str, Path, None] = None) -> "_Policy":
        path = Path(wasm or os.environ.get("LOOPGUARD_POLICY_WASM") or DEFAULT_WASM).resolve()
        with cls._lock:
            if path not in cls._loaded:
                cls._loaded[path] = _Policy(path)
            return cls._loaded[path]

    def instantiate(self) -> tuple[Store, dict[str, Any]]:
        """A fresh store and instance: all state of one gateway lives in it."""
        store = Store(self.engine)
        store.set_wasi(WasiConfig())  # no preopens, no env: the guest does no I/O
        instance = self.linker.instantiate(store, self.component)
        return store, {name: instance.get_func(store, idx) for name, idx in self.index.items()}


def _compile(engine: Engine, wasm: Path) -> Component:
    """Compiles the component, reusing a cached artifact keyed by the wasm's sha256 and the
    wasmtime version (``LOOPGUARD_CACHE_DIR``, default ``~/.cache/loopguard``; empty = off):
    compiling takes about a second, loading a cached artifact a few milliseconds."""
    data = wasm.read_bytes()
    cache_dir = os.environ.get("LOOPGUARD_CACHE_DIR", str(Path.home() / ".cache" / "loopguard"))
    if not cache_dir:
        return Component(engine, data)
    digest = hashlib.sha256(data).hexdigest()[:32]
    cached = Path(cache_dir) / f"py-wasmtime-{_wasmtime_version()}-{digest}.cwasm"
    if cached.is_file():
        try:
            return Component.deserialize_file(engine, str(cached))
        except wasmtime.WasmtimeError:
            pass  # another wasmtime build or a damaged file: recompile and overwrite
    component = Component(engine, data)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(bytes(component.serialize()))
        tmp.replace(cached)
    except OSError:
        pass  # a read-only home is fine: the cache is only a speed-up
    return component


def _wasmtime_version() -> str:
    try:
        return importlib.metadata.version("wasmtime")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def policy_version(wasm: Union[str, Path, None] = None) -> str:
    """The policy's own version (the guest crate version)."""
    return _Policy.get(wasm).version


def interface_version(wasm: Union[str, Path, None] = None) -> str:
    """The WIT interface version the policy implements."""
    return _Policy.get(wasm).interface_version


def replay(config: Union[str, Mapping[str, Any]], trace: str, wasm: Union[str, Path, None] = None) -> str:
    """Replays a whole trace (JSON Lines) on a fresh gateway; returns the decisions (JSON Lines),
    byte for byte what ``loopguard replay`` prints."""
    policy = _Policy.get(wasm)
    store, funcs = policy.instantiate()
    return _ok(funcs["replay"](store, _config_text(config), _require_str(trace, "trace")))


class LoopGuard:
    """All loop-guard state of one gateway process. Use it as a context manager (or call
    :meth:`close`) to release it. Calls are serialized by a lock, so threads may share it."""

    def __init__(self, config: Union[str, Mapping[str, Any]] = "{}", *, wasm: Union[str, Path, None] = None) -> None:
        """``config``: an OpenClaw-style config as JSON/JSON5 text (passed through unchanged) or
        a mapping (serialized with ``json.dumps``); ``{}`` means all defaults."""
        self._policy = _Policy.get(wasm)
        self._store, self._f = self._policy.instantiate()
        self._lock = threading.Lock()
        self._gateway: Any = _ok(self._f["[static]gateway.create"](self._store, _config_text(config)))

    # -- tool loop --

    def before_tool_call(self, call: Union[ToolCall, Mapping[str, Any]]) -> ToolVerdict:
        """Before a tool runs: allow, warn or block. Recorded unless blocked or disabled."""
        v = _ok(self._call("[method]gateway.check-tool-call", _tool_call(call)))
        return ToolVerdict(
            action=v.action,
            count=v.count,
            detector=_snake(v.detector),
            message=v.message,
            notify=v.notify,
        )

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
        answered here: JSON cannot carry it to the component.
        """
        if error is not _MISSING:
            outcome = Variant("threw", _json(_error_value(error), "outcome.error"))
        elif result is _MISSING:
            self._live()
            return OutcomeVerdict(action="ignored")
        else:
            outcome = Variant("returned", _json(result, "outcome.result"))
        v = _ok(self._call("[method]gateway.record-tool-outcome", _tool_call(call), outcome))
        if v.tag != "abort":
            return OutcomeVerdict(action=v.tag)
        a = v.payload
        return OutcomeVerdict("abort", _snake(a.detector), a.count, a.tool, a.message)

    def after_compaction_retry(self, session: str, run: Optional[str] = None, agent: Optional[str] = None) -> CompactionVerdict:
        """A context compaction succeeded and the run is being retried: arm the guard."""
        v = self._call(
            "[method]gateway.compaction-retried",
            _require_str(session, "session"),
            _opt_str(run, "run"),
            _opt_str(agent, "agent"),
        )
        return CompactionVerdict("disabled") if v is None else CompactionVerdict("armed", v)

    def end_session(self, session: str) -> None:
        """Forget a session (closed, or ``/new`` gave it a new id)."""
        self._call("[method]gateway.end-session", _require_str(session, "session"))

    # -- bots and groups --

    def on_bot_message(self, msg: Union[BotMessage, Mapping[str, Any]]) -> BotVerdict:
        """A bot-authored inbound message the channel already admitted: allow or suppress."""
        # bot-verdict's cases have distinct Python types, so wasmtime-py gives None (allow) or the
        # suppression record itself (see _case).
        tag, v = _case(_ok(self._call("[method]gateway.check-bot-message", _bot_message(msg))), "allow", "suppress")
        if tag == "allow":
            return BotVerdict("allow")
        return BotVerdict("suppress", v.__dict__["cooldown-until-ms"], v.budget)

    def start_group_thread(self, thread: Union[GroupThread, Mapping[str, Any]], peer: str, text: str) -> GroupDecision:
        """An inbound message to a conversation: round 1, a legacy pass, or ``none``."""
        v = self._call(
            "[method]gateway.start-group-thread",
            _group_thread(thread),
            _require_str(peer, "peer"),
            _require_str(text, "text"),
        )
        tag, v = _case(v, "none", "round", legacy=list)
        if tag == "round":
            return GroupDecision("round", v.round, tuple(v.participants))
        if tag == "legacy":
            return GroupDecision("legacy", participants=tuple(v))
        return GroupDecision("none")

    def finish_group_round(
        self, thread: Union[GroupThread, Mapping[str, Any]], replies: Sequence[Mapping[str, Any]]
    ) -> GroupDecision:
        """The finals of the round just run (``[{"agent": id, "reply": text or None}]``)."""
        items = []
        for i, r in enumerate(replies):
            rec = Record()
            rec.agent = _require_str(r.get("agent"), f"replies[{i}].agent")
            rec.reply = _opt_str(r.get("reply"), f"replies[{i}].reply")
            items.append(rec)
        return _group_step(self._call("[method]gateway.finish-group-round", _group_thread(thread), items))

    def cancel_group_thread(self, thread: Union[GroupThread, Mapping[str, Any]]) -> GroupDecision:
        """The thread was cancelled: forget it."""
        return _group_step(self._call("[method]gateway.cancel-group-thread", _group_thread(thread)))

    # -- batch, snapshots, metrics --

    def apply_events(self, jsonl: str, first_line: int = 1) -> str:
        """Applies trace events (JSON Lines, spec/trace-format.md) and returns their decisions
        (JSON Lines): one boundary crossing per batch. ``first_line`` is the 1-based trace line
        number of the first line, so errors and decisions carry the trace's own numbering."""
        if not isinstance(first_line, int) or not 1 <= first_line <= 0xFFFFFFFF:
            raise LoopGuardError("first_line", f"must be an integer >= 1, not {first_line!r}")
        return _ok(self._call("[method]gateway.apply-events", _require_str(jsonl, "jsonl"), first_line))

    def check_many(self, events: Sequence[Mapping[str, Any]], first_line: int = 1) -> list[dict[str, Any]]:
        """Like :meth:`apply_events` for event dicts: one boundary crossing, decisions as dicts."""
        text = "\n".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) for e in events)
        return [json.loads(line) for line in self.apply_events(text, first_line).splitlines()]

    def export_state(self) -> bytes:
        """The whole state as a versioned snapshot (bytes owned by the policy)."""
        return bytes(self._call("[method]gateway.export-state"))

    def import_state(self, snapshot: bytes) -> None:
        """Replaces the state with a snapshot from :meth:`export_state`; on error it is kept."""
        if not isinstance(snapshot, (bytes, bytearray, memoryview)):
            raise LoopGuardError("snapshot", "must be bytes")
        _ok(self._call("[method]gateway.import-state", bytes(snapshot)))

    def stats(self) -> Stats:
        """Counters: tool-loop sessions plus the bot and group guards."""
        g = self._call("[method]gateway.stats")
        b = self._call("[method]gateway.bot-stats")
        return Stats(g.sessions, g.__dict__["evicted-sessions"], b.pairs, b.__dict__["evicted-pairs"], b.__dict__["group-threads"])

    # -- lifetime --

    @property
    def closed(self) -> bool:
        return self._gateway is None

    def close(self) -> None:
        """Releases the gateway resource; later calls raise LoopGuardError. Safe to call twice."""
        with self._lock:
            gateway, self._gateway = self._gateway, None
            if gateway is not None:
                gateway.drop(self._store)

    def __enter__(self) -> "LoopGuard":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _live(self) -> Any:
        if self._gateway is None:
            raise LoopGuardError("gateway", "this LoopGuard was closed; create a new one")
        return self._gateway

    def _call(self, name: str, *args: Any) -> Any:
        with self._lock:
            return self._f[name](self._store, self._live(), *args)


# ---- conversions (no policy logic below) ----


def _ok(value: Any) -> Any:
    """Unwraps a WIT ``result``: wasmtime-py gives the ok value itself, or a Variant('ok'/'err')
    when both sides are records; a bare Record on the error side is the policy-error."""
    if isinstance(value, Variant) and value.tag in ("ok", "err"):
        if value.tag == "ok":
            return value.payload
        value = value.payload
    elif not isinstance(value, Record) or not hasattr(value, "reason"):
        return value
    raise LoopGuardError(value.path, value.reason)


def _rec(**fields: Any) -> Record:
    rec = Record()
    for name, value in fields.items():
        setattr(rec, name.replace("_", "-"), value)
    return rec


def _tool_call(call: Union[ToolCall, Mapping[str, Any]]) -> Record:
    if isinstance(call, Mapping):
        try:
            call = ToolCall(**call)
        except TypeError as e:
            raise LoopGuardError("call", str(e)) from None
    if not isinstance(call, ToolCall):
        raise LoopGuardError("call", f"must be a ToolCall or a mapping, not {type(call).__name__}")
    args = _require_str(call.args_json, "call.args_json") if call.args_json is not None else _json(call.args, "call.args")
    return _rec(
        session=_require_str(call.session, "call.session"),
        tool=_require_str(call.tool, "call.tool"),
        args_json=args,
        run=_opt_str(call.run, "call.run"),
        agent=_opt_str(call.agent, "call.agent"),
        call_id=_opt_str(call.call_id, "call.call_id"),
    )


def _bot_message(msg: Union[BotMessage, Mapping[str, Any]]) -> Record:
    if isinstance(msg, Mapping):
        try:
            msg = BotMessage(**msg)
        except TypeError as e:
            raise LoopGuardError("message", str(e)) from None
    if not isinstance(msg.ts_ms, int) or isinstance(msg.ts_ms, bool):
        raise LoopGuardError("message.ts_ms", f"must be an integer (milliseconds), not {msg.ts_ms!r}")
    return _rec(
        channel=_require_str(msg.channel, "message.channel"),
        account=_require_str(msg.account, "message.account"),
        conversation=_require_str(msg.conversation, "message.conversation"),
        room=_opt_str(msg.room, "message.room"),
        sender=_require_str(msg.sender, "message.sender"),
        receiver=_require_str(msg.receiver, "message.receiver"),
        ts_ms=msg.ts_ms,
        event_id=_opt_str(msg.event_id, "message.event_id"),
    )


def _group_thread(t: Union[GroupThread, Mapping[str, Any]]) -> Record:
    if isinstance(t, Mapping):
        try:
            t = GroupThread(**t)
        except TypeError as e:
            raise LoopGuardError("thread", str(e)) from None
    return _rec(
        channel=_require_str(t.channel, "thread.channel"),
        account=_require_str(t.account, "thread.account"),
        conversation=_require_str(t.conversation, "thread.conversation"),
        thread=_opt_str(t.thread, "thread.thread"),
        root=_require_str(t.root, "thread.root"),
    )


def _group_step(value: Any) -> GroupDecision:
    tag, v = _case(value, "", "round", stop=str)
    if tag == "round":
        return GroupDecision("round", v.round, tuple(v.participants))
    return GroupDecision("stop", reason=_snake(v))


def _case(value: Any, empty: str, record: str, **typed: type) -> tuple[str, Any]:
    """(tag, payload) of a WIT variant. wasmtime-py returns a ``Variant`` only when two cases
    would lift to the same Python type; otherwise the payload itself (None for a case without
    one), so the case is told by type: None -> ``empty``, a Record -> ``record``, else ``typed``."""
    if isinstance(value, Variant):
        return value.tag, value.payload
    if value is None:
        return empty, None
    if isinstance(value, Record):
        return record, value
    for tag, ty in typed.items():
        if isinstance(value, ty):
            return tag, value
    raise TypeError(f"unexpected variant value {value!r} from the policy")


def _error_value(error: Any) -> Any:
    """formatError's Error case (spec/tool-loop.md §1.3): the message, or the type name if empty."""
    if isinstance(error, BaseException):
        return str(error) or type(error).__name__
    return error


def _config_text(config: Union[str, Mapping[str, Any]]) -> str:
    if isinstance(config, str):
        return config
    if isinstance(config, Mapping):
        return _json(config, "config")
    raise LoopGuardError("config", "must be JSON/JSON5 text or a mapping")


def _json(value: Any, path: str) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise LoopGuardError(path, f"cannot be serialized as JSON ({e})") from None


def _require_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise LoopGuardError(path, f"must be a string, not {type(value).__name__}")
    return value


def _opt_str(value: Any, path: str) -> Optional[str]:
    return None if value is None else _require_str(value, path)


def _snake(wit_name: Optional[str]) -> Optional[str]:
    return None if wit_name is None else wit_name.replace("-", "_")
