"""attach --cdp end to end against Chromium's native WebMCP host: spans match the calls, no body is kept."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from relay_bridge.core.store import Store
from relay_bridge.exports.capture import build_capture
from relay_bridge.exports.report import build_report
from relay_bridge.lanes.cdp import attach
from relay_bridge.relay.sessionlog import SessionLog
from tests.lanes.helpers import CANARY, PageDriver, wait_store
from tests.liveness import LIVENESS_S

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_products", {"query": "mug", "limit": 3, "sort": "price"}),
    ("echo_note", {"note": CANARY}),
    ("unicode_numbers", {"n": 2}),
    ("ping_empty", {}),
    ("render_chart", {"kind": "bar"}),
    ("flaky_lookup", {"key": CANARY[:8]}),
    ("soft_error", {"code": 503}),
    ("slow_report", {"detail": "full"}),
    ("get_price", {"amount": 12.5, "currency": "EUR"}),
]


def cdp_sessions(store: Store) -> list:
    return [s for s in store.sessions.values() if s.agent.startswith("cdp/")]


def _utf8(text: str) -> int:
    return len(text.encode("utf-8"))


@pytest.mark.serial
async def test_attach_spans_match_executetool_calls(debug_browser, site, tmp_path: Path) -> None:
    store = Store()
    log = SessionLog(tmp_path / "logs")
    stop, ready = asyncio.Event(), asyncio.Event()
    lines = []
    watch = asyncio.create_task(
        attach(debug_browser.endpoint, store, stop_event=stop, ready=ready, on_frame=log.frame, on_call=lambda c: lines.append(repr(c)))
    )
    await asyncio.wait_for(ready.wait(), 20)
    # a tab opened after the watch began: it must be found and enabled too
    driver = await PageDriver.open(debug_browser.endpoint, site.url)
    try:
        registered = await driver.wait_ready()
        assert len(registered) == 12
        await wait_store(store, lambda st: any(len(s.tools) == 12 for s in cdp_sessions(st)))
        got = await driver.call_all(CALLS)
        await wait_store(store, lambda st: any(s.stats.totals.calls == len(CALLS) for s in cdp_sessions(st)))
    finally:
        await driver.close()
    stop.set()
    lane = await asyncio.wait_for(watch, 20)
    log.close()

    [session] = [s for s in cdp_sessions(store) if s.stats.totals.calls]
    assert session.agent == "cdp/chromium-156" or session.agent.startswith("cdp/chromium-")
    assert session.info.context == "top"
    assert any(e.kind == "cdp" for e in session.timeline)
    assert session.status is not None and "DevTools Protocol" in session.status.message
    spans = sorted(session.spans(), key=lambda s: s.seq)
    assert [s.tool for s in spans] == [name for name, _ in CALLS]
    for span, result, (name, _input) in zip(spans, got, CALLS):
        assert span.inputBytes == result["inputBytes"], name
        assert span.synthetic is False
        if result["ok"]:
            # what executeTool returned is exactly what the agent reads
            assert span.resultBytes == _utf8(result["value"]), (name, result["value"])
        else:
            assert span.resultBytes == 0
    by_name = {s.tool: s for s in spans}
    assert by_name["flaky_lookup"].isError and by_name["flaky_lookup"].error == "lookup failed: backend unavailable"
    assert by_name["flaky_lookup"].errorType == "Error"
    assert by_name["soft_error"].isError
    assert not by_name["search_products"].isError and not by_name["ping_empty"].isError
    assert by_name["ping_empty"].resultBytes == _utf8("Operation succeeded")
    assert by_name["render_chart"].imageBytes > 0 and by_name["render_chart"].contentTypes == {"image": 1, "text": 1}
    assert by_name["slow_report"].wallMs >= 50
    assert spans[0].gapSincePrevCallMs is None and all(s.gapSincePrevCallMs is not None for s in spans[1:])
    assert lane.counters["rejected"] == 0
    # tool descriptors came with the host's annotations
    assert session.tools["update_cart"].annotationsKept["readOnlyHint"] is False
    assert session.tools["search_products"].annotationsKept["readOnlyHint"] is True
    assert session.state == "ended"

    # no input or output text anywhere: store, report, capture, session log, call lines
    report = json.dumps(build_report(session), ensure_ascii=False)
    capture = json.dumps(build_capture(store), ensure_ascii=False)
    logged = b"".join(p.read_bytes() for p in (tmp_path / "logs").glob("*.jsonl"))
    assert b"echo_note" in logged  # the log is really there
    for where, blob in {
        "store": pickle.dumps(store),
        "report": report.encode(),
        "capture": capture.encode(),
        "log": logged,
        "lines": "\n".join(lines).encode(),
    }.items():
        assert CANARY.encode() not in blob, f"canary found in the {where}"
        assert CANARY[:8].encode() not in blob, f"canary input found in the {where}"


def test_attach_cli_headless_prints_calls_and_writes_reports(debug_browser, site, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    home = Path(env["WMCP_TOP_HOME"])
    out_dir = tmp_path / "reports"
    proc = subprocess.Popen(
        [sys.executable, "-m", "relay_bridge.lanes.cdp", "--cdp", debug_browser.endpoint, "--port", "0", "--report-on-exit", str(out_dir)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert "watching" in first and "DevTools Protocol" in first, first + proc.stderr.read()

        async def drive() -> list:
            driver = await PageDriver.open(debug_browser.endpoint, site.url)
            try:
                await driver.wait_ready()
                # the watcher says when it has the tab's session (WebMCP enabled): only then is every call seen
                while "new session, watched over CDP" not in (line := await asyncio.to_thread(proc.stdout.readline)):
                    assert line, proc.stderr.read()
                return await driver.call_all(CALLS[:3])
            finally:
                await driver.close()

        got = asyncio.run(drive())
        assert len(got) == 3
        call_lines = [proc.stdout.readline() for _ in range(3)]
        assert all(line.split()[1].startswith("#") for line in call_lines), call_lines
        assert [line.split()[2] for line in call_lines] == ["search_products", "echo_note", "unicode_numbers"]
        assert all(" ok " in line for line in call_lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=LIVENESS_S)
    assert proc.returncode == 0, err
    reports = sorted(out_dir.glob("*.json"))
    assert any(p.name == "capture.json" for p in reports) and len(reports) >= 2
    blobs = [p.read_bytes() for p in reports] + [p.read_bytes() for p in home.rglob("*") if p.is_file()]
    blobs.append((first + "".join(call_lines) + rest).encode())
    for blob in blobs:
        assert CANARY.encode() not in blob


def test_attach_unreachable_endpoint_says_how_to_start_chrome(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "relay_bridge.lanes.cdp", "--cdp", "http://127.0.0.1:9", "--port", "0", "--no-log"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=LIVENESS_S,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wmcp-top: ")
    assert "--remote-debugging-port" in lines[0]


async def test_calls_open_when_the_page_navigates_are_canceled(debug_browser, site) -> None:
    store = Store()
    stop, ready = asyncio.Event(), asyncio.Event()
    watch = asyncio.create_task(attach(debug_browser.endpoint, store, stop_event=stop, ready=ready))
    await asyncio.wait_for(ready.wait(), LIVENESS_S)
    driver = await PageDriver.open(debug_browser.endpoint, site.url)
    try:
        await driver.wait_ready()
        await wait_store(store, lambda st: any(len(s.tools) == 12 for s in cdp_sessions(st)))
        [first] = [s for s in cdp_sessions(store) if len(s.tools) == 12]
        # start the slow call and leave it running (held for a minute: at 60 ms a loaded machine saw it settle
        # before the navigation began, and nothing was canceled)
        await driver.evaluate(
            "(async () => { window.__slowReportMs = 60000; const mc = document.modelContext; const t = (await mc.getTools()).find(t => t.name === 'slow_report'); mc.executeTool(t, {}); return 1; })()"
        )
        await wait_store(store, lambda st: bool(first.inflight))
        await driver.navigate(site.url + "?again")
        await wait_store(store, lambda st: first.state == "ended" and any(len(s.tools) == 12 for s in cdp_sessions(st) if s is not first))
    finally:
        await driver.close()
    stop.set()
    await asyncio.wait_for(watch, LIVENESS_S)
    [span] = first.spans()
    assert span.tool == "slow_report" and span.isError and span.error == "Canceled: navigated"
    assert any(e.kind == "toolcancel" for e in first.timeline)
    assert first.bye_reason == "navigated"
    second = [s for s in cdp_sessions(store) if s is not first and len(s.tools) == 12]
    assert second and second[0].info.path == "/index.html"
