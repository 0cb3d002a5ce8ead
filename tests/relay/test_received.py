"""Spans that arrive out of seq order (calls that overlap and settle in any order): the store keeps each
seq once, acks its contiguous prefix plus the ranges above it, and lets `floor` pass only what the agent will
never send. `Received` is checked against a plain set for every arrival order."""

from __future__ import annotations

import itertools
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from relay_bridge.core import protocol as p
from relay_bridge.core import received as rc
from relay_bridge.core import synth
from relay_bridge.core.received import Received
from relay_bridge.core.store import Store

SID = "0a1b2c3d"


def frame(obj: dict) -> p.AgentFrame:
    decoded = p.decode(json.dumps(obj))
    assert not isinstance(decoded, p.Rejection), decoded
    return decoded


def spans(seqs: list[int], **extra: object) -> p.AgentFrame:
    return frame(synth.spans_frame(SID, [synth.span(SID, s, "t", s * 10.0, 1.0) for s in seqs], **extra))


def live_store() -> Store:
    store = Store()
    store.connect(1)
    store.apply(1, frame(synth.hello(SID)))
    return store


def ack_of(replies: list) -> dict:
    (ack,) = [r for r in replies if isinstance(r, p.Ack)]
    return json.loads(p.encode(ack))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "floor"]), st.integers(0, 40)), max_size=80))
def test_received_matches_a_set_for_any_arrival_order(ops: list[tuple[str, int]]) -> None:
    r = Received()
    known: set[int] = set()  # stored, or passed by a floor
    for op, seq in ops:
        if op == "floor":
            r.floor(seq)
            known |= set(range(seq))
        else:
            assert r.add(seq) == (seq not in known)
            known.add(seq)
        acked = -1
        while acked + 1 in known:
            acked += 1
        assert r.acked == acked
        assert [x for lo, hi in r.ranges for x in range(lo, hi + 1)] == sorted(x for x in known if x > acked)
        for a, b in itertools.pairwise(r.ranges):
            assert a[1] + 1 < b[0], "ranges never touch"


def test_every_arrival_order_of_six_spans_is_stored_once_and_acked_in_full() -> None:
    for order in itertools.permutations(range(6)):
        store = live_store()
        s = store.sessions[SID]
        for seq in order:
            store.apply(1, spans([seq], floor=min(set(range(6)) - s.stats.ring.keys())))
        assert s.acked == 5 and s.counters.duplicates == 0 and s.stats.totals.calls == 6, order


def test_the_ack_names_what_is_held_above_a_running_call() -> None:
    store = live_store()
    store.apply(1, frame(synth.start_frame(SID, [(0, "slow", 0.0)])))
    ack = ack_of(store.apply(1, spans([1, 2, 4], floor=0)))
    assert ack == {"type": "ack", "session": SID, "seq": -1, "above": [[1, 2], [4, 4]]}
    assert 0 in store.sessions[SID].inflight, "the running call is still shown in flight"
    ack = ack_of(store.apply(1, spans([0], floor=0)))
    assert ack == {"type": "ack", "session": SID, "seq": 2, "above": [[4, 4]]}
    assert ack_of(store.apply(1, spans([3], floor=3))) == {"type": "ack", "session": SID, "seq": 4}


def test_floor_passes_lost_holes_but_not_a_call_still_running() -> None:
    store = live_store()
    s = store.sessions[SID]
    # 0 is running, 1 and 2 were evicted unsent (lost), 3 and 4 arrive: floor 0 keeps the relay waiting for 0.
    store.apply(1, spans([3, 4], floor=0, lost=2))
    assert s.acked == -1 and s.lost == 2
    # 0 settles; the agent now holds nothing below 5 it could send: the relay stops waiting for 1 and 2.
    ack = ack_of(store.apply(1, spans([0], floor=5, lost=2)))
    assert ack == {"type": "ack", "session": SID, "seq": 4}
    assert sorted(sp.seq for sp in s.spans()) == [0, 3, 4]
    assert s.coverage == "incomplete"
    # A call whose start arrived but whose span was evicted unsent is not left "in flight" once passed.
    store.apply(1, frame(synth.start_frame(SID, [(5, "t", 50.0)])))
    store.apply(1, spans([], floor=7, lost=3))
    assert 5 not in s.inflight and s.acked == 6
    # A floor below what is stored never moves the ack back.
    store.apply(1, spans([], floor=1))
    assert s.acked == 6


def test_a_span_passed_by_floor_that_arrives_anyway_is_a_duplicate_not_a_second_copy() -> None:
    store = live_store()
    s = store.sessions[SID]
    store.apply(1, spans([2], floor=2))
    store.apply(1, spans([0, 2]))
    assert s.counters.duplicates == 2 and s.stats.totals.calls == 1


def test_holes_are_bounded_and_giving_one_up_is_counted() -> None:
    r = Received()
    for s in range(0, 2 * (rc.MAX_RANGES + 10), 2):  # every other seq: a hole before each
        r.add(s + 1)
    assert len(r.ranges) <= rc.MAX_RANGES and r.abandoned > 0
    assert len(r.above()) == rc.ACK_RANGES
    store = live_store()
    store.apply(1, spans([s + 1 for s in range(0, 2 * (rc.MAX_RANGES + 3), 2)][:500]))
    store.apply(1, spans([s + 1 for s in range(0, 2 * (rc.MAX_RANGES + 3), 2)][500:1000]))
    store.apply(1, spans([s + 1 for s in range(0, 2 * (rc.MAX_RANGES + 3), 2)][1000:]))
    assert store.counters["holes_abandoned"] == store.sessions[SID].received.abandoned > 0


def test_a_random_stream_with_floors_never_double_stores() -> None:
    rnd = random.Random(5)
    for _ in range(200):
        store = live_store()
        s = store.sessions[SID]
        n = rnd.randrange(2, 30)
        order = list(range(n))
        rnd.shuffle(order)
        held: set[int] = set()
        for seq in order:
            held.add(seq)
            floor = min(set(range(n)) - s.stats.ring.keys() - {x for x in held if x != seq}, default=n)
            store.apply(1, spans([seq], floor=min(floor, seq)))
        assert s.acked == n - 1 and s.stats.totals.calls == n and s.counters.duplicates == 0
