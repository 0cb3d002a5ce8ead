"""Tools that were there before the agent (a bookmarklet, a DevTools import(), a tag pasted late), in Chromium's
native host: their calls are counted from `toolactivated` and marked "counted, not measured" per tool; a tool
the agent wraps is measured by its span and not counted again."""

from __future__ import annotations

import json
import pickle

import pytest

from tests.browser.conftest import open_page, session_of, session_where, wait_phase

pytestmark = pytest.mark.browser

CANARY = "CANARY-counted-71b2"

CALL = """async ({ name, n }) => {
  const mc = document.modelContext
  const t = (await mc.getTools()).find((x) => x.name === name)
  const out = []
  for (let i = 0; i < n; i++) out.push(await mc.executeTool(t, { q: "CANARY-counted-71b2" }))
  return out
}"""


def test_calls_of_tools_registered_before_the_agent_are_counted_not_measured(browser, pages, relay_server) -> None:
    # native.html without an agent: tools.js registers every tool, then the agent arrives late.
    page, errors = open_page(browser, pages.url("native.html"))
    page.evaluate("window.registered")
    assert page.evaluate("typeof window.__webmcpPerf") == "undefined"
    page.evaluate(  # as the bookmarklet adds it
        "([src, token]) => new Promise((done) => { const s = document.createElement('script'); s.src = src;"
        " s.setAttribute('data-wmcp', token); s.onload = done; document.head.append(s) })",
        [f"http://127.0.0.1:{relay_server.port}/agent.js", relay_server.token],
    )
    page.wait_for_function("window.__webmcpPerf && __webmcpPerf.ledger().registeredTools.includes('obj')")
    sid = page.evaluate("__webmcpPerf.sessionId")
    texts = page.evaluate(CALL, {"name": "obj", "n": 3})
    assert len(texts) == 3 and all(CANARY in t for t in texts), "the canary went through the tool and back"
    # A tool registered after the agent loaded is wrapped: measured, never counted on top.
    page.evaluate("document.modelContext.registerTool({ name: 'after', description: 'registered after the agent', execute: () => 'ok' })")
    page.wait_for_function("__webmcpPerf.ledger().registeredTools.includes('after')")
    assert page.evaluate(CALL, {"name": "after", "n": 2}) == ["ok", "ok"]
    snap = relay_server.wait_for(session_where(sid, lambda s: s["counted"].get("obj") == 3 and len(s["spans"]) == 2))
    session = session_of(snap, sid)
    assert session["counted"]["obj"] == 3
    assert "after" not in session["counted"], "the wrapped tool's calls are spans, not counts"
    assert [s["tool"] for s in session["spans"]] == ["after", "after"]
    assert session["totals"]["calls"] == 2, "counted calls are not measured calls"
    assert all(n == 0 for name, n in session["counted"].items() if name != "obj"), "only the tool that was called"
    arrivals = [e for e in session["timeline"] if e["kind"] == "toolactivated" and e["detail"].get("tool") == "obj"]
    assert len(arrivals) == 3 and arrivals[0]["at"] <= arrivals[1]["at"] <= arrivals[2]["at"]
    assert session["coverage"] == "incomplete"
    assert any("counted, not measured (3 call(s)" in r for r in session["status"]["reasons"])
    assert "wmcp-top open URL" in session["status"]["hints"][0], "the status says how to measure them"
    assert CANARY not in json.dumps(snap, default=str), "a counted call carries no body either"
    assert CANARY.encode() not in relay_server.call(lambda: pickle.dumps(dict(relay_server.store.sessions))), "store"
    relay_server.call(lambda: relay_server.relay.session_log.flush())
    logs = [p for p in (relay_server.tmp / "logs").rglob("*") if p.is_file()]
    assert any(b'"toolactivated"' in p.read_bytes() for p in logs), "the counted calls were logged"
    assert not [p for p in logs if CANARY.encode() in p.read_bytes()], "session log"
    assert errors == []
    page.context.close()


