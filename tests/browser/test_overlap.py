"""Calls that overlap and settle out of seq order, and tools that call tools, in real Chromium: its native
WebMCP host and the @mcp-b/webmcp-polyfill. Every call the page makes ends as exactly one span in the relay
(the slow ones too), `totals.calls` agrees, coverage does not claim more than it saw, an inner executeTool is
the child of the tool that made it, and a relay restart while calls are in flight loses nothing."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import open_page, session_of, session_where, wait_phase

pytestmark = pytest.mark.browser

# Calls the way a page's own code (or an in-page agent) does: through the host's executeTool. The polyfill
# takes the input as JSON text, Chromium the object.
TOOLS = """() => {
  const mc = document.modelContext
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
  window.__call = async (name, input = {}) => {
    const t = (await mc.getTools()).find((x) => x.name === name)
    return mc.executeTool(t, mc.__isWebMCPPolyfill ? JSON.stringify(input) : input)
  }
  window.__gates = {}
  window.__open = (k) => window.__gates[k]()
  const defs = [
    ["p_slow", async () => { await sleep(400); return { took: "slow" } }],
    ["p_fast", async () => { await sleep(20); return "fast" }],
    ["p_inner", async () => { await sleep(50); return "inner" }],
    ["p_outer", async () => { await sleep(30); const r = await window.__call("p_inner"); return "outer:" + r }],
    ["p_direct", () => window.__call("p_inner")],
    ["p_gated", async (input) => { await new Promise((r) => (window.__gates[input.k] = r)); return "gated " + input.k }],
  ]
  // p_ names: the fixture pages' own tools (tools.js) already use "slow".
  return Promise.all(defs.map(([name, execute]) =>
    mc.registerTool({ name, description: name + " tool", inputSchema: { type: "object", properties: { k: { type: "string" } } }, execute })))
}"""


def host_page(
    host: str, browser: Browser, plain_browser: Browser, pages: Any, relay_server: Any, config: dict[str, Any] | None = None
) -> tuple[Page, list[str], str]:
    page_name, b = ("native.html", browser) if host == "native" else ("polyfill.html", plain_browser)
    page, errors = open_page(b, pages.url(page_name, relay_server, config=config))
    page.evaluate("window.registered")
    page.evaluate(TOOLS)
    wait_phase(page, "tools-registered")
    return page, errors, page.evaluate("__webmcpPerf.sessionId")


def settled(sid: str, n: int):
    """n spans stored and nothing left in flight."""
    return session_where(sid, lambda s: len(s["spans"]) >= n and not s["inflight"])


@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_parallel_calls_settling_out_of_order_all_reach_the_relay(host, browser, plain_browser, pages, relay_server) -> None:
    page, errors, sid = host_page(host, browser, plain_browser, pages, relay_server)
    texts = page.evaluate("""async () => {
      const out = []
      for (let i = 0; i < 5; i++) out.push(await Promise.all([__call("p_slow"), __call("p_fast")]))
      return out
    }""")
    assert texts == [['{"took":"slow"}', "fast"]] * 5
    snap = relay_server.wait_for(settled(sid, 10))
    session = session_of(snap, sid)
    seqs = sorted(s["seq"] for s in session["spans"])
    assert seqs == list(range(10)), "every call is one span, the slow ones too"
    assert [s["tool"] for s in session["spans"]].count("p_slow") == 5
    assert session["totals"]["calls"] == 10
    assert {a["tool"]: a["calls"] for a in session["aggregates"] if a["calls"]} == {"p_slow": 5, "p_fast": 5}
    assert session["lost"] == 0 and session["counters"]["duplicates"] == 0
    assert session["acked"] == 9
    assert session["coverage"] == "running", "nothing is missing, so coverage does not say otherwise"
    slow_bytes = {s["resultBytes"] for s in session["spans"] if s["tool"] == "p_slow"}
    assert slow_bytes == {len('{"took":"slow"}')}
    for s in session["spans"]:
        assert (s["depth"], s["parent"]) == (0, None), "parallel calls from page code are not nested"
    page.wait_for_function("(sid) => __webmcpPerf.relay().acked[sid] === 9", arg=sid)
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_a_tool_calling_a_tool_is_its_parent_across_awaits(host, browser, plain_browser, pages, relay_server) -> None:
    page, errors, sid = host_page(host, browser, plain_browser, pages, relay_server)
    assert page.evaluate("__call('p_outer')") == "outer:inner"
    assert page.evaluate("__call('p_direct')") == "inner"
    snap = relay_server.wait_for(settled(sid, 4))
    spans = sorted(session_of(snap, sid)["spans"], key=lambda s: s["seq"])
    by = {(s["tool"], s["seq"]): s for s in spans}
    outer = next(s for s in spans if s["tool"] == "p_outer")
    direct = next(s for s in spans if s["tool"] == "p_direct")
    inners = [s for s in spans if s["tool"] == "p_inner"]
    assert len(spans) == 4 and len(by) == 4
    assert (outer["depth"], outer["parent"]) == (0, None)
    assert (direct["depth"], direct["parent"]) == (0, None)
    assert [(s["depth"], s["parent"]) for s in inners] == [(1, outer["seq"]), (1, direct["seq"])]
    assert outer["settledAt"] >= inners[0]["settledAt"], "the outer call settles after its inner one, and is kept"
    timeline = session_of(snap, sid)["timeline"]
    # Each call settles once on the timeline. A start goes only for a call still running when its batch leaves
    # (transport/feed.js starts): how many that is depends on the machine's pace, so the starts are checked, not counted.
    assert sorted((e["detail"]["tool"], e["detail"]["seq"]) for e in timeline if e["kind"] == "settle") == sorted(by)
    starts = [(e["detail"]["tool"], e["detail"]["seq"]) for e in timeline if e["kind"] == "start"]
    assert len(starts) == len(set(starts)) and set(starts) <= set(by), starts
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("fresh", [False, True], ids=["store-kept", "store-lost"])
@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_relay_restart_while_calls_overlap(host, fresh, browser, plain_browser, pages, relay_server) -> None:
    page, errors, sid = host_page(host, browser, plain_browser, pages, relay_server, config={"buffer": 100})
    # Three calls held open by the test, fast ones settling around them.
    page.evaluate("""() => { window.__run = Promise.all([
      __call("p_gated", { k: "a" }), __call("p_gated", { k: "b" }), __call("p_fast"), __call("p_gated", { k: "c" }), __call("p_fast"),
    ]) }""")
    relay_server.wait_for(session_where(sid, lambda s: len(s["spans"]) == 2 and len(s["inflight"]) == 3))
    page.evaluate("__open('b')")  # settles before the outage, after later-started calls
    relay_server.wait_for(session_where(sid, lambda s: len(s["spans"]) == 3))
    relay_server.stop()
    page.wait_for_function("__webmcpPerf.relay().state !== 'open'")
    page.evaluate("__open('c')")  # settles while no relay is there
    page.evaluate("__call('p_fast')")
    relay_server.restart(fresh=fresh)
    relay_server.wait_for(session_where(sid, lambda s: s["state"] == "live"))
    page.evaluate("__open('a')")  # the lowest seq settles last, after the reconnect
    page.evaluate("window.__run")
    snap = relay_server.wait_for(settled(sid, 6))
    session = session_of(snap, sid)
    seqs = sorted(s["seq"] for s in session["spans"])
    assert seqs == list(range(6)), "every span once"
    assert session["lost"] == 0 and session["coverage"] == "running"
    assert session["counters"]["duplicates"] == 0, "what the relay held was not sent again"
    assert page.evaluate("(sid) => __webmcpPerf.relay().lost[sid]", sid) == 0
    assert errors == []
    page.context.close()
