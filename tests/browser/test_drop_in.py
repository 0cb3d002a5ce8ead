"""webmcp-profiler behaviours that are the browser's (issue 34): in Debian's Chromium with its own WebMCP host,
the raw agent script or the relay's. onSpan has fired when `await executeTool()` resolves; a tool is listed when
Chromium accepts it, not after its getTools() round trip, and gets its execute back when its signal withdraws it;
a window.__WMCP_CONFIG__ set after the agent's tag is caught: a console warning, and a status hint that reaches
the relay."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page

from tests.browser.conftest import PageServer, wait_phase
from tests.relay_thread import RelayThread

HINT = "window.__WMCP_CONFIG__ was set after the agent's script ran, so it was ignored: set it in a <script> above the agent's tag"

ON_SPAN = """async () => {
  const mc = document.modelContext
  const seen = []
  __webmcpPerf.onSpan((s) => seen.push(s.tool))
  const [obj] = (await mc.getTools()).filter((t) => t.name === "obj")
  await mc.executeTool(obj, { q: "a" })
  const afterHost = seen.length
  const own = { name: "own", description: "the own tool", inputSchema: { type: "object" }, execute: async () => ({ ok: 1 }) }
  await mc.registerTool(own)
  await own.execute({})
  return { afterHost, afterOwn: seen.length, tools: seen }
}"""

REGISTRATION = """async () => {
  const mc = document.modelContext
  const execute = async () => "x"
  const tool = { name: "signalled", description: "the signalled tool", inputSchema: { type: "object" }, execute }
  const ac = new AbortController()
  await mc.registerTool(tool, { signal: ac.signal })
  const listed = __webmcpPerf.ledger().registeredTools.includes("signalled")
  const wrapped = tool.execute !== execute
  ac.abort()
  const restored = tool.execute === execute
  const dead = { name: "dead", description: "the dead tool", inputSchema: { type: "object" }, execute }
  const gone = new AbortController()
  gone.abort()
  let refused = null
  try { await mc.registerTool(dead, { signal: gone.signal }) } catch (e) { refused = e.name }
  const host = (await mc.getTools()).map((t) => t.name)
  return { listed, wrapped, restored, refused, deadListed: __webmcpPerf.ledger().registeredTools.includes("dead"),
           hostHasDead: host.includes("dead"), deadRestored: dead.execute === execute,
           stillListed: __webmcpPerf.ledger().registeredTools.includes("signalled") }
}"""


def _page(browser: Browser, url: str) -> tuple[Page, list[ConsoleMessage], list[str]]:
    context = browser.new_context()
    page = context.new_page()
    console: list[ConsoleMessage] = []
    errors: list[str] = []
    page.on("console", lambda m: console.append(m))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page, console, errors


def test_on_span_has_fired_when_await_execute_resolves(browser: Browser, pages: PageServer) -> None:
    page, _, errors = _page(browser, pages.url("native.html", agent="/_agent_raw.js", perf="1"))
    page.wait_for_function("window.registered && __webmcpPerf.ledger().registeredTools.length >= 17")
    got = page.evaluate(ON_SPAN)
    assert got == {"afterHost": 1, "afterOwn": 2, "tools": ["obj", "own"]}, got
    assert errors == []
    page.context.close()


def test_listed_at_acceptance_and_unwrapped_when_the_signal_withdraws_it(browser: Browser, pages: PageServer) -> None:
    page, _, errors = _page(browser, pages.url("late.html", agent="/_agent_raw.js", perf="1"))
    wait_phase(page, "host-found")
    got = page.evaluate(REGISTRATION)
    assert got["listed"] and got["wrapped"], "listed once Chromium accepted it, before its getTools() answered"
    assert got["restored"] and not got["stillListed"], "withdrawn by its signal: unlisted, the page's execute back"
    assert got["refused"] == "AbortError" and not got["hostHasDead"], "Chromium refuses an already-aborted signal"
    assert not got["deadListed"] and got["deadRestored"], "and so does the agent, keeping nothing of ours"
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("statement", ["window.__WMCP_CONFIG__ = { globalName: '__late' }", "var __WMCP_CONFIG__ = { globalName: '__late' }"])
def test_late_config_is_warned_about_in_the_console_and_the_status(browser: Browser, pages: PageServer, statement: str) -> None:
    page, console, errors = _page(browser, pages.url("late.html", agent="/_agent_raw.js", perf="1"))
    wait_phase(page, "host-found")
    page.add_script_tag(content=statement)  # a classic script after the agent's tag: the mistake
    page.wait_for_function("__webmcpPerf.status().hints.length && __webmcpPerf.status().hints[0].includes('__WMCP_CONFIG__')")
    assert page.evaluate("__webmcpPerf.status().hints[0]") == HINT
    warnings = [m.text for m in console if m.type == "warning" and "__WMCP_CONFIG__" in m.text]
    assert warnings == [f"[wmcp-top] {HINT}"], warnings
    assert page.evaluate("window.__WMCP_CONFIG__.globalName") == "__late", "the page keeps its value"
    assert page.evaluate("typeof window.__late") == "undefined", "and the agent did ignore it (it ran first)"
    assert errors == []
    page.context.close()


def test_config_set_before_the_tag_gets_no_warning(browser: Browser, pages: PageServer) -> None:
    page, console, errors = _page(browser, pages.url("native.html", agent="/_agent_raw.js", perf="1", config={"globalName": "__early"}))
    page.wait_for_function("window.__early && __early.active")
    page.evaluate("window.__WMCP_CONFIG__ = { globalName: '__again' }")  # read already: a later write is no mistake of order
    assert [m.text for m in console if "__WMCP_CONFIG__" in m.text] == []
    assert all("__WMCP_CONFIG__" not in h for h in page.evaluate("__early.status().hints"))
    assert errors == []
    page.context.close()


def test_late_config_hint_reaches_the_relay(browser: Browser, pages: PageServer, relay_server: RelayThread) -> None:
    page, _, errors = _page(browser, pages.url("late.html", relay=relay_server))
    wait_phase(page, "host-found")
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.add_script_tag(content="window.__WMCP_CONFIG__ = { sample: 0.5 }")

    def hinted(snap: dict[str, Any]) -> bool:
        session = snap["sessions"].get(sid)
        status = session and session["status"]
        return bool(status and HINT in status["hints"])

    relay_server.wait_for(hinted)
    assert errors == []
    page.context.close()
