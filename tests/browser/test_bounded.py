"""Bounded in the page (issue 47, item 5), in Chromium: a page whose package replaces `document.modelContext` 300
times, each registry holding about 1 MB (as in the issue), keeps that heap alive no longer with the agent than without it (the
agent holds registries weakly: page_agent/src/page/interceptor.js, HostTable)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import open_page

pytestmark = pytest.mark.browser

SWAPS = 300
SWAP = """async (n) => {
  for (let i = 0; i < n; i++) {
    const tools = new Map()
    const registry = {
      ballast: new Array(262144).fill(i), // about 1 MB (4 bytes an element)
      registerTool(t) { tools.set(t.name, t) },
      unregisterTool(name) { tools.delete(name) },
      getTools() { return Promise.resolve([...tools.values()].map((t) => ({ name: t.name, description: t.description }))) },
    }
    Object.defineProperty(document, 'modelContext', { value: registry, configurable: true })
    registry.registerTool({ name: 'search', description: 'search', execute: () => 'ok' })
    await new Promise((r) => setTimeout(r, 0))
  }
}"""


def heap_after_swaps(browser, pages, agent: bool) -> float:
    params = {"agent": "/_agent_raw.js", "perf": "1"} if agent else {}
    page, errors = open_page(browser, pages.url("native.html", config={"uplink": False}, **params))
    page.evaluate("window.registered")
    assert page.evaluate("!!(window.__webmcpPerf && __webmcpPerf.active)") is agent
    page.evaluate(SWAP, SWAPS)
    if agent:  # the agent saw every registry (the traps on defineProperty)
        assert page.evaluate("__webmcpPerf.ledger().registeredTools.includes('search')")
    cdp = page.context.new_cdp_session(page)
    for _ in range(3):
        cdp.send("HeapProfiler.collectGarbage")
    used = cdp.send("Runtime.getHeapUsage")["usedSize"] / 1e6
    assert errors == []
    page.context.close()
    return used


def test_registries_the_page_swapped_out_are_not_kept_alive_by_the_agent(browser, pages) -> None:
    without = heap_after_swaps(browser, pages, agent=False)
    with_agent = heap_after_swaps(browser, pages, agent=True)
    print(f"\nJS heap after {SWAPS} swaps of a ~1 MB registry: {without:.1f} MB without the agent, {with_agent:.1f} MB with it")
    # Each registry is about 1 MB of ballast: holding even ten of them would show; the agent's own heap is far less.
    assert with_agent - without < 5, (without, with_agent)
