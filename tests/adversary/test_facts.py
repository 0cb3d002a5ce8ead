"""A hostile page and the `facts` frame (docs/diagnosis-facts.md): it cannot grow the relay's facts beyond their
window, write facts into another page's session, or smuggle text through a fact's members."""

from __future__ import annotations

import json

from relay_bridge.core import budget as b
from relay_bridge.relay.server import Relay
from tests.relay.conftest import assert_served, open_session, recv_json, send_spans

VICTIM = "a1a1a1a1"
ATTACKER = "e0e0e0e0"


def facts_frame(sid: str, seqs: range) -> str:
    return json.dumps({"type": "facts", "session": sid, "items": [{"seq": s, "facts": {"repeat": {"of": 0}}} for s in seqs]})


async def test_a_facts_flood_stays_in_its_window_and_others_are_served(relay: Relay) -> None:
    ws = await open_session(relay, ATTACKER)
    sent = 0
    for start in range(0, b.FACTS_MAX + 2000, 500):
        await ws.send(facts_frame(ATTACKER, range(start, start + 500)))
        sent += 500
    await send_spans(ws, ATTACKER, [0])  # frames on one socket apply in order: the flood is in by this ack
    session = relay.store.sessions[ATTACKER]
    assert sent > b.FACTS_MAX
    assert len(session.facts) <= b.FACTS_MAX, "a window, not a heap"
    counters = relay.store.counters
    assert counters["facts"] > b.FACTS_MAX, "the flood went past the window"
    assert counters["facts"] - counters["facts_evicted"] == len(session.facts) == b.FACTS_MAX, "every fact kept or counted out"
    await assert_served(relay)
    await ws.close()


async def test_facts_for_another_pages_session_are_refused_and_counted_against_the_sender(relay: Relay) -> None:
    victim = await open_session(relay, VICTIM)
    await send_spans(victim, VICTIM, [0, 1])
    attacker = await open_session(relay, ATTACKER)
    await attacker.send(json.dumps({"type": "facts", "session": VICTIM, "seq": 1, "facts": {"refused": {"by": "browser"}}}))
    reply = await recv_json(attacker)
    assert reply["type"] == "error" and reply["session"] == VICTIM
    assert relay.store.sessions[VICTIM].facts == {}
    assert relay.store.sessions[VICTIM].counters.rejected == 0, "the victim's numbers are not spoiled"
    await victim.close()
    await attacker.close()


async def test_text_cannot_ride_in_a_fact(relay: Relay) -> None:
    ws = await open_session(relay, ATTACKER)
    secret = "CANARY-adversary-facts"
    image = {"width": 1, "height": 1, "bytes": 1, "jpegBytes": 1, "fitBytes": 1, "fitWidth": 1, "fitHeight": 1}
    for facts in (
        {"image": {**image, "mime": f"image/png; {secret}"}},  # only the formats the agent reads from the bytes
        {"schema": {"violations": 1, "constraint": secret}},
        {"schema": {"violations": 1, "constraint": "type", "path": secret}},  # not a JSON Pointer
        {"note": secret},  # unknown members are refused
        {"bloat": {"textBytes": secret, "whitespaceBytes": 0, "repeatedKeyBytes": 0, "repeatedKeyRows": 0, "base64Bytes": 0, "base64Runs": 0}},
    ):
        await ws.send(json.dumps({"type": "facts", "session": ATTACKER, "seq": 0, "facts": facts}))
        reply = await recv_json(ws)
        assert reply["type"] == "error" and reply["code"] == "invalid", reply
        assert secret not in reply["message"], "the refusal does not echo page text"
    assert relay.store.sessions[ATTACKER].facts == {}
    await ws.close()
