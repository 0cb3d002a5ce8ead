"""The rate cap holds per token across sockets (issue 11, item 4): reconnecting or opening more sockets gets no
more frames through, and a well-behaved agent keeps being served while others are refused."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.ratecap import RESERVE_PER_SECOND
from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import LIVENESS_S, connect
from tests.relay.conftest import TOKEN, recv_json, send_spans, ws_url

TOKEN_RATE, TOKEN_BURST = 20.0, 50.0


async def until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.005)


async def capped_relay() -> Relay:
    relay = Relay(
        RelayConfig(port=0, token=TOKEN, rate_per_second=1000, rate_burst=1000, token_rate_per_second=TOKEN_RATE, token_rate_burst=TOKEN_BURST)
    )
    await relay.start()
    return relay


async def test_reconnecting_gets_no_more_frames_through(tmp_path: Path) -> None:
    relay = await capped_relay()
    try:
        sockets = 20
        started = time.monotonic()
        for i in range(sockets):
            async with connect(ws_url(relay)) as ws:
                await recv_json(ws)
                sid = f"5e{i:06x}"
                frames = [synth.hello(sid)] + [synth.event(sid, float(s), "burst") for s in range(14)]
                for frame in frames:
                    await ws.send(json.dumps(frame))
                counters = relay.store.counters
                # Every frame is either taken (counted in `frames`) or refused (counted by code): wait for all.
                await asyncio.wait_for(until(lambda: counters["frames"] + counters["rejected:rate_limited"] == (i + 1) * len(frames)), LIVENESS_S)
        elapsed = time.monotonic() - started
        admitted = relay.store.counters["frames"]
        ceiling = TOKEN_BURST + (TOKEN_RATE + RESERVE_PER_SECOND * sockets) * elapsed + sockets
        assert admitted <= ceiling, f"{admitted} frames through in {elapsed:.2f} s (cap {ceiling:.0f})"
        assert relay.store.counters["rejected:rate_limited"] >= sockets * 15 - ceiling
    finally:
        await relay.stop()


async def _refused(ws) -> bool:
    """Read `ws` until the relay refuses it for the rate (accepted events get no reply)."""
    while True:
        if (await recv_json(ws)).get("code") == p.Code.RATE_LIMITED:
            return True


async def test_a_well_behaved_agent_is_served_through_a_flood_from_other_sockets(tmp_path: Path) -> None:
    relay = await capped_relay()
    try:
        good = await connect(ws_url(relay))
        await recv_json(good)
        await good.send(json.dumps(synth.hello("900d900d")))
        assert (await recv_json(good))["type"] == "ack"
        await asyncio.sleep(0.2)  # the scenario: an agent connected a while before the flood (its reserve)
        flooders = [await connect(ws_url(relay)) for _ in range(4)]
        for i, ws in enumerate(flooders):
            await recv_json(ws)
            await ws.send(json.dumps(synth.hello(f"f1{i:06x}")))
            await recv_json(ws)
        # Each flooder sends until it is refused: a fixed count was outlasted on a loaded machine, where the slow
        # set-up had earned the last sockets enough of their own reserve to be served every frame.
        limited = [asyncio.ensure_future(_refused(ws)) for ws in flooders]
        deadline = time.monotonic() + 30
        while not all(task.done() for task in limited):
            assert time.monotonic() < deadline, "a flooder was never refused"
            for i, ws in enumerate(flooders):
                if not limited[i].done():
                    for _ in range(20):
                        await ws.send(json.dumps(synth.event(f"f1{i:06x}", 1.0, "noise")))  # accepted events get no reply
            await asyncio.sleep(0)  # the readers' turn
        assert all(task.result() for task in limited), "the token's cap is spent"
        for batch in range(3):
            ack = await send_spans(good, "900d900d", range(batch * 5, batch * 5 + 5))
            assert ack["seq"] == batch * 5 + 4
        for ws in flooders:
            ws.transport.abort()  # replies are still queued for it: no close handshake
        await good.close()
    finally:
        await relay.stop()
