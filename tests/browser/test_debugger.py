"""The debugger lane (issue 8) and 001's facts (issue 7 item 2) in real Chromium with its native host:
the timeline and the derived tool set, terminal invoke round trips, the page's classifiers and consent,
and opt-in payload capture reaching OpenTelemetry only."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.exports.trace import trace_document
from relay_bridge.relay.server import InvokeRefused
from tests.browser.conftest import RUN_ALL, has_spans, open_page, session_of, session_where, spans_of
from tests.liveness import LIVENESS_S
from tests.otlp.receiver import Receiver
from tests.relay_thread import RelayThread

pytestmark = pytest.mark.browser

CANARY = "CANARY-dbg-9c41e0"
TOOL_KINDS = ("register", "unregister", "rejected", "context-provide", "context-clear", "redefined", "reload", "navigation")

REGISTER = """async (names) => {
  for (const name of names) await document.modelContext.registerTool({ name, description: "the " + name + " tool", inputSchema: { type: "object" }, execute: () => name })
}"""


def tool_timeline(session: dict[str, Any]) -> list[tuple[str, str]]:
    """The tool-category entries in page-clock order (as Session.timeline_view orders them)."""
    entries = sorted(session["timeline"], key=lambda e: e["at"])
    return [(e["kind"], e["detail"].get("tool", "")) for e in entries if e["kind"] in TOOL_KINDS]


def registered(session: dict[str, Any]) -> set[str]:
    return {name for name, t in session["tools"].items() if t["registered"]}


def everywhere_but_the_page(relay: RelayThread, sid: str) -> dict[str, str]:
    """The session log, the capture, the report and the trace, as text."""

    def build() -> dict[str, str]:
        relay.relay.session_log.flush()
        session = relay.store.sessions[sid]
        return {
            "capture": json.dumps(build_capture(relay.store), default=str),
            "report": json.dumps(build_report(session), default=str),
            "trace": json.dumps(trace_document([(sid, session.info.timeOrigin, session.spans())]), default=str),
        }

    out = relay.call(build)
    out["log"] = "\n".join(p.read_text(encoding="utf-8") for p in sorted(Path(relay.tmp, "logs").glob("*.jsonl")))
    assert out["log"], "the session log was written"
    return out


def test_timeline_and_derived_tools_on_the_native_host(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("debugger.html", relay_server))
    sid = page.evaluate("__webmcpPerf.sessionId")
    # Each step is its own timeline entry once the uplink is open; what a page did before that is restated as
    # its registry (one `register` a tool), and a loaded machine opened it after the first steps.
    page.wait_for_function("__webmcpPerf.relay().state === 'open'")
    out = page.evaluate("""async () => {
      const mc = document.modelContext
      const T = (name, description) => ({ name, description: description || "the " + name + " tool", inputSchema: { type: "object" }, execute: () => name })
      const out = {}
      await mc.registerTool(T("a"))
      const ac = new AbortController()
      await mc.registerTool(T("b"), { signal: ac.signal })
      try { await mc.registerTool(T("a", "a second a")) } catch (e) { out.duplicate = e.name + ": " + e.message }
      try { await mc.registerTool({ ...T("s"), inputSchema: "not a schema" }) } catch (e) { out.schema = e.name }
      ac.abort()
      await mc.registerTool(T("c"))
      out.listed = (await mc.getTools()).map((t) => t.name).sort()
      return out
    }""")
    # What Chromium 156 did.
    assert out == {"duplicate": "InvalidStateError: Duplicate tool name", "schema": "TypeError", "listed": ["a", "c"]}
    assert page.evaluate("typeof document.modelContext.provideContext") == "undefined", "the native host has no provideContext"
    snap = relay_server.wait_for(
        lambda s: session_of(s, sid) and registered(session_of(s, sid)) == {"a", "c"} and ("register", "c") in tool_timeline(session_of(s, sid))
    )
    session = session_of(snap, sid)
    assert tool_timeline(session) == [
        ("register", "a"),
        ("register", "b"),
        ("rejected", "a"),
        ("rejected", "s"),
        ("unregister", "b"),
        ("register", "c"),
    ], [(e["kind"], e["at"], e["detail"]) for e in session["timeline"]]
    rejected = [e["detail"] for e in session["timeline"] if e["kind"] == "rejected"]
    assert rejected[0] == {"tool": "a", "reason": "Duplicate tool name"}
    assert "inputSchema" in rejected[1]["reason"] and len(rejected[1]["reason"]) <= 200
    assert session["tools"]["a"]["registered"] and session["tools"]["a"]["descriptor"]["description"] == "the a tool", "the first a stands"
    assert "s" not in registered(session)
    assert sorted(page.evaluate("__webmcpPerf.ledger().registeredTools")) == ["a", "c"]

    # A reload: the old session ends, the new one starts with a reload event and only what it registers.
    page.reload()
    sid2 = page.evaluate("__webmcpPerf.sessionId")
    assert sid2 != sid
    page.evaluate(REGISTER, ["d"])
    # The registry is restated with the hello when the uplink opens and the reload event waits in its queue
    # behind it: on a loaded machine a snapshot can fall between the two, so the wait names both.
    snap = relay_server.wait_for(
        lambda s: (
            session_of(s, sid2)
            and registered(session_of(s, sid2)) == {"d"}
            and ("reload", "") in tool_timeline(session_of(s, sid2))
            and session_where(sid, lambda x: x["state"] != "live")(s)
        )
    )
    assert tool_timeline(session_of(snap, sid2)) == [("reload", ""), ("register", "d")]
    assert session_of(snap, sid)["timeline"][-1]["kind"] in ("bye", "disconnected")
    assert snap["counters"].get("rejected", 0) == 0, "every frame the agent sent was valid"
    assert errors == []
    page.context.close()


def test_invoke_round_trip_and_refusal(browser, pages, relay_server, tmp_path) -> None:
    relay = RelayThread(tmp_path / "invoke", allow_invoke=True)
    try:
        page, errors = open_page(browser, pages.url("debugger.html", relay, canary=CANARY))
        sid = page.evaluate("__webmcpPerf.sessionId")
        page.evaluate("async () => { for (const t of makeTools()) await document.modelContext.registerTool(t) }")
        relay.wait_for(lambda s: session_of(s, sid) and len(registered(session_of(s, sid))) == 17)

        def invoke(tool: str, args: dict[str, Any]) -> Any:
            return asyncio.run_coroutine_threadsafe(relay.relay.invoke(sid, tool, args, timeout=LIVENESS_S), relay.loop).result(LIVENESS_S + 5)

        got = invoke("echo", {"q": CANARY})
        direct = page.evaluate(RUN_ALL, {"names": ["echo", "str"], "input": {"q": CANARY}, "stringInput": False})
        assert got.ok and got.text == direct["echo"]["text"] and CANARY in got.text
        assert got.result_bytes == len(got.text.encode("utf-8")) and got.wall_ms >= 0
        got_str = invoke("str", {})
        assert got_str.text == direct["str"]["text"]
        failed = invoke("thrower", {})
        assert failed.ok is False and failed.error.startswith("UnknownError")
        missing = invoke("no_such_tool", {})
        assert missing.ok is False and missing.error == "unknown tool: no_such_tool"
        # Each call through executeTool is measured like any other.
        snap = relay.wait_for(has_spans(sid, 5))
        assert [s["tool"] for s in spans_of(snap, sid)] == ["echo", "echo", "str", "str", "thrower"]
        assert relay.store.counters["commands"] == 4
        for where, text in everywhere_but_the_page(relay, sid).items():
            assert CANARY not in text, f"the invoke result leaked into the {where}"
        assert errors == []
        page.context.close()
    finally:
        relay.close()

    # Without --allow-invoke the relay refuses, and the page never hears of it.
    page, errors = open_page(browser, pages.url("debugger.html", relay_server))
    sid = page.evaluate("__webmcpPerf.sessionId")
    page.evaluate(REGISTER, ["a"])
    relay_server.wait_for(lambda s: session_of(s, sid) and "a" in registered(session_of(s, sid)))
    with pytest.raises(InvokeRefused, match="allow-invoke"):
        asyncio.run_coroutine_threadsafe(relay_server.relay.invoke(sid, "a", {}), relay_server.loop).result(LIVENESS_S)
    assert page.evaluate("__webmcpPerf.spans().length") == 0
    assert not any('"type":"result"' in f for f in page.evaluate("window.__socketLog"))
    assert errors == []
    page.context.close()


def test_classifiers_redefinition_and_consent_reach_timeline_and_spans(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("debugger.html", relay_server, config={"fingerprintHandler": True}))
    sid = page.evaluate("__webmcpPerf.sessionId")
    # Registered once the uplink is open: changes made before it are restated as the registry stands when it
    # opens (one `register` for `reply`, not three), which a loaded machine once reached
    page.wait_for_function("__webmcpPerf.relay().state === 'open'")
    page.evaluate("""async () => {
      const mc = document.modelContext
      const reply = { name: "reply", title: "Reply", description: "Answer with what you were given", inputSchema: { type: "object" }, execute: (i) => i.v }
      window.__ac = new AbortController()
      await mc.registerTool({ ...reply }, { signal: __ac.signal })
      __ac.abort()
      // The same descriptor with another function: only the fingerprint tells.
      window.__ac = new AbortController()
      await mc.registerTool({ ...reply, execute: (i) => String(i.v) }, { signal: __ac.signal })
      __ac.abort()
      await mc.registerTool({ ...reply, description: "Answer, redefined", execute: (i) => i.v })
      await mc.registerTool({ name: "buy", description: "Buy it", inputSchema: { type: "object" }, execute: () => "bought" })
    }""")
    page.evaluate("__webmcpPerf.recordConsent({ shown: 'Reply', resolved: 'reply', granted: true })")
    page.evaluate("""async () => {
      const mc = document.modelContext
      const tools = await mc.getTools()
      const run = (name, v) => mc.executeTool(tools.find((t) => t.name === name), { v })
      await run("reply", "Error: out of stock")
      await run("reply", "Please confirm first")
      await run("reply", "Closed today")
      await run("reply", "THROW")
      __webmcpPerf.recordConsent({ shown: "Delete my account", resolved: "buy", granted: false })
      await run("buy", "x")
    }""")
    snap = relay_server.wait_for(has_spans(sid, 5))
    session = session_of(snap, sid)
    spans = spans_of(snap, sid)
    facts = [(s["tool"], s["isError"], s["errorType"], s["refusal"], s["consent"], s["consentMismatch"]) for s in spans]
    assert facts == [
        ("reply", True, "tool_error", None, "granted", False),
        ("reply", False, None, "confirm", None, None),
        ("reply", False, None, "unavailable", None, None),
        ("reply", False, None, None, None, None),
        ("buy", False, None, None, "denied", True),
    ]
    kinds = [(e["kind"], e["detail"]) for e in session["timeline"] if e["kind"] in ("redefined", "consent", "hook-failed")]
    assert kinds == [
        ("redefined", {"tool": "reply", "descriptor": False, "handler": True}),
        ("redefined", {"tool": "reply", "descriptor": True, "handler": True}),
        ("consent", {"shown": "Reply", "resolved": "reply", "granted": True, "mismatch": False}),
        ("hook-failed", {"hook": "isRefusal", "tool": "reply", "seq": 3, "error": "TypeError", "count": 1}),
        ("consent", {"shown": "Delete my account", "resolved": "buy", "granted": False, "mismatch": True}),
    ]
    registers = [e for e in session["timeline"] if e["kind"] == "register" and e["detail"]["tool"] == "reply"]
    assert len(registers) == 3  # the first registration and the two redefinitions
    # the relay derives redefinition from the frames too (it marks the OpenTelemetry spans with it)
    assert relay_server.call(lambda: relay_server.store.sessions[sid].tools["reply"].redefined) is True
    assert snap["counters"].get("rejected", 0) == 0
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("capture", [True, False], ids=["capture-on", "capture-off"])
def test_payload_capture_reaches_otlp_only(browser, pages, tmp_path, capture) -> None:
    receiver = Receiver()
    relay = RelayThread(tmp_path / "otlp", otlp=receiver.url)
    try:
        context = browser.new_context()
        listener = context.new_page()
        listener.goto(pages.url("listener.html"))
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(pages.url("native.html", relay, config={"capturePayloads": capture, "maxPayloadLength": 4096, "relay": True}, canary=CANARY))
        page.evaluate("window.registered")
        sid = page.evaluate("__webmcpPerf.sessionId")
        got = page.evaluate(RUN_ALL, {"names": ["echo", "str"], "input": {"q": CANARY}, "stringInput": False})
        relay.wait_for(has_spans(sid, 2))
        listener.wait_for_function('() => window.__channelLog.filter((m) => m.includes(\'"kind":"span"\')).length >= 2')

        def exported() -> list[dict[str, Any]]:
            return [s for s in receiver.snapshot() if s["name"].startswith("execute_tool ")]

        # The exporter ships every 0.5 s from its own thread: wait on the receiver, not on a clock.
        end = time.monotonic() + 10
        while len(exported()) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        spans = {s["attributes"]["gen_ai.tool.name"]: s for s in exported()}
        assert set(spans) == {"echo", "str"}
        attrs = spans["echo"]["attributes"]
        if capture:
            assert attrs["gen_ai.tool.call.arguments"] == json.dumps({"q": CANARY}, separators=(",", ":"))
            assert attrs["gen_ai.tool.call.result"] == got["echo"]["text"]
            assert spans["str"]["attributes"]["gen_ai.tool.call.result"] == got["str"]["text"]
        else:
            assert "gen_ai.tool.call.arguments" not in attrs and "gen_ai.tool.call.result" not in attrs
            assert all(CANARY.encode() not in body for body in receiver.bodies), "capture off: not even OTLP"
        places = everywhere_but_the_page(relay, sid)
        places["channel"] = "\n".join(listener.evaluate("window.__channelLog"))
        places["report()"] = json.dumps(page.evaluate("__webmcpPerf.report()"))
        places["spans()"] = json.dumps(page.evaluate("__webmcpPerf.spans()"))
        places["summary()"] = page.evaluate("__webmcpPerf.summary()")
        places["socket (not payload)"] = "\n".join(f for f in page.evaluate("window.__socketLog") if '"type":"payload"' not in f)
        for where, text in places.items():
            assert CANARY not in text, f"the canary leaked into {where}"
        payload_frames = [f for f in page.evaluate("window.__socketLog") if '"type":"payload"' in f]
        assert len(payload_frames) == (2 if capture else 0)
        assert relay.store.counters.get("payloads_dropped", 0) == 0
        assert errors == []
        context.close()
    finally:
        relay.close()
        receiver.close()
