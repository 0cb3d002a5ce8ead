"""The privacy promise on an @mcp-b/global page (issue 30) and an @mcp-b/webmcp-ts-sdk page, whose MCP calls the
agent sees only on the transport (issue 46): a canary in an MCP client's tools/call arguments and in what the
page's tool answers travels to the client and back, and appears nowhere the relay keeps (its store, its session
log). The agent sizes the JSON-RPC result in the page and sends only the size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.ecosystem.conftest import eco_playwright, eco_server, hosts  # noqa: F401
from tests.ecosystem.harness import Server, open_stack

pytestmark = pytest.mark.browser

CANARY = "CANARY-eco-7d21b4"


@pytest.mark.parametrize("stack", ["global", "ts-sdk"])
@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_canary_in_mcp_calls_reaches_the_client_and_nothing_the_relay_keeps(
    hosts: dict[str, Browser], eco_server: Server, relay_server: Any, host: str, stack: str
) -> None:
    o = open_stack(hosts[host], eco_server, stack, "head", agent_src=relay_server.http_url("/agent.js"))
    try:
        got = o.page.evaluate("(c) => mcpCalls([['echo', { text: c }], ['stats', { n: 2 }], ['echo', { text: c + c }]])", CANARY)
        assert all(r["ok"] for r in got) and CANARY in got[0]["text"], got
        sid = o.page.evaluate("() => __webmcpPerf.sessionId")
        snap = relay_server.wait_for(lambda s: sid in s["sessions"] and len(s["sessions"][sid]["spans"]) == 3)
        spans = snap["sessions"][sid]["spans"]
        assert [s["resultBytes"] for s in spans] == [len(r["text"].encode()) for r in got], "sizes of what the client got"
        if stack == "ts-sdk":
            # The referee's reason reaches the relay's store (the terminal's status pane): never "running" here. Its
            # count follows in the status of a later batch than the spans' (a status frame says the page's moment).
            def said_all(s: Any) -> bool:
                status = s["sessions"][sid].get("status") or {}
                return status.get("coverage") == "incomplete" and any(
                    r.startswith("3 MCP tools/call(s) over postMessage ran no tool function the agent wraps") for r in status.get("reasons", [])
                )

            snap = relay_server.wait_for(said_all)
        relay_server.call(lambda: relay_server.relay.session_log.flush())
        kept = json.dumps(snap, default=str) + "".join(p.read_text(encoding="utf-8") for p in Path(relay_server.tmp, "logs").glob("*.jsonl"))
        assert "echo" in kept and CANARY not in kept
    finally:
        o.page.context.close()
