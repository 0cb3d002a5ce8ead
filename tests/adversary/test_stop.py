"""A page cannot hold the relay's exit. Sockets that never read (a flood sends and never reads its answers, so its
own reading pauses) get the relay's close frame and never answer it; the relay pauses the same sockets for their
rate, leaving the frame it read ahead unread. The dashboard's `q` and the headless relay's SIGINT wait on stop():
with websockets' close_timeout it took 10 s after a rate flood (tests/bench/test_fair_shares.py's `rate` row).
Here close_timeout is ten minutes, so only a stop that ends the pauses and cuts off a silent peer returns."""

from __future__ import annotations

import asyncio

import pytest

from relay_bridge.relay import server
from relay_bridge.relay.server import Relay, RelayConfig
from tests.adversary.test_fair_shares import EVIL, _until, status_floods
from tests.liveness import LIVENESS_S
from tests.relay.conftest import TOKEN, ws_url

# What a broken stop would wait out: far past the wait below, so only the fix passes, on any machine.
CLOSE_TIMEOUT = 600.0
STOPPED_WITHIN = 60.0


async def test_a_rate_flood_that_never_reads_cannot_hold_the_relay_s_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "CLOSE_TIMEOUT", CLOSE_TIMEOUT)
    relay = Relay(RelayConfig(port=0, token=TOKEN, rate_per_second=200, rate_burst=200, token_rate_per_second=400, token_rate_burst=400))
    await relay.start()
    tasks: list[asyncio.Task[str]] = []
    writer: asyncio.StreamWriter | None = None
    try:
        tasks = await status_floods(relay, EVIL, EVIL, "e6")
        # A peer that finishes its HTTP upgrade and then reads nothing, not even the close frame. Connected once the
        # floods run: a loaded machine took past the relay's handshake deadline to start them, and closed it.
        reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
        path = ws_url(relay).split(str(relay.port), 1)[1]
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{relay.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Origin: {EVIL}\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        assert b" 101 " in await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), LIVENESS_S)
        await asyncio.wait_for(_until(lambda: relay.store.counters["rejected:rate_limited"] > 0), LIVENESS_S)  # pausing them now
        await asyncio.wait_for(relay.stop(), STOPPED_WITHIN)
        assert relay.store.counters["rejected:rate_limited"] > 0
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if writer is not None:
            writer.close()
        await relay.stop()
