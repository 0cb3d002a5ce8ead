"""The privacy promise end to end: a canary placed in tool inputs and results in a real Chromium page appears
nowhere the product writes or shows — not on the socket, in the relay's store, the session log, the exports
made from the keyboard (report, capture, trace, SVG), nor on any screen of the running app.

(The page agent's own suite checks the BroadcastChannel and the page-side API: tests/browser/test_page_safety.py.
The browser extension's lane has its canary checks in tests/extension/test_extension.py: relay store, session log
and the extension's own storage, through a worker stop and relay restarts.)
"""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.async_api import async_playwright

from relay_bridge.findings.cli import load as diagnose_load
from relay_bridge.findings.document import session_findings
from relay_bridge.relay.server import RelayConfig
from tests.browser.conftest import BASE_ARGS, RUN_ALL, WEBMCP_ARGS, PageServer, headless_path
from tests.liveness import LIVENESS_S
from tui.app import WmcpTopApp

pytestmark = pytest.mark.browser

CANARY = "CANARY-screen-3c9e"
TOKEN = "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"
NAMES = ["obj", "str", "empty", "env", "strenv", "img", "flagged", "thrower", "cyclic", "slow", "echo", "annotated"]


async def test_canary_is_nowhere_on_screen_in_exports_or_logs(tmp_path: Path) -> None:
    pages = PageServer()
    app = WmcpTopApp(relay_config=RelayConfig(port=0, token=TOKEN, log_dir=tmp_path / "logs"), export_dir=tmp_path / "exports")
    screens: dict[str, str] = {}
    try:
        async with app.run_test(size=(160, 50)) as pilot, async_playwright() as pw:
            await pilot.pause()
            assert app.relay is not None
            relay = app.relay
            browser = await pw.chromium.launch(executable_path=headless_path(), args=BASE_ARGS + WEBMCP_ARGS)
            page = await browser.new_page()
            agent = f"http://127.0.0.1:{relay.port}/agent.js?t={TOKEN}"
            await page.goto(f"http://127.0.0.1:{pages.port}/native.html?" + urlencode({"agent": agent, "canary": CANARY}))
            await page.evaluate("window.registered")
            got = await page.evaluate(RUN_ALL, {"names": NAMES, "input": {"q": CANARY}, "stringInput": False})
            # The canary really travelled through the tools and back to the browser's agent.
            assert CANARY in got["str"]["text"] and CANARY in got["echo"]["text"] and CANARY in got["env"]["text"]
            sid = await page.evaluate("__webmcpPerf.sessionId")

            deadline = time.monotonic() + 15
            while not (sid in relay.store.sessions and relay.store.sessions[sid].stats.totals.calls >= len(NAMES)):
                assert time.monotonic() < deadline, "the spans never reached the app's relay"
                await pilot.pause(0.02)
            # ...and the dashboard shows them.
            while "echo" not in app.export_screenshot():
                assert time.monotonic() < deadline, "the table never showed the tools"
                await pilot.pause(0.02)

            screens["main"] = app.export_screenshot()
            for key, name in [
                ("l", "timeline"),
                ("escape", None),
                ("i", "inspector"),
                ("escape", None),
                ("d", "status"),
                ("escape", None),
                ("f", "findings"),
                ("escape", None),
                ("question_mark", "help"),
                ("escape", None),
            ]:
                await pilot.press(key)
                await pilot.pause()
                if name:
                    screens[name] = app.export_screenshot()
            for key in ("e", "E", "t", "ctrl+s"):
                await pilot.press(key)
            deadline = time.monotonic() + 10
            while len(list((tmp_path / "exports").glob("*"))) < 5:  # e writes the findings beside the report
                assert time.monotonic() < deadline, "the keyboard exports were not all written"
                await pilot.pause(0.05)
            socket_log = await page.evaluate("window.__socketLog")
            store_bytes = pickle.dumps(dict(relay.store.sessions.items()))
            relay.session_log.flush()
            await browser.close()
    finally:
        pages.close()

    assert any('"type":"spans"' in frame for frame in socket_log), "the socket was observed"
    exports = sorted((tmp_path / "exports").iterdir())
    assert {p.suffix for p in exports} == {".json", ".svg"} and len(exports) >= 5
    assert any(p.name.startswith(f"findings-{sid}-") for p in exports), "the findings document was written (and is checked below)"
    places = {"socket": "\n".join(socket_log), "store": store_bytes.decode("latin-1")}
    places.update({f"screen:{name}": text for name, text in screens.items()})
    places.update({f"export:{p.name}": p.read_text(encoding="utf-8") for p in exports})
    places.update({f"log:{p.name}": p.read_text(encoding="utf-8") for p in (tmp_path / "logs").glob("*.jsonl")})
    assert any("echo" in text for name, text in places.items() if name.startswith("log:")), "the log was written"
    # `wmcp-top diagnose` on that log: its findings document (and the text it prints from the same findings).
    logged = diagnose_load(min((tmp_path / "logs").glob("*.jsonl")))
    places["diagnose:log"] = json.dumps(session_findings(logged.sessions), ensure_ascii=False)
    for where, text in places.items():
        assert CANARY not in text, f"the canary leaked into {where}"
    report = json.loads(next(p for p in exports if p.name.startswith("report")).read_text())
    assert report["format"] == "webmcp-perf-report/2" and report["ledger"]["totals"]["calls"] == len(NAMES)


