"""The suites' pages run in chromium-headless-shell (conftest.headless_path), the extension, the lanes and the
benchmarks in the whole browser users run. This holds the two to one Chromium: one version, and the same native
WebMCP host as the agent sees it, call by call."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Playwright

from tests.browser.conftest import BASE_ARGS, RUN_ALL, WEBMCP_ARGS, chromium_path, has_spans, headless_path, open_page, session_of, wait_phase
from tests.browser.test_native_host import ALL

pytestmark = pytest.mark.browser

# What a span says of the call, not of the clock.
CALL_FIELDS = ("tool", "isError", "error", "inputBytes", "resultBytes", "imageBytes", "estTokens", "substituted", "contentTypes")


def run_native_page(playwright: Playwright, executable: str, pages: Any, relay: Any) -> dict[str, Any]:
    browser = playwright.chromium.launch(executable_path=executable, args=BASE_ARGS + WEBMCP_ARGS)
    try:
        page, errors = open_page(browser, pages.url("native.html", relay))
        page.evaluate("window.registered")
        wait_phase(page, "tools-registered")
        sid = page.evaluate("__webmcpPerf.sessionId")
        listed = page.evaluate(
            "async () => (await document.modelContext.getTools()).map((t) => [t.name, t.description, JSON.stringify(t.inputSchema)])"
        )
        got = page.evaluate(RUN_ALL, {"names": ALL, "input": {"q": "tea ☕"}, "stringInput": False})
        session = session_of(relay.wait_for(has_spans(sid, len(ALL))), sid)
        assert session is not None
        spans = sorted(({k: s.get(k) for k in CALL_FIELDS} for s in session["spans"]), key=lambda s: s["tool"])
        return {"version": browser.version, "listed": sorted(listed), "results": got, "spans": spans, "errors": errors}
    finally:
        browser.close()


def test_the_headless_shell_is_the_browsers_chromium_with_the_same_webmcp_host(playwright, pages, relay_server) -> None:
    whole = run_native_page(playwright, chromium_path(), pages, relay_server)
    shell = run_native_page(playwright, headless_path(), pages, relay_server)
    assert shell["version"] == whole["version"], "apt-get install chromium chromium-headless-shell: one version of both"
    assert len(whole["spans"]) == len(ALL) and whole["errors"] == []
    for key in ("listed", "results", "spans", "errors"):
        assert shell[key] == whole[key], key
