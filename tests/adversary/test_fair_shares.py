"""One page cannot starve another (issue 31, item 2): written as a hostile page holding the token would, with its
browser's Origin header, against a real relay on 127.0.0.1. Each flood comes from one origin; beside it a
legitimate page of another origin must keep its sessions, registrations and spans whole, and every ack it gets
must name only what the relay stored (never acked-but-lost)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidStatus

from relay_bridge.core import budget as b
from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.relay.server import MAX_CONNECTIONS_PER_ORIGIN, Relay, RelayConfig
from tests.liveness import LIVENESS_S, connect
from tests.relay.conftest import TOKEN, recv_json, ws_url

EVIL = "http://evil.example"
GOOD = "https://good.example"
DESCRIPTOR_PAD = "x" * (63 * 1024)  # a 64 KiB descriptor: the most one registration may carry


@pytest.fixture
async def bare_relay() -> AsyncIterator[Relay]:
    """No session log: these floods measure the store's shares, not the disk."""
    r = Relay(RelayConfig(port=0, token=TOKEN))
    await r.start()
    try:
        yield r
    finally:
        await r.stop()


# Hang guards, not bounds on speed: a loaded machine (two busy loops beside three workers) starved this process's
# handshake past websockets' 10 s default while the test's own floods shared its loop.
HANG_S = 60


async def page_socket(relay: Relay, origin: str, **options: Any) -> ClientConnection:
    """A socket as a page's script opens it: the browser sets Origin."""
    options.setdefault("open_timeout", HANG_S)
    ws = await connect(ws_url(relay), origin=origin, max_size=None, **options)
    assert (await recv_json(ws))["type"] == "welcome"
    return ws


async def answer(ws: ClientConnection) -> dict[str, Any]:
    return await asyncio.wait_for(recv_json(ws), HANG_S)


async def hello(ws: ClientConnection, sid: str, origin: str) -> dict[str, Any]:
    await ws.send(json.dumps(synth.hello(sid, origin)))
    return await answer(ws)


