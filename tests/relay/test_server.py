"""The relay over real sockets on 127.0.0.1: the vectors end to end, HTTP routes, and bad input that must be
refused, counted and survived while a well-behaved client on another socket keeps being served."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import jsonschema
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.exports.report import build_report
from relay_bridge.exports.trace import span_events
from relay_bridge.relay.assets import agent_script
from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import LIVENESS_S, connect

from .conftest import TOKEN, assert_served, open_session, recv_json, send_spans, ws_url

VECTORS = sorted((Path(__file__).parent.parent / "vectors" / "aggregate").glob("*.json"))
SCHEMA = json.loads((Path(__file__).parents[2] / "relay_bridge" / "schema" / "report.v2.json").read_text())


def vector_frames(doc: dict) -> list[dict]:
    """The steps of a vector as the wire frames an agent would send."""
    sid = doc["session"]["id"]
    out: list[dict] = []
    unsampled = 0
    rev = 0
    for step in doc["steps"]:
        match step["op"]:
            case "register":
                out.append(
                    {
                        "type": "tool",
                        "session": sid,
                        "change": "registered",
                        "name": step["name"],
                        "at": step["at"],
                        "schemaBytes": step["schemaBytes"],
                        "internal": step.get("internal", False),
                    }
                )
            case "unregister":
                out.append({"type": "tool", "session": sid, "change": "unregistered", "name": step["name"], "at": 1.0})
            case "span":
                out.append(synth.spans_frame(sid, [step["span"]]))
            case "unsampled":
                unsampled += 1
                rev += 1
                out.append({"type": "ledger", "session": sid, "rev": rev, "ledger": {"sessionId": sid, "totals": {"unsampledCalls": unsampled}}})
            case "update":
                out.append({"type": "update", "session": sid, "seq": step["seq"], "blockingMs": step["blockingMs"]})
            case "reset":
                out.append(synth.event(sid, 1.0, "reset"))
    return out


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
async def test_vectors_over_a_real_socket(tmp_path: Path, path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    relay = Relay(RelayConfig(port=0, token=TOKEN, buffer=doc["buffer"], log_dir=None))
    await relay.start()
    try:
        sid = doc["session"]["id"]
        ws = await open_session(relay, sid, time_origin=doc["session"]["timeOrigin"])
        await ws.send(json.dumps(synth.status(sid, "measuring", "measuring.")))
        for frame in vector_frames(doc):
            await ws.send(json.dumps(frame))
        await ws.send(json.dumps({"type": "bye", "session": sid, "reason": "done"}))
        await ws.close()
        await asyncio.wait_for(_until(lambda: relay.store.sessions[sid].state == "ended"), LIVENESS_S)
        session = relay.store.sessions[sid]
        expect = doc["expect"]
        assert session.stats.aggregates() == expect["aggregates"]
        assert session.stats.totals_dict() == expect["totals"]
        assert session.stats.summary() == expect["summary"]
        trace = [{k: e[k] for k in ("name", "cat", "ts", "dur", "tid")} for e in span_events(session.spans(), session.info.timeOrigin)]
        assert trace == expect["trace"]
        report = build_report(session)
        jsonschema.validate(report, SCHEMA)
        assert report["tools"] == expect["reportTools"]
        assert report["ledger"]["totals"] == expect["totals"]
        assert session.counters.rejected == 0
    finally:
        await relay.stop()


async def _until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.005)


# -- HTTP -----------------------------------------------------------------------------------------------


def http(relay: Relay, path: str, host: str | None = None, headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
    req = urllib.request.Request(f"http://127.0.0.1:{relay.port}{path}", headers=headers or {})
    if host is not None:
        req.add_header("Host", host)
    try:
        with urllib.request.urlopen(req, timeout=LIVENESS_S) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


async def test_healthz_needs_no_token_and_says_nothing_private(relay: Relay) -> None:
    status, body, _ = await asyncio.to_thread(http, relay, "/healthz")
    assert status == 200
    doc = json.loads(body)
    assert doc["ok"] is True and doc["sessions"] == 0 and set(doc) == {"ok", "version", "sessions"}
    assert TOKEN not in body.decode()


@pytest.mark.parametrize("path", ["/relay", "/anything"])
async def test_token_is_required(relay: Relay, path: str) -> None:
    assert (await asyncio.to_thread(http, relay, path))[0] == 403
    assert (await asyncio.to_thread(http, relay, path + "?t=" + "0" * 32))[0] == 403


async def test_the_agent_script_names_no_secret_and_is_cached_by_its_content_hash(relay: Relay) -> None:
    """Issue 46, item 4 and issue 47, item 1: no token in the script or its URL, gzip when asked, immutable under
    the hash the pasted lines name, revalidated (ETag) under any other URL."""
    address = f"ws://127.0.0.1:{relay.port}/relay"
    for path in ("/agent.js", "/agent.mjs"):
        status, body, headers = await asyncio.to_thread(http, relay, path)
        if status == 503:
            pytest.fail("page_agent/dist/agent.js is missing: run `node page_agent/build.mjs`")
        assert status == 200 and headers["Content-Type"].startswith("text/javascript")
        assert json.dumps(address).encode() in body and b"/*@WMCP_UPLINK@*/null" not in body and TOKEN.encode() not in body
        assert headers["Cache-Control"] == "no-cache" and headers["Vary"] == "Accept-Encoding" and "Content-Encoding" not in headers
        pinned = relay.snippet.module_url if path == "/agent.mjs" else relay.snippet.script_url
        digest = pinned.split("?v=")[1]
        assert headers["ETag"] == f'"{digest}"' and hashlib.sha256(body).hexdigest()[:8] == digest
        status, packed, headers = await asyncio.to_thread(http, relay, f"{path}?v={digest}", None, {"Accept-Encoding": "gzip, br"})
        assert status == 200 and headers["Content-Encoding"] == "gzip" and gzip.decompress(packed) == body
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
        status, _, _ = await asyncio.to_thread(http, relay, path, None, {"If-None-Match": f'"{digest}"'})
        assert status == 304
        status, plain, headers = await asyncio.to_thread(http, relay, path, None, {"Accept-Encoding": "gzip;q=0"})
        assert status == 200 and plain == body and "Content-Encoding" not in headers


async def test_the_agents_rest_is_served_beside_it_gzip_cacheable_and_token_free(relay: Relay) -> None:
    """Issue 47, item 1: /agent.js is the eager part, which asks for /agent-rest.js?v=HASH (the hash baked in by the
    build); the rest is served as built (no address, no token), gzip when asked, immutable under that hash."""
    _, eager, _ = await asyncio.to_thread(http, relay, "/agent.js")
    status, body, headers = await asyncio.to_thread(http, relay, "/agent-rest.js")
    if status == 503:
        pytest.fail("page_agent/dist/agent-rest.js is missing: run `node page_agent/build.mjs`")
    digest = hashlib.sha256(body).hexdigest()[:8]
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and headers["ETag"] == f'"{digest}"'
    assert b'"agent-rest.js"' in eager and f'"{digest}"'.encode() in eager, "the eager part pins the rest it was built with"
    address = f"ws://127.0.0.1:{relay.port}/relay"
    assert TOKEN.encode() not in body and address.encode() not in body and b"/*@WMCP_UPLINK@*/" not in body
    assert len(eager) * 2 < len(body), "the eager part is the small one"
    status, packed, headers = await asyncio.to_thread(http, relay, f"/agent-rest.js?v={digest}", None, {"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip" and gzip.decompress(packed) == body
    assert headers["Cache-Control"] == "public, max-age=31536000, immutable" and headers["Access-Control-Allow-Origin"] == "*"


async def test_a_page_agent_presents_the_token_as_a_subprotocol(relay: Relay) -> None:
    """The page's agent offers `wmcp-top` and `wmcp-top.token.<token>`; the relay answers `wmcp-top` only."""
    address = f"ws://127.0.0.1:{relay.port}/relay"
    async with connect(address, subprotocols=[Subprotocol("wmcp-top"), Subprotocol(f"wmcp-top.token.{TOKEN}")]) as ws:
        assert ws.subprotocol == "wmcp-top"
        assert (await recv_json(ws))["type"] == "welcome"
        await ws.send(json.dumps(synth.hello("5b0a7e11")))
        assert (await recv_json(ws))["type"] == "ack"
    with pytest.raises(InvalidStatus) as err:
        await connect(address, subprotocols=[Subprotocol("wmcp-top"), Subprotocol("wmcp-top.token." + "0" * 32)])
    assert err.value.response.status_code == 403


