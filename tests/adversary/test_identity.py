"""Who speaks for a session (issue 31, items 1 and 4): the socket's Origin header, not the page's words, decides
its origin and lane; a frame naming another session changes nothing there; after a restart only the owner's
proof resumes an id. Each attack is what a page's script or a local process can send; each test then checks that
the legitimate page's session is whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from relay_bridge.core import identity, synth
from relay_bridge.core import protocol as p
from relay_bridge.core.connection import NOT_OWNER_CLOSE
from relay_bridge.relay import auth
from relay_bridge.relay.extension import extension_origins
from relay_bridge.relay.replay import load_store
from relay_bridge.relay.server import Relay, RelayConfig
from tests.liveness import connect
from tests.relay.conftest import TOKEN, assert_served, recv_json, send_spans, ws_url

VICTIM = "7e57ab1e"
EXT_AGENT = "wmcp-top-extension/0.1.0"
PAGE = "http://localhost:8000"
[EXT_ORIGIN] = sorted(extension_origins())


async def socket(relay: Relay, origin: str | None = None) -> ClientConnection:
    ws = await connect(ws_url(relay), max_size=None, origin=origin)
    assert (await recv_json(ws))["type"] == "welcome"
    return ws


def link(sid: str, at: float, detail: dict) -> str:
    """A `navigated-from` event of session `sid` naming the session in `detail`."""
    return json.dumps({"type": "event", "session": sid, "at": at, "kind": "navigated-from", "detail": detail})


async def hello(ws: ClientConnection, sid: str, **kw: Any) -> dict:
    await ws.send(json.dumps(synth.hello(sid, **kw)))
    return await recv_json(ws)


async def test_only_the_extensions_own_socket_is_marked_ext_and_every_origin_is_checked(relay: Relay) -> None:
    real = await socket(relay, PAGE)
    assert (await hello(real, VICTIM, origin=PAGE, title="real page"))["type"] == "ack"
    await send_spans(real, VICTIM, range(5))
    # Every route a page or another program has: a web page's socket, a file:// page ("null"), another
    # extension, a local process with no Origin header at all.
    attempts = [
        (PAGE, {"origin": "https://bank.example"}),  # another origin
        (PAGE, {"origin": PAGE, "agent": EXT_AGENT}),  # its own origin, the extension's mark
        (PAGE, {"origin": PAGE, "agent": "cdp/156"}),  # the DevTools lane's mark
        ("null", {"origin": "https://bank.example"}),
        ("chrome-extension://abcdefghijklmnopabcdefghijklmnop", {"origin": "https://bank.example"}),
        (
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
            {"origin": "chrome-extension://abcdefghijklmnopabcdefghijklmnop", "agent": EXT_AGENT},
        ),
        (None, {"origin": "https://bank.example", "agent": EXT_AGENT}),
    ]
    for n, (origin, claim) in enumerate(attempts):
        ws = await socket(relay, origin)
        sid = f"bad0{n:04x}"
        reply = await hello(ws, sid, **claim)
        assert (reply["type"], reply.get("code"), reply["session"]) == ("error", p.Code.FORBIDDEN_ORIGIN, sid), (origin, claim)
        await ws.close()
    assert not [s for s in relay.store.sessions.values() if s.id.startswith("bad0")]

    ext = await socket(relay, EXT_ORIGIN)
    assert (await hello(ext, "e0e0e0e0", origin="https://shop.example", agent=EXT_AGENT))["type"] == "ack"
    assert relay.store.sessions["e0e0e0e0"].agent == EXT_AGENT
    # A relayed session naming the extension's session as its forwarder, from a page's socket: refused.
    reply = await hello(real, "f0f0f0f0", origin=PAGE, context="relayed", via="e0e0e0e0")
    assert (reply["type"], reply.get("code")) == ("error", p.Code.FORBIDDEN_ORIGIN)

    session = relay.store.sessions[VICTIM]
    assert (session.info.origin, session.info.title, session.stats.totals.calls, session.coverage) == (PAGE, "real page", 5, "running")
    assert session.counters.rejected == 0
    ack = await send_spans(real, VICTIM, range(5, 8))
    assert ack["seq"] == 7
    await ext.close()
    await real.close()


async def test_a_socket_that_does_not_own_a_session_cannot_write_navigation_links_into_it(relay: Relay) -> None:
    victim = await socket(relay, PAGE)
    secret = (await hello(victim, VICTIM, origin=PAGE))["resume"]
    await send_spans(victim, VICTIM, range(50))
    session = relay.store.sessions[VICTIM]
    before = [(e.kind, e.detail) for e in session.timeline]

    attacker = await socket(relay, PAGE)  # same origin: the hardest case (a cross-origin link is refused anyway)
    assert (await hello(attacker, "a77ac4e1", origin=PAGE))["type"] == "ack"
    for i in range(831):
        detail = {"session": VICTIM, "seq": i, "tool": "forged"}
        if i % 2:
            detail["resume"] = "0" * 32  # a guess
        await attacker.send(link("a77ac4e1", float(i), detail))
    await send_spans(attacker, "a77ac4e1", [0])  # its ack comes after every frame above was applied
    assert [(e.kind, e.detail) for e in session.timeline] == before, "the victim's timeline is untouched"
    assert session.navigated_to is None and relay.store.counters["refused:link"] == 831

    # The victim's real next document, holding the secret from the tab's sessionStorage, links once.
    nxt = await socket(relay, PAGE)
    assert (await hello(nxt, "5ec0d0c0", origin=PAGE))["type"] == "ack"
    await nxt.send(link("5ec0d0c0", 1.0, {"session": VICTIM, "seq": 49, "tool": "search", "resume": secret}))
    await send_spans(nxt, "5ec0d0c0", [0])
    assert session.navigated_to == "5ec0d0c0"
    assert [e.kind for e in session.timeline].count("navigated-to") == 1
    [linked] = [e for e in relay.store.sessions["5ec0d0c0"].timeline if e.kind == "navigated-from"]
    assert "resume" not in linked.detail and linked.detail["session"] == VICTIM
    assert relay.session_log is not None
    relay.session_log.flush()
    logged = b"".join(f.read_bytes() for f in relay.session_log.directory.glob("session-*.jsonl"))
    assert b"navigated-from" in logged and secret.encode() not in logged, "the link's proof never reaches the log"
    # Linked once: the same proof again adds nothing.
    await nxt.send(link("5ec0d0c0", 2.0, {"session": VICTIM, "seq": 49, "tool": "search", "resume": secret}))
    await send_spans(nxt, "5ec0d0c0", [1])
    assert [e.kind for e in session.timeline].count("navigated-to") == 1
    assert session.stats.totals.calls == 50
    await assert_served(relay)
    for ws in (victim, attacker, nxt):
        await ws.close()


@pytest.fixture
def key() -> bytes:
    return bytes(range(32))


async def test_after_a_restart_only_the_owners_proof_resumes_an_id_never_a_squatter(tmp_path: Path, key: bytes) -> None:
    config = RelayConfig(port=0, token=TOKEN, log_dir=tmp_path / "logs", resume_key=key)
    first = Relay(config)
    await first.start()
    victim = await socket(first, PAGE)
    secret = (await hello(victim, VICTIM, origin=PAGE, title="Victim's inbox"))["resume"]
    await send_spans(victim, VICTIM, range(10))
    await victim.close()
    await first.stop()

    # A fresh relay (the store lost, as a killed relay's), the same key from the state directory.
    config.port = first.port
    relay = Relay(config)
    await relay.start()
    try:
        squatter = await socket(relay, PAGE)  # same origin, polling with the victim's id: first after the restart
        reply = await hello(squatter, VICTIM, origin=PAGE, title="Victim's inbox", resume="0" * 32)
        assert reply["type"] == "ack"  # the relay cannot know yet: an id it never saw
        await squatter.send(json.dumps(synth.spans_frame(VICTIM, [synth.span(VICTIM, s, "forged", s * 10.0, 98_765.0) for s in range(30)])))
        assert (await recv_json(squatter))["type"] == "ack"

        back = await socket(relay, PAGE)
        ack = await hello(back, VICTIM, origin=PAGE, title="Victim's inbox", resume=secret)
        assert (ack["type"], ack["seq"], ack["resume"]) == ("ack", -1, secret), "the owner keeps its id and its secret"
        session = relay.store.sessions[VICTIM]
        assert session.stats.totals.calls == 0 and not session.spans(), "none of the squatter's calls"
        ack = await send_spans(back, VICTIM, range(10))  # the page re-sends what it holds
        assert ack["seq"] == 9
        assert sorted(sp.tool for sp in session.spans()) == ["search"] * 10
        assert relay.store.counters["refused:squat"] == 1

        # The squatter's frames for the id are refused from now on and counted against it alone; it is closed.
        for i in range(NOT_OWNER_CLOSE + 1):
            try:
                await squatter.send(json.dumps(synth.spans_frame(VICTIM, [synth.span(VICTIM, 100 + i, "forged", 1.0, 1.0)])))
            except ConnectionClosed:
                break  # closed for frames it does not own: what the test waits for
        assert session.stats.totals.calls == 10 and session.counters.rejected == 0
        # Without the proof, an id someone holds is not taken: neither live nor after its owner left.
        for guess in (None, "0" * 32, identity.issue_secret(b"another key" * 3, VICTIM, 1)):
            other = await socket(relay, PAGE)
            reply = await hello(other, VICTIM, origin=PAGE, resume=guess)
            assert (reply["type"], reply.get("code")) == ("error", p.Code.SESSION_TAKEN)
            await other.close()
        assert relay.store.sessions[VICTIM].info.title == "Victim's inbox" and session.stats.totals.calls == 10
        await back.close()
    finally:
        await relay.stop()
    # The second relay's log replays to what it had: the owner's ten calls, none of the squatter's thirty.
    log = max((tmp_path / "logs").glob("session-*.jsonl"), key=lambda f: f.stat().st_mtime_ns)
    replayed = load_store(log).sessions[VICTIM]
    assert sorted(sp.tool for sp in replayed.spans()) == ["search"] * 10 and replayed.stats.totals.calls == 10
    assert replayed.info.title == "Victim's inbox"


def test_the_resume_key_is_kept_private_and_stable(tmp_path: Path) -> None:
    path = tmp_path / "state" / "resume.key"
    key = auth.load_key(path)
    assert auth.load_key(path) == key and len(key) == identity.KEY_BYTES
    assert path.stat().st_mode & 0o777 == 0o600
    secret = identity.issue_secret(key, VICTIM, 1_764_000_000_123)
    assert identity.verify_secret(key, VICTIM, secret) == 1_764_000_000_123
    assert identity.verify_secret(key, "00000000", secret) is None, "a secret proves one id only"
    tampered = f"{1:012x}" + secret[12:]  # an older stamp with the same mac: refused
    assert identity.verify_secret(key, VICTIM, tampered) is None
