"""loopguard as a Pydantic AI capability: the policy sees every tool call of an agent's runs, and
refuses the calls of a loop before they run.

Why a capability: ``wrap_tool_execute`` is Pydantic AI's one place around a single tool call's
execution, with the call, its id and its result or exception in one frame, so a call's check and
its outcome pair without any bookkeeping; ``SkipToolExecution`` is its own refusal, whose value the
model reads as that call's result::

    from loopguard.pydantic_ai import LoopGuardCapability

    agent = Agent(model, tools=[poll, read], capabilities=[LoopGuardCapability()])

| Pydantic AI point | ToolGate | answer |
|---|---|---|
| ``wrap_tool_execute`` (before ``handler``) | ``before`` | ``raise SkipToolExecution(policy text)``: the tool not run, the text its result |
| ``wrap_tool_execute`` (``handler``'s value or exception) | ``after`` | the tool's own result, untouched |
| a warning | | ``ctx.enqueue`` of a ``loopguard.note`` instruction part, scope ``request``: a system message in the next model request only |
| an end of the run | | ``ctx.cancel()``: the run ends with ``RunCancelled``, the model gets no further request |

A tool that raises ``ModelRetry`` (or any error) is recorded as an error; a deferral
(``CallDeferred``, ``ApprovalRequired``) or a cancellation is not an outcome.

Session: ``ctx.conversation_id`` (Pydantic AI's conversation, which spans the runs that share a
message history), or ``session(ctx)`` where given. No loop rule here.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Union

try:
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.capabilities.abstract import ValidatedToolArgs, WrapToolExecuteHandler
    from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, SkipToolExecution
    from pydantic_ai.messages import InstructionCapabilityPart, OperatorSource, OperatorText, ToolCallPart
    from pydantic_ai.tools import RunContext, ToolDefinition
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("loopguard.pydantic_ai needs Pydantic AI: pip install pydantic-ai-slim") from e

from ._gate import MAX_PENDING, ToolGate

__all__ = ["LoopGuardCapability", "LoopGuardNote"]


@dataclass(repr=False, kw_only=True)
class LoopGuardNote(InstructionCapabilityPart, namespace="loopguard", name="note"):
    """A warning of the policy, in the application's voice, for one model request."""


class LoopGuardCapability(AbstractCapability[Any]):
    """The loop guard of an agent's runs (``capabilities=[LoopGuardCapability()]``). Runs and
    agents may share it."""

    def __init__(self, config: Union[str, Mapping[str, Any], None] = None, *, guard: Any = None,
                 session: Optional[Callable[[RunContext[Any]], str]] = None) -> None:
        """``config``: an OpenClaw-style config (text or mapping) over the agent default; or
        ``guard``: a LoopGuard to share. ``session(ctx)``: the session id from the run's context.
        A broken config raises LoopGuardError here, naming its path."""
        self.gate = ToolGate(config, guard=guard)
        self._session = session
        self._told: OrderedDict[str, set[str]] = OrderedDict()  # run id -> notes queued for its next request
        self._lock = threading.Lock()

    @classmethod
    def get_serialization_name(cls) -> Optional[str]:
        return None

    async def wrap_tool_execute(self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition,
                                args: ValidatedToolArgs, handler: WrapToolExecuteHandler) -> Any:
        session = str(self._session(ctx)) if self._session is not None else str(ctx.conversation_id or ctx.run_id)
        verdict = self.gate.before(session, call.tool_name, args, call_id=call.tool_call_id, run=ctx.run_id)
        if not verdict.run:
            if verdict.end_run:
                ctx.cancel()
            raise SkipToolExecution(verdict.message or "")
        try:
            result = await handler(args)
        except (CallDeferred, ApprovalRequired, SkipToolExecution):
            self.gate.after(verdict.ticket)  # not an outcome: the tool has not answered
            raise
        except Exception as e:
            self._outcome(ctx, self.gate.after(verdict.ticket, error=e))
            raise
        except BaseException:
            self.gate.after(verdict.ticket)
            raise
        self._outcome(ctx, self.gate.after(verdict.ticket, result=_jsonable(result)))
        return result

    async def before_model_request(self, ctx: RunContext[Any], request_context: Any) -> Any:
        with self._lock:
            self._told.pop(str(ctx.run_id), None)
        return request_context

    def _outcome(self, ctx: RunContext[Any], verdict: Any) -> None:
        if verdict.note:
            with self._lock:  # parallel calls may warn alike: the model reads it once
                told = self._told.setdefault(str(ctx.run_id), set())
                fresh = verdict.note not in told
                told.add(verdict.note)
                while len(self._told) > MAX_PENDING:
                    self._told.popitem(last=False)
            if fresh:
                ctx.enqueue(LoopGuardNote(content=OperatorText(verdict.note), source=OperatorSource(), scope="request"))
        if verdict.end_run:
            ctx.cancel()


def _jsonable(value: Any) -> Any:
    """A tool's result as the policy hashes it: JSON as it is, a pydantic model as its dump,
    anything else as its text."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:  # noqa: BLE001 - a result we cannot dump is hashed as its text
            return str(value)
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError, RecursionError):
        return str(value)
