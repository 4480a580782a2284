"""The LiteLLM guardrail's history replay for requests without a session id (_replay: a cursor per
conversation, found by its opening and a digest of what it consumed). Every request is checked
against a full replay of its history (the behaviour without cursors): the warnings a request
brings and the verdicts on the model's calls must be the same dicts, whatever the interleaving,
edit, trim or retry."""
import json
import random

from loopguard import LoopGuard
from loopguard._replay import HistoryReplay

TIGHT = {"tools": {"loopDetection": {"enabled": True, "warningThreshold": 3, "criticalThreshold": 5,
                                     "globalCircuitBreakerThreshold": 12}}}


class FullReplay(HistoryReplay):
    """The reference: every request without a session id replays its whole history on its own."""

    def _by_opening(self, conversation):
        return None


def counted(replay):
    """`replay` with the size of each batch it feeds the policy recorded in `replay.sizes`."""
    replay.sizes = []
    real = replay._apply_calls
    replay._apply_calls = lambda cursor, items: (replay.sizes.append(len(items)), real(cursor, items))[1]
    return replay


class Conversation:
    """A scripted agent without a session id: a few commands, often repeated with the same result,
    so that the policy warns and blocks. Each request is a fresh copy, as a proxy parses it."""

    def __init__(self, name, opening="wait for CI", seed=0, system="You are a CI assistant."):
        self.name, self.rng, self.turn = name, random.Random(seed), 0
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": opening}]

    def request(self):
        return {"messages": json.loads(json.dumps(self.messages))}

    def calls(self):
        self.turn += 1
        n = 2 if self.rng.random() < 0.2 else 1
        return [(f"{self.name}-{self.turn}-{i}", "exec", json.dumps({"command": f"gh run view {self.rng.choice([42, 42, 43])}"}))
                for i in range(n)]

    def answer(self, calls, verdicts):
        kept = [c for c, v in zip(calls, verdicts) if not (v and v["action"] == "block")]
        if not kept:
            self.messages += [{"role": "assistant", "content": "blocked"}, {"role": "user", "content": "go on"}]
            return
        self.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": tool, "arguments": args}} for cid, tool, args in kept]})
        for cid, tool, args in kept:
            self.messages.append({"role": "tool", "tool_call_id": cid, "content": f"{json.loads(args).get('command', tool)}: in progress"})


class Pair:
    """The replay under test and the reference, fed the same requests; each turn asserts that
    they decide alike."""

    def __init__(self, guard, reference, **kw):
        self.replay = counted(HistoryReplay(guard, **kw))
        self.reference = FullReplay(reference)
        self.rid = 0
        self.decided = []

    def begin(self, conv):
        self.rid += 1
        rid, data = f"r{self.rid}", conv.request()
        got, want = self.replay.start(rid, None, data), self.reference.start(rid, None, data)
        assert got == want, (conv.name, conv.turn)
        return rid, data

    def end(self, conv, rid, data, answer=True):
        calls = conv.calls()
        got, want = self.replay.decide(rid, data, calls), self.reference.decide(rid, data, calls)
        assert got == want, (conv.name, conv.turn)
        self.decided += [v["action"] for v in got if v]
        if answer:
            conv.answer(calls, got)

    def turn(self, conv, answer=True):
        rid, data = self.begin(conv)
        self.end(conv, rid, data, answer)


def test_a_growing_conversation_decides_as_a_full_replay_and_feeds_only_what_is_new():
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b)
        conv = Conversation("one")
        for _ in range(60):
            p.turn(conv)
        assert {"warn", "block"} <= set(p.decided), "the script loops: the policy warned and blocked"
        assert len(p.replay.cursors) == 1
        # After the first request with a tool call, each one fed at most its results and the proposed calls.
        assert max(p.replay.sizes[2:]) <= 4 and len(p.replay.sizes) > 60


def test_interleaved_conversations_with_different_openings_keep_a_cursor_each():
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b)
        convs = [Conversation(f"c{i}", opening=f"task {i}", seed=i) for i in range(3)]
        order = random.Random(7)
        for _ in range(90):
            p.turn(order.choice(convs))
        assert len(p.replay.cursors) == 3 and len(p.replay.openings) == 3
        assert max(p.replay.sizes[6:]) <= 4


def test_conversations_with_the_same_opening_stay_correct_also_when_in_flight_together():
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b)
        # Two runs of one agent on one task (the same opening), another seed; and a twin of the
        # first: the same content, other call ids.
        convs = [Conversation("x", seed=1), Conversation("y", seed=2), Conversation("z", seed=1)]
        order = random.Random(3)
        for step in range(120):
            if step % 5 == 0:  # two requests between their hooks at once
                first, second = order.sample(convs, 2)
                r1, d1 = p.begin(first)
                r2, d2 = p.begin(second)
                p.end(second, r2, d2)
                p.end(first, r1, d1)
            else:
                p.turn(order.choice(convs))
        assert len(p.replay.openings) == 1 and len(p.replay.cursors) <= p.replay.per_opening
        assert {"warn", "block"} <= set(p.decided)


