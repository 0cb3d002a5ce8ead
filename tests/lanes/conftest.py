"""Fixtures of the browser-lane tests. A missing Chromium FAILS them (never skips) with the install line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from relay_bridge.browser import BrowserError, DebugBrowser, find_chromium, launch_debug_browser
from tests.lanes.helpers import SiteServer

INSTALL = "Chromium is needed for the browser-lane tests: apt-get install -y chromium"


@pytest.fixture(scope="session")
def chromium() -> str:
    try:
        return find_chromium()
    except BrowserError as exc:
        pytest.fail(f"{INSTALL} ({exc})", pytrace=False)


@pytest.fixture(scope="session")
def site() -> Iterator[SiteServer]:
    server = SiteServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def debug_browser(chromium: str, site: SiteServer) -> Iterator[DebugBrowser]:
    """Chromium with --remote-debugging-port=0; the port comes from DevToolsActivePort in its user-data-dir."""
    try:
        browser = launch_debug_browser("about:blank", browser=chromium)
    except BrowserError as exc:
        pytest.fail(f"{INSTALL} ({exc})", pytrace=False)
    try:
        yield browser
    finally:
        browser.close()
