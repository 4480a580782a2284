"""A Python gateway's use of the shipped types: must pass `mypy --strict`."""

from loopguard import LoopGuard, LoopGuardError, Stats, ToolCall, ToolVerdict, replay, versions

with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as guard:
    call = ToolCall(session="agent:main:s1", tool="exec", args={"command": "make test"}, run="r1")
    verdict: ToolVerdict = guard.before_tool_call(call)
    if verdict.action == "block" and verdict.message is not None:
        print(verdict.message.upper(), verdict.count + 1)
    outcome = guard.after_tool_outcome(call, result={"content": []})
    print(outcome.action)
    stats: Stats = guard.stats()
    print(stats.sessions + stats.bot_pairs, versions()["interface"], len(replay("{}", "")))
    try:
        guard.import_state(b"\x01")
    except LoopGuardError as e:
        print(e.kind, e.path, e.reason)
