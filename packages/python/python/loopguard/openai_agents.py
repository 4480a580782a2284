"""loopguard for the OpenAI Agents SDK: the policy sees every function-tool call of a run, and
refuses the calls of a loop before they run.

Why tool guardrails: the SDK's one place that can refuse a single call with a text the model
reads is a tool's input guardrail (``reject_content``), and the place that sees the call's id and
answer together is its output guardrail; both are per tool, so :meth:`LoopGuardGuardrail.protect`
puts them on every function tool of an agent (and of the agents it hands off to)::

    from loopguard.openai_agents import LoopGuardGuardrail

    loopguard = LoopGuardGuardrail()
    agent = loopguard.protect(Agent(name="ops", tools=[poll, read]))
    result = await Runner.run(agent, "…", run_config=loopguard.run_config())

| SDK point | ToolGate | answer |
|---|---|---|
| tool input guardrail | ``before`` | ``reject_content(policy text)``: the tool not run, the text its output |
| tool output guardrail | ``after`` (paired by ``tool_call_id``) | ``allow``: the tool's own output |
| ``RunConfig.call_model_input_filter`` | a warning of this run | one user message after the input, in the next model call only |
| either guardrail, at an end of the run | | ``raise_exception``: ``Runner.run`` raises ``ToolInputGuardrailTripwireTriggered`` (or ``…Output…``), ``e.output.output_info`` the policy's text |

The warning needs :meth:`run_config` (or :meth:`input_filter` in your own ``RunConfig``): without
it a warning is not delivered. A refused call never reaches the output guardrail, so it is never
recorded as an outcome. A tool's exception reaches the model (and the policy) as the SDK's error
text, an output. Hosted and MCP tools have no guardrails: they are not checked.

Session: ``RunConfig.group_id`` (the SDK's thread id), else one per ``RunConfig`` object (per run
with :meth:`run_config`), or ``session(tool_context)`` where given. No loop rule here.
"""

from __future__ import annotations

import inspect
import json
import threading
import uuid
import weakref
from collections import OrderedDict
from typing import Any, Callable, Mapping, Optional, TypeVar, Union, cast

try:
    from agents import Agent, FunctionTool, RunConfig, ToolGuardrailFunctionOutput
    from agents.run_config import CallModelData, ModelInputData
    from agents.tool_context import ToolContext
    from agents.tool_guardrails import (ToolInputGuardrail, ToolInputGuardrailData, ToolOutputGuardrail,
                                        ToolOutputGuardrailData)
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("loopguard.openai_agents needs the OpenAI Agents SDK: pip install openai-agents") from e

from ._gate import MAX_PENDING, ToolGate

__all__ = ["LoopGuardGuardrail"]

A = TypeVar("A", bound=Agent)


