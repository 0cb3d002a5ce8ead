"""The debugger lane in the relay: commands only the terminal can start, results that are never kept,
Prompt API steps, and the timeline's order and categories."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from relay_bridge.core import synth
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.relay.server import InvokeRefused, Relay, RelayConfig
from tests.liveness import LIVENESS_S

from .conftest import TOKEN, open_session, recv_json

SID = "de0bce01"
CANARY = "CANARY-invoke-91b2"


async def fake_agent(ws, answer_text: str) -> None:
    """Answers every `command` the way the page agent does after calling executeTool."""
    async for raw in ws:
        msg = json.loads(raw)
        if msg["type"] == "command":
            assert msg["name"] == "invoke" and msg["args"]["tool"] == "search"
            await ws.send(
                json.dumps(
                    {
                        "type": "result",
                        "id": msg["id"],
                        "session": msg["session"],
                        "ok": True,
                        "text": answer_text,
                        "resultBytes": len(answer_text),
                        "wallMs": 1.5,
                    }
                )
            )


async def test_invoke_round_trip_keeps_the_result_nowhere(tmp_path: Path) -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN, allow_invoke=True, log_dir=tmp_path / "logs"))
    await relay.start()
    try:
        ws = await open_session(relay, SID)
        await ws.send(json.dumps(synth.tool(SID, "search", 1.0, annotations={"readOnlyHint": True})))
        agent = asyncio.create_task(fake_agent(ws, f"result with {CANARY}"))
        result = await relay.invoke(SID, "search", {"q": "tea"})
        assert result.ok and result.text == f"result with {CANARY}" and result.result_bytes == len(result.text)
        assert relay.store.counters["commands"] == 1
        # Never kept: not in the store, the capture, the report, or the log.
        assert CANARY not in json.dumps(build_capture(relay.store))
        assert CANARY not in json.dumps(build_report(relay.store.sessions[SID]))
        agent.cancel()
        await ws.close()
    finally:
        await relay.stop()
    for log in (tmp_path / "logs").glob("*.jsonl"):
        assert CANARY not in log.read_text()


async def test_invoke_refused_without_the_flag() -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    try:
        ws = await open_session(relay, SID)
        with pytest.raises(InvokeRefused, match="--allow-invoke"):
            await relay.invoke(SID, "search", {})
        await ws.close()
    finally:
        await relay.stop()


async def test_a_page_cannot_start_or_answer_commands() -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN, allow_invoke=True))
    await relay.start()
    try:
        ws = await open_session(relay, SID)
        await ws.send(json.dumps({"type": "command", "id": "x", "session": SID, "name": "invoke", "args": {}}))
        assert (await recv_json(ws))["code"] == "unknown_type"  # agents have no command frame
        await ws.send(json.dumps({"type": "result", "id": "c1", "session": SID, "ok": True, "text": "unasked"}))
        other = await open_session(relay, "0e0e0e0e")
        task = asyncio.create_task(relay.invoke(SID, "search", {}, timeout=LIVENESS_S))
        msg = await recv_json(ws)
        assert msg["type"] == "command"
        # another connection answering for this session is ignored; the right one is taken
        await other.send(json.dumps({"type": "result", "id": msg["id"], "session": SID, "ok": True, "text": "forged"}))
        await ws.send(json.dumps({"type": "result", "id": msg["id"], "session": SID, "ok": False, "error": "TypeError"}))
        result = await task
        assert not result.ok and result.error == "TypeError" and result.text is None
        assert relay.store.counters["results_unsolicited"] == 2
        await ws.close()
        await other.close()
    finally:
        await relay.stop()


async def test_prompt_sessions_and_the_timeline() -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    try:
        ws = await open_session(relay, SID)
        frames = [
            synth.tool(SID, "search", 1.0),
            synth.tool(SID, "search", 2.0, rejected="InvalidStateError"),
            {"type": "prompt", "session": SID, "promptSession": "p1", "kind": "create", "at": 3.0},
            synth.start_frame(SID, [(0, "search", 4.0)]),
            {
                "type": "prompt",
                "session": SID,
                "promptSession": "p1",
                "kind": "stream",
                "at": 5.0,
                "seq": 0,
                "totalMs": 900.0,
                "firstChunkMs": 120.0,
                "chunks": 14,
                "charsIn": 42,
                "charsOut": 512,
            },
            synth.spans_frame(SID, [synth.span(SID, 0, "search", 4.0, 2.0)]),
            synth.tool(SID, "search", 7.0, change="unregistered"),  # clearContext: the agent withdraws each tool...
            synth.event(SID, 7.0, "context-clear"),  # ...and says why
            {"type": "prompt", "session": SID, "promptSession": "p1", "kind": "destroy", "at": 8.0},
        ]
        for frame in frames:
            await ws.send(json.dumps(frame))
        await ws.send(json.dumps({"type": "bye", "session": SID}))
        await ws.close()
        while relay.store.sessions[SID].state != "ended":
            await asyncio.sleep(0.01)
        s = relay.store.sessions[SID]
        ps = s.prompts["p1"]
        assert ps.destroyed_at == 8.0 and len(ps.calls) == 1
        call = ps.calls[0]
        assert (call.firstChunkMs, call.chunks, call.charsOut) == (120.0, 14, 512)
        assert not s.tools["search"].registered
        kinds = [e.kind for e in s.timeline_view()]
        assert kinds.index("register") < kinds.index("rejected") < kinds.index("prompt-create") < kinds.index("start")
        assert (
            kinds.index("start") < kinds.index("prompt-stream") < kinds.index("settle") < kinds.index("context-clear") < kinds.index("prompt-destroy")
        )
        assert {e.kind for e in s.timeline_view({"prompts"})} == {"prompt-create", "prompt-stream", "prompt-destroy"}
        assert {e.kind for e in s.timeline_view({"calls"})} == {"start", "settle"}
    finally:
        await relay.stop()
