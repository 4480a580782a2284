#!/usr/bin/env python3
"""Rebuilds fuzz/seeds/{config_parser,trace_parser,canonical_fingerprint}/ from examples/traces.

Seeds are small and committed; scripts/fuzz.sh copies them into a scratch corpus before each run.
(snapshot_import seeds are real snapshots: `cargo run --manifest-path fuzz/Cargo.toml
--example snapshot_seeds` writes them.)  Run from anywhere: python3 fuzz/make_seeds.py
"""
import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "traces"
SEEDS = ROOT / "fuzz" / "seeds"


def write(target: str, name: str, data: str) -> None:
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(data, encoding="utf-8")


def main() -> None:
    for sub in ("config_parser", "trace_parser", "canonical_fingerprint"):
        d = SEEDS / sub
        if d.exists():
            for f in d.iterdir():
                f.unlink()

    # config_parser: every example config, plus hand-written documents reaching the bot-loop,
    # broadcast, mention-pattern and loopguard blocks that the examples do not use.
    for ex in sorted(EXAMPLES.iterdir()):
        cfg = ex / "config.json5"
        if cfg.is_file():
            write("config_parser", f"example-{ex.name}.json5", cfg.read_text(encoding="utf-8"))
    extra = {
        "empty.json": "{}",
        "bot.json": json.dumps({"channels": {
            "defaults": {"botLoopProtection": {"maxEventsPerWindow": 20}},
            "discord": {"botLoopProtection": {"maxEventsPerWindow": 8},
                        "accounts": {"secondary": {"botLoopProtection": {"cooldownSeconds": 90}}}},
            "slack": {"botLoopProtection": {"enabled": True, "maxConversationBotEvents": 5},
                      "channels": {"C0123": {"botLoopProtection": {"windowSeconds": 30}}, "*": {}}},
            "googlechat": {"groups": {"spaces/AAAA": {"botLoopProtection": {"maxEventsPerWindow": 5}}}}}}),
        "broadcast.json5": """{ agents: { list: [{ id: "alpha", name: "Alpha", groupChat: { mentionPatterns: ["@alpha\\\\b"] } }, { id: "beta" }] },
  messages: { groupChat: { mentionPatterns: ["(?i)everyone"] } },
  broadcast: { strategy: "parallel",
               "discord:123": { agents: ["alpha", "beta"], maxRounds: 2, maxTurns: 4, mentionGating: true },
               "slack:C0123": ["alpha", "beta"],
               "1203@g.us": ["alpha"] } }""",
        "limits.json5": "{ loopguard: { maxSessions: 10000, maxPairs: 1000000, maxGroupThreads: 10000, sendTools: ['telegram', 'whatsapp_send'] } }",
        "tool-agents.json5": """{ tools: { loopDetection: { enabled: true, historySize: 5, warningThreshold: 2, criticalThreshold: 3,
  globalCircuitBreakerThreshold: 4, unknownToolThreshold: 2, detectors: { genericRepeat: false, knownPollNoProgress: true, pingPong: true } } },
  agents: { list: [{ id: "Main" }, { id: "x", tools: { loopDetection: { enabled: false } } }] } }""",
        "json5-syntax.json5": "// comment\n/* block */ { 'single': 'q', unquoted: +Infinity, hex: 0x1F, trailing: [1, 2, ], nan: NaN, lead: .5, }",
    }
    for name, text in extra.items():
        write("config_parser", name, text)

    # trace_parser: the example traces whole, plus short windows (the fuzzer mutates short inputs
    # far faster), plus a synthetic trace with bot and group events.
    values = {}
    for ex in sorted(EXAMPLES.iterdir()):
        tr = ex / "trace.jsonl"
        if not tr.is_file():
            continue
        text = tr.read_text(encoding="utf-8")
        write("trace_parser", f"example-{ex.name}.jsonl", text)
        lines = [l for l in text.split("\n") if l.strip()]
        for i in range(0, min(len(lines), 24), 8):
            write("trace_parser", f"window-{ex.name}-{i}.jsonl", "\n".join(lines[i:i + 8]) + "\n")
        for line in lines:
            ev = json.loads(line)
            for key in ("args", "result", "error"):
                if key in ev:
                    s = json.dumps(ev[key], ensure_ascii=False, separators=(",", ":"))
                    values[hashlib.sha1(s.encode()).hexdigest()[:12]] = s
    bot = lambda ts, s, r: json.dumps({"kind": "bot_message", "channel": "slack", "account": "default",
                                       "conversation": "C1", "sender": s, "receiver": r, "ts_ms": ts})
    group = [
        {"kind": "group_message", "channel": "d", "account": "a", "conversation": "c", "root": "r1", "peer": "1", "text": "hey @alpha"},
        {"kind": "group_replies", "channel": "d", "account": "a", "conversation": "c", "root": "r1",
         "replies": [{"agent": "alpha", "reply": "@beta what do you think?"}, {"agent": "beta", "reply": None}]},
        {"kind": "group_replies", "channel": "d", "account": "a", "conversation": "c", "root": "r1",
         "replies": [{"agent": "beta", "reply": "@all done"}]},
        {"kind": "group_cancel", "channel": "d", "account": "a", "conversation": "c", "thread": "t", "root": "r1"},
        {"kind": "group_message", "channel": "whatsapp", "account": "a", "conversation": "g", "root": "r2", "peer": "w1", "text": "hi"},
    ]
    write("trace_parser", "bot-burst.jsonl", "\n".join(bot(1000 + 500 * i, "b1" if i % 2 else "b2", "b2" if i % 2 else "b1") for i in range(8)) + "\n")
    write("trace_parser", "group.jsonl", "\n".join(json.dumps(e) for e in group) + "\n")
    call = lambda s, tool, args, agent=None: json.dumps({k: v for k, v in {"kind": "tool_call", "session": s, "tool": tool, "args": args, "agent": agent}.items() if v is not None})
    res = lambda s, tool, args, r: json.dumps({"kind": "tool_result", "session": s, "tool": tool, "args": args, "result": r})
    mixed = [call("s1", "read", {"path": "/a"}, "beta"), res("s1", "read", {"path": "/a"}, "x"),
             call("s1", "list", {"dir": "/"}, "beta"), res("s1", "list", {"dir": "/"}, ["a"]),
             call("s1", "read", {"path": "/a"}, "beta"), json.dumps({"kind": "compaction", "session": "s1", "agent": "beta"}),
             call("s2", "process", {"action": "poll", "sessionId": "p1"}), res("s2", "process", {"action": "poll", "sessionId": "p1"}, {"status": "running"}),
             call("s3", "d_send", {"to": "x"}), res("s3", "d_send", {"to": "x"}, {"messageId": "m1", "ok": True}),
             json.dumps({"kind": "tool_result", "session": "s3", "tool": "exec", "args": {"command": "ls"}, "error": "boom"})]
    write("trace_parser", "mixed-small.jsonl", "\n".join(mixed) + "\n")

    # canonical_fingerprint: args / result / error values from the traces, plus edge cases.
    for h, s in sorted(values.items()):
        write("canonical_fingerprint", f"value-{h}.json", s)
    edge = {
        "numbers.json": "[0,-0,1e21,1e-7,123456789012345678901,5e-324,1.7976931348623157e308,1e400,-1e400,0.1]",
        "strings.json": '["\\u0000\\u001f\\b\\f\\n\\r\\t","\\ud800x\\udc00","\\ud83d\\ude00","\\uffff\\ue000\\ud7ff"]',
        "dup-keys.json": '{"b":1,"a":2,"b":3,"\\ue000":4,"\\ud83d\\ude00":5}',
        "nested.json": "[" * 20 + "{}" + "]" * 20,
        "ws.json": " \t\r\n{ \"a\" : [ true , false , null ] } \n",
    }
    for name, text in edge.items():
        write("canonical_fingerprint", name, text)

    total = sum(f.stat().st_size for f in SEEDS.rglob("*") if f.is_file())
    print(f"seeds: {sum(1 for f in SEEDS.rglob('*') if f.is_file())} files, {total} bytes")


if __name__ == "__main__":
    main()
