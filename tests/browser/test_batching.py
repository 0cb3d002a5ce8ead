"""The uplink's batch window in real Chromium against the real relay: 100 calls a page makes at 100/s reach the
relay in a few frames per 50 ms window (one `start` and one `spans` frame each, one ack back), not two frames
per call, and every span arrives exactly once."""

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
    # One start and one spans frame per window, a ledger every 250 ms, a status or two; before batching each
    # call cost two frames (200 here).
    windows = elapsed_ms / 50 + 2
    assert frames <= 2 * windows + elapsed_ms / 250 + 4, f"{frames} frames for {CALLS} calls in {elapsed_ms:.0f} ms"
    assert frames < CALLS, f"{frames} frames for {CALLS} calls: not batched"
    assert errors == []
