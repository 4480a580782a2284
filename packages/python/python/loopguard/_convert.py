"""Python values to the native module's tuples and JSON text, and its answers back.

No policy logic lives here: a failed check raises ``LoopGuardError("input", <path>, ...)``
naming the field; every decision is made inside the policy.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Union

from ._errors import LoopGuardError
from ._inputs import BotMessage, GroupThread, ToolCall
from ._results import GroupDecision


def _tool_call(
    call: Union[ToolCall, Mapping[str, Any]],
) -> tuple[str, str, str, Optional[str], Optional[str], Optional[str]]:
    """(session, tool, args_json, run, agent, call_id); ``args_json`` (a string) wins over ``args``."""
    m: Mapping[str, Any] = call.__dict__ if isinstance(call, ToolCall) else call
    if not isinstance(m, Mapping):
        raise LoopGuardError("input", "call", f"must be a ToolCall or a mapping, not {type(call).__name__}")
    session = _require_str(m.get("session"), "call.session")
    tool = _require_str(m.get("tool"), "call.tool")
    args_json = m.get("args_json")
    text = _json(m.get("args"), "call.args") if args_json is None else _require_str(args_json, "call.args_json")
    run = _opt_str(m.get("run"), "call.run")
    agent = _opt_str(m.get("agent"), "call.agent")
    return (session, tool, text, run, agent, _opt_str(m.get("call_id"), "call.call_id"))


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


def _json(value: Any, path: str) -> str:
    """``value`` as JSON text. ASCII output carries a lone surrogate (which a Python ``str`` may
    hold) as a ``\\udXXX`` escape, as ``JSON.stringify`` writes it; the policy reads it with
    JavaScript's rules. ``NaN`` and the infinities are refused, as JSON has no text for them."""
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        raise LoopGuardError("input", path, f"cannot be serialized as JSON ({e})") from e


def _require_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise LoopGuardError("input", path, f"must be a string, not {type(value).__name__}")
    try:
        value.encode()
    except UnicodeEncodeError:
        # A lone surrogate has no UTF-8 form (the policy's strings are UTF-8).
        raise LoopGuardError("input", path, "has a lone surrogate (not valid Unicode text)") from None
    return value


def _limit(value: Any, path: str, unit: str) -> Optional[int]:
    """A sandbox limit (``deadline_ms``, ``memory_mib``): ``None`` for the default, else a whole
    number of ``unit`` from 1 (0 would stop every call, or every instance before it starts)."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value < 2**64:
        raise LoopGuardError("config", path, f"must be a whole number of {unit} (1 or more), not {value!r}")
    return value


def _opt_str(value: Any, path: str) -> Optional[str]:
    return None if value is None else _require_str(value, path)
