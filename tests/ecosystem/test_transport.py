"""Issue 46 with the real packages: MCP calls measured where they cross into the page, on the MCP-B postMessage
transports, whatever server runs the tool. @mcp-b/webmcp-ts-sdk's BrowserMcpServer keeps and runs its own
reference to each tool's function (the agent's wrapper sees only the copy it mirrors onto the registry), so an
agent that measures functions only recorded none of its MCP calls; react-webmcp's outputSchema path sizes
structuredContent as the server writes it. Each call is one span with the bytes its caller received."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.ecosystem.harness import TOOLS, Opened, Server, execute_calls, ledger, mcp_calls, open_stack, spans, status, wait_true

pytestmark = pytest.mark.browser

TRANSPORT_ONLY = "3 MCP tools/call(s) over postMessage ran no tool function the agent wraps"


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def made_calls(o: Opened, host: str, framed: bool) -> list[tuple[str, int, bool]]:
    """tools/call of each tool from the MCP SDK client, then the registry's executeTool of each: (tool, bytes the
    caller received, isError as the caller saw it)."""
    made = []
    for tool, r in zip(TOOLS, mcp_calls(o, framed), strict=True):
        assert r["ok"], r
        made.append((tool, utf8(r["text"]), json.loads(r["text"]).get("isError", False)))
    for tool, r in zip(TOOLS, execute_calls(o, host), strict=True):
        made.append((tool, utf8(r["text"]) if r["ok"] else 0, not r["ok"] or '"isError":true' in r["text"]))
    return made


@pytest.mark.parametrize("framed", [False, True], ids=["client-in-tab", "client-in-parent"])
@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_a_ts_sdk_server_s_mcp_calls_are_each_one_span_with_the_client_s_bytes(
    hosts: dict[str, Browser], eco_server: Server, host: str, framed: bool
) -> None:
    o = open_stack(hosts[host], eco_server, "ts-sdk", "head", framed=framed)
    try:
        made = made_calls(o, host, framed)
        got = wait_true(o.tools, "(n) => { const s = __webmcpPerf.spans(); return s.length >= n && s }", len(made))
        assert [(s["tool"], s["resultBytes"], s["isError"]) for s in got] == made, "every call once, each with what its caller got"
        assert [s["seq"] for s in got] == list(range(len(made)))
        # The MCP calls ran no wrapped function: timed at the transport, and the status says what is not seen.
        st = status(o.tools)
        assert st["coverage"] == "incomplete", st
        assert [r for r in st["reasons"] if r.startswith(TRANSPORT_ONLY)] != [], st
        assert sorted(ledger(o.tools)["registeredTools"]) == sorted(TOOLS)
        if framed:
            # The client's frame carries the requests and receives the responses: none of them are its calls.
            assert spans(o.page.main_frame) == []
            assert status(o.page.main_frame)["reasons"] == []
        assert o.errors == []
    finally:
        o.page.context.close()


@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_react_webmcp_structured_content_is_sized_as_the_client_receives_it(hosts: dict[str, Browser], eco_server: Server, host: str) -> None:
    """`stats` declares an outputSchema and returns its structured value: the hook and the server build the
    CallToolResult. The function's run and the transport's call are one span (the coverage stays "running")."""
    o = open_stack(hosts[host], eco_server, "react-output", "head")
    try:
        made = made_calls(o, host, False)
        got = wait_true(o.tools, "(n) => { const s = __webmcpPerf.spans(); return s.length >= n && s }", len(made))
        assert [(s["tool"], s["resultBytes"], s["isError"]) for s in got] == made
        stats = [n for tool, n, _ in made[:3] if tool == "stats"]
        assert stats[0] > 1900, "the structured rows reached the client"
        st = status(o.tools)
        assert st["coverage"] == "running" and st["reasons"] == [], st
    finally:
        o.page.context.close()


def test_a_call_answered_by_no_wrapped_function_is_never_running(hosts: dict[str, Browser], eco_server: Server) -> None:
    """The referee the other way round: before any MCP call the page is `running` on its executeTool calls; the
    first tools/call that passes no wrapper turns it `incomplete` with the reason and the fix."""
    o = open_stack(hosts["native"], eco_server, "ts-sdk", "head")
    try:
        execute_calls(o, "native")
        wait_true(o.tools, "() => __webmcpPerf.spans().length === 3")
        assert status(o.tools)["coverage"] == "running"
        o.page.evaluate("() => mcpCalls([['echo', { text: 'x' }]])")
        st = wait_true(o.tools, "() => { const s = __webmcpPerf.status(); return s.coverage === 'incomplete' && s }")
        reason = next(r for r in st["reasons"] if "ran no tool function the agent wraps" in r)
        assert reason.startswith("1 MCP tools/call(s)") and "register the tools on document.modelContext" in reason, reason
    finally:
        o.page.context.close()


def test_a_cross_origin_parent_s_calls_are_named_blind_never_invented(hosts: dict[str, Browser], eco_server: Server) -> None:
    """The parent on another origin: the frame's responses go to a window its agent cannot read. No span is
    made up for the MCP calls; coverage is `incomplete` with that reason; executeTool is still measured.
    Native host only: the polyfill refuses WebMCP in a cross-origin frame (no Permissions Policy to ask)."""
    host = "native"
    o = open_stack(hosts[host], eco_server, "ts-sdk", "head", framed=True, cross_origin=True)
    try:
        assert o.tools.evaluate("() => location.origin") != o.page.evaluate("() => location.origin")
        assert all(r["ok"] for r in mcp_calls(o, True))
        st = wait_true(o.tools, "() => { const s = __webmcpPerf.status(); return s.coverage === 'incomplete' && s }")
        assert [r for r in st["reasons"] if r.startswith("3 MCP tools/call(s) reached this frame from a cross-origin parent")] != [], st
        assert spans(o.tools) == []
        execute = execute_calls(o, host)
        got = wait_true(o.tools, "() => { const s = __webmcpPerf.spans(); return s.length >= 3 && s }")
        assert [(s["tool"], s["resultBytes"]) for s in got] == [(t, utf8(r["text"]) if r["ok"] else 0) for t, r in zip(TOOLS, execute, strict=True)]
        assert o.errors == []
    finally:
        o.page.context.close()


def test_mcp_calls_made_before_the_agents_rest_arrives_are_each_one_span(hosts: dict[str, Browser], eco_server: Server, relay_server: Any) -> None:
    """The relay's /agent.js is the eager part; the rest comes at the first idle moment a second after load or at the
    first call. A webmcp-ts-sdk server runs no wrapper, so its calls made right after load (nothing here asks the
    console API for the rest) are seen only by the eager part's early buffer, and replayed once the rest is here."""
    o = open_stack(hosts["native"], eco_server, "ts-sdk", "head", agent_src=relay_server.http_url("/agent.js"), wait_agent=False)
    try:
        got = mcp_calls(o)
        assert all(r["ok"] for r in got), got
        sid = o.tools.evaluate("() => __webmcpPerf.sessionId")
        snap = relay_server.wait_for(lambda s: sid in s["sessions"] and len(s["sessions"][sid]["spans"]) >= len(TOOLS))
        spans_at_relay = snap["sessions"][sid]["spans"]
        assert [(s["tool"], s["resultBytes"]) for s in spans_at_relay] == [(t, utf8(r["text"])) for t, r in zip(TOOLS, got, strict=True)]
        assert o.errors == []
    finally:
        o.page.context.close()
