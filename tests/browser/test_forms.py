"""Declarative (form) tools in real Chromium 156: `<form toolname tooldescription>` called by the browser's own
executeTool. For every call the browser executes the relay holds exactly one span, its resultBytes are the
UTF-8 bytes executeTool answered, and the DevTools Protocol lane (the referee) sees the same calls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Playwright

from relay_bridge.lanes import lanecheck
from relay_bridge.lanes.footprint.live import analyze_sessions
from tests.browser.conftest import BASE_ARGS, headless_path, open_page, session_where, spans_of, wait_phase
from tests.browser.referee import CdpReferee, agent_calls

pytestmark = pytest.mark.browser

LANES_ARGS = ["--enable-features=WebMCPTesting,DevToolsWebMCPSupport", "--enable-experimental-web-platform-features"]

CALL = """async ({ name, input }) => {
  const mc = document.modelContext
  const t = (await mc.getTools()).find((x) => x.name === name)
  try { return { ok: true, text: await mc.executeTool(t, input) } } catch (e) { return { ok: false, error: e.message } }
}"""

START = """({ name, input }) => {
  window.pending = (async () => {
    const mc = document.modelContext
    const t = (await mc.getTools()).find((x) => x.name === name)
    try { return { ok: true, text: await mc.executeTool(t, input) } } catch (e) { return { ok: false, error: e.message } }
  })()
}"""

# (tool, input, how the browser answers): every kind of call a real form sees.
CALLS = [
    ("book_table", {"name": "Ann ☕", "guests": 3, "area": "out", "day": "2026-02-03", "at": "19:30"}, "ok"),
    ("book_table", {"name": "Ann", "area": "terrace"}, "refused"),  # not one of the select's options
    ("book_table", {"name": "Ann", "guests": 30}, "refused"),  # above the number's max
    ("check_order", {"order": "x1"}, "validation"),  # the page answers with an array of messages
    ("check_order", {"order": "42"}, "ok"),
    ("slow_quote", {"product": "tea"}, "ok"),  # respondWith(a promise that takes 300 ms)
    ("fragile", {"x": "y"}, "cancelled"),  # the form is removed while the call runs
]


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


@pytest.fixture(scope="module")
def lanes_browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium with WebMCP in the page and over the DevTools Protocol (the referee's lane)."""
    b = playwright.chromium.launch(executable_path=headless_path(), args=BASE_ARGS + LANES_ARGS)
    yield b
    b.close()


def open_forms(browser: Browser, pages, relay_server, **params: str):
    page, errors = open_page(browser, "about:blank")
    referee = CdpReferee(page)
    page.goto(pages.url("forms.html", relay_server, **params))
    wait_phase(page, "tools-registered")
    return page, errors, referee


def test_form_tools_are_registered_with_the_hosts_schema_and_their_controls(lanes_browser, pages, relay_server) -> None:
    page, errors, _ = open_forms(lanes_browser, pages, relay_server)
    sid = page.evaluate("__webmcpPerf.sessionId")
    listed = page.evaluate(
        "async () => (await document.modelContext.getTools()).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }))"
    )
    names = {t["name"] for t in listed}
    snap = relay_server.wait_for(session_where(sid, lambda s: names <= {n for n, t in s["tools"].items() if t["registered"]}))
    tools = snap["sessions"][sid]["tools"]
    for t in listed:
        rec = tools[t["name"]]
        assert rec["kind"] == "form", t["name"]
        assert rec["descriptor"]["inputSchema"] == t["inputSchema"], "the descriptor is the host's generated schema"
        assert rec["descriptor"]["description"] == t["description"]
    book = tools["book_table"]["form"]
    assert book["autosubmit"] is True
    by_param = {f["param"]: f for f in book["fields"]}
    assert by_param["guests"]["element"] == "input[type=number][name=guests]"
    assert by_param["area"]["element"] == "select[name=area]"
    assert by_param["name"]["element"] == "input[type=text][name=name]#guest" and by_param["name"]["required"] is True
    assert all(f["described"] and f["labeled"] for f in book["fields"])
    contact = tools["contact_us"]["form"]
    assert contact["autosubmit"] is False
    assert any(f["param"] is None and f["required"] for f in contact["fields"]), "a required field without a name"
    assert any(f["param"] == "topic" and not f["labeled"] and not f["described"] for f in contact["fields"])
    # The descriptor lint covers the forms' controls (the footprint of the live store, as the Schemas view shows).
    report = relay_server.call(lambda: analyze_sessions(relay_server.store))
    found = {(f["tool"], f["code"]) for f in report["lint"]}
    assert ("contact_us", "required-without-name") in found
    assert ("contact_us", "unlabeled-input") in found and ("contact_us", "missing-param-description") in found
    assert ("check_order", "missing-param-description") in found
    assert not any(tool == "book_table" for tool, _ in found)
    # Nothing here is "registered before the agent": coverage stays honest, and no form is counted unmeasured.
    assert snap["sessions"][sid]["status"]["reasons"] == []
    assert errors == []