async def spend(ws: ClientConnection, sids: list[str]) -> None:
    """What a page spending memory does: for each session, 64 KiB descriptors up to the session's cap, then spans
    under ever new tool names (a stats row each), until the relay stops storing them (a cap or a share)."""
    for sid in sids:
        for i in range(b.MAX_DESCRIPTOR_BYTES // (64 * 1024)):
            await ws.send(json.dumps(synth.tool(sid, f"pad{i}", 1.0, description=DESCRIPTOR_PAD)))
        seq = 0
        while True:
            spans = [synth.span(sid, s, f"{sid}-{s:06d}-" + "y" * 100, s * 1.0, 1.0) for s in range(seq, seq + 500)]
            await ws.send(json.dumps(synth.spans_frame(sid, spans)))
            while (reply := await answer(ws))["type"] != "ack":
                assert reply["code"] in (p.Code.LIMIT, p.Code.SESSION_LIMIT), reply
            seq += 500
            if reply["seq"] < seq - 1:
                break  # some of it was refused: this session is at a cap


async def legitimate_page(relay: Relay, sid: str, tools: int = 10, calls: int = 300) -> ClientConnection:
    """Registers `tools` tools and sends `calls` spans in batches of 50; asserts each ack names only stored seqs."""
    ws = await page_socket(relay, GOOD)
    assert (await hello(ws, sid, GOOD))["type"] == "ack"
    for i in range(tools):
        await ws.send(json.dumps(synth.tool(sid, f"tool{i}", 1.0, description="a real tool")))
    for base in range(0, calls, 50):
        spans = [synth.span(sid, s, f"tool{s % tools}", s * 10.0, 1.0) for s in range(base, base + 50)]
        await ws.send(json.dumps(synth.spans_frame(sid, spans)))
        while (reply := await answer(ws))["type"] != "ack":
            raise AssertionError(f"the legitimate page was refused: {reply}")
        session = relay.store.sessions[sid]
        assert all(session.received.has(s) for s in range(reply["seq"] + 1)), "acked, yet not stored"
        assert reply["seq"] == base + 49
    session = relay.store.sessions[sid]
    assert sum(1 for t in session.tools.values() if t.registered) == tools, "every registration kept"
    assert session.stats.totals.calls == calls and session.counters.limited == 0, "every span kept"
    return ws


async def test_one_origin_spends_only_its_share_and_gives_it_back_when_it_leaves(bare_relay: Relay) -> None:
    relay = bare_relay
    first = await page_socket(relay, EVIL)
    sids = [f"e0{i:06x}" for i in range(4)]
    for sid in sids:
        assert (await hello(first, sid, EVIL))["type"] == "ack"
    await spend(first, sids)
    assert relay.store.counters["limit:socket_share"] > 0, "one socket stops at its share of its origin's"
    assert max(relay.store.conn_bytes.values()) <= b.SOCKET_BUDGET_BYTES
    second = await page_socket(relay, EVIL)
    more = [f"e0{i:06x}" for i in range(4, 8)]
    for sid in more:
        assert (await hello(second, sid, EVIL))["type"] == "ack"
    await spend(second, more)
    assert relay.store.counters["limit:origin_share"] > 0, "the origin stops at its share of the relay's"
    assert relay.store.share_bytes[EVIL] <= b.ORIGIN_BUDGET_BYTES

    good = await legitimate_page(relay, "900d0001")
    await first.close()
    await second.close()
    await asyncio.wait_for(_until(lambda: EVIL not in relay.store.share_bytes), LIVENESS_S)
    held = relay.store.footprint
    assert held > b.ORIGIN_BUDGET_BYTES // 2, "what ended stays to be looked at (until its room is needed)"
    # Given back: the same origin's next page gets a whole share again.
    again = await page_socket(relay, EVIL)
    assert (await hello(again, "e1000000", EVIL))["type"] == "ack"
    await again.send(json.dumps(synth.tool("e1000000", "t", 1.0, description=DESCRIPTOR_PAD)))
    await again.send(json.dumps(synth.spans_frame("e1000000", [synth.span("e1000000", 0, "t", 1.0, 1.0)])))
    assert (await answer(again))["type"] == "ack"
    assert relay.store.sessions["e1000000"].tools["t"].registered
    await again.close()
    await good.close()


@pytest.mark.timeout(600)  # fills the relay's whole budget in-process: past 180 s inside a pass at load 30-50
async def test_four_origins_fill_the_budget_and_a_fifth_page_is_still_whole(bare_relay: Relay) -> None:
    relay = bare_relay
    floods = []
    for o in range(4):
        origin = f"http://evil{o}.example"
        for s in range(2):
            ws = await page_socket(relay, origin)
            sids = [f"{o:02x}{s:02x}{i:04x}" for i in range(2)]
            for sid in sids:
                reply = await hello(ws, sid, origin)
                assert reply["type"] == "ack", reply
            await spend(ws, sids)
            floods.append(ws)
    assert relay.store.footprint > b.RELAY_BUDGET_BYTES * 0.9, "the budget is spent"
    assert relay.store.footprint <= b.RELAY_BUDGET_BYTES + b.RESERVE_POOL_BYTES
    good = await legitimate_page(relay, "900d0002")
    for ws in floods:
        await ws.close()
    # What they held goes when someone needs the room: a fresh origin spends a whole share, evicting the oldest.
    await asyncio.wait_for(_until(lambda: not relay.store.share_bytes.keys() - {GOOD}), LIVENESS_S)
    late = await page_socket(relay, "http://late.example")
    sids = [f"1a7e{i:04x}" for i in range(2)]
    for sid in sids:
        assert (await hello(late, sid, "http://late.example"))["type"] == "ack"
    await spend(late, sids)
    assert relay.store.share_bytes["http://late.example"] > b.SOCKET_BUDGET_BYTES * 0.9
    assert relay.store.counters["evicted"] > 0
    assert relay.store.sessions["900d0002"].stats.totals.calls == 300, "the live page is never evicted"
    await late.close()
    await good.close()


async def test_a_span_refused_by_a_share_is_never_acked_and_is_kept_when_sent_again(bare_relay: Relay) -> None:
    relay = bare_relay
    ws = await page_socket(relay, EVIL)
    sids = ["e2000000", "e2000001", "e2000002"]
    for sid in sids:
        assert (await hello(ws, sid, EVIL))["type"] == "ack"
    await spend(ws, sids)
    assert relay.store.counters["limit:socket_share"] > 0
    sid = sids[-1]
    session = relay.store.sessions[sid]
    seq = session.acked + 1
    span = synth.span(sid, seq, "one-more-new-tool", seq * 1.0, 1.0)
    await ws.send(json.dumps(synth.spans_frame(sid, [span])))
    refusal, ack = await answer(ws), await answer(ws)
    assert refusal["code"] == p.Code.LIMIT and refusal["session"] == sid
    assert ack["type"] == "ack" and ack["seq"] == seq - 1, "the refused span is not acked"
    assert not session.received.has(seq) and "one-more-new-tool" not in session.stats.tools
    # Another session of that socket ends: its share comes back, and the same span is stored when sent again.
    await ws.send(json.dumps({"type": "bye", "session": sids[0], "reason": "pagehide"}))
    await ws.send(json.dumps(synth.spans_frame(sid, [span])))
    assert (await answer(ws))["seq"] == seq
    assert "one-more-new-tool" in session.stats.tools
    await ws.close()


async def test_four_sockets_of_sixteen_hellos_leave_the_table_to_others(relay: Relay) -> None:
    sockets = []
    accepted = 0
    for c in range(4):
        ws = await page_socket(relay, EVIL)
        for i in range(16):
            reply = await hello(ws, f"e3{c:02x}{i:04x}", EVIL)
            accepted += reply["type"] == "ack"
            if reply["type"] == "error":
                assert reply["code"] == p.Code.SESSION_LIMIT
        sockets.append(ws)
    assert accepted == p.MAX_SESSIONS_PER_ORIGIN
    assert relay.store.counters["limit:origin_sessions"] == 64 - p.MAX_SESSIONS_PER_ORIGIN
    for i in range(3):  # three other pages, each gets its seat at once
        good = await legitimate_page(relay, f"900d01{i:02x}", tools=2, calls=50)
        await good.close()
    # A session that ends gives its seat back to its origin.
    await sockets[0].send(json.dumps({"type": "bye", "session": "e3000000", "reason": "pagehide"}))
    assert (await hello(sockets[3], "e3ffffff", EVIL))["type"] == "ack"
    for ws in sockets:
        await ws.close()


async def test_held_sockets_and_handshake_churn_never_refuse_another_origins_page(relay: Relay) -> None:
    held: list[ClientConnection] = []
    refused = 0
    for _ in range(128):
        try:
            held.append(await page_socket(relay, EVIL))
        except InvalidStatus as exc:
            assert exc.response.status_code == 503
            refused += 1
    assert len(held) <= MAX_CONNECTIONS_PER_ORIGIN and refused == 128 - len(held)
    stop = asyncio.Event()

    async def churn() -> None:
        while not stop.is_set():
            try:
                ws = await page_socket(relay, EVIL)
                await ws.close()
            except (InvalidStatus, ConnectionClosed, OSError):
                await asyncio.sleep(0)

    churners = [asyncio.create_task(churn()) for _ in range(4)]
    try:
        for i in range(12):  # a new page's handshake, twelve times over, beside the flood: never refused
            good = await page_socket(relay, GOOD)
            assert (await hello(good, f"900d02{i:02x}", GOOD))["type"] == "ack"
            await good.close()
    finally:
        stop.set()
        await asyncio.gather(*churners)
    assert relay.store.counters["refused:origin_connects"] + relay.store.counters["refused:origin_sockets"] > 0
    for ws in held:
        await ws.close()


async def status_floods(relay: Relay, socket_origin: str, page_origin: str, prefix: str) -> list[asyncio.Task[str]]:
    """Four sockets of one page that say hello, then send status frames without ever reading (what a flood does);
    each task ends with the close code the relay gave its socket."""

    async def flood(ws: ClientConnection, sid: str) -> str:
        frame = json.dumps(synth.status(sid, "measuring"))
        try:
            while True:
                await ws.send(frame)
        except ConnectionClosed as exc:
            return str(exc.rcvd.code if exc.rcvd else exc)

    floods = [await page_socket(relay, socket_origin) for _ in range(4)]
    for i, ws in enumerate(floods):
        assert (await hello(ws, f"{prefix}{i:06x}", page_origin))["type"] == "ack"
    return [asyncio.create_task(flood(ws, f"{prefix}{i:06x}")) for i, ws in enumerate(floods)]


async def test_a_rate_cap_flood_is_paused_then_closed_and_the_other_page_is_served() -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN, rate_per_second=200, rate_burst=200, token_rate_per_second=400, token_rate_burst=400))
    await relay.start()
    try:
        tasks = await status_floods(relay, EVIL, EVIL, "e4")
        good = await page_socket(relay, GOOD)
        sid = "900d0300"
        assert (await hello(good, sid, GOOD))["type"] == "ack"
        times = []
        for base in range(0, 40 * 5, 5):
            started = time.perf_counter()
            spans = [synth.span(sid, s, "t", s * 10.0, 1.0) for s in range(base, base + 5)]
            await good.send(json.dumps(synth.spans_frame(sid, spans)))
            reply = await answer(good)
            times.append(time.perf_counter() - started)
            assert reply == {"type": "ack", "session": sid, "seq": base + 4}
            await asyncio.sleep(0.05)
        times.sort()
        print(f"\nrate-cap flood: legitimate ack p95 {times[int(len(times) * 0.95)] * 1000:.1f} ms")
        await asyncio.wait_for(_until(lambda: relay.store.counters["refused:rate_abuse"] == 4), LIVENESS_S)
        assert relay.store.counters["rejected:rate_limited"] > 0
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert relay.store.sessions[sid].stats.totals.calls == 200
        await good.close()
    finally:
        await relay.stop()