async def _page_with_capture(pw, relay, pages: PageServer, canary: str):
    browser = await pw.chromium.launch(executable_path=headless_path(), args=BASE_ARGS + WEBMCP_ARGS)
    page = await browser.new_page()
    agent = f"http://127.0.0.1:{relay.port}/agent.js?t={TOKEN}"
    config = json.dumps({"capturePayloads": True, "maxPayloadLength": 64})
    await page.goto(f"http://127.0.0.1:{pages.port}/native.html?" + urlencode({"agent": agent, "canary": canary, "config": config}))
    await page.evaluate("window.registered")
    return browser, page


async def _wait(pilot, predicate, what: str, timeout: float = LIVENESS_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        await pilot.pause(0.02)


async def test_payloads_need_both_opt_ins_and_stay_bounded_in_memory(tmp_path: Path) -> None:
    """Issue 17 item 5. Default (the page allows capture, the terminal does not ask): the relay's welcome asks
    for no payloads, so no body crosses the socket at all. With --show-payloads: the body reaches the detail
    pane of the shown session and nothing written (log, exports); the holder keeps at most its bound."""
    pages = PageServer()
    try:
        # 1. The page opts in, the terminal does not: nothing leaves the page.
        app = WmcpTopApp(relay_config=RelayConfig(port=0, token=TOKEN, log_dir=tmp_path / "logs1"), export_dir=tmp_path / "exports1")
        async with app.run_test(size=(160, 50)) as pilot, async_playwright() as pw:
            await pilot.pause()
            relay = app.relay
            assert relay is not None and relay.payloads is None
            browser, page = await _page_with_capture(pw, relay, pages, CANARY)
            await page.evaluate(RUN_ALL, {"names": ["echo", "str"], "input": {"q": CANARY}, "stringInput": False})
            sid = await page.evaluate("__webmcpPerf.sessionId")
            await _wait(pilot, lambda: sid in relay.store.sessions and relay.store.sessions[sid].stats.totals.calls >= 2, "spans")
            socket_log = await page.evaluate("window.__socketLog")
            await browser.close()
        assert not any('"type":"payload"' in frame for frame in socket_log), "no payload frame without a terminal that asks"
        assert CANARY not in "\n".join(socket_log)

        # 2. Both opt in: shown in the detail only; the holder is bounded.
        app = WmcpTopApp(
            relay_config=RelayConfig(port=0, token=TOKEN, log_dir=tmp_path / "logs2", show_payloads=True), export_dir=tmp_path / "exports2"
        )
        async with app.run_test(size=(160, 50)) as pilot, async_playwright() as pw:
            await pilot.pause()
            relay = app.relay
            assert relay is not None and relay.payloads is not None
            browser, page = await _page_with_capture(pw, relay, pages, CANARY)
            sid = await page.evaluate("__webmcpPerf.sessionId")
            await _wait(pilot, lambda: relay.payloads.session == sid, "the page's session is the shown one")
            await page.evaluate(RUN_ALL, {"names": ["echo"], "input": {"q": CANARY}, "stringInput": False})
            await _wait(pilot, lambda: relay.payloads.call(sid, 0) is not None, "the first call's payload is held")
            assert CANARY in (relay.payloads.call(sid, 0).arguments or "")
            bound = relay.payloads.max_entries
            more = bound + 20
            await page.evaluate(
                """async (n) => {
              const mc = document.modelContext
              const tools = await mc.getTools()
              const echo = tools.find((t) => t.name === "echo")
              for (let i = 0; i < n; i++) await mc.executeTool(echo, { q: "later " + i })
            }""",
                more,
            )
            await _wait(pilot, lambda: relay.store.sessions[sid].stats.totals.calls >= more + 1, "the later calls")
            await _wait(pilot, lambda: relay.payloads.call(sid, more) is not None, "the newest payload is held")
            assert len(relay.payloads) == bound and relay.payloads.dropped >= 21 and relay.payloads.chars <= relay.payloads.max_chars
            assert relay.payloads.call(sid, 0) is None, "the oldest (the canary's) was dropped by the bound"
            for key in ("e", "E", "t", "ctrl+s"):
                await pilot.press(key)
            await _wait(pilot, lambda: len(list((tmp_path / "exports2").glob("*"))) >= 4, "the keyboard exports")
            relay.session_log.flush()
            await browser.close()
        written = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "exports2").iterdir()}
        written.update({p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "logs2").glob("*.jsonl")})
        assert any(name.endswith(".jsonl") for name in written), "the log was written"
        for name, text in written.items():
            assert CANARY not in text and "later 1" not in text, f"a body was written to {name}"
    finally:
        pages.close()
