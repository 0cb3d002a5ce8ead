"""The same agent under hosts that are not Chromium's: the @mcp-b/webmcp-polyfill IIFE (npm, pinned in
page_agent/package.json) and a legacy navigator.modelContext host with provideContext, clearContext and
unregisterTool. Both run in Chromium without its WebMCP flags, so they own the registry."""

from __future__ import annotations

import pytest

from tests.browser.conftest import RUN_ALL, has_spans, open_page, session_of, session_where, spans_of, wait_phase

pytestmark = pytest.mark.browser

NAMES = ["obj", "str", "empty", "undef", "env", "strenv", "thrower", "cyclic", "annotated"]


def test_polyfill_host(plain_browser, pages, relay_server, polyfill_file) -> None:
    page, errors = open_page(plain_browser, pages.url("polyfill.html", relay_server))
    assert page.evaluate("document.modelContext.__isWebMCPPolyfill") is True, "the polyfill, not a native host"
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    assert page.evaluate("__webmcpPerf.ledger().hostLocation") == "document"
    # The polyfill's executeTool takes the input as JSON text.
    got = page.evaluate(RUN_ALL, {"names": NAMES, "input": {"q": "x"}, "stringInput": True})
    # the host's kept annotations come in a frame of their own, which need not precede the spans
    snap = relay_server.wait_for(lambda s: has_spans(sid, len(NAMES))(s) and session_of(s, sid)["tools"]["annotated"]["annotationsKept"] is not None)
    by_tool = {s["tool"]: s for s in spans_of(snap, sid)}
    assert got["empty"]["text"] == "Operation succeeded"
    for name, result in got.items():
        span = by_tool[name]
        if result["ok"]:
            assert span["resultBytes"] == len(result["text"].encode("utf-8")), name
        assert span["isError"] == (not result["ok"]), name
    assert by_tool["empty"]["substituted"] is True
    listed = page.evaluate("async () => Object.fromEntries((await document.modelContext.getTools()).map((t) => [t.name, t.annotations ?? null]))")
    tools = session_of(snap, sid)["tools"]
    assert tools["annotated"]["annotationsKept"] == listed["annotated"]
    assert "destructiveHint" not in tools["annotated"]["annotationsKept"]
    # AbortSignal unregisters through the polyfill too.
    page.evaluate("""async () => {
      const ac = new AbortController()
      await document.modelContext.registerTool({ name: "temp", description: "short-lived", execute: () => 1 }, { signal: ac.signal })
      ac.abort()
    }""")
    snap = relay_server.wait_for(
        session_where(sid, lambda x: any(e["kind"] == "unregister" and e["detail"]["tool"] == "temp" for e in x["timeline"]))
    )
    assert "temp" not in page.evaluate("__webmcpPerf.ledger().registeredTools")
    assert errors == []


def test_legacy_navigator_host(plain_browser, pages, relay_server) -> None:
    page, errors = open_page(plain_browser, pages.url("legacy.html", relay_server))
    sid = page.evaluate("__webmcpPerf.sessionId")
    assert page.evaluate("__webmcpPerf.ledger().hostLocation") == "navigator"
    assert page.evaluate("Object.hasOwn(navigator.modelContext, 'provideContext')"), "own-property methods, patched in place"
    page.evaluate("navigator.modelContext.provideContext({ tools: makeTools().filter((t) => ['obj', 'str', 'empty'].includes(t.name)) })")
    assert page.evaluate("__webmcpPerf.ledger().registeredTools") == ["obj", "str", "empty"]
    texts = page.evaluate("""async () => ({
      obj: await navigator.modelContext.callTool("obj", { q: "x" }),
      str: await navigator.modelContext.callTool("str", {}),
      empty: await navigator.modelContext.callTool("empty", {}),
    })""")
    snap = relay_server.wait_for(has_spans(sid, 3))
    by_tool = {s["tool"]: s for s in spans_of(snap, sid)}
    for name, text in texts.items():
        assert by_tool[name]["resultBytes"] == len(text.encode("utf-8")), name
    # registerTool and unregisterTool, then provideContext replacing everything, then clearContext.
    page.evaluate("navigator.modelContext.registerTool(makeTools().find((t) => t.name === 'arr'))")
    page.evaluate("navigator.modelContext.unregisterTool('str')")
    assert page.evaluate("__webmcpPerf.ledger().registeredTools") == ["obj", "empty", "arr"]
    page.evaluate("navigator.modelContext.provideContext({ tools: makeTools().filter((t) => t.name === 'num') })")
    assert page.evaluate("__webmcpPerf.ledger().registeredTools") == ["num"]
    page.evaluate("navigator.modelContext.clearContext()")
    assert page.evaluate("__webmcpPerf.ledger().registeredTools") == []
    assert page.evaluate("navigator.modelContext.listTools()") == []
    gone = {"obj", "str", "empty", "arr", "num"}
    snap = relay_server.wait_for(session_where(sid, lambda x: {e["detail"]["tool"] for e in x["timeline"] if e["kind"] == "unregister"} >= gone))
    assert session_of(snap, sid)["totals"]["schemaBytes"] == 0, "nothing registered any more"
    assert errors == []


