"""The browser lanes in the dashboard, against real Chromium: `wmcp-top attach --cdp URL` and `wmcp-top open URL`.

The apps are built from the command line exactly as `wmcp-top` builds them (tui.run.build_app). A missing
Chromium fails these tests with the install line (tests/lanes/conftest.py does the same), never skips them.
"""

from __future__ import annotations

import asyncio
import unittest.mock
from pathlib import Path

import pytest

from relay_bridge.lanes.cdp import STATUS_HELP
from relay_bridge.lanes.chromium import DebugBrowser
from tests.lanes.helpers import PageDriver, SiteServer
from tests.liveness import LIVENESS_S
from tui.cli import build_parser, wants_ui
from tui.run import build_app
from tui.screens.status import StatusScreen

from .helpers import cell, has_tab, screen_text, table, tabs, until

pytestmark = pytest.mark.browser


def _cdp_session(app):
    return next((s for s in app.store.sessions.values() if s.agent.startswith("cdp/") and len(s.tools) == 12), None)


def test_routing_ui_and_headless_forms() -> None:
    parse = build_parser().parse_args
    # --no-ui means the same for attach and open; open's --headless is the browser window's, attach has none
    for lane in (["attach", "--cdp", "http://127.0.0.1:9222"], ["open", "http://x.example/"]):
        assert not wants_ui(parse([*lane, "--no-ui"]))
        # pytest's stdout is not a terminal: both print lines there, as when piped
        assert not wants_ui(parse(lane))
    assert parse(["open", "http://x.example/", "--headless"]).headless
    with pytest.raises(SystemExit):
        parse(["attach", "--cdp", "http://127.0.0.1:9222", "--headless"])
    # --check-lanes prints its verdict and exits 0/1: never the dashboard, even on a terminal
    with unittest.mock.patch("sys.stdout.isatty", return_value=True):
        assert wants_ui(parse(["open", "http://x.example/"]))
        assert not wants_ui(parse(["open", "http://x.example/", "--check-lanes"]))


async def test_attach_shows_cdp_sessions_in_the_dashboard(debug_browser: DebugBrowser, site: SiteServer, tmp_path: Path) -> None:
    args = build_parser().parse_args(["attach", "--cdp", debug_browser.endpoint, "--port", "0", "--no-log", "--export-dir", str(tmp_path)])
    app = build_app(args)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.lane_state is not None and app.lane_state.startswith("connected"), timeout=LIVENESS_S, what="attached")
        driver = await PageDriver.open(debug_browser.endpoint, site.url)
        try:
            assert len(await driver.wait_ready()) == 12
            await until(pilot, lambda: _cdp_session(app) is not None, timeout=LIVENESS_S, what="the CDP session with its tools")
            session = _cdp_session(app)
            await driver.call_all([("get_price", {"amount": 3, "currency": "EUR"}), ("ping_empty", {})])
            await until(pilot, lambda: session.stats.totals.calls == 2, timeout=LIVENESS_S, what="two calls")
        finally:
            await driver.close()
        await until(pilot, lambda: has_tab(app, session.id), what="its tab")
        tabs(app).active = f"s-{session.id}"
        await until(
            pilot,
            lambda: cell(app, "get_price", "calls", session.id) == "1" and cell(app, "ping_empty", "calls", session.id) == "1",
            what="both calls in their rows",
        )
        label = tabs(app).get_tab(f"s-{session.id}").label
        assert str(label).startswith("cdp ")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), what="status")
        await until(pilot, lambda: "DevTools Protocol (attach --cdp)" in screen_text(app), what="the CDP section")
        text = screen_text(app)
        assert "DevTools Protocol (attach --cdp)" in text and STATUS_HELP[0][:60] in text
        await pilot.press("escape", "q")
    assert app.return_code == 0 and app.startup_error is None


async def test_attach_to_nothing_is_one_line_and_exit_2(tmp_path: Path) -> None:
    args = build_parser().parse_args(["attach", "--cdp", "http://127.0.0.1:9", "--port", "0", "--no-log"])
    app = build_app(args)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.startup_error is not None, timeout=LIVENESS_S, what="the error")
    assert app.return_code == 2
    assert "cannot reach a DevTools endpoint" in app.startup_error and "\n" not in app.startup_error


async def test_open_shows_the_page_and_closing_the_browser_quits(chromium: str, site: SiteServer, tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["open", site.url, "--headless", "--browser", chromium, "--port", "0", "--no-log", "--export-dir", str(tmp_path)]
    )
    app = build_app(args)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(
            pilot,
            lambda: app.open_handle is not None and any(len(s.tools) == 12 for s in app.store.sessions.values()),
            timeout=LIVENESS_S,
            what="the page's tools",
        )
        [session] = [s for s in app.store.sessions.values() if len(s.tools) == 12]
        assert session.agent.startswith("wmcp-top-agent")
        handle = app.open_handle
        await handle.page.evaluate("""async () => {
            await window.__fixtureReady;
            const mc = document.modelContext, tools = await mc.getTools();
            await mc.executeTool(tools.find(t => t.name === "get_price"), {amount: 1, currency: "EUR"});
        }""")
        await until(pilot, lambda: has_tab(app, session.id), what="its tab")
        tabs(app).active = f"s-{session.id}"
        await until(pilot, lambda: cell(app, "get_price", "calls", session.id) == "1", timeout=LIVENESS_S, what="the call's row")
        assert table(app, session.id).row_count >= 12
        await handle.page.close()  # the user closes the browser window
        await asyncio.wait_for(handle.closed.wait(), LIVENESS_S)
        await until(pilot, lambda: app._exit, timeout=LIVENESS_S, what="the app quits")
    assert app.return_code == 0 and app.startup_error is None
    assert not handle.browser.is_connected()


async def test_quitting_the_app_closes_the_browser(chromium: str, site: SiteServer, tmp_path: Path) -> None:
    args = build_parser().parse_args(["open", site.url, "--headless", "--browser", chromium, "--port", "0", "--no-log"])
    app = build_app(args)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.open_handle is not None and app.store.sessions, timeout=LIVENESS_S, what="the page")
        handle = app.open_handle
        await pilot.press("q")
    assert app.return_code == 0
    assert handle.closed.is_set() and not handle.browser.is_connected()
