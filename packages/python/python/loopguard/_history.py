"""The tool calls and results in an LLM request's history, as the guard's typed calls.

Why the history: every request an agent sends through an LLM proxy carries the whole
conversation, with the assistant's tool calls and the tool results. Replaying it gives the same
state on any worker or replica, with nothing shared. Three wire formats are read
(docs/PROXIES.md): OpenAI chat (``messages``: assistant ``tool_calls`` + ``role: tool``),
Anthropic messages (``tool_use`` / ``tool_result`` blocks) and the Responses API (``input``:
``function_call`` / ``function_call_output``). Each call becomes a check and each result the
outcome of its call (Anthropic ``is_error: true``: an error), as ``Guard.apply_calls`` takes them.
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
    """Like ``args_text`` without parsing a string: models send JSON, and the policy refuses a
    call whose arguments are not, which is then mended (``mend``) and made again (parsing every
    argument string costs more than the policy's whole replay of a long history)."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, separators=(",", ":"))


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


#: One typed call for ``Guard.apply_calls``: (session, tool, arguments, run, agent, call id) and
#: None for a check, or (threw, outcome as JSON text) for an outcome.
Item = tuple[tuple[str, str, str, None, None, str], Optional[tuple[bool, str]]]


def calls(
    session: str, steps: Iterable[tuple[str, Any]], known: Optional[dict[str, tuple[str, str]]] = None
) -> tuple[list[Item], list[int]]:
    """The typed calls for ``steps`` in ``session``, and the index of each call's check. A result
    is the outcome of the call with its id, from ``steps`` or ``known`` (id -> tool, arguments; it
    is extended); a result without its call is skipped: it has no tool name to record under."""
    items: list[Item] = []
    checks: list[int] = []
    known = {} if known is None else known
    for kind, item in steps:
        if kind == "call":
            cid, tool, args = item
            known[cid] = (tool, args)
            checks.append(len(items))
            items.append(((session, tool, args, None, None, cid), None))
        else:
            cid, content, is_error = item
            if cid not in known:
                continue
            tool, args = known[cid]
            items.append(((session, tool, args, None, None, cid), (bool(is_error), json.dumps(content, separators=(",", ":")))))
    return items, checks


def mend(item: Item) -> Item:
    """``item`` with its arguments as ``args_text`` reads them (a string that is not JSON becomes
    a JSON string), for a call the policy refused."""
    (session, tool, args, run, agent, cid), outcome = item
    return (session, tool, args_text(args), run, agent, cid), outcome


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


def proposed(session: str, made: Iterable[Call]) -> list[Item]:
    """The checks of the calls a model just returned."""
    return calls(session, [("call", c) for c in made])[0]


def verdict(check: Any) -> Optional[dict[str, Any]]:
    """A check's verdict tuple (action, detector, count, message, notify) as the guardrail reads
    it; None for none."""
    if check is None:
        return None
    action, detector, count, message, notify = check
    return {"action": action, "detector": detector, "count": count, "message": message, "notify": notify}
