"""The agent in real Chromium against its native WebMCP host: tools registered with
document.modelContext.registerTool, called by the browser's own executeTool, spans checked in the relay."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import RUN_ALL, has_spans, open_page, session_of, session_where, spans_of, wait_phase

pytestmark = pytest.mark.browser

ALL = [
    "obj",
    "str",
    "empty",
    "undef",
    "nul",
    "num",
    "arr",
    "env",
    "strenv",
    "img",
    "flagged",
    "thrower",
    "rejecter",
    "cyclic",
    "slow",
    "annotated",
    "echo",
]


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def test_spans_match_what_the_browser_returned(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    got = page.evaluate(RUN_ALL, {"names": ALL, "input": {"q": "tea ☕"}, "stringInput": False})
    snap = relay_server.wait_for(has_spans(sid, len(ALL)))
    session = session_of(snap, sid)
    by_tool = {s["tool"]: s for s in session["spans"]}
    facts = {by_tool[name]["seq"]: name for name in by_tool}
    assert sorted(by_tool) == sorted(ALL)

    # What the browser did, measured (design section 4): these hold on Chromium 156.
    assert got["empty"] == {"ok": True, "text": "Operation succeeded"}
    assert got["undef"] == {"ok": True, "text": "undefined"}
    assert got["num"] == {"ok": True, "text": "NaN"}
    assert json.loads(got["env"]["text"])["content"][0]["type"] == "text", "the envelope is not unwrapped"
    for name in ("thrower", "rejecter", "cyclic"):
        assert got[name] == {"ok": False, "error": "UnknownError"}, name

    for name, result in got.items():
        span = by_tool[name]
        if result["ok"]:
            assert span["resultBytes"] == utf8_len(result["text"]), name
        else:
            assert span["resultBytes"] == 0, name
        # An error is what the browser reported, or an isError envelope.
        assert span["isError"] == (not result["ok"] or name == "flagged"), name
        assert span["inputBytes"] == utf8_len(json.dumps({"q": "tea ☕"}, ensure_ascii=False, separators=(",", ":"))), name
        assert span["estTokens"] == span["estInputTokens"] + span["estTextTokens"] + span["estImageTokens"]
        assert span["wallMs"] >= 0 and span["settledAt"] >= span["invokedAt"]

    seq_facts = {facts[seq]: f for seq, f in session["facts"].items()}
    assert by_tool["empty"]["substituted"] is True and seq_facts["empty"]["substituted"] is True
    assert by_tool["str"]["substituted"] is False
    assert seq_facts["env"]["envelope"] is True
    assert seq_facts["strenv"]["envelope"] is True and seq_facts["strenv"]["resultType"] == "string"
    assert by_tool["strenv"]["contentTypes"] == {"text": 1, "image": 1}
    assert by_tool["img"]["imageBytes"] == 8000
    assert by_tool["img"]["estImageTokens"] == 1500
    assert seq_facts["cyclic"]["resultType"] == "unserializable"
    assert by_tool["thrower"]["error"] == "card declined"
    assert by_tool["rejecter"]["error"] == "out of stock"
    assert by_tool["slow"]["wallMs"] >= 25
    assert all(s["overlapped"] is False for s in session["spans"]), "one call at a time"
    assert session["spans"][0]["gapSincePrevCallMs"] is None
    assert all(s["gapSincePrevCallMs"] is not None for s in session["spans"][1:])

    assert session["info"]["context"] == "top"
    assert session["phase"] == "measuring"
    assert session["lost"] == 0
    assert not session["inflight"], "every start was closed by its span"
    assert errors == []


def test_annotations_kept_and_dropped_match_get_tools(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    listed = page.evaluate("async () => Object.fromEntries((await document.modelContext.getTools()).map((t) => [t.name, t.annotations]))")
    # What the host kept is read from its list once the rest of the agent is here: a frame after the registrations.
    snap = relay_server.wait_for(
        lambda s: (
            session_of(s, sid)
            and len(session_of(s, sid)["tools"]) == len(ALL)
            and session_of(s, sid)["tools"]["annotated"]["annotationsKept"] is not None
        )
    )
    tools = session_of(snap, sid)["tools"]
    ann = tools["annotated"]
    assert ann["annotationsSent"] == {
        "readOnlyHint": True,
        "destructiveHint": True,
        "idempotentHint": False,
        "untrustedContentHint": True,
        "openWorldHint": True,
    }
    assert ann["annotationsKept"] == listed["annotated"]
    dropped = set(ann["annotationsSent"]) - set(ann["annotationsKept"])
    assert {"destructiveHint", "idempotentHint", "openWorldHint"} <= dropped
    assert ann["annotationsKept"]["readOnlyHint"] is True
    for name, rec in tools.items():
        assert rec["registered"] and not rec["internal"] and rec["rejected"] is None
        assert rec["descriptor"]["name"] == name
        text = json.dumps(rec["descriptor"], ensure_ascii=False, separators=(",", ":"))
        assert rec["schemaBytes"] == utf8_len(text), name
    # A duplicate is refused by the host and reported as refused, not as a second tool.
    err = page.evaluate(
        """async () => { try { await document.modelContext.registerTool({ name: "obj", description: "again", execute() {} }); return null } catch (e) { return e.name } }"""
    )
    assert err == "InvalidStateError"
    snap = relay_server.wait_for(session_where(sid, lambda x: any(e["kind"] == "rejected" for e in x["timeline"])))
    [refused] = [e for e in session_of(snap, sid)["timeline"] if e["kind"] == "rejected"]
    assert refused["detail"] == {"tool": "obj", "reason": "Duplicate tool name"}
    assert session_of(snap, sid)["tools"]["obj"]["registered"] is True, "the first registration stands"
    assert errors == []


def test_a_hanging_call_is_in_flight_while_it_hangs(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate("""async () => {
      window.__release = null
      await document.modelContext.registerTool({ name: "hang", description: "waits", execute: () => new Promise((r) => (window.__release = r)) })
      const [t] = (await document.modelContext.getTools()).filter((x) => x.name === "hang")
      window.__pending = document.modelContext.executeTool(t, {})
    }""")
    snap = relay_server.wait_for(lambda s: session_of(s, sid) and any(c["tool"] == "hang" for c in session_of(s, sid)["inflight"].values()))
    assert spans_of(snap, sid) == []
    page.evaluate("window.__release('done'); window.__pending")
    snap = relay_server.wait_for(has_spans(sid, 1))
    assert spans_of(snap, sid)[0]["tool"] == "hang"
    relay_server.wait_for(session_where(sid, lambda x: not x["inflight"]))
    assert errors == []


def test_report_tool_is_internal_and_never_measured(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate(RUN_ALL, {"names": ["obj"], "input": {}, "stringInput": False})
    assert page.evaluate("__webmcpPerf.registerReportTool()") is True
    out = page.evaluate(RUN_ALL, {"names": ["get_perf_report"], "input": {"view": "summary"}, "stringInput": False})
    view = json.loads(out["get_perf_report"]["text"])
    sc = view["structuredContent"]
    assert sc["ok"] is True and sc["meta"]["view"] == "summary" and sc["split"].startswith("schemas ")
    snap = relay_server.wait_for(session_where(sid, lambda x: "get_perf_report" in x["tools"]))
    assert session_of(snap, sid)["tools"]["get_perf_report"]["internal"] is True
    page.evaluate(RUN_ALL, {"names": ["obj"], "input": {}, "stringInput": False})
    snap = relay_server.wait_for(has_spans(sid, 2))
    assert [s["tool"] for s in spans_of(snap, sid)] == ["obj", "obj"]
    assert errors == []


def test_long_task_blocking_reaches_the_relay(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate("""async () => {
      const spin = (ms) => { const end = performance.now() + ms; while (performance.now() < end) {} }
      await document.modelContext.registerTool({ name: "busy", description: "blocks the main thread", execute: () => { spin(120); return "done" } })
      await document.modelContext.registerTool({ name: "idle", description: "waits without blocking", execute: () => new Promise((r) => setTimeout(() => r("done"), 120)) })
    }""")
    page.evaluate(RUN_ALL, {"names": ["busy", "idle"], "input": {}, "stringInput": False})
    # Chromium delivers the Long Task entry after the task: the span carries it, or a late update corrects it.
    snap = relay_server.wait_for(
        lambda s: any(x["tool"] == "busy" and x["blockingMs"] >= 100 for x in spans_of(s, sid)) and len(spans_of(s, sid)) == 2
    )
    by_tool = {x["tool"]: x for x in spans_of(snap, sid)}
    assert by_tool["busy"]["blockingMs"] <= by_tool["busy"]["wallMs"] + 1
    assert by_tool["idle"]["blockingMs"] == 0
    page.wait_for_function("__webmcpPerf.ledger().totals.blockingMs >= 100")
    totals = page.evaluate("__webmcpPerf.ledger().totals")
    assert totals["blockingMs"] == pytest.approx(sum(x["blockingMs"] for x in page.evaluate("__webmcpPerf.spans()")))
    assert errors == []
