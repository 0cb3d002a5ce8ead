"""One bundle set per test session (esbuild over the pinned packages), one page server, and one Chromium of
each kind per module: with native WebMCP (--enable-features=WebMCPTesting) and without (polyfill only)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

from tests.browser.conftest import headless_path
from tests.ecosystem.harness import BASE_ARGS, WEBMCP_ARGS, Server, build


@pytest.fixture(scope="session")
def eco_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    try:
        bundles = build(Path(tmp_path_factory.mktemp("eco-bundles")))
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    server = Server(bundles)
    yield server
    server.close()


@pytest.fixture(scope="module")
def eco_playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def hosts(eco_playwright: Playwright) -> Iterator[dict[str, Browser]]:
    """ "native": Chromium's own document.modelContext; "polyfill": no WebMCP, the packages install theirs."""
    native = eco_playwright.chromium.launch(executable_path=headless_path(), args=BASE_ARGS + WEBMCP_ARGS)
    plain = eco_playwright.chromium.launch(executable_path=headless_path(), args=BASE_ARGS)
    yield {"native": native, "polyfill": plain}
    native.close()
    plain.close()
