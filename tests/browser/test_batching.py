"""The uplink's batch window in real Chromium against the real relay: 100 calls a page makes at 100/s reach the
relay in a few frames (the first window 50 ms, then 250 ms while the page keeps calling: a `spans` frame and a
ledger each, one ack back; no `start` for calls that settled within their window), not two frames per call
(200 before batching, 44 with a fixed 50 ms window), and every span arrives exactly once. The BroadcastChannel
mirror posts on the same window: every span still its own webmcp-profiler message, in order, but posted in a few
bursts (each post wakes the browser process: one per span cost a page calling 100 times a second 2.5 points of a
core). The accounting runs on the same window too: a window's calls sized and turned into spans in one go."""

from __future__ import annotations

import itertools
import json
import time

import pytest
from playwright.sync_api import Page

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


def _kind(payload: str | bytes) -> str:
    try:
        return str(json.loads(payload).get("type"))
    except (ValueError, AttributeError):
        return "?"


@pytest.mark.serial  # its bound is the windows the run's own elapsed time allows: a late timer shortens windows
def test_a_hundred_calls_travel_in_batches(browser, pages, relay_on_each_cadence) -> None:
    relay_server = relay_on_each_cadence
    # What the page writes on its socket (each frame's type and when), for the message of a count over its bound.
    written: list[tuple[float, str]] = []

    def listen(page: Page) -> None:
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: written.append((time.monotonic(), _kind(payload)))))

    page, errors = open_page(browser, pages.url("native.html", relay_server), before=listen)
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    # Settled before the count starts: the relay holds every tool and every frame the page wrote (its tool frames
    # leave in a batch just after the hello and may still be on their way).
    tools = page.evaluate("document.modelContext.getTools().then((t) => t.length)")
    relay_server.wait_for(lambda snap: sid in snap["sessions"] and len(snap["sessions"][sid]["tools"]) >= tools)
    sent0 = page.evaluate("__webmcpPerf.relay().framesSent")
    relay_server.wait_for(lambda snap: snap["counters"]["frames"] >= sent0)
    began = time.monotonic()
    elapsed_ms = page.evaluate(RUN, CALLS)
    snap = relay_server.wait_for(has_spans(sid, CALLS))
    spans = snap["sessions"][sid]["spans"]
    assert sorted(s["seq"] for s in spans) == list(range(CALLS)), "every call stored once"
    assert snap["counters"].get("duplicates", 0) == 0
    # Every frame the page ever wrote has reached the relay, and nothing else did: this relay is this test's own and
    # the page its only client, on one connection.
    # The page may still write a window's last ledger after the run: both counts are read until they meet.
    link: dict = {}

    def met(snap: dict) -> bool:
        link.update(page.evaluate("__webmcpPerf.relay()"))
        return bool(snap["counters"]["frames"] == link["framesSent"])

    relay_server.wait_for(met)
    assert link["connects"] == 1, link
    during = [(t, k) for t, k in written if t >= began]
    # What the calls cost is every frame but the registrations' own: a tool frame leaves again when the host answers
    # which annotations it kept (a getTools() a registration, on the host's time), and those answers once came
    # after the count began (18 frames: 10 of them the ten tools', 32 to 52 ms in). One a tool at most: a call that
    # sent a tool frame would still count.
    frames = link["framesSent"] - sent0 - min(tools, sum(1 for _, k in during if k == "tool"))
    # A spans frame and a ledger per 250 ms window, a status or two; before batching each call cost two frames
    # (200 here), with a fixed 50 ms window 44.
    windows = elapsed_ms / 250 + 2
    said = f"{frames} frames for {CALLS} calls in {elapsed_ms:.0f} ms: " + ", ".join(f"{(t - began) * 1000:.0f} ms {k}" for t, k in during)
    print(said)
    assert frames <= 2 * windows + 4, said
    assert frames < CALLS, f"not batched: {said}"
    assert link["watched"] is relay_server.watched
    if not relay_server.watched:  # nobody watches: a batch a second (and the ledger with it), the last one after
        assert frames <= 2 * (elapsed_ms / 1000 + 2) + 4, f"unwatched: {said}"
    assert errors == []


def test_the_channel_posts_every_span_in_order_in_a_few_bursts(browser, pages, relay_server) -> None:
    # relay: true: the page asks for the channel's reader (the script tag alone posts no span, issue 33)
    page, errors = open_page(browser, pages.url("native.html", relay_server, config={"relay": True}))
    listener = page.context.new_page()  # another same-origin tab, as webmcp-profiler's overlay would be
    listener.goto(pages.url("listener.html"))
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    sid = page.evaluate("__webmcpPerf.sessionId")
    listener.evaluate("__channelLog.length = 0; __channelAt.length = 0")
    elapsed_ms = page.evaluate(RUN, CALLS)
    listener.wait_for_function(f"__channelLog.filter((m) => JSON.parse(m).kind === 'span').length >= {CALLS}")
    log = [json.loads(m) for m in listener.evaluate("__channelLog")]
    at = listener.evaluate("__channelAt")
    spans = [(m["span"]["sessionId"], m["span"]["seq"]) for m in log if m["kind"] == "span"]
    assert spans == [(sid, i) for i in range(CALLS)], "every span, once, in order"
    arrivals = [t for t, m in zip(at, log) if m["kind"] == "span"]
    # One post per span arrives every 10 ms (100 bursts); a window's posts arrive back to back.
    bursts = 1 + sum(1 for a, b in itertools.pairwise(arrivals) if b - a > 5)
    print(f"{CALLS} spans on the channel in {bursts} bursts over {elapsed_ms:.0f} ms")
    assert bursts <= CALLS // 4, f"{bursts} bursts for {CALLS} spans in {elapsed_ms:.0f} ms: not batched"
    assert errors == []
    page.context.close()


def test_a_busy_page_s_calls_are_accounted_in_a_few_batches(browser, pages, relay_server) -> None:
    """The accounting runs on the same window: a page calling 100 times a second has its calls sized and turned
    into spans a few times a second, a window's calls in one go (warm), not each on a task of its own (cold)."""
    page, errors = open_page(browser, pages.url("native.html", relay_server))
    page.evaluate("window.registered")
    wait_phase(page, "tools-registered")
    # Seen through the performance.measure the accounting writes per span: an onSpan listener would move the
    # accounting into the settle path (webmcp-profiler's delivery), which is not what is measured here.
    page.evaluate(
        "() => { window.__accountedAt = []; const m = performance.measure;"
        " performance.measure = function (name, o) { if (String(name).startsWith('webmcp:')) __accountedAt.push(performance.now()); return m.call(this, name, o) } }"
    )
    elapsed_ms = page.evaluate(RUN, CALLS)
    page.wait_for_function(f"__accountedAt.length >= {CALLS}")
    at = page.evaluate("__accountedAt")
    # one batch: spans accounted within a millisecond of each other (a window's calls take well under that)
    batches = 1 + sum(1 for a, b in itertools.pairwise(at) if b - a > 1)
    print(f"{CALLS} calls accounted in {batches} batches over {elapsed_ms:.0f} ms")
    # the first window 50 ms, then 250 ms ones, the last maybe held a moment for a call's answer: call by call
    # this was CALLS
    assert batches <= elapsed_ms / 250 + 6, f"{batches} accounting batches for {CALLS} calls in {elapsed_ms:.0f} ms"
    assert errors == []
