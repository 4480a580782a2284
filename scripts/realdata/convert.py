#!/usr/bin/env python3
"""Convert public agent trajectories into loopguard traces (docs/spec/trace-format.md).

Sources are listed in scripts/realdata/sources.json (repository, commit, path, format, licence).
Each source file is read from a local bare snapshot of its repository with `git show COMMIT:PATH`
(the snapshots are not part of this repository; see tests/realdata/README.md). The output is one
gzip'd JSON Lines file per framework, `<out>/<framework>.jsonl.gz`, holding one session per
trajectory: `tool_call` then `tool_result` for every step the agent took. Also written:
`<out>/index.jsonl` (one line per trajectory: id, framework, source, calls, outcome).

Result texts are cut to RESULT_LIMIT bytes (head and tail kept) so that the corpus stays small,
and names, e-mails, account ids, keys and tokens are replaced by placeholders (`anonymise`).

Usage:
  python3 scripts/realdata/convert.py --mirror MIRROR_DIR --out tests/realdata/data
  python3 scripts/realdata/convert.py --split tests/realdata/data/tau-bench.jsonl.gz --to DIR
"""

from __future__ import annotations

import argparse
import os
import gzip
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULT_LIMIT = 4096
HALF = RESULT_LIMIT // 2

# ---- privacy ---------------------------------------------------------------------------------

SECRET_PATTERNS = [
    (re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"), "<email>"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), "<api-key>"),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"), "<token>"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), "<token>"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "<aws-key>"),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), "<token>"),
    (re.compile(r"(?i)\b(bearer|authorization:)\s+[A-Za-z0-9._-]{20,}"), r"\1 <token>"),
    (re.compile(r"(?i)(api[_-]?key|token|secret|password)(\"?\s*[:=]\s*\"?)[A-Za-z0-9._-]{12,}"),
     r"\1\2<secret>"),
    (re.compile(r"/Users/(?!user\b)[A-Za-z0-9._-]+"), "/Users/user"),
    # SWE-agent flattens the host path into a folder name: /__home__<login>__projects__...
    (re.compile(r"__(Users|home)__(?!user__)[A-Za-z0-9.-]+__"), r"__\1__user__"),
    # a personal GitHub account in the name of a test repository
    (re.compile(r"klieret"), "user"),
]


