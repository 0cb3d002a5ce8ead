"""In real Chromium, native host and polyfill: a thenable result's `then` is read once and runs once with the
agent, exactly as without it; the caller's text is unchanged (issue 11, item 11)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import browser, open_page, pages, plain_browser, playwright, session_where, wait_phase  # noqa: F401

pytestmark = pytest.mark.browser

CALL = """async (stringInput) => {
  const n = { reads: 0, runs: 0 }
  const thenable = { get then() { n.reads++; return (resolve) => { n.runs++; resolve("ok " + n.runs) } } }
  const mc = document.modelContext
  await mc.registerTool({ name: "thenable", description: "returns a thenable", inputSchema: { type: "object" }, execute: () => thenable })
  const tool = (await mc.getTools()).find((t) => t.name === "thenable")
  const text = await mc.executeTool(tool, stringInput ? "{}" : {})  // the polyfill takes the input as JSON text
  return { text, ...n }
}"""


@pytest.mark.parametrize("host", ["native", "polyfill"])
@pytest.mark.parametrize("agent", [True, False])
def test_a_thenable_runs_once_with_or_without_the_agent(host, agent, browser, plain_browser, pages, relay_server) -> None:
    page_name, b = ("native.html", browser) if host == "native" else ("polyfill.html", plain_browser)
    page, errors = open_page(b, pages.url(page_name, relay_server if agent else None))
    page.evaluate("window.registered")
    if agent:
        wait_phase(page, "tools-registered")
    got = page.evaluate(CALL, host == "polyfill")
    assert got["reads"] == 1 and got["runs"] == 1, got
    assert "ok 1" in str(got["text"]), got
    if agent:
        sid = page.evaluate("__webmcpPerf.sessionId")
        relay_server.wait_for(session_where(sid, lambda s: any(x["tool"] == "thenable" for x in s["spans"])))
    assert errors == []
    page.context.close()