def test_agent_module_imports_in_node_and_exports_the_api(tmp_path: Path) -> None:
    """/agent.mjs is derived from the one built script: import it as an ES module and use its exports."""
    body = agent_script("/agent.mjs", "ws://127.0.0.1:1/relay")
    assert body is not None, "page_agent/dist/agent.js is missing: run `node page_agent/build.mjs`"
    module = tmp_path / "agent.mjs"
    module.write_bytes(body)
    script = (
        f"const m = await import({json.dumps(module.as_uri())});"
        "const names = ['attach','maybeAttach','detach','gate','SessionStats','summaryLine','fmtBytes','traceEvents','VERSION','start'];"
        "const missing = names.filter((n) => !(n in m));"
        "process.stdout.write(JSON.stringify({missing, line: m.summaryLine(9800, 300, 310000, 78000, 39000), dflt: typeof m.default.attach}));"
    )
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=LIVENESS_S, check=True)
    got = json.loads(out.stdout)
    assert got == {"missing": [], "line": "schemas 9.8KB (~2.5K tok) · tools 300ms · payloads 310KB (~78K tok) · host gaps 39.0s", "dflt": "function"}


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "192.168.1.5:{port}", ""])
async def test_dns_rebinding_host_header_refused(relay: Relay, host: str) -> None:
    status, _, _ = await asyncio.to_thread(http, relay, "/agent.js", host.format(port=relay.port))
    assert status == 403
    with pytest.raises(InvalidStatus) as err:
        await connect(ws_url(relay), additional_headers={"Host": host.format(port=relay.port) or "x"})
    assert err.value.response.status_code == 403
    await assert_served(relay)


