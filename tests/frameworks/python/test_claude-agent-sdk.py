"""loopguard.claude_agent_sdk with the real Claude Agent SDK 0.2.190 (installed from its source
distribution, without the bundled CLI), driving the Claude Code CLI of tests/agent-clis
(CLAUDE_CODE_EXECUTABLE, passed as cli_path) against the scripted model's Anthropic Messages API:
what the model receives when the hooks refuse, warn, let be, and end the run."""
import asyncio
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, create_sdk_mcp_server, query, tool

from loopguard import LoopGuardError
from loopguard.claude_agent_sdk import loopguard_hooks

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = os.environ.get("CLAUDE_CODE_EXECUTABLE") or str(
    ROOT / "tests/agent-clis/node_modules/@anthropic-ai/claude-code/bin/claude.exe")
# The policy names the tool as Claude Code does: the SDK MCP server's `mcp__t__poll`.
BLOCK = "loopguard: mcp__t__poll returned the same result 3 times in a row for this same call; blocked."
WARN = "loopguard: mcp__t__poll returned the same result 2 times in a row"
POLL = {"tool": "poll", "args": {"job": "build-7"}}


def denied(text):
    return f"PreToolUse:mcp__t__poll hook error: {text}"


def own(text):
    """A result's own text: Claude Code appends <system-reminder> blocks (token counts, hook context)."""
    return text.split("\n\n<system-reminder>")[0]


@pytest.fixture(scope="module", autouse=True)
def claude_code():
    if not os.path.exists(CLAUDE):
        pytest.fail(f"no Claude Code at {CLAUDE}: run scripts/setup-agent-clis.sh")


def run(scenario, hooks):
    """One prompt through query() with the hooks: (what ran, the result message)."""
    ran = []

    @tool("poll", "The status of a job", {"job": str})
    async def poll(args):
        ran.append(("poll", args["job"]))
        return {"content": [{"type": "text", "text": "status: running"}]}

    @tool("read", "A file", {"path": str})
    async def read(args):
        ran.append(("read", args["path"]))
        return {"content": [{"type": "text", "text": f"contents of {args['path']}"}]}

    home = tempfile.mkdtemp(prefix="lg-claude-sdk-")
    env = {"HOME": home, "ANTHROPIC_BASE_URL": scenario.anthropic_base, "ANTHROPIC_API_KEY": "test-key",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
           "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1"}
    options = ClaudeAgentOptions(
        cli_path=CLAUDE, env=env, cwd=home, model="claude-sonnet-4-5", max_turns=20, setting_sources=[], tools=[],
        mcp_servers={"t": create_sdk_mcp_server("t", "1.0.0", tools=[poll, read])},
        allowed_tools=["mcp__t__poll", "mcp__t__read"], hooks=hooks)

    async def go():
        result = None
        async for m in query(prompt="Do the task.", options=options):
            if isinstance(m, ResultMessage):
                result = m
        return result

    try:
        return ran, asyncio.run(asyncio.wait_for(go(), 120))
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_an_unchanged_poll_is_blocked_at_the_fourth_call_with_the_policys_text(scenario):
    scenario.script([[POLL]] * 5, final="gave up")
    ran, result = run(scenario, loopguard_hooks())
    results = scenario.results()
    assert [own(t) for _, t, _ in results[:3]] == ["status: running"] * 3
    assert results[3][1].startswith(denied(BLOCK)) and results[3][2]  # is_error
    assert results[4][1].startswith(denied(BLOCK))
    assert ran == [("poll", "build-7")] * 3
    assert result.result == "gave up"


def test_a_warning_reaches_the_model_once_as_additional_context_with_the_third_result(scenario):
    scenario.script([[POLL]] * 4)
    run(scenario, loopguard_hooks())
    results = [t for _, t, _ in scenario.results()]
    assert [t.count(WARN) for t in results] == [0, 0, 1, 0]
    assert f"PostToolUse:mcp__t__poll hook additional context: {WARN}" in results[2]
    assert not any(WARN in m for r in scenario.requests() for m in r["messages"])


def test_a_healthy_run_of_distinct_calls_is_untouched(scenario):
    paths = [f"/src/file{i}.py" for i in range(8)]
    scenario.script([[{"tool": "read", "args": {"path": p}}] for p in paths], final="read them all")
    ran, result = run(scenario, loopguard_hooks())
    assert [own(t) for _, t, _ in scenario.results()] == [f"contents of {p}" for p in paths]
    assert "loopguard" not in str(scenario.requests())
    assert ran == [("read", p) for p in paths]
    assert result.result == "read them all"


def test_parallel_calls_in_one_step_are_each_checked_and_the_count_goes_on(scenario):
    """Claude Code asks PreToolUse for every call of a step before their outcomes come back, so a
    repeat within one step is judged on the outcomes of the steps before it; none is lost."""
    read = {"tool": "read", "args": {"path": "/a"}}
    scenario.script([[POLL, read, POLL], [POLL, POLL], [POLL]])
    ran, _ = run(scenario, loopguard_hooks())
    by_turn = {r["turn"]: [own(x["text"]) for x in r["results"]] for r in scenario.requests()}
    assert by_turn[1] == ["status: running", "contents of /a", "status: running"]
    assert by_turn[2] == ["status: running", "status: running"]
    assert len(by_turn[3]) == 1 and by_turn[3][0].startswith(denied(BLOCK))
    assert ran.count(("poll", "build-7")) == 4 and ran.count(("read", "/a")) == 1


def test_the_recommended_ladder_ends_the_run_at_the_sixth_call(scenario):
    scenario.script([[POLL]] * 10, final="never")
    ran, result = run(scenario, loopguard_hooks({"loopguard": {"preset": "recommended"}}))
    requests = scenario.requests()
    assert max(r["turn"] for r in requests) == 5  # no request after the sixth call
    assert requests[-1]["results"][0]["text"].startswith(denied(BLOCK))
    assert ran == [("poll", "build-7")] * 3
    assert result.terminal_reason == "hook_stopped" and result.result != "never"


def test_a_broken_config_is_reported_at_construction_with_its_path():
    with pytest.raises(LoopGuardError) as e:
        loopguard_hooks({"loopguard": {"preset": "loud"}})
    assert e.value.path == "loopguard.preset"
