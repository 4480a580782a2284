"""Sessions of ordinary work, and of loops, in the real CLIs under the default config: the files
of a small project, the commands the scripted model sends turn after turn, and, for the replay,
each call's outcome as that CLI reports it to its hook (`Shape`).

What a command prints is not written down by hand: `rehearse` runs the commands once in the
project folder before the session (then puts the folder back as it was), and the replayed trace
carries those outcomes; the tests then check that each call that ran showed the model the same
output, so the replayed trace is the session's.

Healthy work (`healthy()`: greps for names that do not exist, silent scaffolding, checks that
print `OK`, `sed -i` edits then a passing test) must never be denied nor ended; a streak the
agent leaves (`leaving`) is denied from the replay's block on, and what comes after it goes
through; a loop the agent keeps (`rerun_loop`: edit, re-run, the same failure) is denied at the
replay's call."""

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import clis
import scenarios as sc

# The project the sessions work in.
FILES = {
    "README.md": "# demo\n\nA small demo project: a greeting and a calculator.\n",
    "notes.md": "TODO: wire the config loader into main.\n",
    "src/app.py": "from util import greet\n\n\ndef main():\n    print(greet('world'))\n",
    "src/util.py": "def greet(name):\n    return f'hello {name}'\n",
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\nassert add(2, 3) == 5, 'add(2, 3) should be 5'\nprint('test_calc: all passed')\n",
    "test_x.py": "# attempt 0\ndef total(xs):\n    return sum(xs) + 1\n\n\nassert total([1, 2]) == 3, 'total([1, 2]) should be 3'\n",
}


@dataclass
class Step:
    """One tool call: a shell command (with the description a model gives it, where the CLI's
    shell tool takes one), or a file read with the CLI's own read tool."""

    command: str | None = None
    description: str = ""
    read: str | None = None  # a path in the project
    out: str = ""  # what it printed (stdout and stderr), or the file read: learnt by `rehearse`
    code: int = 0  # its exit status


def sh(*commands):
    """Steps from (command, description) pairs."""
    return [Step(command=c, description=d) for c, d in commands]


def healthy():
    """The healthy scenarios, by name, each a fresh list of steps."""
    return {"greps": greps(), "scaffold": scaffold(), "checks": checks(), "edits": edits()}


def greps():
    """a. Seven greps for seven names that do not exist."""
    names = ("parseConfig", "loadSettings", "initCache", "buildIndex", "fetchUser", "renderPage", "closeSession")
    return sh(*((f"grep -rn {name} .", f"Search the code for {name}") for name in names))


def scaffold():
    """b. A dozen silent scaffolding commands."""
    return sh(
        ("mkdir -p pkg/core", "Create the core package directory"),
        ("mkdir -p pkg/api", "Create the api package directory"),
        ("touch pkg/__init__.py", "Mark pkg as a package"),
        ("touch pkg/core/__init__.py", "Mark pkg/core as a package"),
        ("touch pkg/api/__init__.py", "Mark pkg/api as a package"),
        ("cp src/util.py pkg/core/util.py", "Copy util into the core package"),
        ("cp src/app.py pkg/api/app.py", "Copy the app into the api package"),
        ("cat > pkg/core/config.py <<'EOF'\nDEBUG = False\nNAME = 'demo'\nEOF", "Write the core config module"),
        ("cat > pkg/api/routes.py <<'EOF'\nROUTES = ['/', '/health']\nEOF", "Write the api routes module"),
        ("mkdir -p docs && touch docs/index.md", "Create the docs folder and its index"),
        ("cp README.md docs/README.md", "Copy the README into docs"),
        ("mv pkg/api/app.py pkg/api/main.py", "Rename the api app module to main"),
    )