async def test_websocket_without_or_with_wrong_token_refused(relay: Relay) -> None:
    for url in (f"ws://127.0.0.1:{relay.port}/relay", ws_url(relay, "a" * 32), ws_url(relay, "short")):
        with pytest.raises(InvalidStatus) as err:
            await connect(url)
        assert err.value.response.status_code == 403
    assert relay.store.counters["refused:token"] == 3
    await assert_served(relay)


async def test_origin_outside_allow_list_refused(tmp_path: Path) -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN, allow_origins=("http://127.0.0.1:8000",)))
    await relay.start()
    try:
        with pytest.raises(InvalidStatus):
            await connect(ws_url(relay), origin="https://evil.example")
        ws = await connect(ws_url(relay), origin="http://127.0.0.1:8000")
        assert (await recv_json(ws))["type"] == "welcome"
        await ws.close()
        assert relay.store.counters["refused:origin"] == 1
    finally:
        await relay.stop()


# -- bad frames -----------------------------------------------------------------------------------------


async def send_bad(relay: Relay, payload: str | bytes, expect_code: str) -> None:
    ws = await open_session(relay, "0badbad0")
    try:
        await ws.send(payload)
        reply = await recv_json(ws)
        assert reply["type"] == "error" and reply["code"] == expect_code and reply["fatal"] is False
    finally:
        await ws.close()
    assert relay.store.counters[f"rejected:{expect_code}"] >= 1
    await assert_served(relay)


SPAN = synth.span("0badbad0", 0, "t", 1.0, 1.0)


@pytest.mark.parametrize(
    "payload,code",
    [
        ("{this is not json", p.Code.BAD_JSON),
        (b'{"type":"bye","session":"0badbad0","reason":"\xff\xfe"}', p.Code.BAD_UTF8),
        (json.dumps({"type": "update", "session": "0badbad0", "seq": "seven", "blockingMs": 1}), p.Code.INVALID),
        (json.dumps({"type": "warp", "session": "0badbad0"}), p.Code.UNKNOWN_TYPE),
        ('{"type":"update","session":"0badbad0","seq":1,"blockingMs":NaN}', p.Code.BAD_JSON),
        (json.dumps({"type": "update", "session": "0badbad0", "seq": 1, "blockingMs": -5}), p.Code.INVALID),
        (json.dumps(synth.spans_frame("0badbad0", [dict(SPAN, wallMs=-1)])), p.Code.INVALID),
        (json.dumps(synth.tool("0badbad0", "n" * 10_000, 1.0)), p.Code.LIMIT),
        (json.dumps(synth.spans_frame("0badbad0", [dict(SPAN, seq=i) for i in range(501)])), p.Code.TOO_MANY_SPANS),
        (json.dumps(synth.spans_frame("feedf00d", [SPAN])), p.Code.UNKNOWN_SESSION),
    ],
    ids=["malformed", "invalid-utf8", "wrong-type", "unknown-type", "nan", "negative", "negative-span", "10kb-name", "501-spans", "foreign-session"],
)
async def test_bad_frame_is_refused_counted_and_survived(relay: Relay, payload: str | bytes, code: str) -> None:
    await send_bad(relay, payload, code)