class Anonymiser:
    """Replaces person-like values with stable placeholders, per trajectory.

    Names are learnt from the structured fields of the data (tau-bench user profiles carry
    `first_name`/`last_name` and `user_id`s such as `mia_li_3668`): every learnt value is then
    replaced wherever it appears, in arguments and results alike.
    """

    NAME_KEYS = {"first_name", "last_name", "name"}
    ID_KEYS = {"user_id"}

    def __init__(self) -> None:
        self.map: dict[str, str] = {}
        self.counts = {"user": 0, "person": 0}
        self.pattern: re.Pattern[str] | None = None

    def learn(self, value: object, key: str | None = None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self.learn(v, k)
        elif isinstance(value, list):
            for v in value:
                self.learn(v, key)
        elif isinstance(value, str) and key in self.NAME_KEYS | self.ID_KEYS:
            if len(value) >= 2 and value not in self.map:
                kind = "user" if key in self.ID_KEYS else "person"
                self.counts[kind] += 1
                self.map[value] = f"{kind}_{self.counts[kind]}"
                self.pattern = None

    def text(self, s: str) -> str:
        for pat, rep in SECRET_PATTERNS:
            s = pat.sub(rep, s)
        if self.map:
            if self.pattern is None:
                alts = "|".join(re.escape(k) for k in sorted(self.map, key=len, reverse=True))
                self.pattern = re.compile(rf"\b(?:{alts})\b")
            s = self.pattern.sub(lambda m: self.map[m.group(0)], s)
        return s

    def value(self, v: object) -> object:
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v


def truncate(text: str) -> str:
    """Keeps the first and last 2 KiB of a long result; the middle is replaced by a marker."""
    raw = text.encode("utf-8")
    if len(raw) <= RESULT_LIMIT:
        return text
    head = raw[:HALF].decode("utf-8", "ignore")
    tail = raw[-HALF:].decode("utf-8", "ignore")
    return f"{head}\n[... {len(raw) - 2 * HALF} bytes cut by convert.py ...]\n{tail}"


# ---- readers: each yields (name, outcome, steps); a step is (tool, args, text, is_error) -------


def read_tau_bench(data: bytes, src: dict):
    runs = json.loads(data)
    anon = Anonymiser()  # one for the file: a name learnt in one run is hidden in all of them
    for run in runs:
        for m in run["traj"]:
            texts = [m.get("content")] if m.get("role") == "tool" else []
            texts += [tc["function"].get("arguments") for tc in m.get("tool_calls") or []]
            for text in texts:
                try:
                    anon.learn(json.loads(text or "null"))
                except json.JSONDecodeError:
                    pass
    for run in runs:
        steps, pending = [], {}
        for m in run["traj"]:
            for tc in m.get("tool_calls") or []:
                fn = tc["function"]
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = {"_raw": fn.get("arguments")}
                pending[tc["id"]] = (fn["name"], args)
            if m.get("role") == "tool" and m.get("tool_call_id") in pending:
                tool, args = pending.pop(m["tool_call_id"])
                text = m.get("content") or ""
                steps.append((tool, args, text, text.startswith("Error")))
        name = f"task{run['task_id']:03d}-trial{run['trial']}"
        yield name, f"reward={run['reward']}", steps, anon


SWE_AGENT_COMMANDS = {
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "append", "submit",
    "search_dir", "search_file", "find_file", "str_replace_editor", "decompile", "disassemble",
    "debug_start", "debug_add_breakpoint", "debug_continue", "debug_step", "debug_exec",
    "debug_stop", "connect_start", "connect_sendline", "connect_stop", "exit_forfeit", "filemap",
}


def read_swe_agent(data: bytes, src: dict):
    d = json.loads(data)
    steps = []
    for s in d["trajectory"]:
        action = (s.get("action") or "").strip()
        if not action:
            continue
        first = action.split(None, 1)[0]
        tool = first if first in SWE_AGENT_COMMANDS else "bash"
        steps.append((tool, {"command": action}, s.get("observation") or "", False))
    yield "", str(d.get("info", {}).get("exit_status")), steps, Anonymiser()


BASH_BLOCK = re.compile(r"```(?:bash|sh|mswea_bash_command)?\s*\n(.*?)```", re.S)


def read_mini_swe_agent(data: bytes, src: dict):
    d = json.loads(data)
    msgs, steps = (d if isinstance(d, list) else d["messages"]), []
    info = {} if isinstance(d, list) else d.get("info", {})
    for i, m in enumerate(msgs):
        if m.get("role") != "assistant":
            continue
        blocks = BASH_BLOCK.findall(m.get("content") or "")
        if len(blocks) != 1:
            continue
        nxt = msgs[i + 1] if i + 1 < len(msgs) else {}
        text = nxt.get("content") or "" if nxt.get("role") in ("user", "tool") else ""
        rc = re.search(r"<returncode>(-?\d+)</returncode>", text)
        steps.append(("bash", {"command": blocks[0].strip()}, text, bool(rc and rc.group(1) != "0")))
    yield "", str(info.get("exit_status")), steps, Anonymiser()


OH_SKIP_ACTIONS = {"system", "message", "recall", "finish", "change_agent_state", "think"}
OH_ARG_KEYS = ("command", "path", "code", "url", "file_text", "old_str", "new_str", "view_range",
               "insert_line", "content", "start", "end", "is_input", "browser_actions")


def _oh_history(run: dict):
    steps, pending = [], {}
    for e in run.get("history") or []:
        if e.get("action") and e.get("source") == "agent" and e["action"] not in OH_SKIP_ACTIONS:
            args = e.get("args") or {}
            meta = e.get("tool_call_metadata") or {}
            tool = meta.get("function_name") or e["action"]
            keep = {k: args[k] for k in OH_ARG_KEYS if k in args and args[k] not in (None, "")}
            if "command" in args and "command" not in keep:
                keep["command"] = args["command"]
            pending[e["id"]] = (tool, keep)
        elif e.get("observation") and e.get("cause") in pending:
            tool, args = pending.pop(e["cause"])
            text = e.get("content") or ""
            exit_code = ((e.get("extras") or {}).get("metadata") or {}).get("exit_code")
            is_err = e["observation"] == "error" or (exit_code not in (None, 0, -1))
            steps.append((tool, args, text, is_err))
    return steps


def read_openhands_jsonl(data: bytes, src: dict):
    for n, line in enumerate(data.decode("utf-8").splitlines()):
        if line.strip():
            run = json.loads(line)
            name = run.get("instance_id") or f"run{n}"
            yield str(name), "error=" + str(run.get("error")), _oh_history(run), Anonymiser()


def read_openhands_json(data: bytes, src: dict):
    runs = json.loads(data)
    for n, run in enumerate(runs if isinstance(runs, list) else [runs]):
        name = run.get("instance_id") or f"run{n}"
        yield str(name), "error=" + str(run.get("error")), _oh_history(run), Anonymiser()


REACT_ACTION = re.compile(r"^Action \d+: (\w+)\[(.*)\]\s*$")
REACT_LINE = re.compile(r"^(Thought|Action|Observation) \d+:|^Question:|^Correct answer:|^-{5,}|^#{5,}")


def read_reflexion_hotpotqa(data: bytes, src: dict):
    """ReAct / Reflexion agents on HotpotQA, from the text logs of the Reflexion repository.

    One trial of the log is read (`src["trial"]`); a trajectory starts at `Question:` and its
    steps are `Action N: Tool[arg]` with the following `Observation N:` (continuation lines
    included). Sections of the log give the outcome: correct, incorrect or halted (step limit).
    """
    text = data.decode("utf-8")
    parts = re.split(r"^BEGIN TRIAL (\d+)$", text, flags=re.M)
    trial = parts[parts.index(str(src["trial"])) + 1] if len(parts) > 1 else text
    section, blocks = "", []
    for line in trial.splitlines():
        m = re.match(r"^-+ BEGIN (\w+) AGENTS", line)
        if m:
            section = m.group(1).lower()
        elif line.startswith("Question:"):
            blocks.append((section, line, []))
        elif blocks:
            blocks[-1][2].append(line)
    for section, question, lines in blocks:
        steps, obs = [], None
        for line in lines:
            m = REACT_ACTION.match(line)
            if m:
                steps.append([m.group(1), {"query": m.group(2)}, "", False])
            elif re.match(r"^Action \d+:", line):
                steps.append(["invalid_action", {"text": line.split(":", 1)[1].strip()}, "", True])
            elif re.match(r"^Observation \d+:", line) and steps:
                steps[-1][2] = line.split(":", 1)[1].strip()
                obs = steps[-1]
                continue
            elif obs is not None and not REACT_LINE.match(line) and line.strip():
                obs[2] += "\n" + line
                continue
            obs = None
        name = hashlib.sha256(question.encode()).hexdigest()[:10]
        yield f"q-{name}", section, [tuple(x) for x in steps], Anonymiser()


READERS = {
    "reflexion-hotpotqa": read_reflexion_hotpotqa,
    "tau-bench": read_tau_bench,
    "swe-agent": read_swe_agent,
    "mini-swe-agent": read_mini_swe_agent,
    "openhands-jsonl": read_openhands_jsonl,
    "openhands-json": read_openhands_json,
}


# ---- output -----------------------------------------------------------------------------------


def slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-")[:80]


def trajectory_id(src: dict, name: str) -> str:
    """A short, stable id: framework, a readable part, and a hash of repo+path+name."""
    h = hashlib.sha256(f"{src['repo']}\0{src['path']}\0{name}".encode()).hexdigest()[:8]
    base = name or Path(src["path"]).stem.replace(".traj", "")
    return f"{src['framework']}/{slug(base)}-{h}"


def events(tid: str, steps, anon: Anonymiser):
    run = "run-1"
    for i, (tool, args, text, is_err) in enumerate(steps, 1):
        args = anon.value(args)
        call = {"kind": "tool_call", "session": tid, "run": run, "call_id": f"c{i}",
                "tool": tool, "args": args}
        yield call
        out = {**call, "kind": "tool_result"}
        text = truncate(anon.text(text))
        if is_err:
            out["error"] = text
        else:
            out["result"] = {"content": [{"type": "text", "text": text}]}
        yield out


def git_show(mirror: Path, repo: str, commit: str, path: str) -> bytes:
    gitdir = mirror / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", f"--git-dir={gitdir}", "show", f"{commit}:{path}"],
                          check=True, capture_output=True).stdout


