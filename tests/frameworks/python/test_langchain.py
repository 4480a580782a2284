"""loopguard.langchain with LangChain 1.5 / LangGraph 1.2 against the scripted model: what the
model receives when an agent loops, warns, runs clean, calls tools in parallel, is ended, or is
misconfigured; and the same middleware as a bare LangGraph ToolNode's wrap_tool_call."""
import asyncio
import threading

import pytest
from langchain.agents import create_agent
from langchain.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from loopguard import LoopGuardError
from loopguard.langchain import LoopGuardMiddleware

BLOCK = "loopguard: poll returned the same result 3 times in a row for this same call; blocked."
NOTE = "loopguard: poll returned the same result 2 times in a row"
END_TEXT = "loopguard: poll was blocked 3 times and sent again each time; ending the run."
POLL = {"tool": "poll", "args": {"job": "j1"}}


class Tools:
    """poll always answers the same; read answers per path; `rendezvous` makes that many polls
    wait for each other (proof that a step's calls overlap)."""

    def __init__(self, rendezvous=0):
        self.polls = 0
        self.barrier = threading.Barrier(rendezvous, timeout=10) if rendezvous else None

        @tool
        def poll(job: str) -> str:
            """The status of a job."""
            self.polls += 1
            if self.barrier:
                self.barrier.wait()
            return "job j1: still running"

        @tool
        def read(path: str) -> str:
            """A file's contents."""
            return f"contents of {path}"

        self.all = [poll, read]


def run_agent(scenario, turns, middleware, tools=None, thread="t1"):
    scenario.script(turns, final="finished")
    tools = tools or Tools()
    model = ChatOpenAI(model="scripted", base_url=scenario.openai_base, api_key="test-key", max_retries=0, timeout=20)
    agent = create_agent(model, tools.all, middleware=[middleware])
    config = {"recursion_limit": 60, "configurable": {"thread_id": thread}} if thread else {"recursion_limit": 60}
    out = agent.invoke({"messages": [{"role": "user", "content": "Wait for job j1."}]}, config)
    return tools, out


def notes_seen(scenario, text):
    return [e["turn"] for e in scenario.requests() for m in e["messages"] if text in m]


def test_an_unchanged_poll_is_blocked_at_the_fourth_call_with_the_policy_text(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 5, LoopGuardMiddleware())
    results = scenario.results()
    assert [t for _, t, _ in results[:3]] == ["job j1: still running"] * 3
    assert results[3][0] == 4 and results[3][1].startswith(BLOCK)
    assert results[4][1].startswith(BLOCK)
    assert tools.polls == 3


def test_a_warning_reaches_the_model_once_as_a_message_before_its_next_request(scenario):
    tools, _ = run_agent(scenario, [[POLL]] * 3, LoopGuardMiddleware())
    assert notes_seen(scenario, NOTE) == [3]  # the request after the 3rd call, and no other
    assert all(not t.startswith("loopguard") for _, t, _ in scenario.results())
    assert tools.polls == 3


def test_a_healthy_run_of_distinct_calls_is_untouched(scenario):
    turns = [[{"tool": "read", "args": {"path": f"/src/{i}.py"}}] for i in range(8)]
    run_agent(scenario, turns, LoopGuardMiddleware())
    assert [t for _, t, _ in scenario.results()] == [f"contents of /src/{i}.py" for i in range(8)]
    assert not [m for e in scenario.requests() for m in e["messages"] if "loopguard" in m]


def test_parallel_calls_in_one_step_are_all_checked_and_the_count_goes_on(scenario):
    # A step's calls run at once: the poll tool waits for its two twins, so all three polls are
    # checked before any answered. The three same answers then block both polls of the next step.
    tools = Tools(rendezvous=3)
    run_agent(scenario, [[POLL, POLL, POLL], [POLL, POLL]], LoopGuardMiddleware(), tools)
    steps = {turn: [t for t2, t, _ in scenario.results() if t2 == turn] for turn in (1, 2)}
    assert steps[1] == ["job j1: still running"] * 3
    assert len(steps[2]) == 2 and all(t.startswith(BLOCK) for t in steps[2])
    assert tools.polls == 3
    assert notes_seen(scenario, NOTE) == []  # a warning is a check's verdict: none saw two answers yet


def test_the_run_ends_at_the_ladders_end_and_the_model_gets_no_further_request(scenario):
    tools, out = run_agent(scenario, [[POLL]] * 9, LoopGuardMiddleware({"loopguard": {"preset": "recommended"}}))
    requests = scenario.requests()
    assert len(requests) == 6  # the 6th call ended the run: no 7th request
    assert requests[-1]["results"][0]["text"].startswith(BLOCK)
    assert out["messages"][-1].content.startswith(END_TEXT)
    assert tools.polls == 3


def test_an_async_run_gets_the_same_block_note_and_end(scenario):
    scenario.script([[POLL]] * 9, final="finished")
    tools = Tools()
    model = ChatOpenAI(model="scripted", base_url=scenario.openai_base, api_key="test-key", max_retries=0, timeout=20)
    agent = create_agent(model, tools.all, middleware=[LoopGuardMiddleware({"loopguard": {"preset": "recommended"}})])
    asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "Wait for job j1."}]},
                              {"configurable": {"thread_id": "async"}, "recursion_limit": 60}))
    assert notes_seen(scenario, NOTE) == [3]
    assert [t.startswith(BLOCK) for _, t, _ in scenario.results()] == [False] * 3 + [True] * 2
    assert len(scenario.requests()) == 6 and tools.polls == 3


def test_a_broken_config_is_reported_at_construction_with_its_path():
    with pytest.raises(LoopGuardError) as e:
        LoopGuardMiddleware({"loopguard": {"preset": "loud"}})
    assert e.value.path == "loopguard.preset"
    with pytest.raises(LoopGuardError):
        LoopGuardMiddleware({}, guard=object())


def test_each_thread_is_its_own_session_and_a_run_without_thread_too(scenario):
    middleware = LoopGuardMiddleware()
    for thread in ("a", "b", None, None):
        tools, _ = run_agent(scenario, [[POLL]] * 3, middleware, thread=thread)
        assert tools.polls == 3 and not [t for _, t, _ in scenario.results() if "blocked" in t]


def test_a_bare_langgraph_tool_node_gets_the_block_and_the_note_in_the_result(scenario):
    scenario.script([[POLL]] * 5, final="finished")
    tools = Tools()
    guard = LoopGuardMiddleware(note_in_result=True)
    model = ChatOpenAI(model="scripted", base_url=scenario.openai_base, api_key="test-key", max_retries=0,
                       timeout=20).bind_tools(tools.all)
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode(tools.all, wrap_tool_call=guard.wrap_tool_call))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    graph.compile().invoke({"messages": [{"role": "user", "content": "Wait for job j1."}]},
                           {"configurable": {"thread_id": "g1"}, "recursion_limit": 30})
    texts = [t for _, t, _ in scenario.results()]
    assert texts[2].startswith(f"job j1: still running\n\n{NOTE}")
    assert texts[3].startswith(BLOCK) and texts[4].startswith(BLOCK)
    assert tools.polls == 3
