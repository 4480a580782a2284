from loopguard import LoopGuard, ToolCall

with LoopGuard({"tools": {"loopDetection": {"enabled": True}}}) as guard:
    call = ToolCall(session="s", tool="exec", args={"command": "make test"})
    for _ in range(21):
        v = guard.before_tool_call(call)
        if v.action != "block":
            guard.after_tool_outcome(call, result={"content": [{"type": "text", "text": "FAILED"}]})
    print(v.action, v.detector, v.count)
