"""The native JSON writer (`_native.dumps`, src/json.rs): the text it makes reads back as the
value `json.dumps` gives, it leaves what is not plain JSON data to `json`, and a guard decides
alike whichever of the two wrote a call's arguments."""

import enum
import json
from collections import OrderedDict

import pytest

from loopguard import LoopGuard, LoopGuardError, ToolCall, _native

PLAIN = [
    None,
    True,
    False,
    0,
    -7,
    2**63 - 1,
    -(2**63),
    2**64 + 5,  # past 64 bits: written as Python writes it
    -(10**40),
    0.1,
    -0.0,
    1e300,
    5e-324,
    123456789.125,
    "",
    'quote " backslash \\ slash / newline \n tab \t bell \x07 nul \x00 del \x7f',
    "h\u00e9llo w\u00f6rld \u2028 \U0001f600",
    [],
    {},
    (),
    [1, "two", [3.5, None], {"four": (5, 6)}],
    {"path": "/a/b.rs", "env": {"CI": "false", "N": 3}, "argv": ["-x", "--y=1"], "timeout_ms": 120000},
    {"b": 1, "a": 2, "b\u00e9": {"": []}},
    {"content": [{"type": "text", "text": "line 1\nline 2\n"}], "exitCode": 101, "durationMs": 1007},
]


def _id(value: object) -> str:
    try:
        return repr(value)[:40]
    except ValueError:  # an int too long for Python to write as text
        return type(value).__name__


@pytest.mark.parametrize("value", PLAIN, ids=_id)
def test_plain_values_read_back_as_json_dumps_gives_them(value) -> None:
    text = _native.dumps(value)
    assert text is not None
    assert json.loads(text) == json.loads(json.dumps(value))
    # Same types too (json.loads(1.0) == 1, so equality alone would not see an int for a float).
    assert repr(json.loads(text)) == repr(json.loads(json.dumps(value)))


class Color(enum.IntEnum):
    RED = 1


class Text(str):
    pass


def _nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


LEFT_TO_JSON = [
    "lone \ud800 surrogate",
    {"q": "lone \udc00"},
    {1: "int key"},
    {None: "None key"},
    Color.RED,
    Text("str subclass"),
    OrderedDict(a=1),
    float("nan"),
    [float("inf")],
    object(),
    {"x": {1, 2}},
    _nested(200),
    10**5000,  # past Python's int-to-text limit: json names it
]


@pytest.mark.parametrize("value", LEFT_TO_JSON, ids=_id)
def test_anything_else_is_left_to_json(value) -> None:
    assert _native.dumps(value) is None


def test_a_guard_decides_alike_on_either_writers_text() -> None:
    tight = {"tools": {"loopDetection": {"enabled": True, "warningThreshold": 3, "criticalThreshold": 5}}}
    args = {"q": "caf\u00e9 \U0001f600", "n": 2**70, "f": 0.1, "env": {"CI": False, "x": None}, "t": (1, 2)}
    result = {"content": [{"type": "text", "text": "r\u00e9sum\u00e9\n"}], "ok": True}
    verdicts = []
    for write in (_native.dumps, lambda v: json.dumps(v, separators=(",", ":"))):
        with LoopGuard(tight) as g:
            seen = []
            for _ in range(6):
                call = ToolCall("s", "web_search", args_json=write(args))
                v = g.before_tool_call(call)
                seen.append((v.action, v.count))
                if v.action != "block":
                    g.after_tool_outcome(call, result=result)
            verdicts.append(seen)
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][-1] == ("block", 5)


def test_values_json_cannot_write_are_named_errors() -> None:
    looped: dict = {}
    looped["self"] = looped
    with LoopGuard() as g:
        for bad in (looped, _nested(100_000), {"x": float("nan")}, [10**5000]):
            with pytest.raises(LoopGuardError) as info:
                g.before_tool_call(ToolCall("s", "t", args=bad))
            assert (info.value.kind, info.value.path) == ("input", "call.args")


@pytest.mark.parametrize("special", ['"', "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "\u00e9", "\U0001f600"], ids=repr)
def test_strings_are_escaped_as_json_writes_them_wherever_the_escape_falls(special: str) -> None:
    # The writer skips plain runs several bytes at a time: put the character at every offset of
    # a word and across words, alone and twice in a row.
    for at in range(40):
        for text in ("a" * at + special + "b" * (40 - at), "a" * at + special * 2):
            assert _native.dumps(text) == json.dumps(text, ensure_ascii=False), repr(text)