def checks():
    """c. Eight different checks that each print OK."""
    return sh(
        ("test -f src/app.py && echo OK", "Check that src/app.py exists"),
        ("test -d pkg/core && echo OK", "Check that pkg/core exists"),
        ("[ -s README.md ] && echo OK", "Check that the README is not empty"),
        ("grep -q greet src/util.py && echo OK", "Check that util defines greet"),
        ("python3 -c \"print('OK')\"", "Check that python3 runs"),
        ("python3 -c \"import pkg.core.config; print('OK')\"", "Check that the config module imports"),
        ("python3 -c \"import ast; ast.parse(open('src/app.py').read()); print('OK')\"", "Check that src/app.py parses"),
        ("ls docs/index.md > /dev/null && echo OK", "Check that the docs index exists"),
    )


def edits():
    """d. A run of `sed -i` edits, then a test that passes."""
    return sh(
        ("sed -i 's/a - b/a + b/' calc.py", "Fix the sign in add"),
        ("sed -i '1i # Small arithmetic helpers.' calc.py", "Add a header comment to calc.py"),
        ("sed -i 's/def add(a, b):/def add(a: int, b: int) -> int:/' calc.py", "Add type hints to add"),
        ("sed -i '1i # Checks calc.add.' test_calc.py", "Add a header comment to the test"),
        ("sed -i 's/should be 5/must be 5/' test_calc.py", "Reword the assertion message"),
        ("python3 test_calc.py", "Run the calc test"),
    )


# Six spellings of one absent name: one fold, so the same call (docs/spec/beyond.md §3).
SPELLINGS = ["fooBarBaz", "foo_bar_baz", "FooBarBaz", "foo-bar-baz", "FOO_BAR_BAZ", "foobarbaz"]
# The cautious preset's sameResult (warnAt 3, blockAt 4): the 4th spelling is blocked, and each
# one after it. Pinned from the levels, as sc.POLL_BLOCK is.
SPELLING_BLOCK = (4, "same_result")


def leaving(read=True):
    """The six spellings, then a read of notes.md (the CLI's read tool, or `cat` where there is
    none) and an `ls`: the agent leaves the streak."""
    after = Step(read="notes.md") if read else Step(command="cat notes.md", description="Show the notes")
    return sh(*((f"grep -rn {s} .", f"Search the code for {s}") for s in SPELLINGS)) + \
        [after, Step(command="ls", description="List the project files")]


# Edit, re-run, the same failure: the edits change a comment, the test fails the same way.
RERUNS = 10
# The cautious preset's sameError for the same call re-run after changes blocks at rerunBlockAt
# (at most 8): by the 8th run, call 2 × 8 − 1; the replay says which.
RERUN_BLOCK_BY = 15


def rerun_loop():
    steps = []
    for i in range(1, RERUNS + 1):
        steps += sh(("python3 test_x.py", "Run the failing test"))
        if i < RERUNS:
            steps += sh((f"sed -i 's/# attempt {i - 1}/# attempt {i}/' test_x.py", f"Edit test_x.py, attempt {i}"))
    return steps


def write(proj: Path):
    for name, text in FILES.items():
        (proj / name).parent.mkdir(parents=True, exist_ok=True)
        (proj / name).write_text(text)


