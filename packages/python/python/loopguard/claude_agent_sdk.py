"""loopguard for the Claude Agent SDK (``claude-agent-sdk``): the policy checks every tool call of a
``query()`` or a ``ClaudeSDKClient`` through the SDK's own hooks, in the application's process
(``pip install loopguard claude-agent-sdk``)::

    from loopguard.claude_agent_sdk import loopguard_hooks

    options = ClaudeAgentOptions(hooks=loopguard_hooks(), ...)

| SDK hook | gate | answer |
|---|---|---|
| ``PreToolUse`` | ``before`` | ``{}`` (the SDK's own permissions go on), or ``permissionDecision: "deny"`` with the policy's text as ``permissionDecisionReason``: the model gets it as the call's error result (Claude Code writes ``PreToolUse:<tool> hook error: <text>``); at an end of run also ``continue_: False`` |
| ``PostToolUse`` | ``after`` with the result, paired by ``tool_use_id`` | a warning as ``additionalContext`` (once: Claude Code adds it to that result); at an end of run ``continue_: False`` with the policy's text as ``stopReason`` |
| ``PostToolUseFailure`` | ``after`` with the error | the same |

A refused call has no ticket, so nothing is recorded for it if Claude Code reports it as a
failure. The session is the SDK's ``session_id`` unless ``session`` (a function of the hook
input) says otherwise. Why hooks and not ``can_use_tool``: hooks run for every tool, also those
the settings allow without asking, and ``PostToolUse`` gives the outcome. No loop rule lives
here: the policy decides (the same mapping as the Node package's ``loopguard/claude-agent-sdk``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Mapping, Optional, Union

try:
    from claude_agent_sdk import HookMatcher
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("loopguard.claude_agent_sdk needs the Claude Agent SDK: pip install claude-agent-sdk") from e

from ._gate import ToolGate, _remember

__all__ = ["loopguard_hooks", "LoopGuardHooks"]


class LoopGuardHooks:
    """The three hook callbacks and their bookkeeping; :meth:`hooks` is the ``hooks`` option."""

    def __init__(self, config: Union[str, Mapping[str, Any], None] = None, *, guard: Optional[Any] = None,
                 session: Optional[Callable[[Mapping[str, Any]], str]] = None) -> None:
        """``config``: an OpenClaw-style config (text or mapping; the agent-facing default document
        fills what it leaves out), or ``guard``: a LoopGuard to share. ``session``: the session id
        from a hook input (default: its ``session_id``). A broken config raises LoopGuardError."""
        self.gate = ToolGate(config, guard=guard)
        self._session = session or (lambda inp: inp["session_id"])
        self._tickets: OrderedDict[str, str] = OrderedDict()  # tool_use_id -> ticket
        self._lock = threading.Lock()

    def hooks(self) -> dict:
        """``PreToolUse``, ``PostToolUse`` and ``PostToolUseFailure`` matchers for every tool; add
        matchers of your own to the lists."""
        return {"PreToolUse": [HookMatcher(hooks=[self.pre_tool_use])],
                "PostToolUse": [HookMatcher(hooks=[self.post_tool_use])],
                "PostToolUseFailure": [HookMatcher(hooks=[self.post_tool_use])]}

    async def pre_tool_use(self, inp: Mapping[str, Any], tool_use_id: Optional[str], context: Any) -> dict:
        call_id = tool_use_id or inp.get("tool_use_id")
        before = self.gate.before(str(self._session(inp)), inp["tool_name"], inp.get("tool_input"),
                                  call_id=call_id, agent=inp.get("agent_id"))
        if not before.run:
            deny = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                    "permissionDecisionReason": before.message}
            if before.end_run:
                return {"continue_": False, "stopReason": before.message, "hookSpecificOutput": deny}
            return {"hookSpecificOutput": deny}
        with self._lock:
            _remember(self._tickets, str(call_id), before.ticket)
        return {}

    async def post_tool_use(self, inp: Mapping[str, Any], tool_use_id: Optional[str], context: Any) -> dict:
        with self._lock:
            ticket = self._tickets.pop(str(tool_use_id or inp.get("tool_use_id")), None)
        if ticket is None:  # refused by us, or never checked
            return {}
        event = inp.get("hook_event_name", "PostToolUse")
        if event == "PostToolUseFailure":
            after = self.gate.after(ticket, error=inp.get("error"))
        else:
            after = self.gate.after(ticket, result=inp.get("tool_response"))
        out: dict = {}
        if after.note:
            out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": after.note}
        if after.end_run:
            out.update({"continue_": False, "stopReason": after.message})
        return out


def loopguard_hooks(config: Union[str, Mapping[str, Any], None] = None, *, guard: Optional[Any] = None,
                    session: Optional[Callable[[Mapping[str, Any]], str]] = None) -> dict:
    """The ``hooks`` option of ``ClaudeAgentOptions`` with loopguard on every tool call (see
    :class:`LoopGuardHooks` for the options). A broken config raises LoopGuardError here."""
    return LoopGuardHooks(config, guard=guard, session=session).hooks()
