"""A page and the cadence (issue 33): it cannot make the relay think a session is watched or not, nor learn
whether another page's session is watched (relay_bridge.core.watching: only the terminal's viewers say so)."""

from __future__ import annotations

import json

from relay_bridge.core import synth
from relay_bridge.relay.server import Relay
from tests.liveness import connect
from tests.relay.conftest import recv_json, ws_url
from tests.relay.test_watching import agent, frames_until_ack

VICTIM, ATTACKER = "7e57ab1e", "a77ac4e2"


async def test_a_page_cannot_say_what_is_watched_nor_hear_another_session_s_state(relay: Relay) -> None:
    victim, _ = await agent(relay, VICTIM)
    attacker, _ = await agent(relay, ATTACKER)
    assert [f["watched"] for f in await frames_until_ack(victim, VICTIM, 0)] == [False]
    assert [f["watched"] for f in await frames_until_ack(attacker, ATTACKER, 0)] == [False]
    # The relay takes no watch frame from a page, for its own session or the victim's: refused, counted, no effect.
    for sid in (ATTACKER, VICTIM):
        await attacker.send(json.dumps({"type": "watch", "session": sid, "watched": True, "intervalMs": 0}))
        refused = await recv_json(attacker)
        assert refused["type"] == "error", refused
    assert not relay.watching.watched(ATTACKER) and not relay.watching.watched(VICTIM)
    # A hello for the victim's session (with cadence) from the attacker's socket is refused: it never hears the
    # victim's state change.
    thief = await connect(ws_url(relay), max_size=None)
    assert (await recv_json(thief))["type"] == "welcome"
    await thief.send(json.dumps({**synth.hello(VICTIM), "cadence": True}))
    assert (await recv_json(thief))["code"] == "session_taken"
    relay.watching.show("dashboard", {VICTIM})
    assert await frames_until_ack(victim, VICTIM, 1) == [{"type": "watch", "session": VICTIM, "watched": True, "intervalMs": 250}]
    assert await frames_until_ack(attacker, ATTACKER, 1) == []
    await thief.send(json.dumps(synth.spans_frame(VICTIM, [synth.span(VICTIM, 9, "t", 1.0, 1.0)])))
    assert (await recv_json(thief))["type"] == "error", "nothing but refusals reach the thief's socket"
    for ws in (victim, attacker, thief):
        await ws.close()
