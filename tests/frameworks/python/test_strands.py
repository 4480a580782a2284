"""loopguard.strands with strands-agents 1.62 against the scripted model (Chat Completions): what
the model receives when an agent loops, warns, runs clean, calls tools in parallel, is ended, or
is misconfigured."""
import asyncio

import pytest
from strands import Agent, tool
from strands.models.openai import OpenAIModel

from loopguard import LoopGuardError
from loopguard.strands import LoopGuardHooks

BLOCK = "loopguard: poll returned the same result 3 times in a row for this same call; blocked."
NOTE = "loopguard: poll returned the same result 2 times in a row"
END_TEXT = "loopguard: poll was blocked 3 times and sent again each time; ending the run."
POLL = {"tool": "poll", "args": {"job": "j1"}}


class Tools:
    """poll always answers the same; read answers per path; `rendezvous` makes that many polls
    wait for each other (proof that a step's calls overlap)."""

    def __init__(self, rendezvous=0):
        self.polls = 0
        self.barrier = asyncio.Barrier(rendezvous) if rendezvous else None

        @tool
        async def poll(job: str) -> str:
            """The status of a job.

            Args:
                job: the job's id
            """
            self.polls += 1
            if self.barrier:
                await asyncio.wait_for(self.barrier.wait(), 10)
            return "job j1: still running"

        @tool
        def read(path: str) -> str:
            """A file's contents.

            Args:
                path: the file
            """
            return f"contents of {path}"

        self.all = [poll, read]


def make_agent(scenario, hooks, tools):
    model = OpenAIModel(client_args={"api_key": "test-key", "base_url": scenario.openai_base, "max_retries": 0,
                                     "timeout": 20}, model_id="scripted")
    return Agent(model=model, tools=tools.all, hooks=[hooks], callback_handler=None, system_prompt="Wait for job j1.")


def run_agent(scenario, turns, hooks, tools=None):
    scenario.script(turns, final="finished")
    tools = tools or Tools()
    agent = make_agent(scenario, hooks, tools)
    return tools, agent("Wait for job j1.")


def notes_seen(scenario, text):
    return [e["turn"] for e in scenario.requests() for m in e["messages"] if text in m]


def test_an_unchanged_poll_is_blocked_at_the_fourth_call_with_the_policy_text(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 5, LoopGuardHooks())
    results = scenario.results()
    assert [t.split("\n")[0] for _, t, _ in results[:3]] == ["job j1: still running"] * 3
    assert results[3][0] == 4 and results[3][1].startswith(BLOCK)
    assert results[4][1].startswith(BLOCK)
    assert tools.polls == 3


def test_a_warning_reaches_the_model_once_appended_to_the_result_of_the_call_that_warned(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 3, LoopGuardHooks())
    texts = [t for _, t, _ in scenario.results()]
    assert texts[:2] == ["job j1: still running"] * 2
    assert texts[2].startswith("job j1: still running\n" + NOTE)
    assert sum(NOTE in t for t in texts) == 1 and notes_seen(scenario, NOTE) == []
    assert tools.polls == 3


def test_a_healthy_run_of_distinct_calls_is_untouched(scenario):
    turns = [[{"tool": "read", "args": {"path": f"/src/{i}.py"}}] for i in range(8)]
    run_agent(scenario, turns, LoopGuardHooks())
    assert [t for _, t, _ in scenario.results()] == [f"contents of /src/{i}.py" for i in range(8)]
    assert not [m for e in scenario.requests() for m in e["messages"] if "loopguard" in m]


def test_parallel_calls_in_one_step_are_all_checked_and_the_count_goes_on(scenario):
    # A step's calls run at once: the poll tool waits for its two twins, so all three polls are
    # checked before any answered. The three same answers then block both polls of the next step.
    tools = Tools(rendezvous=3)
    run_agent(scenario, [[POLL, POLL, POLL], [POLL, POLL]], LoopGuardHooks(), tools)
    steps = {turn: [t for t2, t, _ in scenario.results() if t2 == turn] for turn in (1, 2)}
    assert steps[1] == ["job j1: still running"] * 3  # no warning: none was checked after two answers
    assert len(steps[2]) == 2 and all(t.startswith(BLOCK) for t in steps[2])
    assert tools.polls == 3


def test_the_run_ends_at_the_ladders_end_and_the_model_gets_no_further_request(scenario):
    _, result = run_agent(scenario, [[POLL]] * 9, LoopGuardHooks({"loopguard": {"preset": "recommended"}}))
    assert result.stop_reason == "cancelled" and str(result).strip().startswith(END_TEXT)
    requests = scenario.requests()
    assert len(requests) == 6  # the 6th call ended the run: no 7th request
    assert requests[-1]["results"][0]["text"].startswith(BLOCK)


def test_a_broken_config_is_reported_at_construction_with_its_path():
    with pytest.raises(LoopGuardError) as e:
        LoopGuardHooks({"loopguard": {"preset": "loud"}})
    assert e.value.path == "loopguard.preset"
    with pytest.raises(LoopGuardError):
        LoopGuardHooks({}, guard=object())


def test_each_agent_is_its_own_session_and_its_calls_go_on_across_invocations(scenario):
    hooks = LoopGuardHooks()
    for _ in range(2):  # two agents: separate
        tools, _ = run_agent(scenario, [[POLL]] * 3, hooks)
        assert tools.polls == 3 and not [t for _, t, _ in scenario.results() if "blocked" in t]
    tools = Tools()
    agent = make_agent(scenario, hooks, tools)
    scenario.script([[POLL]] * 2, final="finished")
    agent("Wait for job j1.")
    scenario.script([[POLL]] * 4, final="finished")  # the history holds 2 steps: the model goes on at the 3rd
    agent("Still waiting?")
    assert tools.polls == 3 and scenario.results()[-1][1].startswith(BLOCK)
