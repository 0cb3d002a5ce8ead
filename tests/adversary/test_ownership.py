"""A session belongs to the socket whose hello created it (issue 11, items 1 and 2)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.connection import NOT_OWNER_CLOSE
from relay_bridge.relay.server import Relay
from tests.liveness import LIVENESS_S, connect
from tests.relay.conftest import assert_served, recv_json, send_spans, ws_url

VICTIM = "7e57ab1e"


async def socket(relay: Relay) -> ClientConnection:
    ws = await connect(ws_url(relay), max_size=None)
    assert (await recv_json(ws))["type"] == "welcome"
    return ws


async def hello(ws: ClientConnection, sid: str, **kw: Any) -> dict:
    await ws.send(json.dumps(synth.hello(sid, **kw)))
    return await recv_json(ws)


async def until(predicate, timeout: float = LIVENESS_S) -> None:
    async def loop() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(loop(), timeout)


async def test_a_second_socket_cannot_take_a_live_session_or_touch_it(relay: Relay) -> None:
    victim = await socket(relay)
    ack = await hello(victim, VICTIM)
    assert ack["type"] == "ack" and len(ack["resume"]) == 32
    await send_spans(victim, VICTIM, range(10))
    session = relay.store.sessions[VICTIM]
    before = (session.stats.totals.calls, session.acked, dict(session.tools))

    attacker = await socket(relay)
    taken = await hello(attacker, VICTIM, title="hijacked")
    assert (taken["type"], taken["code"], taken["session"]) == ("error", p.Code.SESSION_TAKEN, VICTIM)
    assert "resume" not in taken
    attacks = [
        synth.event(VICTIM, 1.0, "reset"),
        synth.spans_frame(VICTIM, [synth.span(VICTIM, 10, "forged", 1.0, 1.0)], floor=10**13 - 1),
        synth.tool(VICTIM, "forged", 1.0),
        synth.status(VICTIM, "detached", "forged"),
        {"type": "bye", "session": VICTIM, "reason": "forged"},
        {"type": "status", "session": VICTIM, "phase": "not-a-phase"},  # invalid too: still not the victim's fault
        {"type": "result", "id": "c1", "session": VICTIM, "ok": True, "text": "forged answer"},
    ]
    for frame in attacks:
        await attacker.send(json.dumps(frame))
    replies = [await recv_json(attacker) for _ in range(len(attacks) - 1)]  # a result is never answered
    assert all(r["type"] == "error" and r["session"] == VICTIM for r in replies), replies

    assert (session.stats.totals.calls, session.acked, dict(session.tools)) == before
    assert session.state == "live" and session.info.title == "" and session.coverage == "running"
    assert session.counters.rejected == 0, "refusals count against the attacking socket, not the victim"
    assert relay.store.counters["refused:not_owner"] >= 6
    ack = await send_spans(victim, VICTIM, range(10, 13))
    assert ack["seq"] == 12 and session.stats.totals.calls == 13
    await attacker.close()
    await victim.close()


async def test_only_the_resume_secret_reclaims_a_closed_session(relay: Relay) -> None:
    victim = await socket(relay)
    secret = (await hello(victim, VICTIM))["resume"]
    await send_spans(victim, VICTIM, range(5))
    await victim.close()
    await until(lambda: relay.store.sessions[VICTIM].state == "disconnected")

    attacker = await socket(relay)
    for guess in (None, "0" * 32, secret[::-1]):
        reply = await hello(attacker, VICTIM, resume=guess)
        assert (reply["type"], reply.get("code"), reply["session"]) == ("error", p.Code.SESSION_TAKEN, VICTIM)
    assert relay.store.sessions[VICTIM].state == "disconnected"

    back = await socket(relay)
    ack = await hello(back, VICTIM, resume=secret)
    assert (ack["type"], ack["seq"], ack["resume"]) == ("ack", 4, secret)
    assert relay.store.sessions[VICTIM].state == "live"
    assert relay.session_log is not None
    relay.session_log.flush()
    logged = b"".join(f.read_bytes() for f in relay.session_log.directory.glob("session-*.jsonl"))
    assert b'"hello"' in logged and secret.encode() not in logged, "the secret never reaches the log"
    await attacker.close()
    await back.close()


async def test_a_relayed_hello_learns_nothing_about_other_sessions(relay: Relay) -> None:
    victim = await socket(relay)
    await hello(victim, VICTIM)
    await send_spans(victim, VICTIM, range(40))
    spy = await socket(relay)
    ack = await hello(spy, VICTIM, context="relayed", via="11111111")
    assert ack == {"type": "ack", "session": VICTIM, "seq": -1}, "no ack of the owner's, no secret"
    echo = await send_spans(spy, VICTIM, [3])
    assert echo["seq"] == 3, "the relayer's own seq echoed back, not the owner's 39"
    assert relay.store.sessions[VICTIM].stats.totals.calls == 40
    await spy.close()
    await victim.close()


async def test_every_error_about_a_session_names_it(relay: Relay) -> None:
    ws = await socket(relay)
    bad_version = dict(synth.hello("0e0e0e01"), protocol="wmcp-relay/0")
    await ws.send(json.dumps(bad_version))
    assert (await recv_json(ws))["session"] == "0e0e0e01"
    await ws.send(json.dumps(synth.spans_frame("0e0e0e02", [])))
    assert (await recv_json(ws))["session"] == "0e0e0e02"
    await ws.send(json.dumps(dict(synth.hello("0e0e0e03"), config={"sample": 7})))
    reply = await recv_json(ws)
    assert (reply["code"], reply["session"]) == (p.Code.INVALID, "0e0e0e03")
    for i in range(p.MAX_SESSIONS_PER_CONNECTION):
        assert (await hello(ws, f"0f0f{i:04x}"))["type"] == "ack"
    reply = await hello(ws, "0e0e0e04")
    assert (reply["code"], reply["session"]) == (p.Code.SESSION_LIMIT, "0e0e0e04")
    await ws.close()


async def test_lone_surrogates_are_replaced_never_refused(relay: Relay) -> None:
    ws = await socket(relay)
    # What JSON.stringify sends for a title cut mid-emoji: an escaped lone high surrogate.
    ack = await hello(ws, VICTIM, title="cut \ud83d")
    assert ack["type"] == "ack"
    span = synth.span(VICTIM, 0, "t", 1.0, 1.0, is_error=True, error="boom \ude00 end")
    await ws.send(json.dumps(synth.spans_frame(VICTIM, [span])))
    assert (await recv_json(ws)) == {"type": "ack", "session": VICTIM, "seq": 0}
    session = relay.store.sessions[VICTIM]
    assert session.info.title == "cut \ufffd" and session.spans()[0].error == "boom \ufffd end"
    assert relay.store.counters["rejected"] == 0
    await assert_served(relay)
    await ws.close()


async def test_a_hello_must_claim_the_origin_of_the_page_that_opened_the_socket(relay: Relay) -> None:
    ws = await connect(ws_url(relay), origin="http://127.0.0.1:8000")
    await recv_json(ws)
    lie = await hello(ws, VICTIM, origin="https://bank.example")
    assert (lie["type"], lie["code"], lie["session"]) == ("error", p.Code.FORBIDDEN_ORIGIN, VICTIM)
    assert VICTIM not in relay.store.sessions
    truth = await hello(ws, VICTIM, origin="http://127.0.0.1:8000")
    assert truth["type"] == "ack"
    await ws.close()


async def test_a_relayed_session_is_carried_on_by_another_forwarder_and_taken_by_its_own_page(relay: Relay) -> None:
    sid = "0e1a7ed0"
    first, second = await socket(relay), await socket(relay)
    assert (await hello(first, sid, context="relayed", via="aaaaaaaa"))["type"] == "ack"
    await send_spans(first, sid, range(3))
    assert (await hello(second, sid, context="relayed", via="bbbbbbbb")) == {"type": "ack", "session": sid, "seq": -1}
    await first.close()  # the forwarding tab closed: the other forwarder's next batch carries the session on
    await until(lambda: relay.store.sessions[sid].conn is None)
    ack = await send_spans(second, sid, range(6))
    assert ack["seq"] == 5 and relay.store.sessions[sid].stats.totals.calls == 6
    page = await socket(relay)  # the page's own agent connects late: its session is its own
    assert (await hello(page, sid))["type"] == "ack"
    assert relay.store.sessions[sid].info.context == "top"
    echo = await send_spans(second, sid, [6])
    assert echo["seq"] == 6 and relay.store.sessions[sid].stats.totals.calls == 6, "the forwarder only shadows now"
    for ws in (second, page):
        await ws.close()


async def test_a_socket_that_keeps_naming_others_sessions_is_closed(relay: Relay) -> None:
    victim = await socket(relay)
    await hello(victim, VICTIM)
    prober = await socket(relay)
    with pytest.raises(ConnectionClosed) as closed:
        for i in range(NOT_OWNER_CLOSE + 5):
            await prober.send(json.dumps(synth.event(VICTIM, float(i), "probe")))
            await recv_json(prober)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
    assert relay.store.counters["refused:not_owner"] == NOT_OWNER_CLOSE
    assert relay.store.sessions[VICTIM].counters.rejected == 0
    await assert_served(relay)
    await victim.close()


async def test_a_look_alike_session_id_is_refused(relay: Relay) -> None:
    # "7e57ab1e\n" matched ^[0-9a-f]{8}$ under re.search: a second session beside the victim's, printed on a line
    # of its own by the headless summary and written to a report named "7e57ab1e\n.json".
    victim = await socket(relay)
    assert (await hello(victim, VICTIM))["type"] == "ack"
    attacker = await socket(relay)
    for sid in (VICTIM + "\n", VICTIM.upper(), " " + VICTIM, VICTIM + "\u0000"):
        refused = await hello(attacker, sid)
        assert (refused["type"], refused["code"]) == ("error", p.Code.INVALID), (sid, refused)
    assert list(relay.store.sessions) == [VICTIM]
    await attacker.close()
    await victim.close()
