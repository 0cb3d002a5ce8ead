"""wait_for_calls' loop (relay_bridge.mcp.server.Tools) over a stand-in Source: the relay's real call journal and store
in this process, without a socket. Which calls count, where the cursor lands, when it times out."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.mcp.server import Tools
from relay_bridge.relay.view import CallJournal
from tests.frames import frame
from tests.liveness import LIVENESS_S

A, B = "0a1b2c3d", "99999999"


class JournalSource:
    port = 0

    def __init__(self, store: Store) -> None:
        self.store = store
        self.journal = CallJournal(cap=4)
        store.observers.append(self.journal)

    async def capture(self) -> dict[str, Any]:
        doc: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(build_capture(self.store)))
        return doc

    async def calls(self, after: int | None, wait: float) -> dict[str, Any]:
        if after is None:
            return {"cursor": self.journal.cursor, "calls": [], "missed": 0}
        answer: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(await self.journal.wait(after, min(wait, 0.05))))
        return answer

    async def close(self) -> None:
        pass


def source_of(*calls: tuple[str, int]) -> JournalSource:
    """Two sessions, and the calls settled in this order, seen by the journal as the relay's would."""
    source = JournalSource(Store())
    store = source.store
    for conn, sid in enumerate((A, B), 1):
        store.connect(conn)
        store.apply(conn, frame(synth.hello(sid)))
    for sid, seq in calls:
        store.apply(1 if sid == A else 2, frame(synth.spans_frame(sid, [synth.span(sid, seq, "search", 10.0 * seq, 2.0)])))
    return source


async def test_the_count_is_of_the_sessions_calls_and_the_cursor_stops_at_the_last_given() -> None:
    tools = Tools(source_of((A, 0), (B, 0), (A, 1), (A, 2)))
    structured, text = await tools.call("wait_for_calls", {"count": 2, "session": A, "after": 0, "timeout_s": 0})
    assert [(c["session"], c["span"]["seq"], c["cursor"]) for c in structured["calls"]] == [(A, 0, 1), (A, 1, 3)]
    assert (structured["cursor"], structured["timedOut"]) == (3, False)
    assert text == f"2 calls settled in session {A}; cursor 3"
    # The next wait from that cursor gets the call left over.
    structured, _ = await tools.call("wait_for_calls", {"count": 1, "after": 3, "timeout_s": 0})
    assert [c["cursor"] for c in structured["calls"]] == [4]


async def test_too_few_calls_time_out_with_what_came_and_a_reader_too_far_behind_is_told() -> None:
    tools = Tools(source_of((A, 0), (A, 1), (A, 2), (A, 3), (A, 4), (A, 5)))
    structured, text = await tools.call("wait_for_calls", {"count": 10, "after": 0, "timeout_s": 0.1})
    assert structured["timedOut"] and structured["count"] == 4 and structured["missed"] == 2
    assert [c["cursor"] for c in structured["calls"]] == [3, 4, 5, 6] and structured["cursor"] == 6
    assert text == "timed out: 4 of 10 calls settled; cursor 6; 2 calls settled too far back to list"
    # Without `after`: from now, so the calls already in count for nothing.
    structured, _ = await tools.call("wait_for_calls", {"count": 1, "timeout_s": 0})
    assert structured["timedOut"] and structured["calls"] == [] and structured["cursor"] == 6


async def test_one_call_releases_every_reader_waiting_and_a_later_reader_waits_for_the_next() -> None:
    """The journal makes its wake-up only while a reader waits: calls settled with nobody waiting leave no event
    set behind (the next reader still waits), and one call releases all the readers waiting then."""
    source = source_of((A, 0), (A, 1))
    journal, store = source.journal, source.store

    async def settle(seq: int) -> None:
        # gather() starts its tasks in order: both readers are already waiting when this runs.
        store.apply(1, frame(synth.spans_frame(A, [synth.span(A, seq, "search", 10.0 * seq, 2.0)])))

    # Readers that would wait ten times the liveness bound: only the call can release them within it.
    readers = asyncio.gather(journal.wait(2, 10 * LIVENESS_S), journal.wait(2, 10 * LIVENESS_S), settle(2))
    first, second, _ = await asyncio.wait_for(readers, LIVENESS_S)
    assert [c["cursor"] for c in first["calls"]] == [3] and [c["cursor"] for c in second["calls"]] == [3]
    # Caught up: a reader now waits out its (short) time rather than returning at once on a stale event.
    loop = asyncio.get_running_loop()
    started = loop.time()
    answer = await journal.wait(3, 0.2)
    assert answer["calls"] == [] and loop.time() - started >= 0.15
