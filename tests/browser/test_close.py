"""Closing a tab is a normal end: the relay sees `bye` and nothing refused after it."""

from __future__ import annotations

import pytest

from tests.browser.conftest import RUN_ALL, spans_of

pytestmark = pytest.mark.browser


def test_closing_a_tab_ends_its_session_without_a_rejected_frame(browser, pages, relay_server) -> None:
    context = browser.new_context()
    for round_ in range(3):  # the alarm showed on 2 closes of 3: every close must be clean
        page = context.new_page()
        page.goto(pages.url("native.html", relay_server))
        page.wait_for_function("window.__webmcpPerf && window.registered")
        sid = page.evaluate("__webmcpPerf.sessionId")
        page.evaluate(RUN_ALL, {"names": ["obj", "str"], "input": {}, "stringInput": False})
        relay_server.wait_for(lambda s: len(spans_of(s, sid)) == 2)
        page.close(run_before_unload=True)
        # The socket's close reaches the relay after every frame the page wrote on it.
        snap = relay_server.wait_for(
            lambda s: s["sessions"][sid]["state"] == "ended" and not relay_server.call(lambda: dict(relay_server.store.connections))
        )
        assert snap["counters"].get("rejected", 0) == 0, (round_, snap["counters"])
        assert snap["sessions"][sid]["counters"]["rejected"] == 0
    context.close()
