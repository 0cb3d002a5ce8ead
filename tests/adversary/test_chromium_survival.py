"""A real agent in Chromium keeps its session through a 64-session flood, a hijack attempt and a relay
restart, and every span reaches the relay exactly once (issue 11, Checks)."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest
from websockets.sync.client import ClientConnection, connect

from relay_bridge.core import synth
from tests.browser.conftest import browser, pages, playwright, session_of, spans_of, wait_phase  # noqa: F401
from tests.liveness import LIVENESS_S

pytestmark = pytest.mark.browser

RUN = """async (n) => {
  const t = (await document.modelContext.getTools()).find((x) => x.name === 'obj')
  for (let i = 0; i < n; i++) await document.modelContext.executeTool(t, {})
}"""


def flood(url: str, stack: ExitStack, sockets: int = 4) -> list[ClientConnection]:
    """64 live sessions from sockets holding the token: every seat the relay has."""
    out = []
    for c in range(sockets):
        ws = stack.enter_context(connect(url))
        ws.recv()
        for i in range(16):
            ws.send(json.dumps(synth.hello(f"f1{c:02x}{i:04x}")))
            assert json.loads(ws.recv())["type"] == "ack"
        out.append(ws)
    return out


def seqs_at_relay(snap: dict, sid: str) -> list[int]:
    return sorted(s["seq"] for s in spans_of(snap, sid))


def test_an_agent_survives_a_flood_a_hijack_and_a_restart_with_every_span_once(browser, pages, relay_server) -> None:
    stack = ExitStack()
    flooders = flood(relay_server.ws_url, stack)
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(pages.url("native.html", relay_server, config={"buffer": 200}))
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")

    # 1. Every seat taken: the agent is refused, measures on, and keeps asking.
    relay_server.wait_for(lambda s: s["counters"].get("rejected:session_limit", 0) >= 1)
    page.evaluate(RUN, 5)  # seq 0..4, held in the page
    assert session_of(relay_server.snapshot(), sid) is None
    flooders.pop().close()  # 16 seats free up (disconnected sessions are evicted for a live one)
    snap = relay_server.wait_for(lambda s: seqs_at_relay(s, sid) == list(range(5)))

    # 2. A hijack attempt from another socket holding the token: refused, and nothing of the session moves.
    with connect(relay_server.ws_url) as thief:
        thief.recv()
        thief.send(json.dumps(synth.hello(sid, title="hijacked")))
        assert json.loads(thief.recv())["code"] == "session_taken"
        for frame in (
            synth.event(sid, 1.0, "reset"),
            synth.spans_frame(sid, [synth.span(sid, 5, "forged", 1.0, 1.0)], floor=10**13 - 1),
            {"type": "bye", "session": sid, "reason": "forged"},
        ):
            thief.send(json.dumps(frame))
            reply = json.loads(thief.recv())
            assert (reply["code"], reply["session"]) == ("unknown_session", sid)
    page.evaluate(RUN, 5)  # seq 5..9
    snap = relay_server.wait_for(lambda s: seqs_at_relay(s, sid) == list(range(10)))
    session = session_of(snap, sid)
    assert session["state"] == "live" and session["info"]["title"] != "hijacked"
    assert session["counters"]["rejected"] == 0 and session["coverage"] == "running"
    assert "forged" not in {s["tool"] for s in session["spans"]}

    # 3. The relay dies and comes back empty: the agent says hello again and re-sends what it holds, once.
    for ws in flooders:
        ws.close()
    relay_server.restart(fresh=True)
    page.evaluate(RUN, 5)  # seq 10..14
    snap = relay_server.wait_for(lambda s: seqs_at_relay(s, sid) == list(range(15)))
    session = session_of(snap, sid)
    assert [s["seq"] for s in session["spans"]] == sorted({s["seq"] for s in session["spans"]}), "each span once"
    assert session["counters"]["duplicates"] == 0 and session["lost"] == 0
    page.wait_for_function("(sid) => __webmcpPerf.relay().acked[sid] === 14", arg=sid)
    assert errors == []
    context.close()
    stack.close()


# The agent's first session id is drawn from crypto.getRandomValues (4 bytes): this makes the first draw the
# squatter's id, as a collision or a page that copied it would.
TAKEN = "5badf00d"
FIRST_ID = """() => {
  const real = crypto.getRandomValues.bind(crypto)
  let first = true
  crypto.getRandomValues = (a) => {
    if (first && a instanceof Uint8Array && a.length === 4) {
      first = false
      a.set([0x5b, 0xad, 0xf0, 0x0d])
      return a
    }
    return real(a)
  }
}"""


def test_a_page_whose_id_another_socket_holds_goes_on_under_a_new_one(browser, pages, relay_server) -> None:
    with connect(relay_server.ws_url) as squatter:
        squatter.recv()
        squatter.send(json.dumps(synth.hello(TAKEN, title="held by another socket")))
        assert json.loads(squatter.recv())["type"] == "ack"
        squatter.send(json.dumps(synth.spans_frame(TAKEN, [synth.span(TAKEN, i, "theirs", 1.0 + i, 1.0) for i in range(3)])))
        assert json.loads(squatter.recv())["type"] == "ack"
        context = browser.new_context()
        context.add_init_script(script=f"({FIRST_ID})()")
        page = context.new_page()
        warnings: list[str] = []
        page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
        page.goto(pages.url("native.html", relay_server))
        page.evaluate("window.registered")
        page.evaluate(RUN, 5)  # measured under whatever id it holds; held until the relay takes them
        page.wait_for_function("(taken) => __webmcpPerf.sessionId !== taken", arg=TAKEN, timeout=LIVENESS_S * 1000)
        sid = page.evaluate("__webmcpPerf.sessionId")
        snap = relay_server.wait_for(lambda s: seqs_at_relay(s, sid) == list(range(5)))
        mine = session_of(snap, sid)
        assert mine["state"] == "live" and mine["info"]["title"] == page.title() and mine["lost"] == 0
        assert {s["sessionId"] for s in mine["spans"]} == {sid}
        theirs = session_of(snap, TAKEN)
        assert theirs["info"]["title"] == "held by another socket"
        assert [(s["seq"], s["tool"]) for s in theirs["spans"]] == [(0, "theirs"), (1, "theirs"), (2, "theirs")], "nothing of the page's"
        assert page.evaluate("__webmcpPerf.relay().renamed") == 1
        assert any(TAKEN in w and sid in w for w in warnings), warnings
        context.close()
