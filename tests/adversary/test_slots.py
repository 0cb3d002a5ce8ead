"""Holding the relay's connections: idle sockets that never say hello must not keep every slot, and a peer that
floods pings without reading the pongs must not make the relay buffer without limit (README, "Limits")."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import InvalidStatus
from websockets.protocol import State

from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import LIVENESS_S, connect
from tests.relay.conftest import TOKEN, assert_served, open_session, send_spans, ws_url

DEADLINE = 0.5  # the hello deadline these relays run with (HELLO_DEADLINE is 10 s)
SLOTS = 8
CAP = 256 << 10  # max_write_buffer for the flood test


@asynccontextmanager
async def _small(logs: Path) -> AsyncIterator[Relay]:
    r = Relay(RelayConfig(port=0, token=TOKEN, log_dir=logs, max_connections=SLOTS, hello_deadline=DEADLINE, max_write_buffer=CAP))
    await r.start()
    try:
        yield r
    finally:
        await r.stop()


@pytest.fixture
async def small_relay(tmp_path: Path) -> AsyncIterator[Relay]:
    async with _small(tmp_path / "logs") as r:
        yield r


RUNS = 5  # fresh relays, for a machine too loaded to take every slot within the hello deadline


async def test_idle_sockets_are_closed_at_the_hello_deadline_and_a_silent_agent_is_not(tmp_path: Path) -> None:
    # Every slot is held only until the first idle socket's hello deadline: a machine too loaded to open them all
    # within DEADLINE frees one before the last knock (a loaded pass did, once). The refusal is asserted whenever
    # every slot was taken in time; a knock let in later than that runs the test again on a fresh relay, and one
    # let in sooner fails it.
    for run in range(RUNS):
        async with _small(tmp_path / f"logs{run}") as relay:
            agent = await open_session(relay, "a0a0a0a0")  # an accepted session, then silence
            silent_since = time.monotonic()
            leaver = await open_session(relay, "b0b0b0b0")  # no socket without a session is older than this one
            await leaver.send(json.dumps({"type": "bye", "session": "b0b0b0b0", "reason": "pagehide"}))
            idle = [await connect(ws_url(relay)) for _ in range(SLOTS - 2)]  # never a frame; the library answers pings
            try:
                extra = await connect(ws_url(relay))
            except InvalidStatus as refused:
                assert refused.response.status_code == 503, "every slot is taken"
                await _closed_at_the_deadline(relay, agent, leaver, idle, silent_since)
                return
            let_in = time.monotonic() - silent_since
            await extra.close()
            assert let_in >= DEADLINE, f"a ninth socket let in {let_in:.3f} s after the first, before any hello deadline"
            for ws in [agent, leaver, *idle]:
                await ws.close()
    pytest.fail(f"{RUNS} fresh relays: never were all {SLOTS} slots taken within the {DEADLINE} s hello deadline")


async def _closed_at_the_deadline(
    relay: Relay, agent: ClientConnection, leaver: ClientConnection, idle: list[ClientConnection], silent_since: float
) -> None:
    async with asyncio.timeout(LIVENESS_S + DEADLINE):  # a deadline, not a sleep: each close is awaited
        for ws in [*idle, leaver]:
            await ws.wait_closed()
    for ws in [*idle, leaver]:
        assert ws.close_code == 1008 and "hello" in (ws.close_reason or "")
    assert relay.store.counters["refused:no_session"] == SLOTS - 1

    await assert_served(relay)  # the freed slots take a new agent, its hello acked
    assert time.monotonic() - silent_since > DEADLINE
    assert agent.state is State.OPEN, "a socket that owns a session is never closed for being quiet"
    ack = await send_spans(agent, "a0a0a0a0", [0, 1])
    assert ack["seq"] == 1
    await agent.close()


def _ping(payload: bytes) -> bytes:
    # A masked client frame; a zero mask key leaves the payload as it is.
    return struct.pack("!BB", 0x89, 0x80 | len(payload)) + b"\0\0\0\0" + payload


async def _raw_upgrade(relay: Relay) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket over a plain TCP socket that reads little (small receive buffer) and never reads again."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", relay.port))
    reader, writer = await asyncio.open_connection(sock=sock)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET /relay?t={TOKEN} HTTP/1.1\r\nHost: 127.0.0.1:{relay.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


async def test_a_ping_flood_that_never_reads_its_pongs_is_closed_with_the_buffer_bounded(small_relay: Relay) -> None:
    relay = small_relay
    agent = await open_session(relay, "c0c0c0c0")
    before = set(relay._sockets)
    _, writer = await _raw_upgrade(relay)
    async with asyncio.timeout(LIVENESS_S):
        while not set(relay._sockets) - before:
            await asyncio.sleep(0.01)  # the handler registers the socket just after the 101
    flood_conns = set(relay._sockets) - before
    chunk = _ping(b"p" * 125) * 2000  # 262 KB of pings, as many pongs owed
    peak = sent = acks = 0
    seq = 0
    # Up to 400,000 pings (~51 MB of pongs): far past what the kernel's socket buffers absorb and the cap.
    for _ in range(200):
        try:
            writer.write(chunk)
            await asyncio.wait_for(writer.drain(), 10)  # not a wait: a stalled drain ends the flood
        except (ConnectionError, TimeoutError):
            break
        sent += 2000
        peak = max([peak] + [relay._sockets[c].transport.get_write_buffer_size() for c in flood_conns if c in relay._sockets])
        if sent % 8000 == 0:  # the well-behaved agent on the same relay keeps being answered meanwhile
            ack = await send_spans(agent, "c0c0c0c0", [seq])
            assert ack["seq"] == seq
            seq, acks = seq + 1, acks + 1
        if relay.store.counters["refused:write_buffer"]:
            break
    writer.transport.abort()

    assert relay.store.counters["refused:write_buffer"] == 1, f"{sent} pings never closed the flooding socket (peak buffer {peak} bytes)"
    # At most one read's worth of pongs past the cap before data_received closes it.
    assert peak <= CAP + (512 << 10), f"the relay buffered {peak} bytes for one socket"
    async with asyncio.timeout(LIVENESS_S):
        while flood_conns & set(relay._sockets):
            await asyncio.sleep(0.01)  # polling a condition under a deadline
    assert agent.state is State.OPEN
    assert (await send_spans(agent, "c0c0c0c0", [seq]))["seq"] == seq
    await agent.close()
    await assert_served(relay)
