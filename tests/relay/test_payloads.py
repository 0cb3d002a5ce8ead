"""Payloads for the terminal's call detail (issue 17 item 5): two-sided opt-in, the shown session only, bounded,
in memory only (never the store, the session log, an export or a capture)."""

from __future__ import annotations

import json
from pathlib import Path

from relay_bridge.core import synth
from relay_bridge.core.payloads import PayloadView
from relay_bridge.core.protocol import Payload
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import connect

from .conftest import TOKEN

CANARY = "CANARY-payload-7d21"
A, B = "0a000001", "0b000002"


def test_payload_view_holds_the_shown_session_only_and_is_bounded() -> None:
    view = PayloadView(max_entries=3, max_chars=100)
    assert not view.add(Payload(A, 0, arguments="x")), "nothing is shown yet: nothing is held"
    view.show(A)
    for seq in range(5):
        assert view.add(Payload(A, seq, arguments=f"a{seq}", result=f"r{seq}"))
    assert not view.add(Payload(B, 0, arguments="other session"))
    assert len(view) == 3 and view.dropped == 2 and view.ignored == 2
    assert view.call(A, 0) is None and view.call(A, 4).result == "r4"
    assert view.call(B, 4) is None
    view.add(Payload(A, 9, result="z" * 99))
    assert view.chars <= 100 and view.call(A, 9) is not None and view.call(A, 2) is None, "the character budget evicts oldest first"
    view.add(Payload(A, 1, promptSession=f"{A}-1", arguments="hi", result="hello"))
    assert view.prompt(A, f"{A}-1", 1).result == "hello" and view.call(A, 1) is None
    view.show(B)
    assert len(view) == 0 and view.chars == 0, "another session shown: the held text is gone"


async def _session(relay: Relay, sid: str):
    ws = await connect(f"ws://127.0.0.1:{relay.port}/relay?t={TOKEN}")
    welcome = json.loads(await ws.recv())
    await ws.send(json.dumps(synth.hello(sid)))
    await ws.recv()
    return ws, welcome


async def test_show_payloads_takes_the_shown_sessions_frames_and_writes_them_nowhere(tmp_path: Path) -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN, show_payloads=True, log_dir=tmp_path / "logs"))
    await relay.start()
    try:
        assert relay.payloads is not None
        relay.payloads.show(A)
        ws, welcome = await _session(relay, A)
        other, _ = await _session(relay, B)
        assert welcome["payloads"] is True, "the relay tells agents it wants payload frames"
        await ws.send(json.dumps({"type": "payload", "session": A, "seq": 0, "arguments": json.dumps({"q": CANARY}), "result": f"found {CANARY}"}))
        await other.send(json.dumps({"type": "payload", "session": B, "seq": 0, "result": f"not shown {CANARY}"}))
        await ws.send(json.dumps(synth.spans_frame(A, [synth.span(A, 0, "search", 1.0, 2.0)])))
        assert json.loads(await ws.recv())["type"] == "ack"
        await other.send(json.dumps(synth.spans_frame(B, [synth.span(B, 0, "search", 1.0, 2.0)])))
        assert json.loads(await other.recv())["type"] == "ack"
        held = relay.payloads.call(A, 0)
        assert held is not None and held.result == f"found {CANARY}" and CANARY in (held.arguments or "")
        assert relay.payloads.call(B, 0) is None and relay.payloads.ignored == 1
        written = json.dumps(build_capture(relay.store)) + json.dumps(build_report(relay.store.sessions[A]))
        assert CANARY not in written
        await ws.close()
        await other.close()
    finally:
        await relay.stop()  # flushes the session log: everything it would write is written
    logs = list((tmp_path / "logs").glob("*.jsonl"))
    assert logs and all(CANARY not in log.read_text() for log in logs)


async def test_without_a_consumer_the_relay_asks_for_no_payloads(tmp_path: Path) -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    try:
        assert relay.payloads is None
        ws, welcome = await _session(relay, A)
        assert welcome["payloads"] is False
        await ws.send(json.dumps({"type": "payload", "session": A, "seq": 0, "result": CANARY}))
        await ws.send(json.dumps(synth.spans_frame(A, [synth.span(A, 0, "search", 1.0, 2.0)])))
        assert json.loads(await ws.recv())["type"] == "ack"
        assert relay.store.counters["payloads_dropped"] == 1
        await ws.close()
    finally:
        await relay.stop()
