"""loopguard for Python gateways: the loop guard that stops tool-call loops and bot-to-bot loops.

The decisions are OpenClaw's (``tools.loopDetection``, the channel ``botLoopProtection``
budgets, the broadcast group-thread budget), made by a sandboxed WebAssembly policy
(``loopguard:policy@1.x``) that ships inside this package and runs under wasmtime through the
``loopguard-host`` embedding. This module only converts between Python values and the native
module's; every decision is made inside the policy.

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

from ._errors import LoopGuardError
from ._guard import LoopGuard
from ._inputs import BotMessage, GroupThread, ToolCall
from ._policy import DEFAULT_POLICY, replay, versions
from ._results import BotVerdict, CompactionVerdict, GroupDecision, OutcomeVerdict, PolicyInfo, Stats, ToolVerdict

__all__ = [
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
    "PolicyInfo",
    "replay",
    "versions",
    "DEFAULT_POLICY",
]

