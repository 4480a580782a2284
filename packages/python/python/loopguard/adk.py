"""loopguard as a Google ADK plugin: the policy checks every tool call an ADK agent makes, in the
application's own process (``pip install loopguard google-adk``)::

    from loopguard.adk import LoopGuardPlugin

    app = App(name="app", root_agent=agent, plugins=[LoopGuardPlugin()])  # or Runner(..., plugins=[...])

| ADK callback | gate | answer |
|---|---|---|
| ``before_tool_callback`` | ``before`` | ``None`` (the tool runs), or ``{"error": <the policy's text>}``: ADK skips the tool and hands that dict to the model as the call's function response |
| ``after_tool_callback`` / ``on_tool_error_callback`` | ``after``, paired by ``function_call_id`` | ``None`` (the result, or the error, unchanged); ADK calls ``after_tool_callback`` for a refused call too: it is not recorded |
| ``before_model_callback`` | | the invocation's warnings, each once, as a user text after the tool results of this request; after an end of run, an ``LlmResponse`` with the policy's text: the model is not called and that text is the run's final answer |
| ``after_run_callback`` | | forgets the invocation's notes and end mark |

The session is ``tool_context.session.id`` unless ``session`` (a function of the ToolContext) says
otherwise; the run is the invocation id. Why a plugin: one plugin on the Runner covers every agent
and sub-agent it runs, where ``LlmAgent(before_tool_callback=…)`` covers one. Why the end goes
through ``before_model_callback``: ADK's own ``end_invocation`` is reachable from a tool callback
only through a private attribute; a plugin's model answer is public API and stops the loop the
same way, before the model is asked again. No loop rule lives here: the policy decides.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Mapping, Optional, Union

try:
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("loopguard.adk needs Google ADK: pip install google-adk") from e

from ._gate import ToolGate, _remember

__all__ = ["LoopGuardPlugin"]


def _session_id(tool_context: Any) -> str:
    return str(tool_context.session.id)


class LoopGuardPlugin(BasePlugin):
    """An ADK Runner plugin; one may serve many runners and sessions."""

    def __init__(self, config: Union[str, Mapping[str, Any], None] = None, *, guard: Optional[Any] = None,
                 session: Optional[Callable[[Any], str]] = None, name: str = "loopguard") -> None:
        """``config``: an OpenClaw-style config (text or mapping; the agent-facing default document
        fills what it leaves out), or ``guard``: a LoopGuard to share. ``session``: the session id
        from a ToolContext (default: the ADK session's id). A broken config raises LoopGuardError."""
        super().__init__(name=name)
        self.gate = ToolGate(config, guard=guard)
        self._session = session or _session_id
        self._tickets: OrderedDict[str, str] = OrderedDict()  # function_call_id -> ticket
        self._notes: OrderedDict[str, list] = OrderedDict()  # invocation id -> warnings to hand over
        self._ended: OrderedDict[str, str] = OrderedDict()  # invocation id -> the end-of-run text
        self._lock = threading.Lock()

    async def before_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any) -> Optional[dict]:
        before = self.gate.before(self._session(tool_context), tool.name, tool_args,
                                  call_id=tool_context.function_call_id, run=tool_context.invocation_id,
                                  agent=tool_context.agent_name)
        if not before.run:
            if before.end_run:
                with self._lock:
                    _remember(self._ended, tool_context.invocation_id, before.message or "")
            return {"error": before.message}
        with self._lock:
            _remember(self._tickets, str(tool_context.function_call_id), before.ticket)
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, result: Any) -> None:
        self._outcome(tool_context, result=result)
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, error: Exception) -> None:
        self._outcome(tool_context, error=f"{type(error).__name__}: {error}")
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Optional[Any]:
        invocation = callback_context.invocation_id
        with self._lock:
            ended = self._ended.get(invocation)
            notes = self._notes.pop(invocation, None)
        if ended is not None:
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=ended)]))
        if notes:
            llm_request.contents.append(types.Content(role="user", parts=[types.Part(text=n) for n in notes]))
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        with self._lock:
            self._notes.pop(invocation_context.invocation_id, None)
            self._ended.pop(invocation_context.invocation_id, None)

    def _outcome(self, tool_context: Any, **outcome: Any) -> None:
        with self._lock:
            ticket = self._tickets.pop(str(tool_context.function_call_id), None)
        if ticket is None:  # refused by us (ADK reports its dict as a result), or already recorded
            return
        after = self.gate.after(ticket, **outcome)
        invocation = tool_context.invocation_id
        with self._lock:
            if after.note:
                _remember(self._notes, invocation, self._notes.pop(invocation, []) + [after.note])
            if after.end_run:
                _remember(self._ended, invocation, after.message or "")


