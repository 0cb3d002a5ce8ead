"""Tools that were there before the agent (a bookmarklet, a DevTools import(), a tag pasted late), in Chromium's
native host: their calls are counted from `toolactivated` and marked "counted, not measured" per tool; a tool
the agent wraps is measured by its span and not counted again."""

from __future__ import annotations

import json
import pickle

import pytest

from tests.browser.conftest import open_page, session_of, session_where

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
    page.add_script_tag(url=relay_server.http_url("/agent.js"))
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
