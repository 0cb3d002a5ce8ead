"""Registries installed after the agent (issue 30): the traps that see them (page_agent/src/page/traps.js) against
pages that fight them. Each page is hostile in one way; the agent must keep measuring, never throw into the
page, never run a page getter it has no need of, and leave the page's feature detection as it found it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import browser, pages, plain_browser, playwright  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture
def hostile(pages: Any) -> Iterator[Any]:
    """open(browser, script) -> Page: the agent first in <head>, then `script`, on the page server's origin."""
    opened: list[Page] = []

    def open_(b: Browser, script: str) -> Page:
        ctx = b.new_context()
        url = f"http://127.0.0.1:{pages.port}/hostile.html?perf=1"
        body = f'<!doctype html><meta charset=utf-8><script src="/_agent_raw.js"></script><script>{script}</script><body>'
        ctx.route(url, lambda route: route.fulfill(status=200, content_type="text/html; charset=utf-8", body=body))
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.wait_for_function("() => window.__webmcpPerf && __webmcpPerf.status().phase !== 'no-host' || window.done")
        page.errors = errors  # type: ignore[attr-defined]  # read back by the tests
        opened.append(page)
        return page

    yield open_
    for p in opened:
        p.context.close()


MOCK = """
function mock() {
  const tools = new Map()
  return {
    registerTool(t) { tools.set(t.name, t) },
    unregisterTool(n) { tools.delete(n) },
    getTools() { return Array.from(tools.values()).map((t) => ({ name: t.name, description: t.description })) },
    tools,
  }
}
"""


def test_a_page_made_registry_is_patched_before_its_first_registration(plain_browser: Browser, hostile: Any) -> None:
    """window.modelContext = registry, then registerTool in the same task: no poll tick in between."""
    page = hostile(
        plain_browser,
        MOCK
        + "window.modelContext = mock(); window.modelContext.registerTool({ name: 't', description: 'd', execute: () => 'ok' }); window.done = true",
    )
    assert page.evaluate("() => window.modelContext.tools.get('t').execute({})") == "ok"
    spans = page.evaluate("() => __webmcpPerf.spans()")
    assert [(s["tool"], s["resultBytes"]) for s in spans] == [("t", 2)]
    assert page.evaluate("() => __webmcpPerf.status().coverage") == "running"
    assert page.errors == []


def test_a_registry_defined_with_defineproperty_is_patched_synchronously(plain_browser: Browser, hostile: Any) -> None:
    page = hostile(
        plain_browser,
        MOCK
        + "Object.defineProperty(document, 'modelContext', { value: mock(), configurable: true }); document.modelContext.registerTool({ name: 't', description: 'd', execute: () => 'ok' }); window.done = true",
    )
    page.evaluate("() => document.modelContext.tools.get('t').execute({})")
    assert len(page.evaluate("() => __webmcpPerf.spans()")) == 1


def test_feature_detection_is_left_as_the_page_found_it(plain_browser: Browser, hostile: Any) -> None:
    """No WebMCP here: `"modelContext" in navigator` / `in document` must stay false with the agent loaded."""
    page = hostile(plain_browser, "window.done = true")
    assert page.evaluate(
        "() => ['modelContext' in navigator, 'modelContext' in document, Object.getOwnPropertyDescriptor(document, 'modelContext')]"
    ) == [False, False, None]


def test_a_page_replacing_defineproperty_keeps_its_own_and_the_agent_keeps_measuring(plain_browser: Browser, hostile: Any) -> None:
    page = hostile(
        plain_browser,
        MOCK
        + """
        const inner = Object.defineProperty
        window.mine = function (o, k, d) { window.defines = (window.defines || 0) + 1; return inner(o, k, d) }
        Object.defineProperty = window.mine
        Object.defineProperty(document, 'modelContext', { value: mock(), configurable: true })
        document.modelContext.registerTool({ name: 't', description: 'd', execute: () => 'ok' })
        window.done = true
        """,
    )
    page.evaluate("() => document.modelContext.tools.get('t').execute({})")
    assert len(page.evaluate("() => __webmcpPerf.spans()")) == 1
    page.evaluate("() => __webmcpPerf.detach()")
    assert page.evaluate("() => Object.defineProperty === window.mine"), "detach leaves the page's own replacement"
    assert page.errors == []


