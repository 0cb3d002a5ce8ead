"""The compatibility suite runs in the browser suite's Chromium and page server (tests/browser/conftest.py)."""

from tests.browser.conftest import browser, pages, playwright  # noqa: F401  (fixtures, re-exported)
