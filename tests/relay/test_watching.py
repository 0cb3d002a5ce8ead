"""Who watches which session (relay_bridge.core.watching), and the `watch` frames the relay sends agents that follow
them (issue 33, decision 2): over real sockets to the real relay."""

from __future__ import annotations

import json
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.watching import UNWATCHED_MS, WATCHED_MS, Watching
from relay_bridge.relay.server import Relay
from tests.liveness import connect
from tests.relay.conftest import recv_json, send_spans, ws_url


def test_a_session_is_watched_while_any_viewer_shows_it_at_the_shortest_interval() -> None:
    w = Watching()
    changes: list[None] = []
    w.on_change = lambda: changes.append(None)
    assert not w.watched("aaaaaaaa") and w.frame("aaaaaaaa") == p.Watch("aaaaaaaa", False, UNWATCHED_MS)
    assert w.show("dashboard", {"aaaaaaaa"})
    assert not w.show("dashboard", {"aaaaaaaa"})  # the same tab again: no change to tell
    assert len(changes) == 1 and w.frame("aaaaaaaa") == p.Watch("aaaaaaaa", True, WATCHED_MS)
    assert not w.watched("bbbbbbbb")
    w.show_every("otlp", 500)
    assert w.watched("bbbbbbbb") and w.interval("bbbbbbbb") == 500 and w.interval("aaaaaaaa") == WATCHED_MS
    w.hide("otlp")
    w.show("dashboard", set())
    assert not w.watched("aaaaaaaa") and not w.watched("bbbbbbbb") and len(changes) == 4
    w.hide("nobody")  # a viewer that never showed anything: nothing changes
    assert len(changes) == 4


async def agent(relay: Relay, sid: str, resume: str | None = None) -> tuple[ClientConnection, str]:
    """A socket whose hello says it follows watch frames (as the page agent's does); and its resume secret."""
    ws = await connect(ws_url(relay), max_size=None)
    assert (await recv_json(ws))["type"] == "welcome"
    await ws.send(json.dumps({**synth.hello(sid, resume=resume), "cadence": True}))
    ack = await recv_json(ws)
    assert ack["type"] == "ack", ack
    return ws, ack["resume"]


async def frames_until_ack(ws: ClientConnection, sid: str, seq: int) -> list[dict[str, Any]]:
    """Send one span and read every frame up to its ack: what the relay said meanwhile, in order."""
    await ws.send(json.dumps(synth.spans_frame(sid, [synth.span(sid, seq, "t", seq * 10.0, 1.0)])))
    seen: list[dict[str, Any]] = []
    while True:
        frame = await recv_json(ws)
        if frame["type"] == "ack":
            return seen
        seen.append(frame)


async def test_the_relay_tells_each_agent_whether_its_session_is_watched_and_only_on_change(relay: Relay) -> None:
    a, _ = await agent(relay, "aaaaaaaa")
    b, _ = await agent(relay, "bbbbbbbb")
    # Nobody watches: each is told so right after its hello's ack, once.
    assert await frames_until_ack(a, "aaaaaaaa", 0) == [{"type": "watch", "session": "aaaaaaaa", "watched": False, "intervalMs": UNWATCHED_MS}]
    assert await frames_until_ack(b, "bbbbbbbb", 0) == [{"type": "watch", "session": "bbbbbbbb", "watched": False, "intervalMs": UNWATCHED_MS}]
    relay.watching.show("dashboard", {"aaaaaaaa"})  # the dashboard's tab opens on a
    assert await frames_until_ack(a, "aaaaaaaa", 1) == [{"type": "watch", "session": "aaaaaaaa", "watched": True, "intervalMs": WATCHED_MS}]
    assert await frames_until_ack(b, "bbbbbbbb", 1) == [], "b's state did not change: nothing said to b"
    relay.watching.show("dashboard", {"aaaaaaaa"})  # redrawn, same tab
    assert await frames_until_ack(a, "aaaaaaaa", 2) == []
    relay.watching.show("dashboard", {"bbbbbbbb"})  # the tab switches
    assert await frames_until_ack(a, "aaaaaaaa", 3) == [{"type": "watch", "session": "aaaaaaaa", "watched": False, "intervalMs": UNWATCHED_MS}]
    assert await frames_until_ack(b, "bbbbbbbb", 2) == [{"type": "watch", "session": "bbbbbbbb", "watched": True, "intervalMs": WATCHED_MS}]
    await a.close()
    await b.close()


async def test_a_watched_session_s_hello_gets_its_ack_alone_and_a_reconnect_is_told_again(relay: Relay) -> None:
    relay.watching.show_every("otlp", 500)
    ws, secret = await agent(relay, "cccccccc")
    assert await frames_until_ack(ws, "cccccccc", 0) == [], "a hello starts watched: nothing to say"
    relay.watching.hide("otlp")
    assert (await frames_until_ack(ws, "cccccccc", 1))[0]["watched"] is False
    await ws.close()
    await ws.wait_closed()
    again, _ = await agent(relay, "cccccccc", secret)  # the owner's reconnect
    assert await frames_until_ack(again, "cccccccc", 2) == [{"type": "watch", "session": "cccccccc", "watched": False, "intervalMs": UNWATCHED_MS}]
    await again.close()


@pytest.mark.parametrize("cadence", [False, None])
async def test_an_agent_that_does_not_follow_watch_frames_never_gets_one(relay: Relay, cadence: bool | None) -> None:
    ws = await connect(ws_url(relay), max_size=None)
    assert (await recv_json(ws))["type"] == "welcome"
    hello = synth.hello("dddddddd") if cadence is None else {**synth.hello("dddddddd"), "cadence": cadence}
    await ws.send(json.dumps(hello))
    assert (await recv_json(ws))["type"] == "ack"
    relay.watching.show("dashboard", {"dddddddd"})
    relay.watching.show("dashboard", set())
    assert await frames_until_ack(ws, "dddddddd", 0) == []
    assert (await send_spans(ws, "dddddddd", [1]))["seq"] == 1
    await ws.close()
