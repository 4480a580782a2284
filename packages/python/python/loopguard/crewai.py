"""loopguard for CrewAI: the policy checks every tool call of every crew in the process through
CrewAI's global tool and LLM hooks (``pip install loopguard crewai``)::

    from loopguard.crewai import LoopGuardHooks

    LoopGuardHooks().install()  # before the crews are built; or `with LoopGuardHooks(): crew.kickoff()`

| CrewAI hook | gate | answer |
|---|---|---|
| ``before_tool_call`` | ``before`` | ``None`` (the tool runs), or ``False``: CrewAI skips the tool |
| ``after_tool_call`` | ``after`` with ``tool_result``, paired by order | ``None`` (the result unchanged); for a call refused here, the policy's text instead of CrewAI's fixed "Tool execution blocked by hook. Tool: X", and no outcome recorded (CrewAI runs after hooks for a refused call too) |
| ``before_llm_call`` | | the session's warnings, each once, appended to ``messages`` as a user message (it stays in the agent's history); after an end of run ``False``: CrewAI refuses the model call and ``kickoff()`` raises ``LLMCallBlockedError`` |

Why by order: CrewAI's tool hooks carry no call id. Tickets wait per session, tool and arguments
in the order the calls were checked, and the first to finish takes the first; CrewAI runs one
step's calls in threads, so only calls that are the same call are interchangeable. A hook that
rewrites ``tool_input`` in place after this one leaves its call unpaired (never recorded). The
session is the crew's and agent's ids (``crew.id/agent.id``) unless ``session``, a function of a
hook context (tool and LLM contexts both carry ``agent``, ``task`` and ``crew``), says otherwise.
The hooks are global: CrewAI copies them into each agent's executor when it is built, so install
before ``kickoff()``. No loop rule lives here: the policy decides.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Callable, Mapping, Optional, Union

try:
    from crewai.hooks import (
        register_after_tool_call_hook,
        register_before_llm_call_hook,
        register_before_tool_call_hook,
        unregister_after_tool_call_hook,
        unregister_before_llm_call_hook,
        unregister_before_tool_call_hook,
    )
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("loopguard.crewai needs CrewAI: pip install crewai") from e

from ._gate import OrderedTickets, ToolGate, _remember

__all__ = ["LoopGuardHooks"]


def _session_id(ctx: Any) -> str:
    ids = [str(o.id) for o in (getattr(ctx, "crew", None), getattr(ctx, "agent", None))
           if getattr(o, "id", None) is not None]
    return "/".join(ids) or "crewai"


def _call_key(ctx: Any) -> str:
    return ctx.tool_name + "\0" + json.dumps(ctx.tool_input, sort_keys=True, default=str)


class LoopGuardHooks:
    """The three global hooks; :meth:`install` registers them, :meth:`uninstall` removes them."""

    def __init__(self, config: Union[str, Mapping[str, Any], None] = None, *, guard: Optional[Any] = None,
                 session: Optional[Callable[[Any], str]] = None) -> None:
        """``config``: an OpenClaw-style config (text or mapping; the agent-facing default document
        fills what it leaves out), or ``guard``: a LoopGuard to share. ``session``: the session id
        from a hook context. A broken config raises LoopGuardError here."""
        self.gate = ToolGate(config, guard=guard)
        self._session = session or _session_id
        self._tickets = OrderedTickets()  # calls let run, waiting for their outcome
        self._refused = OrderedTickets()  # the policy's text for calls refused here
        self._notes: OrderedDict[str, list] = OrderedDict()  # session -> warnings to hand over
        self._ended: OrderedDict[str, bool] = OrderedDict()  # sessions whose run is to end
        self._lock = threading.Lock()

    def install(self) -> "LoopGuardHooks":
        register_before_tool_call_hook(self.before_tool_call)
        register_after_tool_call_hook(self.after_tool_call)
        register_before_llm_call_hook(self.before_llm_call)
        return self

    def uninstall(self) -> None:
        unregister_before_tool_call_hook(self.before_tool_call)
        unregister_after_tool_call_hook(self.after_tool_call)
        unregister_before_llm_call_hook(self.before_llm_call)

    def __enter__(self) -> "LoopGuardHooks":
        return self.install()

    def __exit__(self, *exc: Any) -> None:
        self.uninstall()

    def before_tool_call(self, ctx: Any) -> Optional[bool]:
        session, key = str(self._session(ctx)), _call_key(ctx)
        agent = getattr(ctx.agent, "role", None) if ctx.agent is not None else None
        before = self.gate.before(session, ctx.tool_name, ctx.tool_input, agent=agent)
        if before.run:
            self._tickets.push(session, key, before.ticket)
            return None
        self._refused.push(session, key, before.message or "")
        if before.end_run:
            self._end(session)
        return False

    def after_tool_call(self, ctx: Any) -> Optional[str]:
        session, key = str(self._session(ctx)), _call_key(ctx)
        if ctx.tool_result == f"Tool execution blocked by hook. Tool: {ctx.tool_name}":
            return self._refused.shift(session, key)  # ours: the policy's text; another hook's: as is
        ticket = self._tickets.shift(session, key)
        if ticket is None:
            return None
        after = self.gate.after(ticket, result=ctx.tool_result)
        if after.note:
            with self._lock:
                _remember(self._notes, session, self._notes.pop(session, []) + [after.note])
        if after.end_run:
            self._end(session)
        return None

    def before_llm_call(self, ctx: Any) -> Optional[bool]:
        session = str(self._session(ctx))
        with self._lock:
            if self._ended.pop(session, False):
                self._notes.pop(session, None)
                return False
            notes = self._notes.pop(session, None)
        if notes:
            ctx.messages.append({"role": "user", "content": "\n".join(notes)})
        return None

    def _end(self, session: str) -> None:
        with self._lock:
            _remember(self._ended, session, True)