def convert(mirror: Path, out: Path) -> None:
    sources = json.loads((HERE / "sources.json").read_text())["sources"]
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, gzip.GzipFile] = {}
    index, seen = [], set()
    for src in sources:
        data = git_show(mirror, src["repo"], src["commit"], src["path"])
        for name, outcome, steps, anon in READERS[src["format"]](data, src):
            if not steps:
                continue
            fw = src["framework"]
            digest = hashlib.sha256(json.dumps([fw, steps]).encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            tid = trajectory_id(src, name + (f"-t{src['trial']}" if "trial" in src else ""))
            if fw not in files:
                files[fw] = gzip.GzipFile(out / f"{fw}.jsonl.gz", "wb", mtime=0)
            for ev in events(tid, steps, anon):
                files[fw].write((json.dumps(ev, ensure_ascii=False) + "\n").encode())
            index.append({"id": tid, "framework": fw, "repo": src["repo"], "commit": src["commit"],
                          "path": src["path"], "item": name, "calls": len(steps),
                          "outcome": outcome, "licence": src["licence"]})
    for f in files.values():
        f.close()
    with open(out / "index.jsonl", "w") as f:
        for row in index:
            f.write(json.dumps(row) + "\n")
    print(f"{len(index)} trajectories -> {out}", file=sys.stderr)


def read_sessions(path: Path):
    """Yields (session id, [events]) from a .jsonl or .jsonl.gz corpus file, in file order."""
    opener = gzip.open if path.suffix == ".gz" else open
    current, evs = None, []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            ev = json.loads(line)
            if ev["session"] != current and evs:
                yield current, evs
                evs = []
            current = ev["session"]
            evs.append(ev)
    if evs:
        yield current, evs


def split(path: Path, to: Path) -> None:
    """Writes one plain trace.jsonl per session (for `loopguard replay`)."""
    for sid, evs in read_sessions(path):
        target = to / (sid.replace("/", "__") + ".jsonl")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in evs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", type=Path, default=os.environ.get("LOOPGUARD_MIRROR"),
                    help="folder holding <owner>+<name>/repo bare snapshots (default: $LOOPGUARD_MIRROR)")
    ap.add_argument("--out", type=Path, default=Path("tests/realdata/data"))
    ap.add_argument("--split", type=Path, help="a corpus file to split into one trace per session")
    ap.add_argument("--to", type=Path, help="output folder for --split")
    a = ap.parse_args()
    if a.split:
        split(a.split, a.to or Path("."))
    else:
        if a.mirror is None:
            ap.error("--mirror (or $LOOPGUARD_MIRROR) must name the folder of the source snapshots")
        convert(a.mirror, a.out)


if __name__ == "__main__":
    main()
