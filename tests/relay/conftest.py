"""An in-loop relay for async socket tests, and a well-behaved client to prove others keep being served."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from relay_bridge.core import synth
from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import connect

TOKEN = "fedcba9876543210fedcba9876543210"


@pytest.fixture
async def relay(tmp_path: Path) -> AsyncIterator[Relay]:
    r = Relay(RelayConfig(port=0, token=TOKEN, log_dir=tmp_path / "logs"))
    await r.start()
    try:
        yield r
    finally:
        await r.stop()


def ws_url(relay: Relay, token: str = TOKEN) -> str:
    return f"ws://127.0.0.1:{relay.port}/relay?t={token}"


async def recv_json(ws: ClientConnection) -> dict[str, Any]:
    return json.loads(await ws.recv())


async def open_session(relay: Relay, sid: str, **hello: Any) -> ClientConnection:
    ws = await connect(ws_url(relay), max_size=None)
    welcome = await recv_json(ws)
    assert welcome["type"] == "welcome"
    await ws.send(json.dumps(synth.hello(sid, **hello)))
    ack = await recv_json(ws)
    assert ack["type"] == "ack" and ack["session"] == sid
    return ws


async def send_spans(ws: ClientConnection, sid: str, seqs: range | list[int], tool: str = "search") -> dict[str, Any]:
    spans = [synth.span(sid, s, tool, s * 10.0, 1.0) for s in seqs]
    await ws.send(json.dumps(synth.spans_frame(sid, spans)))
    while True:
        reply = await recv_json(ws)
        if reply["type"] == "ack":
            return reply


async def assert_served(relay: Relay, sid: str = "99999999") -> None:
    """A well-behaved client on its own socket: hello, a batch, an ack naming every seq."""
    ws = await open_session(relay, sid)
    try:
        base = relay.store.sessions[sid].acked + 1
        ack = await send_spans(ws, sid, range(base, base + 3))
        assert ack["seq"] == base + 2
    finally:
        await ws.close()