async def test_a_text_frame_of_invalid_utf8_is_refused_and_survived(relay: Relay) -> None:
    # The relay reads text frames as bytes (server._messages), so msgspec, not websockets, checks their UTF-8: a
    # page's bad text is a counted `bad_utf8`, as in a binary frame, and the socket stays.
    ws = await open_session(relay, "0badbad1")
    try:
        await ws.send(b'{"type":"bye","session":"0badbad1","reason":"\xff\xfe"}', text=True)
        reply = await recv_json(ws)
        assert (reply["type"], reply["code"], reply["fatal"]) == ("error", p.Code.BAD_UTF8, False)
        await send_spans(ws, "0badbad1", range(2))  # still served on the same socket
    finally:
        await ws.close()
    assert relay.store.counters["rejected:bad_utf8"] == 1


async def test_two_mib_frame_closes_1009_and_others_are_served(relay: Relay) -> None:
    ws = await open_session(relay, "0badbad0")
    await ws.send("x" * (2 << 20))
    with pytest.raises(ConnectionClosed) as err:
        await asyncio.wait_for(ws.recv(), LIVENESS_S)
    assert err.value.rcvd is not None and err.value.rcvd.code == 1009
    await asyncio.wait_for(_until(lambda: relay.store.counters["rejected:limit"] == 1), LIVENESS_S)
    await assert_served(relay)


async def test_ten_thousand_spans_in_one_frame(relay: Relay) -> None:
    """Full spans are ~400 bytes, so 10,000 of them pass 1 MiB and the socket is closed with 1009; the decoder
    alone refuses the same frame with too_many_spans (test_protocol). Either way nothing is stored."""
    ws = await open_session(relay, "0badbad0")
    await ws.send(json.dumps(synth.spans_frame("0badbad0", [dict(SPAN, seq=i) for i in range(10_000)])))
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(ws.recv(), LIVENESS_S)
    assert relay.store.sessions["0badbad0"].counters.spans == 0
    await assert_served(relay)


async def test_a_thousand_hellos_with_distinct_ids(relay: Relay) -> None:
    ws = await connect(ws_url(relay), max_size=None)
    await recv_json(ws)
    codes = []
    for i in range(1000):
        await ws.send(json.dumps(synth.hello(f"{i:08x}")))
        codes.append((await recv_json(ws)).get("code", "ack"))
    assert codes.count("ack") == p.MAX_SESSIONS_PER_CONNECTION
    assert codes.count(p.Code.SESSION_LIMIT) == 1000 - p.MAX_SESSIONS_PER_CONNECTION
    assert len(relay.store.sessions) == p.MAX_SESSIONS_PER_CONNECTION
    await assert_served(relay)
    await ws.close()


async def test_sixty_four_live_sessions_then_oldest_ended_evicted(relay: Relay) -> None:
    sockets = []
    for c in range(4):
        ws = await connect(ws_url(relay))
        await recv_json(ws)
        for i in range(16):
            await ws.send(json.dumps(synth.hello(f"{c:02x}{i:06x}")))
            assert (await recv_json(ws))["type"] == "ack"
        sockets.append(ws)
    assert len(relay.store.live_sessions()) == 64
    ws5 = await connect(ws_url(relay))
    await recv_json(ws5)
    await ws5.send(json.dumps(synth.hello("abcdef01")))
    assert (await recv_json(ws5))["code"] == p.Code.SESSION_LIMIT
    await ws5.send(json.dumps({"type": "bye", "session": "abcdef01"}))  # not its session: refused, counted
    assert (await recv_json(ws5))["code"] == p.Code.UNKNOWN_SESSION
    await sockets[0].close()
    await asyncio.wait_for(_until(lambda: len(relay.store.live_sessions()) == 48), LIVENESS_S)
    await ws5.send(json.dumps(synth.hello("abcdef01")))
    assert (await recv_json(ws5))["type"] == "ack"
    assert "00000000" not in relay.store.sessions  # the oldest ended session made room
    assert relay.store.counters["evicted"] == 1
    for ws in [*sockets[1:], ws5]:
        await ws.close()


async def test_repeated_invalid_frames_close_1008(relay: Relay) -> None:
    ws = await open_session(relay, "0badbad0")
    with pytest.raises(ConnectionClosed) as err:
        for _ in range(100):
            await ws.send("garbage")
            await recv_json(ws)
    assert err.value.rcvd is not None and err.value.rcvd.code == 1008
    await assert_served(relay)


