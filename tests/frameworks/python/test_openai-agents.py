"""loopguard.openai_agents with openai-agents 0.24 against the scripted model (Responses API): what
the model receives when an agent loops, warns, runs clean, calls tools in parallel, is ended, or
is misconfigured."""
import asyncio

import pytest
from agents import (Agent, Runner, ToolInputGuardrailTripwireTriggered, function_tool, set_tracing_disabled)
from agents.models.openai_responses import OpenAIResponsesModel
from openai import AsyncOpenAI

from loopguard import LoopGuardError
from loopguard.openai_agents import LoopGuardGuardrail

BLOCK = "loopguard: poll returned the same result 3 times in a row for this same call; blocked."
NOTE = "loopguard: poll returned the same result 2 times in a row"
END_TEXT = "loopguard: poll was blocked 3 times and sent again each time; ending the run."
POLL = {"tool": "poll", "args": {"job": "j1"}}

set_tracing_disabled(True)


class Tools:
    """poll always answers the same; read answers per path; `rendezvous` makes that many polls
    wait for each other (proof that a step's calls overlap)."""

    def __init__(self, rendezvous=0):
        self.polls = 0
        self.rendezvous = rendezvous

        @function_tool
        async def poll(job: str) -> str:
            """The status of a job."""
            self.polls += 1
            if self.rendezvous:
                if not hasattr(self, "barrier"):
                    self.barrier = asyncio.Barrier(self.rendezvous)
                await asyncio.wait_for(self.barrier.wait(), 10)
            return "job j1: still running"

        @function_tool
        def read(path: str) -> str:
            """A file's contents."""
            return f"contents of {path}"

        self.all = [poll, read]


def run_agent(scenario, turns, loopguard, tools=None, **run_options):
    scenario.script(turns, final="finished")
    tools = tools or Tools()
    model = OpenAIResponsesModel("scripted", AsyncOpenAI(base_url=scenario.openai_base, api_key="test-key",
                                                         max_retries=0, timeout=20))
    agent = loopguard.protect(Agent(name="ops", instructions="Wait for job j1.", model=model, tools=tools.all))

    async def go():
        return await Runner.run(agent, "Wait for job j1.", max_turns=30, run_config=loopguard.run_config(**run_options))
    return tools, asyncio.run(go())


def notes_seen(scenario, text):
    return [e["turn"] for e in scenario.requests() for m in e["messages"] if text in m]


def test_an_unchanged_poll_is_blocked_at_the_fourth_call_with_the_policy_text(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 5, LoopGuardGuardrail())
    results = scenario.results()
    assert [t for _, t, _ in results[:3]] == ["job j1: still running"] * 3
    assert results[3][0] == 4 and results[3][1].startswith(BLOCK)
    assert results[4][1].startswith(BLOCK)
    assert tools.polls == 3


def test_a_warning_reaches_the_model_once_as_a_message_before_its_next_request(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 3, LoopGuardGuardrail())
    assert notes_seen(scenario, NOTE) == [3]  # the request after the 3rd call, and no other
    assert all(not t.startswith("loopguard") for _, t, _ in scenario.results())
    assert tools.polls == 3


def test_a_healthy_run_of_distinct_calls_is_untouched(scenario):
    turns = [[{"tool": "read", "args": {"path": f"/src/{i}.py"}}] for i in range(8)]
    run_agent(scenario, turns, LoopGuardGuardrail())
    assert [t for _, t, _ in scenario.results()] == [f"contents of /src/{i}.py" for i in range(8)]
    assert not [m for e in scenario.requests() for m in e["messages"] if "loopguard" in m]


def test_parallel_calls_in_one_step_are_all_checked_and_the_count_goes_on(scenario):
    # A step's calls run at once: the poll tool waits for its two twins, so all three polls are
    # checked before any answered. The three same answers then block both polls of the next step.
    tools = Tools(rendezvous=3)
    run_agent(scenario, [[POLL, POLL, POLL], [POLL, POLL]], LoopGuardGuardrail(), tools)
    steps = {turn: [t for t2, t, _ in scenario.results() if t2 == turn] for turn in (1, 2)}
    assert steps[1] == ["job j1: still running"] * 3
    assert len(steps[2]) == 2 and all(t.startswith(BLOCK) for t in steps[2])
    assert tools.polls == 3
    assert notes_seen(scenario, NOTE) == []  # a warning is a check's verdict: none saw two answers yet


def test_the_run_ends_at_the_ladders_end_and_the_model_gets_no_further_request(scenario):
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as e:
        run_agent(scenario, [[POLL]] * 9, LoopGuardGuardrail({"loopguard": {"preset": "recommended"}}))
    assert e.value.output.output_info.startswith(END_TEXT)
    requests = scenario.requests()
    assert len(requests) == 6  # the 6th call ended the run: no 7th request
    assert requests[-1]["results"][0]["text"].startswith(BLOCK)


def test_a_broken_config_is_reported_at_construction_with_its_path():
    with pytest.raises(LoopGuardError) as e:
        LoopGuardGuardrail({"loopguard": {"preset": "loud"}})
    assert e.value.path == "loopguard.preset"
    with pytest.raises(LoopGuardError):
        LoopGuardGuardrail({}, guard=object())


def test_each_run_is_its_own_session_and_a_group_id_joins_runs(scenario):
    loopguard = LoopGuardGuardrail()
    for _ in range(2):  # two runs, a RunConfig each: separate
        tools, _ = run_agent(scenario, [[POLL]] * 3, loopguard)
        assert tools.polls == 3 and not [t for _, t, _ in scenario.results() if "blocked" in t]
    run_agent(scenario, [[POLL]] * 2, loopguard, group_id="thread-1")
    tools, _ = run_agent(scenario, [[POLL]] * 2, loopguard, group_id="thread-1")  # the 4th of the thread
    assert tools.polls == 1 and scenario.results()[-1][1].startswith(BLOCK)
