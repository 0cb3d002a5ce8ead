"""The page server of the browser tests, for the end-to-end tests of `wmcp-top mcp`."""

from tests.browser.conftest import pages as pages
