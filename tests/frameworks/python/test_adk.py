"""loopguard.adk with Google ADK 2.13 (LiteLlm on the scripted model's Chat Completions): what the
model receives when the plugin refuses, warns, lets be, and ends the run."""
import asyncio
import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost map from the network

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types

from loopguard import LoopGuardError
from loopguard.adk import LoopGuardPlugin

BLOCK = "loopguard: poll returned the same result 3 times in a row for this same call; blocked."
WARN = "loopguard: poll returned the same result 2 times in a row"
END = "loopguard: poll was blocked 3 times and sent again each time; ending the run."
POLL = {"tool": "poll", "args": {"job": "build-7"}}


class Tools:
    """The agent's tools, counting what really ran."""

    def __init__(self):
        self.ran = []

    def tools(self):
        def poll(job: str) -> str:
            """The status of a job."""
            self.ran.append(("poll", job))
            return "status: running"

        def read(path: str) -> str:
            """A file's contents."""
            self.ran.append(("read", path))
            return f"contents of {path}"

        return [poll, read]


def run(scenario, plugin, tools):
    """One user message through a Runner with the plugin; the final text."""

    async def go():
        agent = LlmAgent(name="worker", instruction="Do the task.", tools=tools.tools(),
                         model=LiteLlm(model="openai/scripted", api_base=scenario.openai_base, api_key="test-key"))
        runner = InMemoryRunner(app=App(name="lg", root_agent=agent, plugins=[plugin]))
        try:
            session = await runner.session_service.create_session(app_name="lg", user_id="u")
            final = None
            message = types.Content(role="user", parts=[types.Part(text="go")])
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                if event.is_final_response() and event.content and event.content.parts:
                    final = event.content.parts[0].text
            return final
        finally:
            await runner.close()

    return asyncio.run(go())


def notes(scenario, text):
    """How many requests carry `text` outside tool results."""
    return sum(1 for r in scenario.requests() if any(text in m for m in r["messages"]))


def test_an_unchanged_poll_is_blocked_at_the_fourth_call_with_the_policys_text(scenario):
    scenario.script([[POLL]] * 5, final="gave up")
    tools = Tools()
    assert run(scenario, LoopGuardPlugin(), tools) == "gave up"
    results = scenario.results()
    assert [t for _, t, _ in results[:3]] == ['{"result": "status: running"}'] * 3
    assert BLOCK in results[3][1] and BLOCK in results[4][1]
    assert results[3][1].startswith('{"error": "loopguard:')
    assert tools.ran == [("poll", "build-7")] * 3


def test_a_warning_reaches_the_model_once_as_a_user_note_after_the_results(scenario):
    scenario.script([[POLL]] * 4)
    run(scenario, LoopGuardPlugin(), Tools())
    requests = scenario.requests()
    assert notes(scenario, WARN) == 1
    warned = next(r for r in requests if any(WARN in m for m in r["messages"]))
    assert warned["turn"] == 3  # the request that carries the third call's result
    last = warned["body"]["messages"][-1]
    assert last["role"] == "user" and WARN in str(last["content"])
    assert not any(WARN in t for _, t, _ in scenario.results())


def test_a_healthy_run_of_distinct_calls_is_untouched(scenario):
    paths = [f"/src/file{i}.py" for i in range(8)]
    scenario.script([[{"tool": "read", "args": {"path": p}}] for p in paths], final="read them all")
    tools = Tools()
    assert run(scenario, LoopGuardPlugin(), tools) == "read them all"
    assert [t for _, t, _ in scenario.results()] == [f'{{"result": "contents of {p}"}}' for p in paths]
    assert notes(scenario, "loopguard") == 0
    assert tools.ran == [("read", p) for p in paths]


def test_parallel_calls_in_one_step_are_each_checked_and_the_count_goes_on(scenario):
    """ADK runs one step's calls concurrently: all are checked before any has run, so a repeat
    within a step is judged on the outcomes of the steps before it; none is lost."""
    read = {"tool": "read", "args": {"path": "/a"}}
    scenario.script([[POLL, read, POLL], [POLL, POLL], [POLL]])
    tools = Tools()
    run(scenario, LoopGuardPlugin(), tools)
    by_turn = {r["turn"]: [x["text"] for x in r["results"]] for r in scenario.requests()}
    running = '{"result": "status: running"}'
    assert by_turn[1] == [running, '{"result": "contents of /a"}', running]
    assert by_turn[2] == [running, running]  # checked on two outcomes each: warned, not blocked
    assert len(by_turn[3]) == 1 and BLOCK in by_turn[3][0]  # four outcomes: the fifth poll is refused
    assert tools.ran.count(("poll", "build-7")) == 4 and tools.ran.count(("read", "/a")) == 1
    assert notes(scenario, WARN) == 1


def test_the_recommended_ladder_ends_the_run_at_the_sixth_call(scenario):
    scenario.script([[POLL]] * 10, final="never")
    tools = Tools()
    final = run(scenario, LoopGuardPlugin({"loopguard": {"preset": "recommended"}}), tools)
    assert final.startswith(END)
    requests = scenario.requests()
    assert max(r["turn"] for r in requests) == 5  # no request after the sixth call
    assert BLOCK in requests[-1]["results"][0]["text"]
    assert tools.ran == [("poll", "build-7")] * 3


def test_a_broken_config_is_reported_at_construction_with_its_path():
    with pytest.raises(LoopGuardError) as e:
        LoopGuardPlugin({"loopguard": {"preset": "loud"}})
    assert e.value.path == "loopguard.preset"