def test_every_form_call_is_one_span_with_the_bytes_the_browser_delivered(lanes_browser, pages, relay_server) -> None:
    page, errors, referee = open_forms(lanes_browser, pages, relay_server)
    sid = page.evaluate("__webmcpPerf.sessionId")
    got = [page.evaluate(CALL, {"name": name, "input": value}) for name, value, _ in CALLS]
    # A form added after load becomes a tool, and is measured like the others.
    page.evaluate("window.addLateForm()")
    relay_server.wait_for(session_where(sid, lambda s: "late_form" in s["tools"]))
    got.append(page.evaluate(CALL, {"name": "late_form", "input": {"w": "hello"}}))
    kinds = [k for _, _, k in CALLS] + ["ok"]
    snap = relay_server.wait_for(lambda s: len(spans_of(s, sid)) >= len(got) and not s["sessions"][sid]["inflight"])
    spans = sorted(spans_of(snap, sid), key=lambda s: s["seq"])
    assert len(spans) == len(got), "exactly one span per call the browser executed"
    for span, answer, kind, tool in zip(spans, got, kinds, [c[0] for c in CALLS] + ["late_form"]):
        assert span["tool"] == tool
        if kind in ("ok", "validation"):
            assert answer["ok"], answer
            assert span["resultBytes"] == utf8_len(answer["text"]), tool
            assert span["isError"] == (kind == "validation"), tool
        else:
            assert not answer["ok"], answer
            assert span["isError"] and span["resultBytes"] == 0, tool
    assert "validation message" in spans[3]["error"]
    assert spans[1]["error"].startswith("refused by the browser")
    # Issue 34: the two calls the browser refused before the page ran have no page time: marked on the span, kept
    # out of book_table's durations (its one real call is its min, p50 and max), counted as refused.
    assert [s["outcome"] for s in spans[:3]] == [None, "refused", "refused"]
    [book] = [r for r in snap["sessions"][sid]["aggregates"] if r["tool"] == "book_table"]
    assert book["calls"] == 3 and book["errors"] == 2 and book["refused"] == 2, book
    assert book["minMs"] == book["p50Ms"] == book["maxMs"] == spans[0]["wallMs"], book
    assert snap["sessions"][sid]["totals"]["refused"] == 2
    assert "removed" in spans[6]["error"] and "cancelled" in got[6]["error"]
    assert spans[5]["wallMs"] >= 295, "the 300 ms promise given to respondWith is tool time"
    assert spans[0]["inputBytes"] > 0
    totals = snap["sessions"][sid]["totals"]
    assert totals["calls"] == len(got)
    # The referee: the DevTools lane saw the same calls with the same outcomes and bytes.
    assert len(referee.calls()) == len(got) and referee.inflight() == 0
    assert lanecheck.compare(agent_calls(snap, [sid]), referee.calls()) == []
    assert errors == []


def test_a_form_without_autosubmit_waits_for_the_user_and_the_wait_is_not_tool_time(lanes_browser, pages, relay_server) -> None:
    page, errors, referee = open_forms(lanes_browser, pages, relay_server)
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate(START, {"name": "confirm_booking", "input": {"code": "C-1"}})
    snap = relay_server.wait_for(session_where(sid, lambda s: any(c["waiting"] for c in s["inflight"].values())))
    assert spans_of(snap, sid) == []
    assert any(e["kind"] == "waiting" for e in snap["sessions"][sid]["timeline"]), snap["sessions"][sid]["timeline"]
    waited_from = page.evaluate("performance.now()")
    page.wait_for_function("(t) => performance.now() - t > 150", arg=waited_from)
    page.click("#send")  # the user presses Send
    answer = page.evaluate("window.pending")
    assert answer == {"ok": True, "text": "confirmed C-1"}
    # The span and the `submitted` event travel in frames of their own: both are waited for.
    snap = relay_server.wait_for(lambda s: len(spans_of(s, sid)) == 1 and any(e["kind"] == "submitted" for e in s["sessions"][sid]["timeline"]))
    span = spans_of(snap, sid)[0]
    assert span["waitedMs"] >= 150
    assert span["wallMs"] < span["waitedMs"], "the wait is kept apart from tool time"
    assert span["resultBytes"] == utf8_len(answer["text"])
    assert lanecheck.compare(agent_calls(snap, [sid]), referee.calls()) == []
    assert errors == []


# The page's WebSocket opens only when the test says: a call made before that is first said by the replay after
# hello, not by a flush (on a loaded machine the socket is often still opening when the first call comes).
HELD_SOCKET = """(() => {
  const Real = window.WebSocket
  window.WebSocket = function (url, protocols) {
    let ws = null
    const held = {
      get readyState() { return ws ? ws.readyState : 0 },
      get bufferedAmount() { return ws ? ws.bufferedAmount : 0 },
      send() { throw new Error("not open") },
      close() {},
    }
    window.__openRelay = () => {
      ws = new Real(url, protocols)
      for (const on of ["onopen", "onmessage", "onclose", "onerror"]) ws[on] = (e) => held[on] && held[on](e)
      held.send = (d) => ws.send(d)
      held.close = (...a) => ws.close(...a)
    }
    return held
  }
})()"""


