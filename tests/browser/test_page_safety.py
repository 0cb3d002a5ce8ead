"""What the agent must never do to a page: leak a body (the canary), or leave anything behind after
detach(); and tools registered before it loaded are measured once instrument() retrofits them."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import RUN_ALL, has_spans, open_page, session_of, session_where, spans_of

pytestmark = pytest.mark.browser

CANARY = "CANARY-e2e-5b1d7a"
NAMES = ["obj", "str", "empty", "env", "strenv", "img", "flagged", "thrower", "rejecter", "cyclic", "slow", "echo"]


def test_canary_appears_nowhere(browser, pages, relay_server, tmp_path) -> None:
    context = browser.new_context()
    errors: list[str] = []
    listener = context.new_page()
    listener.goto(pages.url("listener.html"))
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    # relay: true asks for the channel's reader (the script tag posts no span otherwise): both ways out are watched.
    page.goto(pages.url("native.html", relay_server, config={"relay": True}, canary=CANARY))
    page.evaluate("window.registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    got = page.evaluate(RUN_ALL, {"names": NAMES, "input": {"q": CANARY}, "stringInput": False})
    # The canary really went through the tools and came back to the browser's agent.
    assert CANARY in got["str"]["text"] and CANARY in got["echo"]["text"] and CANARY in got["env"]["text"]
    page.evaluate("__webmcpPerf.reset(); __webmcpPerf.registerReportTool()")
    snap = relay_server.wait_for(session_where(sid, lambda x: any(e["kind"] == "reset" for e in x["timeline"])))
    listener.wait_for_function('(n) => window.__channelLog.filter((m) => m.includes(\'"kind":"span"\')).length >= n', arg=len(NAMES))

    socket = page.evaluate("window.__socketLog")
    channel = listener.evaluate("window.__channelLog")
    assert any('"type":"spans"' in f for f in socket), "the socket was observed"
    assert len(channel) >= len(NAMES), "the channel was observed"
    places = {
        "socket": "\n".join(socket),
        "channel": "\n".join(channel),
        "report()": json.dumps(page.evaluate("__webmcpPerf.report()")),
        "summary()": page.evaluate("__webmcpPerf.summary()"),
        "ledger()": json.dumps(page.evaluate("__webmcpPerf.ledger()")),
        "spans()": json.dumps(page.evaluate("__webmcpPerf.spans()")),
        "spanFacts()": json.dumps(page.evaluate("__webmcpPerf.spanFacts()")),
        "status()": json.dumps(page.evaluate("__webmcpPerf.status()")),
        "exportTrace()": json.dumps(page.evaluate("__webmcpPerf.exportTrace()")),
        "relay store": json.dumps(snap, default=str),
    }
    for where, text in places.items():
        assert CANARY not in text, f"the canary leaked into {where}"
    assert errors == []
    context.close()


def test_instrument_retrofits_tools_registered_before_the_agent(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("early.html", relay_server))
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.wait_for_function("__webmcpPerf.status().coverage === 'incomplete'")
    status = page.evaluate("__webmcpPerf.status()")
    assert status["phase"] == "host-found" or status["phase"] == "tools-registered"
    assert "registered before the agent loaded" in " ".join(status["reasons"])
    snap = relay_server.wait_for(lambda s: session_of(s, sid) and len(session_of(s, sid)["tools"]) == 17)
    assert session_of(snap, sid)["coverage"] == "incomplete"

    assert page.evaluate("__webmcpPerf.instrument(window.__myTools)") == 17
    assert page.evaluate("__webmcpPerf.instrument(window.__myTools)") == 0
    assert page.evaluate("__webmcpPerf.status().coverage") == "none-observed"
    # The page's own references (and the console) now call the measured function.
    out = page.evaluate("async () => [await __myTools.obj.execute({ q: 'x' }), await __myTools.str.execute({})]")
    assert out[0]["items"] == [1, 2, 3]
    snap = relay_server.wait_for(has_spans(sid, 2))
    assert [s["tool"] for s in spans_of(snap, sid)] == ["obj", "str"]
    # Chromium captured the original execute at registration: its own calls stay unmeasured (documented).
    page.evaluate(RUN_ALL, {"names": ["obj"], "input": {}, "stringInput": False})
    page.evaluate("__myTools.empty.execute({})")
    snap = relay_server.wait_for(has_spans(sid, 3))
    assert [s["tool"] for s in spans_of(snap, sid)] == ["obj", "str", "empty"]
    assert errors == []


def test_detach_leaves_the_page_as_it_was(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("early.html", relay_server))
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate("__webmcpPerf.instrument(window.__myTools)")
    page.evaluate("""async () => {
      window.__late = { name: "late", description: "registered while attached", execute: () => "late!" }
      window.__lateOriginal = window.__late.execute
      await document.modelContext.registerTool(window.__late)
    }""")
    assert page.evaluate("window.__late.execute !== window.__lateOriginal"), "wrapped while attached"
    assert page.evaluate("Object.getOwnPropertyNames(document.modelContext).includes('registerTool')")
    relay_server.wait_for(lambda s: session_of(s, sid) and "late" in session_of(s, sid)["tools"])

    assert page.evaluate("__webmcpPerf.detach()") is True
    state = page.evaluate("""() => ({
      executes: Object.entries(__myTools).every(([k, t]) => t.execute === __originals[k]),
      late: window.__late.execute === window.__lateOriginal,
      registerTool: document.modelContext.registerTool === window.__registerToolBefore,
      ownKeys: JSON.stringify(Object.getOwnPropertyNames(document.modelContext)) === JSON.stringify(window.__ownKeysBefore),
      global: "__webmcpPerf" in window,
    })""")
    assert state == {"executes": True, "late": True, "registerTool": True, "ownKeys": True, "global": False}
    snap = relay_server.wait_for(session_where(sid, lambda x: x["state"] != "live"))
    assert session_of(snap, sid)["phase"] in ("detached", "disconnected")
    before = len(spans_of(snap, sid))
    # The host still holds the wrapper it was given: it now passes straight through, unmeasured.
    out = page.evaluate(RUN_ALL, {"names": ["late", "obj"], "input": {}, "stringInput": False})
    assert out["late"] == {"ok": True, "text": "late!"}
    page.evaluate("__myTools.obj.execute({})")
    assert len(spans_of(relay_server.snapshot(), sid)) == before
    assert errors == []
