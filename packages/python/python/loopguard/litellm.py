"""loopguard as a LiteLLM proxy guardrail: loop protection for every agent whose model traffic
goes through LiteLLM, whatever runtime drives it.

Register it in LiteLLM's ``config.yaml`` (the ``loopguard`` package installed in LiteLLM's
environment; ``LOOPGUARD_CONFIG`` may name an OpenClaw-style config file; where it is silent,
detection is on with the ``cautious`` preset, the one default of every agent-facing host)::

    guardrails:
      - guardrail_name: loopguard
        litellm_params:
          guardrail: loopguard.litellm.LoopGuardrail
          mode: [pre_call, post_call]
          default_on: true

| LiteLLM hook | policy calls | answer |
|---|---|---|
| ``async_pre_call_hook`` | the request's history replayed (``_history``: tool calls, results) | a warning the policy says to tell (``notify``) about the last turn's calls: a system note for the model |
| ``async_post_call_success_hook`` | ``check-tool-call`` for each tool call the model returned | a blocked call removed, the policy's message as the assistant's text (``finish_reason: stop`` when none is left) |
| ``async_post_call_streaming_iterator_hook`` | the same, at the end of the stream | tool-call deltas held back until then; a blocked call dropped and the message sent as a text chunk |

Why the history: it is the source of truth, so one worker or several, one replica or several,
decide alike (``_replay``: a worker feeds only the new part of a session's history when it served
the previous turn, and replays the whole of it otherwise). The conversation is told by LiteLLM's
session id (``x-litellm-session-id`` header, ``litellm_session_id`` or ``metadata.session_id``), or,
for a request without one, by its opening (the items up to its first user message) and a digest of
what was already fed. With ``LOOPGUARD_STORE`` naming a store (``redis://…``, ``rediss://…``,
``redis+cluster://…``, as ``LoopGuard(store=…)``), each conversation's state and position live in
it, so any worker continues any conversation without replaying it (``_cursors``); without one,
each worker keeps its own. No rule about loops lives here: the policy decides, this maps its verdicts
onto LiteLLM's objects.
"""

from __future__ import annotations

import os
from typing import Any, AsyncGenerator, Optional

from litellm.integrations.custom_guardrail import CustomGuardrail
from litellm.types.utils import Delta, ModelResponse, ModelResponseStream, StreamingChoices

from . import _history, _native
from ._guard import LoopGuard
from ._replay import HistoryReplay

def _load_config() -> str:
    """``LOOPGUARD_CONFIG``'s document (``{}`` without one) with the agent-facing hosts' one
    default filled in where it is silent: detection on, the ``cautious`` preset
    (``loopguard._native.AGENT_DEFAULTS``, the same as ``loopguard hook`` and ``loopguard mcp``)."""
    path = os.environ.get("LOOPGUARD_CONFIG")
    text = "{}"
    if path:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    return _native.agent_config(text)


class LoopGuardrail(CustomGuardrail):
    """The guardrail; LiteLLM builds one per worker process."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        store = os.environ.get("LOOPGUARD_STORE") or None
        self.replay = HistoryReplay(LoopGuard(_load_config(), store=store))

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> dict:
        verdicts = self.replay.start(_request_id(data), _session_id(data), data)
        notes = [d["message"] for d in verdicts if d and d.get("action") == "warn" and d.get("notify")]
        # A system message is valid in chat requests only (Anthropic's system is a separate field).
        if notes and isinstance(data.get("messages"), list) and call_type != "anthropic_messages":
            self.inject_advisory_message(data, "\n".join(notes))
        return data

    def _decide(self, data: dict, calls: list[_history.Call]) -> list[Optional[dict]]:
        return self.replay.decide(_request_id(data), data, calls)

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any, response: Any) -> Any:
        if not isinstance(response, ModelResponse) or not response.choices:
            self._decide(data, [])
            return response
        choice = response.choices[0]
        msg = choice.message
        tcs = list(msg.tool_calls or [])
        verdicts = self._decide(data, [(str(t.id), str(t.function.name), t.function.arguments or "{}") for t in tcs])
        blocked = [i for i, v in enumerate(verdicts) if v and v.get("action") == "block"]
        if not blocked:
            return response
        texts = "\n".join(verdicts[i]["message"] for i in blocked)
        kept = [t for i, t in enumerate(tcs) if i not in blocked]
        msg.content = f"{msg.content}\n{texts}" if msg.content else texts
        msg.tool_calls = kept or None
        if not kept:
            choice.finish_reason = "stop"
        return response

    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict
    ) -> AsyncGenerator[ModelResponseStream, None]:
        held: list[Any] = []
        calls: dict[int, list[str]] = {}
        last = None
        async for chunk in response:
            last = chunk
            choice = chunk.choices[0] if getattr(chunk, "choices", None) else None
            deltas = getattr(choice.delta, "tool_calls", None) if choice is not None else None
            if deltas or held:
                held.append(chunk)
                for t in deltas or []:
                    c = calls.setdefault(t.index, ["", "", ""])
                    c[0] = t.id or c[0]
                    if t.function is not None:
                        c[1] += t.function.name or ""
                        c[2] += t.function.arguments or ""
                continue
            yield chunk
        order = sorted(calls)
        verdicts = self._decide(request_data, [(c[0], c[1], c[2] or "{}") for c in (calls[i] for i in order)])
        blocked = {order[i] for i, v in enumerate(verdicts) if v and v.get("action") == "block"}
        if not blocked:
            for chunk in held:
                yield chunk
            return
        texts = "\n".join(v["message"] for v in verdicts if v and v.get("action") == "block")
        done = len(blocked) == len(order)
        yield ModelResponseStream(
            id=getattr(last, "id", None) or "loopguard",
            model=getattr(last, "model", None),
            choices=[StreamingChoices(index=0, delta=Delta(role="assistant", content=texts),
                                      finish_reason="stop" if done else None)],
        )
        if done:
            return
        for chunk in held:
            choice = chunk.choices[0] if getattr(chunk, "choices", None) else None
            if choice is not None and getattr(choice.delta, "tool_calls", None):
                choice.delta.tool_calls = [t for t in choice.delta.tool_calls if t.index not in blocked] or None
            yield chunk


def _request_id(data: dict) -> str:
    """LiteLLM's id of the request (the same in its pre-call and post-call hooks)."""
    return str(data.get("litellm_call_id") or id(data))


def _session_id(data: dict) -> Optional[str]:
    """LiteLLM's session id of the request, where LiteLLM puts it."""
    for value in (
        data.get("litellm_session_id"),
        (data.get("metadata") or {}).get("session_id"),
        (data.get("litellm_metadata") or {}).get("session_id"),
    ):
        if value:
            return str(value)
    return None
