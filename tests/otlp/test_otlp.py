"""`--otlp`: every call reaches a real OTLP receiver as a GenAI-convention span; a collector that is down is
shown and counted without slowing anything; the canary never leaves unless payload capture is on."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from relay_bridge.core import synth
from relay_bridge.core.fingerprint import descriptor_fingerprint
from relay_bridge.exports.capture import build_capture
from relay_bridge.lanes.otlp.attributes import base_resource, cut, span_id, trace_id
from relay_bridge.lanes.otlp.exporter import traces_endpoint
from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import LIVENESS_S, connect

from .receiver import Receiver

TOKEN = "1234567890abcdef1234567890abcdef"
SID = "07e17e10"
T0 = 1_764_000_000_000.0
CANARY = "CANARY-otlp-5e1f"


async def wait_until(predicate: Callable[[], Any], timeout: float = LIVENESS_S) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)
    return value


async def feed(relay: Relay, frames: list[dict[str, Any]]) -> None:
    async with connect(f"ws://127.0.0.1:{relay.port}/relay?t={TOKEN}") as ws:
        await ws.recv()
        await ws.send(json.dumps(synth.hello(SID, origin="https://shop.example", time_origin=T0, path="/cart")))
        await ws.recv()
        for frame in frames:
            await ws.send(json.dumps(frame))
        await ws.send(json.dumps({"type": "bye", "session": SID, "reason": "done"}))
    await wait_until(lambda: relay.store.sessions[SID].state == "ended")


def calls() -> list[dict[str, Any]]:
    return [
        synth.tool(
            SID, "search", 1.0, description="find products", annotations={"readOnlyHint": True, "destructiveHint": False}, kept={"readOnlyHint": True}
        ),
        synth.spans_frame(
            SID,
            [
                synth.span(SID, 0, "search", 100.0, 12.5, result_bytes=2048, input_bytes=30),
                synth.span(SID, 1, "search", 200.0, 40.0, gap=87.5, is_error=True, error="card declined") | {"errorType": "TypeError"},
                synth.span(SID, 2, "search", 210.0, 5.0, depth=1, parent=1, overlapped=True),
            ],
        ),
        synth.tool(SID, "search", 300.0, change="unregistered"),
    ]


async def collect(tmp_path: Path, frames: list[dict[str, Any]], count: int, **config: Any) -> list[dict[str, Any]]:
    receiver = Receiver()
    relay = Relay(RelayConfig(port=0, token=TOKEN, otlp=receiver.url, log_dir=tmp_path / "logs", **config))
    await relay.start()
    try:
        await feed(relay, frames)
        return await wait_until(lambda: len(receiver.snapshot()) >= count and receiver.snapshot())
    finally:
        await relay.stop()
        receiver.close()


def named(spans: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    return by_name


async def test_spans_arrive_with_names_attributes_times_and_resources(tmp_path: Path) -> None:
    by_name = named(await collect(tmp_path, calls(), 6))
    # autotel-webmcp's (001) span names
    assert sorted(by_name) == ["execute_tool search", "webmcp.install", "webmcp.tool.register", "webmcp.tool.withdraw"]
    first, failed, nested = sorted(by_name["execute_tool search"], key=lambda s: s["attributes"]["webmcp.execute.seq"])
    assert first["kind"] == 1  # SPAN_KIND_INTERNAL
    a = first["attributes"]
    assert a["gen_ai.operation.name"] == "execute_tool" and a["gen_ai.tool.name"] == "search"
    assert "gen_ai.tool.call.id" not in a, "reserved for a model's tool-call id, which a page never sees"
    assert a["webmcp.call.id"] == f"{SID}#0" and a["webmcp.installation.id"] == SID
    assert [s["attributes"]["webmcp.execute.seq"] for s in (first, failed, nested)] == [1, 2, 3], "001 counts from 1"
    assert a["gen_ai.tool.type"] == "function" and a["gen_ai.tool.description"] == "find products"
    assert a["mcp.tool.arguments.size"] == 30 and a["mcp.tool.result.size"] == 2048 and a["webmcp.result.bytes"] == 2048
    assert a["webmcp.result.type"] == "object" and a["webmcp.result.envelope"] is True and a["webmcp.result.substituted"] is False
    assert a["webmcp.annotations.sent"] == "readOnlyHint,destructiveHint" and a["webmcp.annotations.dropped"] == "destructiveHint"
    assert a["webmcp.tool.label_mismatch"] is False, "always a boolean, also without a title"
    assert a["webmcp.tool.descriptor"] == descriptor_fingerprint(
        {
            "name": "search",
            "description": "find products",
            "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True, "destructiveHint": False},
        }
    )
    assert "webmcp.tool.redefined" not in a
    assert first["start"] == int((T0 + 100.0) * 1e6) and first["end"] == int((T0 + 112.5) * 1e6)
    assert first["resource"]["webmcp.page.origin"] == "https://shop.example"
    assert first["resource"]["webmcp.session.id"] == SID and first["resource"]["webmcp.page.path"] == "/cart"
    assert first["trace_id"] == f"{trace_id(SID):032x}" and first["span_id"] == f"{span_id(SID, 0):016x}"
    assert first["status"][0] == 0  # unset
    assert failed["attributes"]["error.type"] == "TypeError" and failed["status"] == (2, "card declined")
    assert "webmcp.error.message" not in failed["attributes"], "only with payload capture on"
    assert nested["parent_span_id"] == failed["span_id"]
    assert nested["attributes"]["webmcp.execute.depth"] == 1 and nested["attributes"]["webmcp.execute.parent"] == "search"
    register = by_name["webmcp.tool.register"][0]["attributes"]
    assert register["webmcp.tool.schema.size"] > 0 and register["webmcp.tool.description.length"] == len("find products")
    assert register["webmcp.tool.has_input_schema"] is True and register["webmcp.tool.descriptor"] == a["webmcp.tool.descriptor"]
    assert by_name["webmcp.tool.withdraw"][0]["attributes"]["webmcp.tool.name"] == "search"
    assert by_name["webmcp.install"][0]["attributes"]["webmcp.installation.id"] == SID
    assert first["scope"] == "wmcp-top"


async def test_redefined_consent_refusal_and_labels_as_001_has_them(tmp_path: Path) -> None:
    frames = [
        synth.tool(SID, "buy", 1.0, description="Buy it")
        | {"descriptor": {"name": "buy", "title": "Purchase", "description": "Buy it"}, "fingerprint": "0000000a"},
        synth.tool(SID, "buy", 2.0, description="Buy it")
        | {"descriptor": {"name": "buy", "title": "Purchase", "description": "Buy it"}, "fingerprint": "0000000a"},
        synth.tool(SID, "buy", 3.0, description="Buy it")
        | {"descriptor": {"name": "buy", "title": "Purchase", "description": "Buy it"}, "fingerprint": "0000000b"},
        synth.tool(SID, "nothing", 4.0) | {"descriptor": {"name": "nothing", "description": "no input", "inputSchema": None}},
        synth.tool(SID, "bare", 5.0) | {"descriptor": {"name": "bare"}},
        synth.event(SID, 10.0, "consent", shown="Add to cart", resolved="buy", granted=True, mismatch=False),
        synth.spans_frame(SID, [synth.span(SID, 0, "buy", 11.0, 1.0) | {"refusal": "rate_limited"}]),
    ]
    by_name = named(await collect(tmp_path, frames, 8))
    registers = sorted((s["attributes"] for s in by_name["webmcp.tool.register"]), key=lambda a: (a["webmcp.tool.name"], a["webmcp.tool.descriptor"]))
    bare, buy_a, buy_a2, buy_b, nothing = registers
    assert [a.get("webmcp.tool.redefined") for a in (buy_a, buy_a2, buy_b)].count(True) == 1, "only the registration that redefined"
    assert buy_b.get("webmcp.tool.redefined") is True and buy_b["webmcp.tool.descriptor"] == "0000000b"
    assert buy_a["webmcp.tool.title"] == "Purchase" and buy_a["webmcp.tool.label_mismatch"] is True
    assert nothing["webmcp.tool.has_input_schema"] is True, "null is present, as 001 reads it (!== undefined)"
    assert bare["webmcp.tool.has_input_schema"] is False and bare["webmcp.tool.description.length"] == 0
    assert bare["webmcp.tool.descriptor"] == descriptor_fingerprint({"name": "bare"}), "computed when the agent sent none"
    (consent,) = by_name["webmcp.consent"]
    c = consent["attributes"]
    assert c["webmcp.consent.shown"] == "Add to cart" and c["webmcp.consent.resolved"] == "buy" and c["gen_ai.tool.name"] == "buy"
    assert c["webmcp.consent.granted"] is True and c["webmcp.consent.mismatch"] is True and c["webmcp.consent.label_unrelated"] is False
    assert c["webmcp.tool.descriptor"] == "0000000b"
    assert consent["start"] == int((T0 + 10.0) * 1e6), "emitted when the consent happened, at its time"
    (call,) = by_name["execute_tool buy"]
    assert call["attributes"]["webmcp.result.refused"] is True and call["attributes"]["webmcp.result.refusal"] == "rate_limited"
    assert "webmcp.tool.redefined" not in call["attributes"]


async def test_service_name_and_resource_attributes_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "shop-web")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=staging,team=web%20shop,service.name=ignored")
    spans = await collect(tmp_path, calls()[:2], 4)
    resource = spans[0]["resource"]
    assert resource["service.name"] == "shop-web" and resource["deployment.environment"] == "staging" and resource["team"] == "web shop"
    assert resource["webmcp.session.id"] == SID
    spans = await collect(tmp_path, calls()[:2], 4, otlp_service="checkout-page")
    assert {s["resource"]["service.name"] for s in spans} == {"checkout-page"}, "--otlp-service wins"
    monkeypatch.delenv("OTEL_SERVICE_NAME")
    assert base_resource()["service.name"] == "ignored", "else service.name from OTEL_RESOURCE_ATTRIBUTES"
    assert base_resource(environ={})["service.name"] == "webmcp-page"
    from relay_bridge.cli import add_relay_options, relay_config

    parser = __import__("argparse").ArgumentParser()
    add_relay_options(parser)
    monkeypatch.setenv("WMCP_TOP_HOME", str(tmp_path))
    assert relay_config(parser.parse_args(["--otlp-service", "x"])).otlp_service == "x"


async def test_error_text_follows_error_policy_and_capture(tmp_path: Path) -> None:
    receiver = Receiver()
    relay = Relay(RelayConfig(port=0, token=TOKEN, otlp=receiver.url, log_dir=tmp_path / "logs"))
    await relay.start()
    try:
        for sid, policy in (("0000000e", "message"), ("0000000f", "none")):
            async with connect(f"ws://127.0.0.1:{relay.port}/relay?t={TOKEN}") as ws:
                await ws.recv()
                hello = synth.hello(sid, time_origin=T0)
                hello["config"]["errorPolicy"] = policy
                await ws.send(json.dumps(hello))
                await ws.recv()
                await ws.send(json.dumps(synth.tool(sid, "dup", 1.0, rejected="Duplicate tool name dup")))
                if policy == "message":  # capture on: the page sent the thrown message on its payload frame
                    await ws.send(json.dumps({"type": "payload", "session": sid, "seq": 0, "arguments": "{}", "error": "card declined for order 7"}))
                await ws.send(
                    json.dumps(
                        synth.spans_frame(
                            sid,
                            [
                                synth.span(sid, 0, "pay", 1.0, 1.0, is_error=True, error="card declined" if policy == "message" else None)
                                | {"errorType": "Error"}
                            ],
                        )
                    )
                )
                assert json.loads(await ws.recv())["type"] == "ack"
        spans = await wait_until(lambda: len(receiver.snapshot()) >= 6 and receiver.snapshot())
    finally:
        await relay.stop()
        receiver.close()
    got = {(s["resource"]["webmcp.session.id"], s["name"]): s for s in spans}
    assert got[("0000000e", "webmcp.tool.register")]["status"] == (2, "Duplicate tool name dup")
    assert got[("0000000f", "webmcp.tool.register")]["status"] == (2, "registration_rejected"), "errorPolicy none: no host text"
    assert got[("0000000e", "execute_tool pay")]["attributes"]["webmcp.error.message"] == "card declined for order 7"
    assert got[("0000000f", "execute_tool pay")]["status"] == (2, "Error")
    assert "webmcp.error.message" not in got[("0000000f", "execute_tool pay")]["attributes"]


async def test_collector_down_then_up(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port with nothing listening, for now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    relay = Relay(RelayConfig(port=0, token=TOKEN, otlp=f"http://127.0.0.1:{port}/v1/traces", otlp_interval=0.05))
    await relay.start()
    receiver = None
    try:
        await feed(relay, calls())  # acked and stored although the collector is down
        stats = relay.otlp.stats
        await wait_until(lambda: stats.state == "unreachable" and stats.dropped_unreachable >= 6)
        session = relay.store.sessions[SID]
        assert session.stats.totals.calls == 3 and session.acked == 2
        receiver = Receiver(port)  # the collector comes up on the same address
        async with connect(f"ws://127.0.0.1:{relay.port}/relay?t={TOKEN}") as ws:
            await ws.recv()
            await ws.send(json.dumps(synth.hello("0a0b0c0d", time_origin=T0)))
            await ws.recv()
            await ws.send(json.dumps(synth.spans_frame("0a0b0c0d", [synth.span("0a0b0c0d", 0, "after", 1.0, 1.0)])))
            assert json.loads(await ws.recv())["seq"] == 0
        await wait_until(lambda: any(s["name"] == "execute_tool after" for s in receiver.snapshot()))
        await wait_until(lambda: stats.state == "ok")
        assert stats.exported >= 1 and stats.dropped >= 5
    finally:
        await relay.stop()
        if receiver is not None:
            receiver.close()


async def test_canary_absent_unless_payload_capture_is_on(tmp_path: Path) -> None:
    receiver = Receiver()
    relay = Relay(RelayConfig(port=0, token=TOKEN, otlp=receiver.url, log_dir=tmp_path / "logs"))
    await relay.start()
    try:
        frames = calls()
        await feed(relay, frames)
        await wait_until(lambda: len(receiver.snapshot()) >= 6)
        assert all(CANARY.encode() not in body for body in receiver.bodies)
        # Payload capture on (the page opted in): the text goes to OTLP, and only there.
        async with connect(f"ws://127.0.0.1:{relay.port}/relay?t={TOKEN}") as ws:
            await ws.recv()
            await ws.send(json.dumps(synth.hello("cafe0001", time_origin=T0)))
            await ws.recv()
            await ws.send(
                json.dumps({"type": "payload", "session": "cafe0001", "seq": 0, "arguments": json.dumps({"q": CANARY}), "result": f"found {CANARY}"})
            )
            await ws.send(json.dumps(synth.spans_frame("cafe0001", [synth.span("cafe0001", 0, "search", 1.0, 1.0)])))
            assert json.loads(await ws.recv())["type"] == "ack"
        # The session's spans may leave in more than one export: wait for the call's own.
        call = await wait_until(
            lambda: next(
                (s for s in receiver.snapshot() if s["resource"]["webmcp.session.id"] == "cafe0001" and s["name"] == "execute_tool search"), None
            )
        )
        assert call["attributes"]["gen_ai.tool.call.result"] == call["attributes"]["webmcp.result"] == f"found {CANARY}"
        assert (
            CANARY in call["attributes"]["gen_ai.tool.call.arguments"]
            and call["attributes"]["webmcp.input"] == call["attributes"]["gen_ai.tool.call.arguments"]
        )
        capture = json.dumps(build_capture(relay.store))
    finally:
        await relay.stop()
        receiver.close()
    assert CANARY not in capture
    for log in (tmp_path / "logs").glob("*.jsonl"):
        assert CANARY not in log.read_text()


def test_endpoint_from_flag_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    assert traces_endpoint(None) is None
    assert traces_endpoint("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_endpoint("http://c:4318/custom/path") == "http://c:4318/custom/path"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    assert traces_endpoint(None) == "http://collector:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/t")
    assert traces_endpoint(None) == "http://traces:9999/t"


async def test_through_a_real_collector_rotel(tmp_path: Path) -> None:
    """wmcp-top -> rotel (an OpenTelemetry collector from PyPI) -> our receiver: a real collector takes the spans."""
    import rotel

    agent = Path(rotel.__file__).parent / "rotel-agent"
    assert agent.exists(), "pip install rotel (the test extra) ships the rotel-agent collector"
    downstream = Receiver()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            str(agent),
            "start",
            "--otlp-grpc-endpoint",
            "127.0.0.1:0",
            "--otlp-http-endpoint",
            f"127.0.0.1:{port}",
            "--exporter",
            "otlp",
            "--otlp-exporter-endpoint",
            f"http://127.0.0.1:{downstream.port}",
            "--otlp-exporter-protocol",
            "http",
            "--traces-batch-timeout",
            "100ms",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, ROTEL_LOG_FORMAT="text"),
    )
    relay = Relay(RelayConfig(port=0, token=TOKEN, otlp=f"http://127.0.0.1:{port}/v1/traces", otlp_interval=0.05))
    try:
        await wait_until(lambda: _listening(port), 10)
        await relay.start()
        await feed(relay, calls())
        spans = await wait_until(lambda: len(downstream.snapshot()) >= 6 and downstream.snapshot(), 20)
        names = sorted({s["name"] for s in spans})
        assert names == ["execute_tool search", "webmcp.install", "webmcp.tool.register", "webmcp.tool.withdraw"]
        assert {s["resource"]["webmcp.session.id"] for s in spans} == {SID}
    finally:
        await relay.stop()
        proc.terminate()
        proc.wait(LIVENESS_S)
        downstream.close()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_missing_extra_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from relay_bridge.cli import UsageError, start_relay

    monkeypatch.setitem(__import__("sys").modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(UsageError, match=r"pip install 'wmcp-top\[otlp\]'"):
        await start_relay(RelayConfig(port=0, token=TOKEN, otlp="http://127.0.0.1:4318/v1/traces"))


def test_cut_says_how_much_was_cut() -> None:
    assert cut("abc", 3) == "abc"
    assert cut('{"q":"' + "x" * 10 + '"}', 8) == '{"q":"xx...[18 chars]'
    assert cut("a\U0001f600b", 2) == "a...[4 chars]", "UTF-16 units as JavaScript counts; a pair is never split"


def test_a_bad_endpoint_is_refused_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: `--otlp notaurl` ran without OTLP; it is one line and exit 2, before or after the subcommand."""
    import sys

    from relay_bridge.lanes.otlp.exporter import BadEndpoint

    for bad in ("notaurl", "ftp://c:4318", "http://:4318", "http://c:99999"):
        with pytest.raises(BadEndpoint):
            traces_endpoint(bad)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")
    with pytest.raises(BadEndpoint, match="OTEL_EXPORTER_OTLP_ENDPOINT"):
        traces_endpoint(None)
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path))
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    for args in (["relay", "--otlp", "notaurl"], ["--otlp", "notaurl", "relay"], ["--otlp", "notaurl"]):
        out = subprocess.run([sys.executable, "-m", "tui.cli", *args], env=env, capture_output=True, text=True, timeout=LIVENESS_S)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "'notaurl': not an http(s) URL" in out.stderr, (args, out.stderr)