def test_a_form_call_that_waits_before_the_socket_opens_still_says_its_submit(lanes_browser, pages, relay_server) -> None:
    page, errors = open_page(lanes_browser, "about:blank", init_script=HELD_SOCKET)
    page.goto(pages.url("forms.html", relay_server))
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate(START, {"name": "confirm_booking", "input": {"code": "C-2"}})
    page.wait_for_function("() => document.querySelector('#confirm [name=code]').value === 'C-2'")
    page.evaluate("__openRelay()")
    relay_server.wait_for(session_where(sid, lambda s: any(c["waiting"] for c in s["inflight"].values())))
    page.click("#send")
    assert page.evaluate("window.pending") == {"ok": True, "text": "confirmed C-2"}
    snap = relay_server.wait_for(lambda s: len(spans_of(s, sid)) == 1 and any(e["kind"] == "submitted" for e in s["sessions"][sid]["timeline"]))
    kinds = [e["kind"] for e in snap["sessions"][sid]["timeline"]]
    assert [k for k in kinds if k in ("waiting", "submitted", "settle")] == ["waiting", "submitted", "settle"]
    assert errors == []


def test_a_form_that_navigates_is_recorded_and_the_next_document_is_linked(lanes_browser, pages, relay_server) -> None:
    page, errors, referee = open_forms(lanes_browser, pages, relay_server)
    sid = page.evaluate("__webmcpPerf.sessionId")
    # The link's proof is the secret the relay's first ack gives this document: a form sent before that ack (a
    # loaded machine) cannot prove it, and the relay rightly refuses the link.
    page.wait_for_function("__webmcpPerf.relay().acks > 0")
    page.evaluate(START, {"name": "search_site", "input": {"q": "green tea"}})
    page.wait_for_url("**/result.html?*")
    page.wait_for_function("window.__webmcpPerf && window.__webmcpPerf.sessionId")
    sid2 = page.evaluate("__webmcpPerf.sessionId")
    assert sid2 != sid
    snap = relay_server.wait_for(lambda s: spans_of(s, sid) and sid2 in s["sessions"] and s["sessions"][sid2]["navigated_from"] == sid)
    span = spans_of(snap, sid)[0]
    assert span["tool"] == "search_site" and span["outcome"] == "navigated" and not span["isError"]
    assert snap["sessions"][sid]["navigated_to"] == sid2
    linked = [e for e in snap["sessions"][sid]["timeline"] if e["kind"] == "navigated-to"]
    assert linked and linked[0]["detail"]["session"] == sid2 and linked[0]["detail"]["seq"] == span["seq"]
    assert any(e["kind"] == "navigated-from" and e["detail"]["session"] == sid for e in snap["sessions"][sid2]["timeline"])
    assert [c.outcome for c in referee.calls()] == ["navigated"]
    assert lanecheck.compare(agent_calls(snap, [sid, sid2]), referee.calls()) == []
    assert errors == []


POLYFILL_CALL = """async ({ name, input }) => {
  const mc = document.modelContext
  const t = (await mc.getTools()).find((x) => x.name === name)
  // The polyfill's executeTool takes the input as JSON text.
  try { return { ok: true, text: await mc.executeTool(t, JSON.stringify(input)) } } catch (e) { return { ok: false, error: e.message } }
}"""


def test_form_tools_of_the_polyfill_are_measured_once(plain_browser, pages, relay_server, polyfill_file) -> None:
    # @mcp-b/webmcp-polyfill 5.1 supports declarative forms: it registers each through its own registerTool,
    # so the interceptor's wrapper measures them; forms.js only adds what they are (kind, controls).
    page, errors = open_page(plain_browser, pages.url("forms.html", relay_server, host="polyfill"))
    assert page.evaluate("document.modelContext.__isWebMCPPolyfill") is True
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    calls = [c for c in CALLS if c[0] != "fragile"]
    got = [page.evaluate(POLYFILL_CALL, {"name": name, "input": value}) for name, value, _ in calls]
    snap = relay_server.wait_for(lambda s: len(spans_of(s, sid)) >= len(got) and not s["sessions"][sid]["inflight"])
    spans = sorted(spans_of(snap, sid), key=lambda s: s["seq"])
    assert [s["tool"] for s in spans] == [c[0] for c in calls], "exactly one span per call"
    for span, answer, (tool, _, kind) in zip(spans, got, calls):
        assert answer["ok"] == (kind in ("ok", "validation")), (tool, answer)
        if answer["ok"]:
            assert span["resultBytes"] == utf8_len(answer["text"]), tool
        assert span["isError"] == (kind != "ok"), tool
    assert spans[5]["wallMs"] >= 295
    tools = snap["sessions"][sid]["tools"]
    assert tools["book_table"]["kind"] == "form" and tools["book_table"]["form"]["autosubmit"] is True
    assert errors == []