def activation_listeners(page) -> int:
    """The `toolactivated` listeners on document.modelContext, as DevTools lists them."""
    cdp = page.context.new_cdp_session(page)
    try:
        host = cdp.send("Runtime.evaluate", {"expression": "document.modelContext"})["result"]["objectId"]
        listeners = cdp.send("DOMDebugger.getEventListeners", {"objectId": host})["listeners"]
    finally:
        cdp.detach()
    return sum(1 for listener in listeners if listener["type"] == "toolactivated")


def test_toolactivated_is_listened_to_only_while_a_call_would_be_counted(browser, pages, relay_server) -> None:
    # Chromium fires toolactivated for every call, and a listener costs each call (README, "What watching costs
    # the page"): with every tool wrapped, the agent has nothing to count and does not listen.
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    page.wait_for_function("__webmcpPerf.ledger().registeredTools.includes('obj')")
    page.wait_for_function("__webmcpPerf.status().phase === 'tools-registered'")
    assert activation_listeners(page) == 0
    assert page.evaluate(CALL, {"name": "obj", "n": 1}) and page.evaluate("__webmcpPerf.spans().length") == 1
    # A script that kept the host's own registerTool from before the agent: counted from then on.
    page.evaluate("""Object.getPrototypeOf(document.modelContext).registerTool.call(document.modelContext,
      { name: 'sneaked', description: 'past the agent', execute: () => 'ok' })""")
    page.wait_for_function("__webmcpPerf.ledger().tools.sneaked && __webmcpPerf.ledger().tools.sneaked.measured === false")
    assert activation_listeners(page) == 1
    assert page.evaluate(CALL, {"name": "sneaked", "n": 2}) == ["ok", "ok"]
    page.wait_for_function("__webmcpPerf.ledger().tools.sneaked.counted === 2")
    assert page.evaluate("__webmcpPerf.spans().length") == 1, "counted, not measured"
    assert errors == []
    page.context.close()

    # A page with form tools: listened to, since toolactivated tells a form's call from the browser's refusal.
    page, errors = open_page(browser, pages.url("forms.html", relay_server))
    wait_phase(page, "tools-registered")
    page.wait_for_function("__webmcpPerf.ledger().registeredTools.length > 0")
    assert activation_listeners(page) == 1
    assert errors == []
    page.context.close()


SCHEMA_BYTES = "Object.fromEntries(Object.entries(__webmcpPerf.ledger().tools).map(([n, t]) => [n, t.schemaBytes]))"


def test_schema_bytes_are_the_same_whichever_route_loaded_the_agent(browser, pages, relay_server) -> None:
    """Issue 49: 506 B of schema with the tag first, 685 B with it late: the host's copy (getTools()) adds an
    empty title and every annotation at false, which the page never registered."""
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    page.wait_for_function("__webmcpPerf.ledger().registeredTools.includes('echo')")
    first = page.evaluate(SCHEMA_BYTES)
    page.context.close()
    page, errors_late = open_page(browser, pages.url("native.html"))
    page.evaluate("window.registered")
    page.add_script_tag(url=relay_server.http_url("/agent.js"))
    page.wait_for_function("window.__webmcpPerf && __webmcpPerf.ledger().registeredTools.includes('echo')")
    late = page.evaluate(SCHEMA_BYTES)
    page.context.close()
    assert set(first) == set(late) and len(first) == 17
    # `annotated` registered destructiveHint, idempotentHint and openWorldHint, which Chromium drops: the late
    # route cannot see them (docs/numbers.md says so); every other tool weighs the same by both routes.
    assert {n: b for n, b in late.items() if n != "annotated"} == {n: b for n, b in first.items() if n != "annotated"}
    dropped = len(',"destructiveHint":true,"idempotentHint":false,"openWorldHint":true')
    assert first["annotated"] - late["annotated"] == dropped
    assert errors == [] and errors_late == []