def test_a_collector_that_is_down_is_one_line_then_a_count(tmp_path: Path) -> None:
    """Issue 34: the OpenTelemetry library printed a warning per failed batch to stderr. The relay says the
    state once (and the count on exit); the library's own lines go nowhere near the terminal."""
    import signal
    import sys

    from websockets.sync.client import connect as sync_connect

    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0", "--no-log", "--otlp", f"http://127.0.0.1:{dead}", "--summary-every", "0.2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        token = (tmp_path / "config" / "token").read_text().strip()
        lines: list[str] = []
        with sync_connect(f"ws://127.0.0.1:{port}/relay?t={token}") as ws:
            ws.recv()
            ws.send(json.dumps(synth.hello(SID)))
            ws.recv()
            for batch in range(3):  # three batches, each failing in the library
                ws.send(json.dumps(synth.spans_frame(SID, [synth.span(SID, batch, "search", batch * 10.0, 1.0)])))
                assert json.loads(ws.recv())["seq"] == batch
                while not any("unreachable" in line for line in lines):
                    lines.append(proc.stdout.readline())
            lines += [proc.stdout.readline() for _ in range(2)]  # two more summaries, the collector still down
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=LIVENESS_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = "".join(lines) + rest
    assert said.count("unreachable") == 1, said
    assert "spans dropped in all" in rest, rest
    assert err == "", err  # no "Failed to export" nor retry lines from the library