async def test_one_mebibyte_frames_leave_the_other_page_whole(bare_relay: Relay) -> None:
    relay = bare_relay
    status = json.dumps(synth.status("e5000000", "measuring"))
    big = (status[:-1] + " " * (p.MAX_FRAME_BYTES - len(status)) + "}").encode()  # valid, and as large as read

    async def flood() -> None:
        while True:
            try:
                ws = await page_socket(relay, EVIL, max_queue=None)
                await hello(ws, "e5000000", EVIL)
                while True:
                    await ws.send(big)
            except (ConnectionClosed, InvalidStatus, OSError):
                await asyncio.sleep(0.01)

    tasks = [asyncio.create_task(flood()) for _ in range(2)]
    try:
        await asyncio.wait_for(_until(lambda: relay.store.counters["frames"] >= 64), LIVENESS_S)
        before = relay.store.counters["frames"]
        started = time.perf_counter()
        good = await legitimate_page(relay, "900d0400", tools=3, calls=300)
        took = time.perf_counter() - started
        await good.close()
        print(
            f"\n1 MiB frames: the legitimate page's 9 frames took {took * 1000:.0f} ms; "
            f"{relay.store.counters['frames'] - before} flood frames meanwhile"
        )
        assert relay.store.counters["frames"] > before + 9, "the flood ran throughout"
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.01)


