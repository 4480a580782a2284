"""The tool calls and results in an LLM request's history, as loopguard trace events.

Why the history: every request an agent sends through an LLM proxy carries the whole
conversation, with the assistant's tool calls and the tool results. Replaying it gives the same
state on any worker or replica, with nothing shared. Three wire formats are read
(docs/PROXIES.md): OpenAI chat (``messages``: assistant ``tool_calls`` + ``role: tool``),
Anthropic messages (``tool_use`` / ``tool_result`` blocks) and the Responses API (``input``:
``function_call`` / ``function_call_output``). Events follow docs/spec/trace-format.md; a tool
result becomes ``result`` (Anthropic ``is_error: true``: ``error``).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator, Mapping, Optional

#: One call: (call id, tool name, arguments as JSON text).
Call = tuple[str, str, str]


def args_text(arguments: Any) -> str:
    """The arguments as JSON text: a model's JSON string as it is when it parses, else the value
    (a mapping, or a string that is not JSON) serialized."""
    if isinstance(arguments, str):
        try:
            json.loads(arguments)
            return arguments
        except ValueError:
            pass
    return json.dumps(arguments, separators=(",", ":"))


def _args_fast(arguments: Any) -> str:
    """Like ``args_text`` without parsing a string: models send JSON, and a replay that meets
    one that is not fails as a whole and is redone with ``strict`` (parsing every argument string
    costs more than the policy's whole replay of a long history)."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))


def strict(steps: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``steps`` with every call's arguments checked (a string that is not JSON becomes a string)."""
    return [("call", (i[0], i[1], args_text(i[2]))) if k == "call" else (k, i) for k, i in steps]


def _chat(messages: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    for m in messages:
        if not isinstance(m, Mapping):
            continue
        role = m.get("role")
        if role == "assistant":
            for tc in m.get("tool_calls") or ():
                fn = tc.get("function") or tc
                if tc.get("id") and fn.get("name"):
                    yield "call", (str(tc["id"]), str(fn["name"]), _args_fast(fn.get("arguments") or "{}"))
            content = m.get("content")
            if isinstance(content, list):  # Anthropic assistant blocks
                for b in content:
                    if isinstance(b, Mapping) and b.get("type") == "tool_use" and b.get("id") and b.get("name"):
                        yield "call", (str(b["id"]), str(b["name"]), _args_fast(b.get("input") or {}))
        elif role == "tool" and m.get("tool_call_id"):
            yield "result", (str(m["tool_call_id"]), m.get("content"), False)
        elif role == "user" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, Mapping) and b.get("type") == "tool_result" and b.get("tool_use_id"):
                    yield "result", (str(b["tool_use_id"]), b.get("content"), bool(b.get("is_error")))


def _responses(items: Iterable[Any]) -> Iterator[tuple[str, Any]]:
    for it in items:
        if not isinstance(it, Mapping):
            continue
        kind = it.get("type")
        if kind == "function_call" and it.get("call_id") and it.get("name"):
            yield "call", (str(it["call_id"]), str(it["name"]), _args_fast(it.get("arguments") or "{}"))
        elif kind == "function_call_output" and it.get("call_id"):
            yield "result", (str(it["call_id"]), it.get("output"), False)


def items(data: Mapping[str, Any]) -> list[Any]:
    """The request's conversation: chat/Anthropic ``messages``, else the Responses ``input``."""
    for field in ("messages", "input"):
        value = data.get(field)
        if isinstance(value, list):
            return value
    return []


def read(conversation: list[Any]) -> list[tuple[str, Any]]:
    """The tool calls and results in (part of) a conversation, in order, whatever the format
    (chat and Anthropic items have a ``role``; Responses tool items have none)."""
    found = list(_chat(item for item in conversation if isinstance(item, Mapping) and "role" in item))
    found.extend(_responses(item for item in conversation if not (isinstance(item, Mapping) and "role" in item)))
    return found


def history(data: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The request's tool calls and results, in order, whatever the format."""
    return read(items(data))


def ends_with_result(conversation: list[Any]) -> bool:
    """Whether the conversation's last item brings tool results (then the model is about to
    read them, and a warning about their calls is due now)."""
    return bool(conversation) and bool(read(conversation[-1:])) and read(conversation[-1:])[-1][0] == "result"


def events(
    session: str, steps: Iterable[tuple[str, Any]], calls: Optional[dict[str, tuple[str, str]]] = None
) -> tuple[list[str], list[int]]:
    """Trace lines for ``steps`` in ``session``, and the index of each call's line. A result is
    attached to the call with its id, from ``steps`` or ``calls`` (id -> tool, arguments; it is
    extended); a result without its call is skipped: it has no tool name to record under."""
    s = json.dumps(session)
    lines: list[str] = []
    call_lines: list[int] = []
    calls = {} if calls is None else calls
    quoted: dict[str, str] = {}  # tool names and call ids as JSON strings, each encoded once

    def q(text: str) -> str:
        j = quoted.get(text)
        if j is None:
            j = quoted[text] = json.dumps(text)
        return j

    for kind, item in steps:
        if kind == "call":
            cid, tool, args = item
            calls[cid] = (tool, args)
            call_lines.append(len(lines))
            lines.append(f'{{"kind":"tool_call","session":{s},"tool":{q(tool)},"args":{args},"call_id":{q(cid)}}}')
        else:
            cid, content, is_error = item
            if cid not in calls:
                continue
            tool, args = calls[cid]
            key = "error" if is_error else "result"
            lines.append(
                f'{{"kind":"tool_result","session":{s},"tool":{q(tool)},"args":{args},'
                f'"call_id":{q(cid)},"{key}":{json.dumps(content, separators=(",", ":"))}}}'
            )
    return lines, call_lines


def last_turn_ids(conversation: list[Any]) -> list[str]:
    """The ids of the calls whose results end the conversation (read from its end only)."""
    ids: list[str] = []
    seen_call = False
    for item in reversed(conversation):
        steps = read([item])
        kinds = {k for k, _ in steps}
        if not steps or (seen_call and "result" in kinds):
            break
        if "call" in kinds:
            seen_call = True
            ids[:0] = [i[0] for k, i in steps if k == "call"]
    return ids


def last_turn_calls(steps: list[tuple[str, Any]]) -> int:
    """How many calls the last assistant turn made: the ones whose results this request brings."""
    n = 0
    for kind, _ in reversed(steps):
        if kind == "call":
            n += 1
        elif n:
            break
    return n


def proposed(session: str, calls: Iterable[Call]) -> list[str]:
    """Trace lines for the calls a model just returned."""
    return events(session, [("call", c) for c in calls])[0]


def decision(line: str) -> Optional[dict[str, Any]]:
    """One decision line, or None when it is not a tool-call decision."""
    d = json.loads(line)
    return d if d.get("kind") == "tool_call" else None
