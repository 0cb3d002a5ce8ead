"""One report shape on every path, valid under webmcp-profiler's schema (tests/compat/oracle.py): the page's
report(), the relay's export, a capture replayed, a session log replayed; and a webmcp-profiler page's 201-character
error span, relayed by this agent over the channel, in all of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relay_bridge.cli import write_reports
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.relay.replay import load_store
from tests.browser.conftest import RUN_ALL, has_spans, spans_of

from .oracle import assert_valid

pytestmark = pytest.mark.browser

TOOLS = ["obj", "str", "empty", "thrower", "flagged", "img", "slow"]

# What a webmcp-profiler page in another same-origin tab posts: its span, its message cap (200 + an ellipsis).
PROFILER_SPAN = """(id) => {
  const bc = new BroadcastChannel("webmcp-perf:" + location.origin)
  bc.postMessage({ kind: "span", span: {
    sessionId: id, seq: 0, tool: "legacy_tool", invokedAt: 10, settledAt: 14.5, wallMs: 4.5, blockingMs: 0, inputBytes: 2,
    resultBytes: 0, contentTypes: {}, imageBytes: 0, estInputTokens: 1, estTextTokens: 0, estImageTokens: 0, estTokens: 1,
    isError: true, error: "x".repeat(200) + "\\u2026", gapSincePrevCallMs: null, synthetic: false, serializable: true } })
  bc.close()
}"""


def test_every_path_writes_one_valid_report(browser, pages, relay_server, tmp_path: Path) -> None:
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    # The API answers in full once the rest of the agent is here, which this first use asks for (issue 47).
    page.wait_for_function("() => __webmcpPerf.status().phase !== 'loading'")
    sid = page.evaluate("__webmcpPerf.sessionId")
    assert page.evaluate("__webmcpPerf.registerReportTool()") is True
    page.evaluate(RUN_ALL, {"names": [*TOOLS, "obj", "get_perf_report"], "input": {"q": "x"}, "stringInput": False})

    # the page
    doc = page.evaluate("__webmcpPerf.report()")
    assert_valid(doc)
    assert {r["tool"] for r in doc["tools"]} == set(TOOLS), "registered-but-idle tools and the report tool have no row"
    assert doc["ledger"]["tools"]["get_perf_report"]["internal"] is True

    # a webmcp-profiler tab's span with a 201-character error, forwarded by this agent to the relay
    other = context.new_page()
    other.goto(pages.url("listener.html"))
    other.evaluate(PROFILER_SPAN, "beefcafe")
    snap = relay_server.wait_for(lambda s: has_spans(sid, len(TOOLS) + 1)(s) and len(spans_of(s, "beefcafe")) == 1)
    assert len(spans_of(snap, "beefcafe")[0]["error"]) == 201

    # the relay's export, for both sessions
    for s in (sid, "beefcafe"):
        exported = relay_server.call(lambda s=s: build_report(relay_server.store.sessions[s]))
        assert_valid(exported)
    relay_rows = relay_server.call(lambda: build_report(relay_server.store.sessions[sid]))["tools"]
    assert [r["tool"] for r in relay_rows] == [r["tool"] for r in doc["tools"]], "the relay writes the rows the page does"

    # a capture, replayed (what `wmcp-top replay FILE --report DIR` writes)
    capture = tmp_path / "capture.json"
    capture.write_text(json.dumps(relay_server.call(lambda: build_capture(relay_server.store))))
    written = write_reports(load_store(capture), tmp_path / "from-capture")
    reports = [json.loads(p.read_text()) for p in written if p.name not in ("capture.json", "findings.json")]
    assert {r["session"]["id"] for r in reports} >= {sid, "beefcafe"}
    for r in reports:
        assert_valid(r)
    for inner in json.loads((tmp_path / "from-capture" / "capture.json").read_text())["sessions"]:
        assert_valid(inner["report"])

    # the session log, replayed
    page.close()
    relay_server.stop()
    logs = sorted((relay_server.tmp / "logs").glob("session-*.jsonl"))
    assert logs
    for r in (build_report(s) for s in load_store(logs[0]).sessions.values()):
        assert_valid(r)
    relay_server.start(None)
    assert errors == []
    context.close()


def test_relay_false_keeps_spans_off_the_channel_in_chromium(browser, pages, relay_server) -> None:
    """000's privacy recipe: `relay: false` (and globalName: false, sample) — nothing reaches another same-origin tab,
    while the uplink still delivers to the terminal."""
    context = browser.new_context()
    listener = context.new_page()
    listener.goto(pages.url("listener.html"))
    page = context.new_page()
    page.goto(pages.url("native.html", relay_server, config={"relay": False}))
    page.evaluate("window.registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate(RUN_ALL, {"names": ["obj", "str"], "input": {}, "stringInput": False})
    relay_server.wait_for(has_spans(sid, 2))
    # a channel message would have been delivered before the relay stored the spans; prove the channel works at all
    page.evaluate("new BroadcastChannel('webmcp-perf:' + location.origin).postMessage({kind: 'probe'})")
    listener.wait_for_function("window.__channelLog.length >= 1")
    assert listener.evaluate("window.__channelLog") == ['{"kind":"probe"}']
    assert page.evaluate("__webmcpPerf.channel()") is None
    context.close()
