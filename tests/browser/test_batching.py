"""The uplink's batch window in real Chromium against the real relay: 100 calls a page makes at 100/s reach the
relay in a few frames (the first window 50 ms, then 250 ms while the page keeps calling: a `spans` frame and a
ledger each, one ack back; no `start` for calls that settled within their window), not two frames per call
(200 before batching, 44 with a fixed 50 ms window), and every span arrives exactly once."""

from __future__ import annotations

import pytest

from tests.browser.conftest import has_spans, open_page, wait_phase

pytestmark = pytest.mark.browser

CALLS = 100

RUN = """async (n) => {
  const mc = document.modelContext
  const tool = (await mc.getTools()).find((x) => x.name === "str")
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const wait = t0 + i * 10 - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    await mc.executeTool(tool, { q: "x" })
  }
  return performance.now() - t0
}"""


def test_a_hundred_calls_travel_in_batches(browser, pages, relay_server) -> None:
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    relay_server.wait_for(lambda snap: sid in snap["sessions"])
    frames0 = relay_server.snapshot()["counters"]["frames"]
    sent0 = page.evaluate("__webmcpPerf.relay().framesSent")
    elapsed_ms = page.evaluate(RUN, CALLS)
    snap = relay_server.wait_for(has_spans(sid, CALLS))
    spans = snap["sessions"][sid]["spans"]
    assert sorted(s["seq"] for s in spans) == list(range(CALLS)), "every call stored once"
    assert snap["counters"].get("duplicates", 0) == 0
    # Every frame the page wrote for the calls has reached the relay (this page is its only client):
    sent = page.evaluate("__webmcpPerf.relay().framesSent") - sent0
    snap = relay_server.wait_for(lambda s: s["counters"]["frames"] - frames0 >= sent)
    frames = snap["counters"]["frames"] - frames0
    assert frames == sent
    # A spans frame and a ledger per 250 ms window, a status or two; before batching each call cost two frames
    # (200 here), with a fixed 50 ms window 44.
    windows = elapsed_ms / 250 + 2
    print(f"{frames} frames for {CALLS} calls in {elapsed_ms:.0f} ms")
    assert frames <= 2 * windows + 4, f"{frames} frames for {CALLS} calls in {elapsed_ms:.0f} ms"
    assert frames < CALLS, f"{frames} frames for {CALLS} calls: not batched"
    assert errors == []