def test_a_throwing_registry_getter_is_survived(plain_browser: Browser, hostile: Any) -> None:
    page = hostile(
        plain_browser,
        MOCK
        + """
        Object.defineProperty(document, 'modelContext', { get() { throw new Error('hostile getter') }, configurable: true })
        Object.defineProperty(document, 'modelContext', { value: mock(), configurable: true })
        document.modelContext.registerTool({ name: 't', description: 'd', execute: () => 'ok' })
        window.done = true
        """,
    )
    page.evaluate("() => document.modelContext.tools.get('t').execute({})")
    assert len(page.evaluate("() => __webmcpPerf.spans()")) == 1
    assert page.errors == []


def test_the_deprecated_alias_getter_is_never_run_by_the_agent(plain_browser: Browser, hostile: Any) -> None:
    """As @mcp-b/webmcp-polyfill does: document holds the registry, navigator a getter with a side effect."""
    page = hostile(
        plain_browser,
        MOCK
        + """
        window.aliasReads = 0
        const reg = mock()
        Object.defineProperty(Document.prototype, 'modelContext', { get() { return reg }, configurable: true })
        Object.defineProperty(navigator, 'modelContext', { get() { window.aliasReads++; return reg }, configurable: true })
        Object.defineProperty(document, 'other', { value: 1, configurable: true })
        reg.registerTool({ name: 't', description: 'd', execute: () => 'ok' })
        window.done = true
        """,
    )
    assert page.evaluate("() => window.aliasReads") == 0
    assert page.evaluate("() => __webmcpPerf.ledger().registeredTools") == ["t"]


def test_a_registry_cannot_hide_a_tool_as_a_mirror(browser: Browser, hostile: Any) -> None:
    """A registry whose registerTool registers a tool of another name on the native one: that tool is the
    page's own, listed and measured, not passed off as a copy."""
    page = hostile(
        browser,
        """
        const native = document.modelContext
        const front = {
          registerTool(t) { return native.registerTool({ name: 'hidden', description: 'h', execute: () => 'secret-work' }) },
          getTools() { return native.getTools() },
        }
        Object.defineProperty(document, 'modelContext', { value: front, configurable: true })
        window.registered = document.modelContext.registerTool({ name: 'shown', description: 's', execute: () => 'x' })
        window.done = true
        """,
    )
    page.evaluate("() => window.registered")
    page.wait_for_function("() => __webmcpPerf.ledger().registeredTools.includes('hidden')")
    page.evaluate(
        """async () => {
          const native = Object.getOwnPropertyDescriptor(Document.prototype, 'modelContext').get.call(document)
          const listed = (await native.getTools()).find((x) => x.name === 'hidden')
          return native.executeTool(listed, {})
        }"""
    )
    spans = page.wait_for_function("() => { const s = __webmcpPerf.spans(); return s.length >= 1 && s }").json_value()
    assert [s["tool"] for s in spans] == ["hidden"]


def test_a_language_model_defined_late_is_watched_from_its_first_session(browser: Browser, hostile: Any) -> None:
    """The native registry was found at start (no poll runs any more); the Prompt API arrives later."""
    page = hostile(browser, "window.done = true")
    assert page.evaluate("() => __webmcpPerf.prompts()") == []
    page.evaluate(
        """async () => {
          class Session { async prompt() { return 'answer' } destroy() {} }
          Object.defineProperty(window, 'LanguageModel', { value: { create: async () => new Session() }, configurable: true, writable: true })
          const s = await LanguageModel.create()
          await s.prompt('hi')
        }"""
    )
    assert len(page.evaluate("() => __webmcpPerf.prompts()")) == 1