def rehearse(proj: Path, steps):
    """Writes the project, runs the steps there one after the other to learn what each prints
    and its exit status, then puts the project back: only FILES, as written."""
    before = set(proj.iterdir())
    write(proj)
    env = {**clis.ENV_BASE, "HOME": str(proj.parent / "home"), "PYTHONDONTWRITEBYTECODE": "1"}
    for s in steps:
        if s.read:
            s.out, s.code = (proj / s.read).read_text(), 0
            continue
        p = subprocess.run(["bash", "-c", s.command], cwd=proj, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        s.out, s.code = p.stdout, p.returncode
    for path in set(proj.iterdir()) - before:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    write(proj)
    return steps


class Shape:
    """How a CLI names a call to its hook and reports its outcome, and what its model reads."""

    # Whether the hook's warning reaches the model inside the call's result (Gemini CLI) rather
    # than beside it (Claude Code, Codex).
    notes_in_result = False

    def __init__(self, proj: Path):
        self.proj = proj

    def fake_call(self, step):
        """The call as FAKE_CMDS gives it to the scripted model."""
        return step.command

    def traced(self, step):
        """The call as the replay's trace gives it: (tool, args, outcome)."""
        raise NotImplementedError

    def shown(self, text):
        """What the model read in a tool result: (the tool's output, the hook's notes added to
        it). Claude Code and Codex give the notes to the model beside the result."""
        return text, []


class ClaudeShape(Shape):
    def fake_call(self, step):
        if step.read:
            return {"tool": "Read", "input": {"file_path": str(self.proj / step.read)}}
        return {"command": step.command, "description": step.description}

    def traced(self, step):
        if step.read:
            path = str(self.proj / step.read)
            lines = len(step.out.split("\n"))
            file = {"filePath": path, "content": step.out, "numLines": lines, "startLine": 1, "totalLines": lines}
            return "Read", {"file_path": path}, {"result": {"type": "text", "file": file}}
        args = {"command": step.command, "description": step.description}
        out = step.out.rstrip("\n")
        # PostToolUse: the output; grep's exit status 1 on no output reads "No matches found".
        # PostToolUseFailure: any other failure, as `error` "Exit code N" and the output.
        response = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
        if step.code == 1 and not out and step.command.startswith("grep "):
            return "Bash", args, {"result": {**response, "returnCodeInterpretation": "No matches found"}}
        if step.code:
            return "Bash", args, {"error": f"Exit code {step.code}" + (f"\n{out}" if out.strip() else "")}
        return "Bash", args, {"result": response}

    def denial(self, message, step):
        return f"PreToolUse:{'Read' if step.read else 'Bash'} hook error: {message}"


class CodexShape(Shape):
    def traced(self, step):
        # PostToolUse: `tool_response` is the output text, whatever the exit status.
        assert step.command, "Codex has no read tool here"
        return "Bash", {"command": step.command}, {"result": step.out}

    def denial(self, message, step):
        return f"Command blocked by PreToolUse hook: {message}. Command: {step.command}"


class GeminiShape(Shape):
    notes_in_result = True

    def fake_call(self, step):
        if step.read:
            return {"tool": "read_file", "input": {"file_path": step.read}}
        return {"command": step.command, "description": step.description}

    def traced(self, step):
        # AfterTool: the hook reads `returnDisplay`: the output, or "Command exited with code: N"
        # for a failure that printed nothing; read_file's is empty.
        if step.read:
            return "read_file", {"file_path": step.read}, {"result": ""}
        out = step.out.rstrip("\n")
        shown = out if out.strip() else (f"Command exited with code: {step.code}" if step.code else "")
        return "run_shell_command", {"command": step.command, "description": step.description}, {"result": shown}

    def denial(self, message, step):
        return json.dumps({"error": f"Tool execution blocked: {message}"}, separators=(",", ":"))

    def shown(self, text):
        # The hook's note rides in the result: `<hook_context>…</hook_context>` after the output.
        value = json.loads(text)
        output = value.get("output", text) if isinstance(value, dict) else text
        notes = re.findall(r"<hook_context>(.*?)</hook_context>", output, re.S)
        return re.sub(r"\s*<hook_context>.*?</hook_context>", "", output, flags=re.S), notes


class CopilotShape(Shape):
    """Copilot CLI's `bash`: the hook reads `textResultForLlm` without Copilot's own footer
    `<shellId: N completed with exit code X>`; a non-zero X is a failure, `Exit code X` and the
    output (cli/src/hook/copilot.rs). The hook's note rides in the result, after
    `Tool "bash" succeeded. Additional guidance from postToolUse hooks:`."""

    notes_in_result = True
    NOTE = re.compile(r'\n\nTool "[^"]+" \w+\. Additional guidance from postToolUse hooks:\n(.*)$', re.S)

    def fake_call(self, step):
        assert step.command, "the Copilot sessions use the shell only (leaving(read=False))"
        return {"command": step.command, "description": step.description}

    def traced(self, step):
        out = step.out.rstrip("\n")
        args = {"command": step.command, "description": step.description}
        if step.code:
            return "bash", args, {"error": f"Exit code {step.code}" + (f"\n{out}" if out.strip() else "")}
        return "bash", args, {"result": out}

    def denial(self, message, step):
        return f"Denied by preToolUse hook: {message}"

    def shown(self, text):
        note = self.NOTE.search(text)
        return (text, []) if note is None else (text[:note.start()], [note.group(1)])


def session(cli, shape: Shape, tmp_path: Path, steps, config=sc.DEFAULT, env=None):
    """Rehearses the steps, runs them in the CLI (one call per turn, then the final answer) and
    replays the same calls with the same outcomes under `config` (what the hook must read the
    CLI's config as): (process, the model's requests, the replay's decisions)."""
    rehearse(cli.proj, steps)
    cmds = [shape.fake_call(s) for s in steps]
    p, reqs = cli.session({"FAKE_TURNS": len(steps), "FAKE_CMDS": json.dumps(cmds)}, env=env)
    return p, reqs, replay(tmp_path, shape, steps, config)


def replay(tmp_path, shape, steps, config=sc.DEFAULT):
    return sc.replay(tmp_path, config, [[shape.traced(s)] for s in steps])


def assert_as_replayed(cli, shape, reqs, steps, decisions):
    """Every call ran or was denied exactly as the replay says: a denied call's result is the
    policy's message in the CLI's words; a call that ran shows the output the replay was given
    and no denial. The session was not ended: the model got every result and was asked once
    more. The warnings the replay notifies reached the model, and nothing else of loopguard's."""
    assert sc.the_end(decisions) is None, sc.findings(decisions)
    for d, step in zip(decisions, steps, strict=True):
        results = sc.results_of_call(reqs, d.call)
        assert results and len(results) == 1, f"call {d.call} ({step}): {results}\n{cli.describe()}"
        text = results[0]["text"]
        if d.action == "block":
            assert text == shape.denial(d.message, step), f"call {d.call} ({step}): {text}\n{cli.describe()}"
        else:
            output, notes = shape.shown(text)
            assert "loopguard" not in output and step.out.strip() in output, f"call {d.call} ({step}): {text}\n{cli.describe()}"
            noted = d.action == "warn" and d.notify and shape.notes_in_result
            assert notes == ([d.message] if noted else []), f"call {d.call}: {text}\n{cli.describe()}"
    assert max(r["turn"] for r in reqs) == len(steps) + 1 and cli.last.returncode == 0, cli.describe()
    by_turn = {r["turn"]: r["all"] for r in reqs}
    notes = [d for d in decisions if d.action == "warn" and d.notify]
    for d in notes:
        assert d.message in by_turn[d.call + 1], f"the warning of call {d.call}: {d.message}\n{cli.describe()}"
    blocks = [d for d in decisions if d.action == "block"]
    assert by_turn[len(steps) + 1].count("loopguard:") == len(notes) + len(blocks), cli.describe()


def assert_healthy(cli, shape, tmp_path, state_dir: Path):
    """The healthy scenarios in one session, one after the other, under the default config:
    neither the replay of the whole session nor that of each scenario alone blocks anything, and
    the session went as replayed: nothing denied, nothing ended, the model got every result. The
    hook did run (the session's state file)."""
    parts = healthy()
    steps = [s for part in parts.values() for s in part]
    p, reqs, decisions = session(cli, shape, tmp_path, steps)
    assert [d.call for d in decisions if d.action == "block"] == [], sc.findings(decisions)
    for name, part in parts.items():
        alone = replay(tmp_path, shape, part)
        assert [d.call for d in alone if d.action == "block"] == [], (name, sc.findings(alone))
    assert_as_replayed(cli, shape, reqs, steps, decisions)
    assert list(state_dir.glob("*.state")), f"no state in {state_dir}: the hook did not run\n{cli.describe()}"
    return decisions