TIMELINE_KINDS = ("register", "unregister", "rejected", "context-provide", "context-clear", "reload")


def test_legacy_host_timeline_and_derived_tools(plain_browser, pages, relay_server) -> None:
    """Issue 8 against the legacy host: register, duplicate (refused), unregister, provideContext, clearContext,
    reload, as ordered events; the relay's derived tool set matches what the host holds at every step."""
    page, errors = open_page(plain_browser, pages.url("legacy.html", relay_server))
    sid = page.evaluate("__webmcpPerf.sessionId")

    def derived(snap):
        return {n for n, t in session_of(snap, sid)["tools"].items() if t["registered"]}

    def host_holds():
        return set(page.evaluate("navigator.modelContext.listTools()"))

    steps = [
        ("navigator.modelContext.registerTool(makeTools().find((t) => t.name === 'obj'))", {"obj"}),
        (
            "(() => { try { navigator.modelContext.registerTool(makeTools().find((t) => t.name === 'obj')) } catch (e) { return e.message } })()",
            {"obj"},
        ),
        ("navigator.modelContext.registerTool(makeTools().find((t) => t.name === 'str'))", {"obj", "str"}),
        ("navigator.modelContext.unregisterTool('obj')", {"str"}),
        ("navigator.modelContext.provideContext({ tools: makeTools().filter((t) => ['num', 'arr'].includes(t.name)) })", {"num", "arr"}),
        ("navigator.modelContext.clearContext()", set()),
        ("navigator.modelContext.provideContext({ tools: makeTools().filter((t) => t.name === 'env') })", {"env"}),
    ]
    for i, (script, expected) in enumerate(steps):
        page.evaluate(script)
        assert host_holds() == expected, script
        marker = f"m{i}"
        page.evaluate("(m) => __webmcpPerf.recordConsent({ shown: m, resolved: m, granted: true })", marker)  # a barrier event
        snap = relay_server.wait_for(
            lambda s, m=marker: (
                session_of(s, sid) and any(e["kind"] == "consent" and e["detail"]["resolved"] == m for e in session_of(s, sid)["timeline"])
            )
        )
        assert derived(snap) == expected, script
    timeline = sorted(session_of(snap, sid)["timeline"], key=lambda e: e["at"])
    seen = [
        (e["kind"], e["detail"].get("tool", e["detail"].get("tools", e["detail"].get("withdrawn", ""))))
        for e in timeline
        if e["kind"] in TIMELINE_KINDS
    ]
    assert seen == [
        ("register", "obj"),
        ("rejected", "obj"),
        ("register", "str"),
        ("unregister", "obj"),
        ("context-provide", 2),
        ("unregister", "str"),
        ("register", "num"),
        ("register", "arr"),
        ("context-clear", 2),
        ("unregister", "num"),
        ("unregister", "arr"),
        ("context-provide", 1),
        ("register", "env"),
    ]
    rejected = [e["detail"]["reason"] for e in timeline if e["kind"] == "rejected"]
    assert rejected == ["duplicate tool obj"]

    page.reload()
    sid_old, sid = sid, page.evaluate("__webmcpPerf.sessionId")
    page.evaluate("navigator.modelContext.registerTool(makeTools().find((t) => t.name === 'img'))")
    snap = relay_server.wait_for(lambda s: session_of(s, sid) and derived(s) == {"img"} and session_of(s, sid_old)["state"] != "live")
    kinds = [e["kind"] for e in sorted(session_of(snap, sid)["timeline"], key=lambda e: e["at"]) if e["kind"] in TIMELINE_KINDS]
    assert kinds == ["reload", "register"]
    assert snap["counters"].get("rejected", 0) == 0
    assert errors == []