async def test_rate_cap_refuses_without_losing_what_was_acked(tmp_path: Path) -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN, rate_per_second=1.0, rate_burst=5.0))
    await relay.start()
    try:
        ws = await open_session(relay, "0a0a0a0a")  # hello took one token
        for seq in range(8):
            await ws.send(json.dumps(synth.spans_frame("0a0a0a0a", [synth.span("0a0a0a0a", seq, "t", seq, 1.0)])))
        # Refused frames are counted; one error a moment says so (not one per frame).
        await asyncio.wait_for(_until(lambda: relay.store.counters["frames"] + relay.store.counters["rejected:rate_limited"] == 9), LIVENESS_S)
        codes = [(await recv_json(ws)).get("code", "ack") for _ in range(5)]
        assert codes[:4] == ["ack"] * 4 and codes[4] == p.Code.RATE_LIMITED
        session = relay.store.sessions["0a0a0a0a"]
        assert session.acked == 3  # what was refused was not acked, so an agent re-sends it
        assert relay.store.counters["rejected:rate_limited"] >= 1
    finally:
        await relay.stop()


async def test_relay_errors_never_echo_page_text(relay: Relay) -> None:
    ws = await open_session(relay, "0badbad0")
    await ws.send(json.dumps(dict(synth.status("0badbad0", "measuring"), phase="\x1b]0;pwned\x07")))
    reply = await recv_json(ws)
    assert reply["type"] == "error" and "pwned" not in reply["message"]
    await ws.close()


# -- delivery -------------------------------------------------------------------------------------------


async def test_drop_mid_batch_reconnect_and_resend_from_last_ack(relay: Relay) -> None:
    sid = "d0d0d0d0"
    ws = await open_session(relay, sid)
    ack = await send_spans(ws, sid, range(50))
    assert ack["seq"] == 49
    # The second batch goes out and the socket dies before the ack is read: the agent cannot know.
    await ws.send(json.dumps(synth.spans_frame(sid, [synth.span(sid, s, "t", s, 1.0) for s in range(50, 120)])))
    ws.transport.abort()
    await asyncio.wait_for(_until(lambda: relay.store.sessions[sid].state == "disconnected"), LIVENESS_S)
    # Reconnect with the same session and its resume secret: the relay says where to resume; the agent
    # re-sends from its last ack.
    ws2 = await connect(ws_url(relay))
    await recv_json(ws2)
    await ws2.send(json.dumps(synth.hello(sid, resume=relay.store.sessions[sid].resume)))
    resume = await recv_json(ws2)
    assert resume["type"] == "ack" and resume["seq"] in (49, 119)
    ack = await send_spans(ws2, sid, range(50, 150))  # the agent re-sends everything after ITS last ack (49)
    assert ack["seq"] == 149
    session = relay.store.sessions[sid]
    seqs = [s.seq for s in session.spans()]
    assert sorted(seqs) == list(range(150)) and len(seqs) == len(set(seqs))
    assert session.stats.totals.calls == 150
    assert session.counters.duplicates == (70 if resume["seq"] == 119 else 0)
    assert session.state == "live" and session.hellos == 2
    await ws2.close()


async def test_floor_moves_the_ack_past_spans_the_agent_lost(relay: Relay) -> None:
    sid = "f1007000"
    ws = await open_session(relay, sid, lost=0)
    await send_spans(ws, sid, range(5))
    # The agent evicted 5..9 before it could send them: it says so (lost) and sends from 10 with floor=10.
    spans = [synth.span(sid, s, "t", s, 1.0) for s in range(10, 13)]
    await ws.send(json.dumps(synth.spans_frame(sid, spans, floor=10, lost=5)))
    ack = await recv_json(ws)
    assert ack == {"type": "ack", "session": sid, "seq": 12}
    session = relay.store.sessions[sid]
    assert session.lost == 5 and session.coverage == "incomplete"
    assert relay.store.counters["lost"] == 5
    await ws.close()


async def test_start_shows_a_call_in_flight_until_its_span(relay: Relay) -> None:
    sid = "5a5a5a5a"
    ws = await open_session(relay, sid)
    await ws.send(json.dumps(synth.start_frame(sid, [(0, "slow", 5.0)])))
    await ws.send(json.dumps(synth.event(sid, 6.0, "toolcancel", seq=0)))
    await asyncio.wait_for(_until(lambda: 0 in relay.store.sessions[sid].inflight and relay.store.sessions[sid].inflight[0].cancelled_at), LIVENESS_S)
    await send_spans(ws, sid, [0], tool="slow")
    assert relay.store.sessions[sid].inflight == {}
    await ws.close()
