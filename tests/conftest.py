"""Shared fixtures: an isolated home for config/state, and a real relay on loopback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay_bridge.lanes.chromium import BrowserError, DebugBrowser, find_chromium, launch_debug_browser
from tests.hangs import tasks_shown_before_a_timeout  # noqa: F401  (autouse: a hung async test shows its awaits)
from tests.lanes.helpers import SiteServer
from tests.relay_thread import RelayThread

ROOT = Path(__file__).resolve().parent.parent


# The benchmarks that take longest in the check's short pass (2026-12-05, four workers: 20 to 36 s each, the
# other twenty under 20 s), started first so that no worker begins one of them as the others run out of work.
LONGEST_FIRST = ("test_findings_flood.py", "test_fair_shares.py", "test_observer_effect.py", "test_load_cost.py", "test_open_channel_cost.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A benchmark runs as long as WMCP_BENCH_SECONDS says, several times over (ways, rounds, the baseline):
    its timeout follows that instead of the suite's 180 s. The longest benchmarks come first."""
    seconds = float(os.environ.get("WMCP_BENCH_SECONDS", "30"))
    for item in items:
        if item.get_closest_marker("bench") is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(300 + 20 * seconds))

    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if item.get_closest_marker("bench") is not None and name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: the rest keep their order


VECTORS = ROOT / "tests" / "vectors"


@pytest.fixture(autouse=True, scope="session")
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Tests never read or write the user's real token, logs or exports."""
    home = tmp_path_factory.mktemp("wmcp-home")
    old = os.environ.get("WMCP_TOP_HOME")
    os.environ["WMCP_TOP_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("WMCP_TOP_HOME", None)
    else:
        os.environ["WMCP_TOP_HOME"] = old


@pytest.fixture
def relay_server(tmp_path: Path) -> Iterator[RelayThread]:
    """The real relay on 127.0.0.1, port chosen by the OS, in a background thread."""
    relay = RelayThread(tmp_path)
    try:
        yield relay
    finally:
        relay.close()


@pytest.fixture(params=["watched", "unwatched"])
def relay_on_each_cadence(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[RelayThread]:
    """The real relay, once with every session watched and once with none (relay_bridge.core.watching): a test of
    delivery (every span once, `lost` exact) holds on both of the agent's cadences."""
    relay = RelayThread(tmp_path, watched=request.param == "watched")
    try:
        yield relay
    finally:
        relay.close()


# -- the browser lanes (tests/lanes, tests/tui/test_lanes.py) -----------------------------------------------

CHROMIUM_INSTALL = "Chromium is needed for the browser-lane tests: apt-get install -y chromium"


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium (or $WMCP_CHROMIUM). Missing: the tests FAIL with the install line, never skip."""
    try:
        return find_chromium()
    except BrowserError as exc:
        pytest.fail(f"{CHROMIUM_INSTALL} ({exc})", pytrace=False)


@pytest.fixture(scope="session")
def site() -> Iterator[SiteServer]:
    """The fixture site (tests/lanes/site: a dozen tools) on a loopback port."""
    server = SiteServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def debug_browser(chromium: str) -> Iterator[DebugBrowser]:
    """Chromium with --remote-debugging-port=0; the port comes from DevToolsActivePort in its user-data-dir."""
    try:
        browser = launch_debug_browser("about:blank", browser=chromium)
    except BrowserError as exc:
        pytest.fail(f"{CHROMIUM_INSTALL} ({exc})", pytrace=False)
    try:
        yield browser
    finally:
        browser.close()