def test_identical_conversations_share_nothing_wrong():
    """Two clients sending byte-identical conversations (the same ids too) one after the other."""
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b)
        one, two = Conversation("same", seed=5), Conversation("same", seed=5)
        for _ in range(30):
            p.turn(one)
            p.turn(two)
            assert one.messages == two.messages


def test_an_edited_a_trimmed_and_a_retried_history_are_replayed_from_the_start():
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b)
        conv = Conversation("e", seed=4)
        replayed = []
        for turn in range(1, 50):
            before = len(p.replay.sizes)
            if turn == 15:  # a tool result rewritten in place
                tool = next(m for m in conv.messages if m["role"] == "tool")
                tool["content"] = "edited"
                replayed.append(turn)
            elif turn == 25:  # the client drops old turns
                del conv.messages[2:8]
                replayed.append(turn)
            elif not replayed and turn > 4 and conv.messages[-1]["role"] == "tool":
                # The answer is lost and the same request is sent again (it brings results: the
                # verdicts due on them are not kept, a replay gives them).
                p.turn(conv, answer=False)
                replayed.append(turn)
            p.turn(conv)
            if turn in replayed:
                assert sum(p.replay.sizes[before:]) > 6, f"turn {turn}: a full replay"
            elif turn > 1:
                assert max(p.replay.sizes[before:]) <= 4, f"turn {turn}: only what is new"
        assert len(replayed) == 3


class Poller(Conversation):
    """The same call every turn; each result carries `value`."""

    def __init__(self, name, value):
        super().__init__(name)
        self.value = value

    def calls(self):
        self.turn += 1
        return [(f"{self.name}-{self.turn}", "poll", "{}")]

    def answer(self, calls, verdicts):
        super().answer(calls, verdicts)
        self.retype()

    def retype(self):
        for m in self.messages:
            if m["role"] == "tool":
                m["content"] = [{"type": "text", "text": "state"}, {"n": self.value}]


def test_a_value_of_another_type_is_another_history():
    """1, 1.0 and true compare equal in Python but reach the policy as different JSON: a
    conversation equal to another's but for them does not continue the other's cursor."""
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b)
        first = Poller("v", 1)
        for _ in range(4):
            p.turn(first)
        for value in (1.0, True):
            other = Poller("v", value)
            other.turn, other.messages = first.turn, json.loads(json.dumps(first.messages))
            other.retype()
            assert other.messages == first.messages
            before = len(p.replay.sizes)
            p.turn(other)
            assert sum(p.replay.sizes[before:]) > 4, f"{value!r}: replayed from the start"


def test_cursors_are_evicted_by_count_and_by_age():
    now = [0.0]
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b, max_sessions=2, max_age=60, clock=lambda: now[0])
        convs = [Conversation(f"c{i}", opening=f"task {i}", seed=i) for i in range(3)]
        for conv in convs:
            p.turn(conv)
            p.turn(conv)
        assert len(p.replay.cursors) == 2 and a.stats().sessions == 2, "the least recently used one was dropped"
        before = len(p.replay.sizes)
        p.turn(convs[0])  # evicted: replayed from the start, decided alike
        assert sum(p.replay.sizes[before:]) > 4
        now[0] = 30.0
        p.turn(convs[2])
        now[0] = 75.0  # convs[0] was last used at 0 s, convs[2] at 30 s
        p.turn(convs[2])
        assert len(p.replay.cursors) == 1 and a.stats().sessions == 1
        now[0] = 200.0
        before = len(p.replay.sizes)
        p.turn(convs[2])  # its cursor too old: dropped before this request, which replays
        assert sum(p.replay.sizes[before:]) > 4 and len(p.replay.cursors) == 1


def test_cursors_per_opening_are_capped_and_a_conversation_without_tool_calls_keeps_none():
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b, per_opening=3)
        for i in range(6):
            conv = Conversation(f"p{i}", seed=i)
            p.turn(conv)
            p.turn(conv)
        assert len(p.replay.cursors) == 3 and a.stats().sessions == 3
        chat = {"messages": [{"role": "user", "content": "hello"}]}
        p.replay.start("plain", None, chat)
        p.replay.decide("plain", chat, [])
        assert len(p.replay.cursors) == 3 and a.stats().sessions == 3


def test_a_request_evicted_between_its_hooks_decides_on_its_own():
    with LoopGuard(TIGHT) as a, LoopGuard(TIGHT) as b:
        p = Pair(a, b, max_sessions=1)
        one, two = Conversation("o", opening="one"), Conversation("t", opening="two")
        p.turn(one)
        p.turn(two)
        r1, d1 = p.begin(one)
        p.turn(two)  # drops one's cursor while its request is in flight
        p.end(one, r1, d1)
        for _ in range(8):
            p.turn(one)