class LoopGuardGuardrail:
    """The loop guard of the agents it :meth:`protect`\\ s. Runs may share it."""

    def __init__(self, config: Union[str, Mapping[str, Any], None] = None, *, guard: Any = None,
                 session: Optional[Callable[[ToolContext], str]] = None) -> None:
        """``config``: an OpenClaw-style config (text or mapping) over the agent default; or
        ``guard``: a LoopGuard to share. ``session(tool_context)``: the session id of a call. A
        broken config raises LoopGuardError here, naming its path."""
        self.gate = ToolGate(config, guard=guard)
        self._session = session
        self._runs: OrderedDict[int, tuple[weakref.ref[RunConfig], str]] = OrderedDict()
        self._tickets: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._notes: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()
        self.input_guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(guardrail_function=self._check, name="loopguard")
        self.output_guardrail: ToolOutputGuardrail[Any] = ToolOutputGuardrail(guardrail_function=self._record,
                                                                             name="loopguard")

    def protect(self, agent: A) -> A:
        """Puts the guardrails on every function tool of ``agent`` and of the agents it hands off
        to (once each); returns ``agent``."""
        seen: set[int] = set()
        todo: list[Any] = [agent]
        while todo:
            current = todo.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            for tool in getattr(current, "tools", None) or []:
                if isinstance(tool, FunctionTool):
                    tool.tool_input_guardrails = _with(tool.tool_input_guardrails, self.input_guardrail)
                    tool.tool_output_guardrails = _with(tool.tool_output_guardrails, self.output_guardrail)
            todo.extend(h for h in getattr(current, "handoffs", None) or [] if isinstance(h, Agent))
        return agent

    def run_config(self, **options: Any) -> RunConfig:
        """A ``RunConfig`` (``options`` as its fields) whose model input filter hands the model
        this run's warnings; a ``call_model_input_filter`` in ``options`` runs after it."""
        theirs = options.pop("call_model_input_filter", None)
        config = RunConfig(**options)
        config.call_model_input_filter = self.input_filter(config, theirs)
        return config

    def input_filter(self, config: RunConfig, then: Optional[Callable[[CallModelData], Any]] = None
                     ) -> Callable[[CallModelData], Any]:
        """The ``call_model_input_filter`` for runs under ``config`` (for a RunConfig of your own)."""
        async def hand_notes(data: CallModelData) -> ModelInputData:
            run = self._run_id(config)
            with self._lock:
                notes = self._notes.pop(run, None)
            if notes:
                note = {"role": "user", "content": "\n".join(notes)}
                data.model_data = ModelInputData(input=[*data.model_data.input, note],  # type: ignore[list-item]
                                                 instructions=data.model_data.instructions)
            if then is None:
                return data.model_data
            out = then(data)
            return cast(ModelInputData, await out if inspect.isawaitable(out) else out)
        return hand_notes

    # -- the guardrails --

    def _check(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        run = self._run_id(ctx.run_config)
        verdict = self.gate.before(self._session_of(ctx, run), ctx.tool_name, _args(ctx.tool_arguments),
                                   call_id=ctx.tool_call_id, agent=getattr(data.agent, "name", None))
        if verdict.run:
            with self._lock:
                _put(self._tickets, (run, ctx.tool_call_id), verdict.ticket)
            return ToolGuardrailFunctionOutput.allow()
        if verdict.end_run:
            return ToolGuardrailFunctionOutput.raise_exception(output_info=verdict.message)
        return ToolGuardrailFunctionOutput.reject_content(verdict.message or "")

    def _record(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        run = self._run_id(ctx.run_config)
        with self._lock:
            ticket = self._tickets.pop((run, ctx.tool_call_id), None)
        if ticket is None:
            return ToolGuardrailFunctionOutput.allow()
        verdict = self.gate.after(ticket, result=_jsonable(data.output))
        if verdict.note:
            with self._lock:  # parallel calls may warn alike: the model reads it once
                notes = self._notes.setdefault(run, [])
                if verdict.note not in notes:
                    notes.append(verdict.note)
                _cap(self._notes)
        if verdict.end_run:
            return ToolGuardrailFunctionOutput.raise_exception(output_info=verdict.message)
        return ToolGuardrailFunctionOutput.allow()

    def _session_of(self, ctx: ToolContext, run: str) -> str:
        if self._session is not None:
            return str(self._session(ctx))
        group = getattr(ctx.run_config, "group_id", None)
        return str(group) if group else f"openai-agents:{run}"

    def _run_id(self, config: Optional[RunConfig]) -> str:
        """One id per live RunConfig object, without keeping it alive."""
        if config is None:
            return "run"
        with self._lock:
            entry = self._runs.get(id(config))
            if entry is None or entry[0]() is not config:
                entry = (weakref.ref(config), uuid.uuid4().hex[:16])
                _put(self._runs, id(config), entry)
            return entry[1]


def _with(guardrails: Optional[list[Any]], guardrail: Any) -> list[Any]:
    return list(guardrails or []) if guardrail in (guardrails or []) else [*(guardrails or []), guardrail]


def _args(text: Optional[str]) -> Any:
    try:
        return json.loads(text or "{}")
    except ValueError:
        return text


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError, RecursionError):
        return str(value)


def _put(table: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    table[key] = value
    _cap(table)


def _cap(table: OrderedDict[Any, Any]) -> None:
    while len(table) > MAX_PENDING:
        table.popitem(last=False)
