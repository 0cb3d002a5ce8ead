"""The extension's route on an @mcp-b/global page (issue 30): its main-world agent arrives at document_start,
before @mcp-b/global installs its server, and every call, from the MCP client or the browser, is one span at
the relay with the bytes its caller received."""

from __future__ import annotations

import json

import pytest

from tests.ecosystem.conftest import eco_server  # noqa: F401
from tests.ecosystem.harness import (
    LISTED,
    TOOLS,
    Opened,
    Server,
    execute_calls,
    mcp_calls,
    page_calls,
    wait_true,
)
from tests.extension.conftest import ext_browser, ext_id, pair  # noqa: F401

pytestmark = pytest.mark.browser


def test_extension_measures_every_caller_of_an_mcp_b_global_page(ext_browser, ext_id, relay_server, eco_server: Server) -> None:
    pair(ext_browser, ext_id, relay_server.port, relay_server.token)
    page = ext_browser.new_page()
    page.goto(eco_server.url("page.html", "global", "document-start"))
    wait_true(page.main_frame, LISTED)
    o = Opened(page, page.main_frame, [], [])
    made = [(utf8len(r["text"]), "mcp") for r in mcp_calls(o)]
    made += [(utf8len(r["text"]) if r["ok"] else 0, "executeTool") for r in execute_calls(o, "native")]
    made += [(utf8len(r["text"]) if r["ok"] else 0, "page") for r in page_calls(o)]
    sid = page.evaluate("() => __webmcpPerf.sessionId")
    snap = relay_server.wait_for(lambda s: sid in s["sessions"] and len(s["sessions"][sid]["spans"]) >= len(made))
    spans = snap["sessions"][sid]["spans"]
    assert [(s["tool"], s["resultBytes"]) for s in spans] == [(t, n) for t, (n, _) in zip(TOOLS * 3, made, strict=True)], json.dumps(spans)[:400]
    page.close()


def utf8len(text: str) -> int:
    return len(text.encode("utf-8"))
