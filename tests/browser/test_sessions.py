"""Sessions: a hidden second tab and an iframe are sessions of their own; the relay dies and comes back
mid-run and every span the agent still held is stored once, with `lost` exact."""

from __future__ import annotations

import pytest

from tests.browser.conftest import RUN_ALL, has_spans, session_of, spans_of, wait_phase

pytestmark = pytest.mark.browser

# Headless Chromium reports every page visible (Playwright issue #2286: all pages act as foreground tabs),
# so the second tab is made hidden the way a background tab looks to the page.
HIDE = """
Object.defineProperty(Document.prototype, "visibilityState", { get: () => "hidden", configurable: true })
Object.defineProperty(Document.prototype, "hidden", { get: () => true, configurable: true })
"""


def test_hidden_tab_and_iframe_are_their_own_sessions(browser, pages, relay_server) -> None:
    context = browser.new_context()
    errors: list[str] = []
    visible = context.new_page()
    visible.on("pageerror", lambda e: errors.append(str(e)))
    visible.goto(pages.url("native.html", relay_server))
    hidden = context.new_page()
    hidden.on("pageerror", lambda e: errors.append(str(e)))
    hidden.add_init_script(HIDE)
    hidden.goto(pages.url("native.html", relay_server, config={"relay": True}))  # asks for the channel's reader
    parent = context.new_page()
    parent.on("pageerror", lambda e: errors.append(str(e)))
    parent.goto(pages.url("frame.html", relay_server))
    frame = parent.locator("#child").element_handle().content_frame()
    assert frame is not None
    frame.wait_for_function("window.__webmcpPerf && window.registered")
    for p in (visible, hidden):
        p.evaluate("window.registered")
    frame.evaluate("window.registered")
    ids = {
        "visible": visible.evaluate("__webmcpPerf.sessionId"),
        "hidden": hidden.evaluate("__webmcpPerf.sessionId"),
        "iframe": frame.evaluate("__webmcpPerf.sessionId"),
    }
    assert len(set(ids.values())) == 3
    assert parent.evaluate("typeof window.__webmcpPerf") == "undefined", "the parent page has no agent"
    calls = {"visible": ["obj"], "hidden": ["obj", "str"], "iframe": ["obj", "str", "empty"]}
    visible.evaluate(RUN_ALL, {"names": calls["visible"], "input": {}, "stringInput": False})
    hidden.evaluate(RUN_ALL, {"names": calls["hidden"], "input": {}, "stringInput": False})
    frame.evaluate(RUN_ALL, {"names": calls["iframe"], "input": {}, "stringInput": False})
    snap = relay_server.wait_for(lambda s: all(len(spans_of(s, ids[k])) == len(calls[k]) for k in ids))
    info = {k: session_of(snap, sid)["info"] for k, sid in ids.items()}
    assert info["visible"]["context"] == "top" and info["visible"]["visibility"] == "visible"
    assert info["hidden"]["context"] == "top" and info["hidden"]["visibility"] == "hidden"
    assert info["iframe"]["context"] == "iframe"
    for k, sid in ids.items():
        assert [s["tool"] for s in spans_of(snap, sid)] == calls[k], k
        assert all(s["sessionId"] == sid for s in spans_of(snap, sid))
    # Each tab has its own uplink, so none is also forwarded through another tab's channel as "relayed".
    assert sorted(snap["sessions"]) == sorted(ids.values())
    assert all(session_of(snap, sid)["hellos"] == 1 for sid in ids.values())
    # ... although the hidden tab's spans (relay: true) were heard on the channel; the others post none per span.
    assert visible.evaluate("__webmcpPerf.channel().direct") >= len(calls["hidden"])
    assert hidden.evaluate("__webmcpPerf.channel().direct") == 0, "the script tag's agents posted no span"

    # A same-origin tab whose agent has no relay address (loaded raw, switched on with ?perf=1) is forwarded
    # by a tab that has one, as a "relayed" session.
    raw = context.new_page()
    raw.on("pageerror", lambda e: errors.append(str(e)))
    raw.goto(pages.url("native.html", perf="1", agent="/_agent_raw.js"))
    raw.evaluate("window.registered")
    assert raw.evaluate("__webmcpPerf.relay()") is None
    raw_id = raw.evaluate("__webmcpPerf.sessionId")
    raw.evaluate(RUN_ALL, {"names": ["obj", "str"], "input": {}, "stringInput": False})
    snap = relay_server.wait_for(lambda s: len(spans_of(s, raw_id)) == 2)
    relayed = session_of(snap, raw_id)
    assert relayed["info"]["context"] == "relayed"
    # Every agent with an uplink forwards it (no election a fake announcement could stop): the relay keeps the
    # first forwarder's copy, once, and shadows the others.
    assert relayed["info"]["via"] in ids.values()
    assert relayed["hellos"] == 1 and relayed["counters"]["duplicates"] == 0
    assert [s["tool"] for s in relayed["spans"]] == ["obj", "str"]
    assert errors == []
    context.close()


@pytest.mark.parametrize("fresh", [False, True], ids=["store-kept", "store-lost"])
def test_relay_killed_and_restarted_mid_run(browser, pages, relay_on_each_cadence, fresh: bool) -> None:
    relay_server = relay_on_each_cadence
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(pages.url("native.html", relay_server, config={"buffer": 20}))
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    run = lambda n: page.evaluate("async (n) => { for (let i = 0; i < n; i++) await __runTool('obj') }", n)  # noqa: E731
    page.evaluate("""() => { window.__runTool = async (name) => {
      const t = (await document.modelContext.getTools()).find((x) => x.name === name)
      return document.modelContext.executeTool(t, {})
    } }""")
    run(10)  # seq 0..9
    relay_server.wait_for(has_spans(sid, 10))
    page.wait_for_function("(sid) => __webmcpPerf.relay().acked[sid] === 9", arg=sid)

    relay_server.stop()
    page.wait_for_function("__webmcpPerf.relay().state !== 'open'")
    run(30)  # seq 10..39 while the relay is gone; the 20-span ring keeps 20..39
    assert [s["seq"] for s in page.evaluate("__webmcpPerf.spans()")] == list(range(20, 40))
    # 0..9 were acked before they left the ring; 10..19 left it without ever reaching a relay.
    assert page.evaluate("(sid) => __webmcpPerf.relay().lost[sid]", sid) == 10

    relay_server.restart(fresh=fresh)
    snap = relay_server.wait_for(lambda s: session_of(s, sid) is not None and len(spans_of(s, sid)) == (20 if fresh else 30))
    session = session_of(snap, sid)
    seqs = [s["seq"] for s in session["spans"]]
    assert seqs == (list(range(20, 40)) if fresh else list(range(10)) + list(range(20, 40)))
    assert len(set(seqs)) == len(seqs), "each (session, seq) stored once"
    assert session["lost"] == 10
    assert session["coverage"] == "incomplete"
    # The agent keeps going after the reconnect.
    run(1)
    snap = relay_server.wait_for(lambda s: 40 in {x["seq"] for x in spans_of(s, sid)})
    assert session_of(snap, sid)["lost"] == 10
    assert page.evaluate("__webmcpPerf.status().coverage") == "incomplete"
    assert errors == []
    context.close()
