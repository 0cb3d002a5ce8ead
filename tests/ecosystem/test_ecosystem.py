"""Issue 30 with the real packages (tests/ecosystem/package.json): @mcp-b/global, @mcp-b/webmcp-polyfill,
@mcp-b/react-webmcp and usewebmcp pages built with esbuild, called by @modelcontextprotocol/sdk's Client over
@mcp-b/transports, by the host's executeTool, by Playwright's page.webmcp and by the page itself. Every call
is one span, whatever called it and wherever the agent's tag is; each span's bytes are what that caller got."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Browser

from tests.ecosystem.harness import (
    TOOLS,
    Opened,
    Server,
    execute_calls,
    ledger,
    mcp_calls,
    open_stack,
    page_calls,
    spans,
    status,
    wait_true,
    webmcp_calls,
)
from tests.liveness import LIVENESS_S

pytestmark = pytest.mark.browser

# (stack, framed) x loading order, on both hosts. "document-start" is the extension's and `wmcp-top open`'s
# route (the agent before any page script); the iframe pages hold the tools, the parent only the MCP client.
CASES = [
    (stack, framed, order)
    for stack, framed in (("global", False), ("global", True), ("react-global", False), ("usewebmcp", False))
    for order in ("head", "after-polyfill", "after-tools", "document-start")
    if not (framed and order in ("after-polyfill", "after-tools"))
    # a plain page registering from its own script before the tag: the next test's case (honest coverage)
    and not (stack == "global" and order == "after-tools")
]


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


def drive(o: Opened, host: str, stack: str, framed: bool) -> list[tuple[str, str, int, bool]]:
    """Every caller that reaches this page calls each tool once; returns (caller, tool, bytes received, ok)."""
    made: list[tuple[str, str, int, bool]] = []
    if stack != "usewebmcp":  # usewebmcp with the strict polyfill serves no MCP client
        for tool, r in zip(TOOLS, mcp_calls(o, framed), strict=True):
            assert r["ok"], r
            made.append(("mcp", tool, utf8(r["text"]), not json.loads(r["text"]).get("isError", False)))
    execute = execute_calls(o, host)
    for tool, r in zip(TOOLS, execute, strict=True):
        made.append(("executeTool", tool, utf8(r["text"]) if r["ok"] else 0, r["ok"] and '"isError":true' not in r["text"]))
    if host == "native":
        for tool, r, ex in zip(TOOLS, webmcp_calls(o), execute, strict=True):
            assert r["ok"] == ex["ok"], (r, ex)
            made.append(("page.webmcp", tool, utf8(ex["text"]) if ex["ok"] else 0, r["ok"] and '"isError": true' not in r["text"]))
    if stack == "global":
        for tool, r in zip(TOOLS, page_calls(o), strict=True):
            made.append(("page", tool, utf8(r["text"]) if r["ok"] else 0, r["ok"]))
    return made


@pytest.mark.parametrize("host", ["native", "polyfill"])
@pytest.mark.parametrize(("stack", "framed", "order"), CASES, ids=[f"{s}{'-iframe' if f else ''}-{o}" for s, f, o in CASES])
def test_every_call_once_with_the_bytes_its_caller_received(
    hosts: dict[str, Browser], eco_server: Server, host: str, stack: str, framed: bool, order: str
) -> None:
    o = open_stack(hosts[host], eco_server, stack, order, framed=framed)
    try:
        made = drive(o, host, stack, framed)
        got = wait_true(o.tools, "(n) => { const s = __webmcpPerf.spans(); return s.length >= n && s }", len(made))
        assert len(got) == len(made), "one span per call, no double count through the server's native mirror"
        assert [(s["tool"], s["resultBytes"], s["isError"]) for s in got] == [(tool, n, not ok) for _, tool, n, ok in made], made
        st = status(o.tools)
        assert st["coverage"] == "running" and st["reasons"] == [], st
        assert sorted(ledger(o.tools)["registeredTools"]) == sorted(TOOLS)
        if framed:
            # Chromium's getTools() in the parent lists the iframe's tools too: they are not the parent's.
            top = ledger(o.page.main_frame)
            assert top["registeredTools"] == [] and top["tools"] == {}, top
            assert spans(o.page.main_frame) == []
        assert o.errors == []
        assert not [m for m in o.console if "deprecated" in m], o.console
    finally:
        o.page.context.close()


@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_tools_taken_before_the_agent_are_named_not_passed_off(hosts: dict[str, Browser], eco_server: Server, host: str) -> None:
    """The tag after the tools script: @mcp-b/global's server holds the page's functions out of reach, so
    MCP-client calls are measured at the transport only (issue 46); the status says so and names what works,
    never "running"."""
    o = open_stack(hosts[host], eco_server, "global", "after-tools")
    try:
        made = drive(o, host, "global", False)
        assert len(made) == (12 if host == "native" else 9)
        st = status(o.tools)
        assert st["coverage"] == "incomplete", st
        assert any(
            "MCP-client calls to them (tools/call over postMessage) reach no wrapper and are measured at the transport only" in r
            and "first in <head>" in r
            for r in st["reasons"]
        ), st
        assert any(r.startswith("3 MCP tools/call(s) over postMessage ran no tool function the agent wraps") for r in st["reasons"]), st
        mcp = [(tool, n, not ok) for caller, tool, n, ok in made if caller == "mcp"]
        assert [(s["tool"], s["resultBytes"], s["isError"]) for s in spans(o.tools)] == mcp, "the transport's spans, the client's bytes"
        tools = ledger(o.tools)["tools"]
        assert all(tools[n].get("measured") is False for n in TOOLS), tools
        # Chromium fires toolactivated for its own callers (executeTool, page.webmcp): those are counted.
        counted = {n: tools[n].get("counted", 0) for n in TOOLS}
        assert counted == (dict.fromkeys(TOOLS, 2) if host == "native" else dict.fromkeys(TOOLS, 0)), counted
    finally:
        o.page.context.close()


@pytest.mark.parametrize(
    ("host", "stack"), [("native", "react-global"), ("polyfill", "react-global"), ("native", "usewebmcp"), ("polyfill", "usewebmcp")]
)
def test_react_unmount_is_seen_and_a_remount_is_measured(hosts: dict[str, Browser], eco_server: Server, host: str, stack: str) -> None:
    o = open_stack(hosts[host], eco_server, stack, "head")
    try:
        o.tools.evaluate("() => unmountTools()")
        wait_true(o.tools, "() => __webmcpPerf.ledger().registeredTools.length === 0")
        assert all(t["unregisteredAt"] is not None for t in ledger(o.tools)["tools"].values())
        o.tools.evaluate("() => mountTools()")
        wait_true(o.tools, "() => __webmcpPerf.ledger().registeredTools.length === 3")
        from tests.ecosystem.harness import LISTED

        wait_true(o.tools, LISTED)
        made = drive(o, host, stack, False)
        got = wait_true(o.tools, "(n) => { const s = __webmcpPerf.spans(); return s.length >= n && s }", len(made))
        assert len(got) == len(made)
        assert [(s["tool"], s["resultBytes"]) for s in got] == [(tool, n) for _, tool, n, _ in made]
    finally:
        o.page.context.close()


def results_of(o: Opened, host: str, stack: str) -> list[Any]:
    out: list[Any] = []
    if stack != "usewebmcp":
        out += [r["text"] for r in mcp_calls(o)]
    out += [r["text"] for r in execute_calls(o, host)]
    if host == "native":
        out += [r["text"] for r in webmcp_calls(o)]
    if stack == "global":
        out += [r["text"] for r in page_calls(o)]
    return out


@pytest.mark.parametrize("host", ["native", "polyfill"])
@pytest.mark.parametrize("stack", ["global", "usewebmcp", "ts-sdk"])
def test_the_agent_changes_nothing_the_callers_or_the_console_see(hosts: dict[str, Browser], eco_server: Server, host: str, stack: str) -> None:
    """Byte-identical results with and without the agent, the same console (the agent's own attach line
    aside: no deprecation warning from reading navigator.modelContext, no error), no page error."""
    runs = {}
    for order in ("none", "head", "document-start"):
        o = open_stack(hosts[host], eco_server, stack, order, agent=order != "none")
        try:
            runs[order] = (results_of(o, host, stack), [m for m in o.console if "[wmcp-top]" not in m], o.errors)
        finally:
            o.page.context.close()
    assert runs["head"] == runs["none"] and runs["document-start"] == runs["none"], runs
    assert not [m for m in runs["none"][1] if "deprecated" in m]


def test_check_lanes_shows_mcp_calls_only_the_page_agent_sees(hosts: dict[str, Browser], eco_server: Server, relay_server: Any) -> None:
    """Only MCP-client calls, to tools @mcp-b/global took before the agent: the page agent records them on the
    transport (issue 46), the DevTools lane sees none (postMessage is not the browser's WebMCP). The lanes do
    not "agree": each call is a difference only the page agent saw, and no path is left that neither sees."""
    from relay_bridge.lanes import lanecheck
    from tests.browser.referee import CdpReferee, agent_calls

    referee: list[CdpReferee] = []
    o = open_stack(
        hosts["native"],
        eco_server,
        "global",
        "after-tools",
        agent_src=relay_server.http_url("/agent.js"),
        before=lambda p: referee.append(CdpReferee(p)),
    )
    try:
        got = mcp_calls(o)
        assert all(r["ok"] for r in got)
        sid = o.tools.evaluate("() => __webmcpPerf.sessionId")
        snap = relay_server.wait_for(lambda s: sid in s["sessions"] and len(s["sessions"][sid]["spans"]) == 3)
        agent = agent_calls(snap, [sid])
        cdp = referee[0].calls()
        differences = lanecheck.compare(agent, cdp)
        assert cdp == [] and [(d.tool, d.kind) for d in differences] == [(t, "missing-in-cdp") for t in sorted(TOOLS)], differences
        assert sorted((c.tool, c.resultBytes) for c in agent) == sorted((t, len(r["text"].encode())) for t, r in zip(TOOLS, got, strict=True))
        assert relay_server.call(lambda: lanecheck.blind_paths(relay_server.store.sessions.values())) == []
        assert lanecheck.summary(agent, cdp, differences, []).endswith("3 difference(s)")
    finally:
        o.page.context.close()


@pytest.mark.parametrize("host", ["native", "polyfill"])
def test_a_terminal_invoke_on_an_mcp_b_page_runs_once_through_the_registry(
    hosts: dict[str, Browser], eco_server: Server, tmp_path: Any, host: str
) -> None:
    """The relay's `invoke` calls @mcp-b/global's executeTool with the input the registry behind it takes
    (an object for Chromium, JSON text for the polyfill), and the call is one span."""
    import asyncio

    from tests.relay_thread import RelayThread

    relay = RelayThread(tmp_path / "invoke", allow_invoke=True)
    try:
        o = open_stack(hosts[host], eco_server, "global", "head", agent_src=relay.http_url("/agent.js"))
        sid = o.page.evaluate("() => __webmcpPerf.sessionId")
        relay.wait_for(lambda s: sid in s["sessions"] and len([t for t in s["sessions"][sid]["tools"].values() if t["registered"]]) == 3)
        got = asyncio.run_coroutine_threadsafe(relay.relay.invoke(sid, "echo", {"text": "via terminal"}, timeout=LIVENESS_S), relay.loop).result(
            LIVENESS_S
        )
        assert got.ok and json.loads(got.text) == {"content": [{"type": "text", "text": "echo:via terminal"}]}, got
        snap = relay.wait_for(lambda s: len(s["sessions"][sid]["spans"]) >= 1)
        assert [(s["tool"], s["resultBytes"]) for s in snap["sessions"][sid]["spans"]] == [("echo", utf8(got.text))]
        o.page.context.close()
    finally:
        relay.close()
