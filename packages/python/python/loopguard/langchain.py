"""loopguard as LangChain agent middleware: the policy sees every tool call of a ``create_agent``
agent (or of a LangGraph ``ToolNode``), and refuses the calls of a loop before they run.

Why a middleware: ``wrap_tool_call`` is LangChain 1.x's one place that sees a tool call before
it runs and its ``ToolMessage`` after, and a ``ToolMessage`` returned instead of running the tool
is what the model reads as that call's result::

    from loopguard.langchain import LoopGuardMiddleware

    agent = create_agent(model, tools, middleware=[LoopGuardMiddleware()])

| LangChain point | ToolGate | answer |
|---|---|---|
| ``wrap_tool_call`` (before ``handler``) | ``before`` | a refusal: ``ToolMessage(policy text, status="error")``, the tool not run |
| ``wrap_tool_call`` (``handler``'s message or exception) | ``after`` | the tool's own message, untouched |
| ``wrap_model_call`` | a warning of this session | one ``HumanMessage`` after the history, in the next request only |
| ``before_model`` (``can_jump_to=["end"]``) | an end of the run | ``{"jump_to": "end"}``: the model gets no further request |

Plain LangGraph: ``ToolNode(tools, wrap_tool_call=LoopGuardMiddleware(note_in_result=True).wrap_tool_call)``.
There is no model hook there, so a warning is appended to the text of the call that warned and
the run cannot be ended by loopguard (the refusal still comes; the graph's own edges decide).

Session: the thread (``configurable.thread_id``), else the id of the conversation's first message
(each invoke without a thread is its own session), or ``session(config)`` where given. Every call
has an id and its own ``wrap_tool_call``, so no pairing by order is needed. No loop rule here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Awaitable, Callable, Mapping, Optional, Union

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse, hook_config
    from langchain.messages import HumanMessage, ToolMessage
    from langgraph.config import get_config
    from langgraph.errors import GraphBubbleUp
    from langgraph.prebuilt.tool_node import ToolCallRequest
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("loopguard.langchain needs LangChain 1.x: pip install langchain") from e

from ._gate import MAX_PENDING, ToolGate

__all__ = ["LoopGuardMiddleware"]

Config = Union[str, Mapping[str, Any], None]
ToolResult = Any  # ToolMessage | Command


def _default_session(config: Mapping[str, Any], state: Any) -> str:
    thread = (config.get("configurable") or {}).get("thread_id")
    if thread is not None:
        return str(thread)
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    first = getattr(messages[0], "id", None) if messages else None
    return f"langchain:{first}" if first else "langchain"


class LoopGuardMiddleware(AgentMiddleware):
    """The loop guard for a ``create_agent`` agent (``middleware=[LoopGuardMiddleware()]``) or,
    through :meth:`wrap_tool_call`, a LangGraph ``ToolNode``. Threads and tasks may share it."""

    def __init__(self, config: Config = None, *, guard: Any = None,
                 session: Optional[Callable[[Mapping[str, Any]], str]] = None, note_in_result: bool = False) -> None:
        """``config``: an OpenClaw-style config (text or mapping) over the agent default; or
        ``guard``: a LoopGuard to share. ``session(config)``: the session id from the run's
        ``RunnableConfig``. ``note_in_result``: append a warning to the warned call's result (for
        a bare ``ToolNode``) instead of handing it to the model before its next request. A broken
        config raises LoopGuardError here, naming its path."""
        super().__init__()
        self.gate = ToolGate(config, guard=guard)
        self._session = session
        self._note_in_result = note_in_result
        self._notes: OrderedDict[str, list[str]] = OrderedDict()
        self._ended: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    # -- tools --

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]) -> ToolResult:
        session, ticket = self._before(request)
        if not isinstance(ticket, str):
            return ticket
        try:
            out = handler(request)
        except BaseException as e:
            self._after(session, ticket, None, e)
            raise
        return self._after(session, ticket, out, None)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]) -> ToolResult:
        session, ticket = self._before(request)
        if not isinstance(ticket, str):
            return ticket
        try:
            out = await handler(request)
        except BaseException as e:
            self._after(session, ticket, None, e)
            raise
        return self._after(session, ticket, out, None)

    def _before(self, request: ToolCallRequest) -> tuple[str, Union[str, ToolMessage]]:
        call = request.tool_call
        config = getattr(request.runtime, "config", None) or get_config()
        session = self._session_of(config, request.state)
        verdict = self.gate.before(session, call["name"], call.get("args"), call_id=call.get("id"))
        if verdict.run:
            return session, verdict.ticket
        if verdict.end_run:
            self._end(session, verdict.message or "")
        return session, ToolMessage(content=verdict.message or "", tool_call_id=call.get("id") or "",
                                    name=call["name"], status="error")

    def _after(self, session: str, ticket: str, out: Any, error: Optional[BaseException]) -> Any:
        if isinstance(error, Exception) and not isinstance(error, GraphBubbleUp):
            verdict = self.gate.after(ticket, error=error)
        elif error is not None:  # an interrupt or a cancellation: the tool gave no answer (yet)
            verdict = self.gate.after(ticket)
        elif isinstance(out, ToolMessage):
            if out.status == "error":
                verdict = self.gate.after(ticket, error=out.content)
            else:
                verdict = self.gate.after(ticket, result=out.content)
        else:  # a Command: its update is not the tool's answer, so no outcome is recorded
            verdict = self.gate.after(ticket)
        if verdict.end_run:
            self._end(session, verdict.message or "")
        if verdict.note:
            if self._note_in_result and isinstance(out, ToolMessage) and isinstance(out.content, str):
                out = out.model_copy(update={"content": f"{out.content}\n\n{verdict.note}"})
            elif not self._note_in_result:
                with self._lock:  # parallel calls may warn alike: the model reads it once
                    notes = self._notes.setdefault(session, [])
                    if verdict.note not in notes:
                        notes.append(verdict.note)
                    _cap(self._notes)
        return out

    # -- the model: notes, the end of the run --

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]) -> ModelResponse:
        return handler(self._with_notes(request))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelResponse:
        return await handler(self._with_notes(request))

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> Optional[dict[str, Any]]:
        session = self._session_of(get_config(), state)
        with self._lock:
            ended = self._ended.pop(session, None)
            if ended is not None:
                self._notes.pop(session, None)
        return {"jump_to": "end"} if ended is not None else None

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Any) -> Optional[dict[str, Any]]:
        return self.before_model(state, runtime)

    def _with_notes(self, request: ModelRequest) -> ModelRequest:
        session = self._session_of(get_config(), request.state)
        with self._lock:
            notes = self._notes.pop(session, None)
        if not notes:
            return request
        return request.override(messages=[*request.messages, HumanMessage(content="\n".join(notes))])

    def _end(self, session: str, message: str) -> None:
        with self._lock:
            self._ended[session] = message
            _cap(self._ended)

    def _session_of(self, config: Mapping[str, Any], state: Any) -> str:
        if self._session is not None:
            return str(self._session(config))
        return _default_session(config, state)


def _cap(table: OrderedDict[Any, Any]) -> None:
    while len(table) > MAX_PENDING:
        table.popitem(last=False)
