"""``LoopGuard``: one gateway's loop-guard state, held by a supervised policy instance.

Each method converts its arguments (``_convert``), makes one call into the native module and
wraps the answer in a result type (``_results``); the decision itself is the policy's.
"""

from __future__ import annotations

import json
from time import perf_counter
from typing import Any, Mapping, Optional, Sequence, Union

from . import _metrics, _native
from ._convert import (
    _bot_message,
    _config_text,
    _error_value,
    _group,
    _group_thread,
    _json,
    _limit,
    _opt_str,
    _require_str,
    _tool_call,
)
from ._errors import LoopGuardError
from ._inputs import BotMessage, GroupThread, ToolCall
from ._policy import PathLike, _policy_file
from ._stored import Stored, _tls_file
from ._results import BotVerdict, CompactionVerdict, GroupDecision, OutcomeVerdict, PolicyInfo, Stats, ToolVerdict

#: "Not given" for ``after_tool_outcome``'s ``result``/``error``, where ``None`` is a value
#: (JSON ``null``) and only a missing argument is JavaScript's ``undefined``.
_MISSING: Any = object()


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
        store: Optional[str] = None,
        store_prefix: str = "lg:1:",
        store_ttl_s: Optional[int] = None,
        store_deadline_ms: Optional[int] = None,
        store_fail_closed: bool = False,
        store_ca: Optional[PathLike] = None,
        store_cert: Optional[PathLike] = None,
        store_key: Optional[PathLike] = None,
        meter_provider: Any = None,
        metrics_host: str = "python",
    ) -> None:
        """``config``: an OpenClaw-style config as JSON/JSON5 text (passed through unchanged) or
        a mapping (serialized with ``json.dumps``); ``{}`` means all defaults. ``policy``: a
        policy component to use instead of the shipped one, refused unless its blake3 digest is
        ``expect_digest`` when that is given. ``deadline_ms``: how long one call into the policy
        may run (default 100); ``memory_mib``: the policy instance's memory cap (default 256);
        ``fail_closed``: block instead of allow when the policy breaks on a decision.
        ``store``: keep the state in a store shared by replicas, ``"redis://host:port"`` (Valkey
        or Redis >= 7.0), a cluster ``"redis+cluster://host:port,host:port"`` or ``"memory"``, under ``store_prefix``, each key living
        ``store_ttl_s`` (default 3600) after its last write; a decision waits at most
        ``store_deadline_ms`` (default 20) for the store, then is made on local state (or, with
        ``store_fail_closed``, raises LoopGuardError). A ``"rediss://…"`` store speaks TLS,
        trusting the system's roots or the PEM file ``store_ca``; ``store_cert`` and ``store_key``
        are a client certificate and its key for a server that asks for one. ``health()`` adds
        the ``store_*`` counters (docs/SCALING.md). Metrics (docs/METRICS.md): recorded through
        OpenTelemetry on ``meter_provider``, or on the global provider when the application has
        imported ``opentelemetry.metrics`` before making the guard; never otherwise (nothing is
        imported). ``metrics_host`` is their ``host`` attribute."""
        text = _config_text(config)
        guard: Any = _native.Guard(
            text,
            _policy_file(policy),
            expect_digest,
            _limit(deadline_ms, "deadline_ms", "milliseconds"),
            _limit(memory_mib, "memory_mib", "MiB"),
            fail_closed,
        )
        if store is not None:
            guard = Stored(guard, text, _require_str(store, "store"), _require_str(store_prefix, "store_prefix"),
                           _limit(store_ttl_s, "store_ttl_s", "seconds"),
                           _limit(store_deadline_ms, "store_deadline_ms", "milliseconds"), store_fail_closed,
                           _policy_file(policy), expect_digest,
                           (_tls_file(store_ca, "store_ca"), _tls_file(store_cert, "store_cert"),
                            _tls_file(store_key, "store_key")))
        self._guard: Optional[_native.Guard] = guard
        self._metrics_host = _require_str(metrics_host, "metrics_host")
        self._metrics = _metrics.recorder(meter_provider)
        if self._metrics is not None:
            self._metrics.guards.add(self)

    # -- tool loop --

    def before_tool_call(self, call: Union[ToolCall, Mapping[str, Any]]) -> ToolVerdict:
        """Before a tool runs: allow, warn or block. Recorded unless blocked or disabled."""
        m = self._metrics
        started = perf_counter() if m is not None and m.due() else None
        action, detector, count, message, notify = self._live().check_tool_call(_tool_call(call))
        if started is not None:
            m.timed(self._metrics_host, "tool_call", perf_counter() - started)
        return ToolVerdict(action, count, detector, message, notify)

    def after_tool_outcome(
        self,
        call: Union[ToolCall, Mapping[str, Any]],
        *,
        result: Any = _MISSING,
        error: Any = _MISSING,
    ) -> OutcomeVerdict:
        """After a tool ran: records ``result=`` (any JSON value) or ``error=`` (a string, an
        exception, or any JSON value); may say to abort the run (post-compaction guard).

        OpenClaw's rule (docs/spec/tool-loop.md §1.3): an error, even ``None``, wins; no result at all
        (JS ``undefined``) has no hash and is neither recorded nor observed, so that one case is
        answered here: JSON cannot carry it to the policy.
        """
        m = self._metrics
        started = perf_counter() if m is not None and m.due() else None
        if error is not _MISSING:
            threw, text = True, _json(_error_value(error), "outcome.error")
        elif result is _MISSING:
            self._live().count_decision("tool_result", "ignored")
            return OutcomeVerdict("ignored")
        else:
            threw, text = False, _json(result, "outcome.result")
        verdict = OutcomeVerdict(*self._live().record_tool_outcome(_tool_call(call), threw, text))
        if started is not None:
            m.timed(self._metrics_host, "tool_result", perf_counter() - started)
        return verdict

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
        m = self._metrics
        started = perf_counter() if m is not None and m.due() else None
        action, until, budget = self._live().check_bot_message(_bot_message(msg))
        if started is not None:
            m.timed(self._metrics_host, "bot_message", perf_counter() - started)
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
        """Applies trace events (JSON Lines, docs/spec/trace-format.md) and returns their decisions
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
        if self._metrics is not None and self._guard is not None:
            self._metrics.retire(self)  # its decisions stay counted
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