async def test_in_the_extension_one_tabs_flood_spends_its_own_origins_share() -> None:
    """The extension opens one socket per page, each with the extension's Origin header. Keyed by that header, every
    tab shared one rate and loop share, so one tab's flood got the others' frames refused. The share is the page's
    origin (the extension stamps it from the browser): here a tab of good.example keeps every frame while four
    sockets of an evil.example tab flood, all through the extension."""
    ext = "chrome-extension://abcdefghijklmnopabcdefghijklmnop"
    relay = Relay(
        RelayConfig(
            port=0,
            token=TOKEN,
            rate_per_second=200,
            rate_burst=200,
            token_rate_per_second=400,
            token_rate_burst=400,
            extension_origins=frozenset({ext}),
        )
    )
    await relay.start()
    try:
        tasks = await status_floods(relay, ext, EVIL, "e5")
        await asyncio.wait_for(_until(lambda: relay.store.counters["rejected:rate_limited"] > 0), LIVENESS_S)  # the evil tab's origin is spent
        good = await page_socket(relay, ext)
        sid = "900d0500"
        assert (await hello(good, sid, GOOD))["type"] == "ack"
        # 150 frames back to back: past a socket's own reserve (100, then 50 a second), within an origin's 400 a second
        for base in range(0, 150 * 2, 2):
            spans = [synth.span(sid, s, "t", s * 10.0, 1.0) for s in range(base, base + 2)]
            await good.send(json.dumps(synth.spans_frame(sid, spans)))
            reply = await answer(good)
            assert reply == {"type": "ack", "session": sid, "seq": base + 1}, f"frame {base // 2}: {reply}"
        # the flood's own sockets are closed for it, as on any route
        await asyncio.wait_for(_until(lambda: relay.store.counters["refused:rate_abuse"] == 4), LIVENESS_S)
        await asyncio.gather(*tasks)
        assert relay.store.sessions[sid].stats.totals.calls == 300
        await good.close()
    finally:
        await relay.stop()
