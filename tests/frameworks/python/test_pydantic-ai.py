"""loopguard.pydantic_ai with pydantic-ai-slim 2.78 against the scripted model (Chat Completions):
what the model receives when an agent loops, warns, runs clean, calls tools in parallel, is ended,
or is misconfigured."""
import asyncio

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import RunCancelled
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from loopguard import LoopGuardError
from loopguard.pydantic_ai import LoopGuardCapability

BLOCK = "loopguard: poll returned the same result 3 times in a row for this same call; blocked."
NOTE = "loopguard: poll returned the same result 2 times in a row"
POLL = {"tool": "poll", "args": {"job": "j1"}}


class Tools:
    """poll always answers the same; read answers per path; `rendezvous` makes that many polls
    wait for each other (proof that a step's calls overlap)."""

    def __init__(self, rendezvous=0):
        self.polls = 0
        self.barrier = asyncio.Barrier(rendezvous) if rendezvous else None

        async def poll(job: str) -> str:
            """The status of a job."""
            self.polls += 1
            if self.barrier:
                await asyncio.wait_for(self.barrier.wait(), 10)
            return "job j1: still running"

        def read(path: str) -> str:
            """A file's contents."""
            return f"contents of {path}"

        self.all = [poll, read]


def make_agent(scenario, capability, tools):
    model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=scenario.openai_base, api_key="test-key"))
    return Agent(model, instructions="Wait for job j1.", tools=tools.all, capabilities=[capability], retries=0)


def run_agent(scenario, turns, capability, tools=None, **run_options):
    scenario.script(turns, final="finished")
    tools = tools or Tools()
    agent = make_agent(scenario, capability, tools)
    return tools, asyncio.run(agent.run("Wait for job j1.", **run_options))


def notes_seen(scenario, text):
    return [e["turn"] for e in scenario.requests() for m in e["messages"] if text in m]


def test_an_unchanged_poll_is_blocked_at_the_fourth_call_with_the_policy_text(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 5, LoopGuardCapability())
    results = scenario.results()
    assert [t for _, t, _ in results[:3]] == ["job j1: still running"] * 3
    assert results[3][0] == 4 and results[3][1].startswith(BLOCK)
    assert results[4][1].startswith(BLOCK)
    assert tools.polls == 3


def test_a_warning_reaches_the_model_once_as_a_system_message_in_its_next_request(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 4, LoopGuardCapability())
    assert notes_seen(scenario, NOTE) == [3]  # the request after the 3rd call, and no other
    assert all(not t.startswith("loopguard: poll returned the same result 2") for _, t, _ in scenario.results())
    assert tools.polls == 3


def test_a_healthy_run_of_distinct_calls_is_untouched(scenario):
    turns = [[{"tool": "read", "args": {"path": f"/src/{i}.py"}}] for i in range(8)]
    run_agent(scenario, turns, LoopGuardCapability())
    assert [t for _, t, _ in scenario.results()] == [f"contents of /src/{i}.py" for i in range(8)]
    assert not [m for e in scenario.requests() for m in e["messages"] if "loopguard" in m]


def test_parallel_calls_in_one_step_are_all_checked_and_the_count_goes_on(scenario):
    # A step's calls run at once: the poll tool waits for its two twins, so all three polls are
    # checked before any answered. The three same answers then block both polls of the next step.
    tools = Tools(rendezvous=3)
    run_agent(scenario, [[POLL, POLL, POLL], [POLL, POLL]], LoopGuardCapability(), tools)
    steps = {turn: [t for t2, t, _ in scenario.results() if t2 == turn] for turn in (1, 2)}
    assert steps[1] == ["job j1: still running"] * 3
    assert len(steps[2]) == 2 and all(t.startswith(BLOCK) for t in steps[2])
    assert tools.polls == 3
    assert notes_seen(scenario, NOTE) == []  # a warning is a check's verdict: none saw two answers yet


def test_the_run_ends_at_the_ladders_end_and_the_model_gets_no_further_request(scenario):
    with pytest.raises(RunCancelled):
        run_agent(scenario, [[POLL]] * 9, LoopGuardCapability({"loopguard": {"preset": "recommended"}}))
    requests = scenario.requests()
    assert len(requests) == 6  # the 6th call ended the run: no 7th request
    assert requests[-1]["results"][0]["text"].startswith(BLOCK)


def test_a_broken_config_is_reported_at_construction_with_its_path():
    with pytest.raises(LoopGuardError) as e:
        LoopGuardCapability({"loopguard": {"preset": "loud"}})
    assert e.value.path == "loopguard.preset"
    with pytest.raises(LoopGuardError):
        LoopGuardCapability({}, guard=object())


def test_a_conversation_spans_runs_and_each_new_one_is_its_own_session(scenario):
    capability = LoopGuardCapability()
    for _ in range(2):  # two conversations: separate
        tools, _ = run_agent(scenario, [[POLL]] * 3, capability)
        assert tools.polls == 3 and not [t for _, t, _ in scenario.results() if "blocked" in t]
    _, first = run_agent(scenario, [[POLL]] * 2, capability)
    # the model answers the next turns of the same script: its 3rd poll runs, its 4th is blocked
    tools, _ = run_agent(scenario, [[POLL]] * 4, capability, message_history=first.all_messages())
    assert tools.polls == 1 and scenario.results()[-1][1].startswith(BLOCK)
