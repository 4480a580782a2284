"""loopguard as a Strands Agents hook provider: the policy sees every tool call of an agent, and
refuses the calls of a loop before they run.

Why hooks: ``BeforeToolCallEvent`` is Strands' one place that sees a call before it runs and can
cancel it with a text (``cancel_tool``) that the model reads as the call's error result, and
``AfterToolCallEvent`` carries that call's id and result::

    from loopguard.strands import LoopGuardHooks

    agent = Agent(model=model, tools=[poll, read], hooks=[LoopGuardHooks()])

| Strands event | ToolGate | answer |
|---|---|---|
| ``BeforeToolCallEvent`` | ``before`` | ``cancel_tool = policy text``: the tool not run, an error result with the text |
| ``AfterToolCallEvent`` (paired by ``toolUseId``) | ``after`` | the tool's own result; a warning appended to it as one more text block |
| either, at an end of the run | | ``agent.cancel(message, after_current_tools=True)``: the call's batch finishes, the model gets no further request, the result's ``stop_reason`` is ``cancelled`` |

The warning goes into the result of the call that warned: Strands has no hook that adds a message
before the next model call (``BeforeModelCallEvent`` can only cancel it), and a result is writable.
``AfterToolCallEvent`` also fires for a cancelled call (``cancel_message`` set): a call that did
not run is never recorded as an outcome. An error result (``status: "error"``) or an exception is
recorded as an error.

Session: ``agent.session_id`` (the session manager's id, else one per Agent object, which holds
its conversation), or ``session(agent)`` where given. No loop rule here.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Callable, Mapping, Optional, Union

try:
    from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("loopguard.strands needs Strands Agents: pip install strands-agents") from e

from ._gate import MAX_PENDING, ToolGate

__all__ = ["LoopGuardHooks"]


class LoopGuardHooks(HookProvider):
    """The loop guard of the agents it is given to (``hooks=[LoopGuardHooks()]``). Agents may
    share it."""

    def __init__(self, config: Union[str, Mapping[str, Any], None] = None, *, guard: Any = None,
                 session: Optional[Callable[[Any], str]] = None) -> None:
        """``config``: an OpenClaw-style config (text or mapping) over the agent default; or
        ``guard``: a LoopGuard to share. ``session(agent)``: the session id of an agent's calls.
        A broken config raises LoopGuardError here, naming its path."""
        self.gate = ToolGate(config, guard=guard)
        self._session = session
        self._tickets: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.before_tool_call)
        registry.add_callback(AfterToolCallEvent, self.after_tool_call)

    def before_tool_call(self, event: BeforeToolCallEvent) -> None:
        if event.cancel_tool:
            return  # another hook refused it: it will not run
        use = event.tool_use
        session = self._session_of(event.agent)
        verdict = self.gate.before(session, use["name"], use.get("input"), call_id=use["toolUseId"],
                                   agent=getattr(event.agent, "name", None))
        if verdict.run:
            with self._lock:
                self._tickets[(session, use["toolUseId"])] = verdict.ticket
                while len(self._tickets) > MAX_PENDING:
                    self._tickets.popitem(last=False)
            return
        event.cancel_tool = verdict.message or "loopguard: blocked"
        if verdict.end_run:
            event.agent.cancel(message=verdict.message, after_current_tools=True)

    def after_tool_call(self, event: AfterToolCallEvent) -> None:
        use = event.tool_use
        with self._lock:
            ticket = self._tickets.pop((self._session_of(event.agent), use["toolUseId"]), None)
        if ticket is None or event.cancel_message is not None:
            if ticket is not None:
                self.gate.after(ticket)  # cancelled after our check: not an outcome
            return
        result = event.result
        if event.exception is not None:
            verdict = self.gate.after(ticket, error=event.exception)
        elif result.get("status") == "error":
            verdict = self.gate.after(ticket, error=_jsonable(result.get("content")))
        else:
            verdict = self.gate.after(ticket, result=_jsonable(result.get("content")))
        if verdict.note:
            event.result = {**result, "content": [*result.get("content", []), {"text": verdict.note}]}
        if verdict.end_run:
            event.agent.cancel(message=verdict.message, after_current_tools=True)

    def _session_of(self, agent: Any) -> str:
        if self._session is not None:
            return str(self._session(agent))
        return str(getattr(agent, "session_id", None) or f"strands:{id(agent)}")


def _jsonable(content: Any) -> Any:
    """A result's content blocks as the policy hashes them (an image's or a document's bytes as text)."""
    try:
        json.dumps(content, allow_nan=False)
        return content
    except (TypeError, ValueError, RecursionError):
        return json.loads(json.dumps(content, default=repr))
