"""Input first (relay_bridge/relay/hold.py): while the terminal holds page frames, a frame that arrives waits,
unapplied and unacked, until the release or the hold's end; with nothing held a frame costs no suspension."""

from __future__ import annotations

import asyncio
import json
import time

from relay_bridge.core import synth
from relay_bridge.relay.hold import FrameHold
from relay_bridge.relay.server import Relay
from tests.liveness import LIVENESS_S

from .conftest import open_session, recv_json


def test_nothing_held_waits_without_suspending() -> None:
    hold = FrameHold()
    step = hold.wait().__await__()
    try:
        next(step)
    except StopIteration:
        pass  # finished at its first step: the loop never ran anything else in between
    else:
        raise AssertionError("wait() suspended with nothing held")


async def test_a_hold_ends_at_the_release_or_at_its_time() -> None:
    hold = FrameHold()
    hold.hold(60)
    waiting = asyncio.ensure_future(hold.wait())
    await asyncio.sleep(0)  # one turn: it is parked on the hold
    assert not waiting.done() and hold.held
    hold.release()
    await asyncio.wait_for(waiting, LIVENESS_S)
    assert not hold.held

    hold.hold(0.05)  # nobody releases: the hold runs out by itself
    started = time.monotonic()
    await asyncio.wait_for(hold.wait(), LIVENESS_S)
    assert time.monotonic() - started >= 0.04 and not hold.held


async def test_a_frame_that_arrives_during_a_hold_is_applied_and_acked_only_after_it(relay: Relay) -> None:
    sid = "4f1d0001"
    ws = await open_session(relay, sid)
    relay.frames.hold(60)
    await ws.send(json.dumps(synth.spans_frame(sid, [synth.span(sid, s, "search", s * 10.0, 1.0) for s in range(3)])))
    deadline = time.monotonic() + 10
    while not relay.frames._waiters:  # until the socket's handler has the frame and is parked on the hold
        assert time.monotonic() < deadline, "the frame was applied through the hold"
        await asyncio.sleep(0.005)  # polling for that state, not standing in for it
    session = relay.store.sessions[sid]
    assert session.counters.spans == 0 and session.acked < 2  # received, not applied, not acked
    relay.frames.release()
    while (reply := await asyncio.wait_for(recv_json(ws), LIVENESS_S))["type"] != "ack":
        pass
    assert reply["seq"] == 2 and session.counters.spans == 3
    await ws.close()
