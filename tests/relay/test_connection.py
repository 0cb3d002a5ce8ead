"""The per-connection policy (relay_bridge.core.connection) without a socket: numbers in, steps out."""

from __future__ import annotations

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.connection import INVALID_STREAK_CLOSE, NOT_OWNER_CLOSE, RATE_REPLY_EVERY, YIELD_AFTER, Connection, session_hint
from relay_bridge.core.ratecap import REFUSED_PAUSE, SocketGate, token_buckets
from relay_bridge.core.store import Store
from tests.frames import frame


def policy(rate: float = 10.0, burst: float = 5.0) -> tuple[Connection, Store]:
    store = Store()
    store.connect(1)
    gate = SocketGate(token_buckets(1000.0, 1000.0, 0.0), rate, burst, 0.0)
    return Connection(1, store, gate), store


def test_frames_within_the_rate_are_applied_and_cheap_ones_do_not_yield() -> None:
    conn, _ = policy()
    assert conn.receive(0.0, b"{}") is None
    step = conn.applied(0.0, [p.Ack("0000000a", 1)], accepted=True, unreadable=False, cost=0.0001, size=10)
    assert step.close is None and step.pause is None and step.replies == [p.Ack("0000000a", 1)]


def test_frames_that_took_the_loop_a_moment_let_go_of_it() -> None:
    conn, _ = policy()
    step = conn.applied(0.0, [], accepted=True, unreadable=False, cost=YIELD_AFTER, size=0)
    assert step.pause is not None and step.pause >= 0


def test_a_flood_is_refused_answered_once_a_moment_then_closed() -> None:
    conn, store = policy(rate=1.0, burst=1.0)
    now = 0.0
    answered = closed = refusals = 0
    replies: list = []
    for i in range(10_000):
        now = i * 0.001  # a thousand frames a second, never slowing down
        step = conn.receive(now, b'{"type":"spans","session":"0000000a"}')
        if step is None:
            continue
        refusals += 1
        answered += len(step.replies)
        replies += step.replies
        if step.close is not None:
            closed += 1
            assert step.close.code == 1008
            break
        assert conn.refusal_pause(now, 0.0, 40) >= REFUSED_PAUSE
    assert closed == 1, "a socket that never slows down is closed"
    assert store.counters["refused:rate_abuse"] == 1
    assert store.counters["rejected:rate_limited"] == refusals
    assert 1 <= answered <= now / RATE_REPLY_EVERY + 1, "at most one rate_limited error a moment"
    assert all(r.code == p.Code.RATE_LIMITED and r.session == "0000000a" and not r.fatal for r in replies), "each names the session"


def test_invalid_frames_in_a_row_close_with_the_last_error_made_fatal() -> None:
    conn, store = policy()
    for i in range(INVALID_STREAK_CLOSE):
        err = store.reject(1, p.Rejection(p.Code.BAD_JSON, "not JSON"))
        step = conn.applied(0.0, [err], accepted=False, unreadable=True, cost=0.0, size=3)
        if i < INVALID_STREAK_CLOSE - 1:
            assert step.close is None and not err.fatal
    assert step.close is not None and step.close.reason == "too many invalid frames"
    assert step.replies == [err] and err.fatal


def test_an_accepted_frame_resets_the_invalid_streak() -> None:
    conn, store = policy()
    for _ in range(INVALID_STREAK_CLOSE - 1):
        conn.applied(0.0, [store.reject(1, p.Rejection(p.Code.BAD_JSON, "x"))], accepted=False, unreadable=True, cost=0.0, size=1)
    conn.applied(0.0, [], accepted=True, unreadable=False, cost=0.0, size=1)
    step = conn.applied(0.0, [store.reject(1, p.Rejection(p.Code.BAD_JSON, "x"))], accepted=False, unreadable=True, cost=0.0, size=1)
    assert step.close is None


def test_naming_other_sockets_sessions_closes_at_the_limit() -> None:
    conn, store = policy()
    store.connect(2)
    store.apply(2, frame(synth.hello("0000000b")))
    step = None
    for _ in range(NOT_OWNER_CLOSE):
        replies = store.apply(1, frame(synth.spans_frame("0000000b", [synth.span("0000000b", 0, "t", 1.0, 1.0)])))
        step = conn.applied(0.0, replies, accepted=False, unreadable=False, cost=0.0, size=1)
    assert step is not None and step.close is not None and "does not own" in step.close.reason


def test_a_refused_frame_names_its_session() -> None:
    assert session_hint(b'{"type":"spans","session":"0123abcd"}') == "0123abcd"
    assert session_hint(b'{"type":"hello","session":{"id":"0123abcd"}}') == "0123abcd"
    assert session_hint(b"garbage") is None
