"""loopguard.crewai with CrewAI 1.15.30 (its OpenAI provider on the scripted model's Chat
Completions): what the model receives when the global hooks refuse, warn, let be, and end the run."""
import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

import pytest
from crewai import LLM, Agent, Crew, Task
from crewai.llms.base_llm import LLMCallBlockedError
from crewai.tools import tool
from crewai.tools.tool_failure import ToolExecutionFailedError

from loopguard import LoopGuardError
from loopguard.crewai import LoopGuardHooks

BLOCK = "loopguard: poll returned the same result 3 times in a row for this same call; blocked."
WARN = "loopguard: poll returned the same result 2 times in a row"
POLL = {"tool": "poll", "args": {"job": "build-7"}}


def run(scenario, hooks):
    """One task through a one-agent crew with the hooks installed: (what ran, the final text)."""
    ran = []

    @tool("poll")
    def poll(job: str) -> str:
        """The status of a job."""
        ran.append(("poll", job))
        return "status: running"

    @tool("read")
    def read(path: str) -> str:
        """A file's contents."""
        ran.append(("read", path))
        return f"contents of {path}"

    with hooks:
        llm = LLM(model="openai/scripted", base_url=scenario.openai_base, api_key="test-key")
        agent = Agent(role="worker", goal="Do the task.", backstory="test", tools=[poll, read], llm=llm,
                      max_iter=20, cache=False, verbose=False)
        task = Task(description="Do the task.", expected_output="the answer", agent=agent)
        try:
            return ran, Crew(agents=[agent], tasks=[task], verbose=False).kickoff().raw
        except LLMCallBlockedError as e:
            return ran, e


def results(scenario):
    return [t for _, t, _ in scenario.results()]


def test_an_unchanged_poll_is_blocked_at_the_fourth_call_with_the_policys_text(scenario):
    scenario.script([[POLL]] * 5, final="gave up")
    ran, final = run(scenario, LoopGuardHooks())
    assert final == "gave up"
    texts = results(scenario)
    assert texts[:3] == ["status: running"] * 3
    assert texts[3].startswith(BLOCK) and texts[4].startswith(BLOCK)
    assert not any("blocked by hook" in t for t in texts)
    assert ran == [("poll", "build-7")] * 3


def test_a_warning_reaches_the_model_once_as_a_user_message_after_the_results(scenario):
    scenario.script([[POLL]] * 4)
    run(scenario, LoopGuardHooks())
    requests = scenario.requests()
    first = next(r["turn"] for r in requests if any(WARN in m for m in r["messages"]))
    assert first == 3  # the request that carries the third call's result
    warned = requests[first]["body"]["messages"]
    assert warned[-1]["role"] == "user" and warned[-1]["content"].startswith(WARN)
    # Added once: every later request carries it once, in the history.
    assert [sum(WARN in str(m.get("content")) for m in r["body"]["messages"]) for r in requests] == [0, 0, 0, 1, 1]


def test_a_healthy_run_of_distinct_calls_is_untouched(scenario):
    paths = [f"/src/file{i}.py" for i in range(8)]
    scenario.script([[{"tool": "read", "args": {"path": p}}] for p in paths], final="read them all")
    ran, final = run(scenario, LoopGuardHooks())
    assert final == "read them all"
    assert results(scenario) == [f"contents of {p}" for p in paths]
    assert "loopguard" not in str(scenario.requests())
    assert ran == [("read", p) for p in paths]


def test_parallel_calls_in_one_step_are_each_checked_and_the_count_goes_on(scenario):
    """CrewAI runs one step's calls in threads: each is checked before any has run, the outcomes
    are paired by order among the same calls, and none is lost. (Which of a step's calls is
    checked first is up to the threads, so the steps here keep the polls apart from the reads.)"""
    reads = [{"tool": "read", "args": {"path": p}} for p in ("/a", "/b")]
    scenario.script([reads, [POLL, POLL, POLL], [POLL, POLL]])
    hooks = LoopGuardHooks()
    ran, _ = run(scenario, hooks)
    by_turn = {r["turn"]: [x["text"] for x in r["results"]] for r in scenario.requests()}
    assert by_turn[1] == ["contents of /a", "contents of /b"]
    assert by_turn[2] == ["status: running"] * 3  # checked on no outcome yet: all three run
    assert len(by_turn[3]) == 2 and all(t.startswith(BLOCK) for t in by_turn[3])  # three outcomes
    assert ran.count(("poll", "build-7")) == 3
    assert hooks.gate.pending == 0  # every outcome paired with its call


def test_the_recommended_ladder_ends_the_run_at_the_sixth_call(scenario):
    scenario.script([[POLL]] * 10, final="never")
    ran, final = run(scenario, LoopGuardHooks({"loopguard": {"preset": "recommended"}}))
    assert isinstance(final, LLMCallBlockedError)
    requests = scenario.requests()
    assert max(r["turn"] for r in requests) == 5  # no request after the sixth call
    assert requests[-1]["results"][0]["text"].startswith(BLOCK)
    assert ran == [("poll", "build-7")] * 3


def test_a_broken_config_is_reported_at_construction_with_its_path():
    with pytest.raises(LoopGuardError) as e:
        LoopGuardHooks({"loopguard": {"preset": "loud"}})
    assert e.value.path == "loopguard.preset"


def test_a_model_that_keeps_polling_meets_crewais_own_repeat_stop_at_the_fifth_refusal(scenario):
    """The default never ends a run; CrewAI's own stop (the same tool, arguments and result five
    times in a run) ends it: five refusals of the same call carry the same text."""
    scenario.script([[POLL]] * 12, final="never")
    with pytest.raises(ToolExecutionFailedError, match="same arguments 5 times"):
        run(scenario, LoopGuardHooks())
    texts = results(scenario)
    assert texts[:3] == ["status: running"] * 3 and len(texts) == 7
    assert all(t.startswith(BLOCK) for t in texts[3:])
