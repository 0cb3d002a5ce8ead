"""Benchmark: what watching costs the page being watched (issue 16 item 4).

A page in real Chromium (native WebMCP host) calls its own tool through `document.modelContext.executeTool` at
100 calls/s and times every call with `performance.now()`. The page is cross-origin isolated (COOP + COEP), so
that clock ticks in 5 µs, not 100 µs: a 5 % band around a p95 of 1 ms is smaller than the coarse tick. The same
page runs three ways, for a 1 KB and a 128 KB result:

- `none`: no agent, nothing listening;
- `relay`: the agent loaded from `wmcp-top relay` (headless) and connected to it;
- `dashboard`: the agent loaded from `wmcp-top`, the full dashboard drawing on a 160x45 pseudo-terminal that
  reads everything it draws.

The ways take turns, ROUNDS rounds of SECONDS / ROUNDS each, so the machine's drift over the run falls on every
way alike; each way's calls are pooled over its rounds. Figures per way: the page's own call p50/p95, the
browser's CPU (every thread of every Chromium process, schedstat, as a share of one core over the call windows),
the observer's CPU (the wmcp-top process), and how busy the machine was meanwhile. Target: the full stack shifts
the page's p95 and the browser's CPU by <= 5 % against `none`; the verdict is printed beside the figures, not
asserted: on a shared machine a 5 % band is inside the noise. What is asserted holds whatever the load: the
agent connected in both observed ways, and every way kept the page's call schedule.

  pytest tests/bench/test_observer_effect.py -m bench -s    (WMCP_BENCH_SECONDS: seconds per way, default 30)

`test_what_each_part_of_the_agent_costs` switches the agent's parts on one at a time (alone, with the channel
mirror, with the uplink, whole) against no agent, on the same page and schedule: where the cost lies.
"""

from __future__ import annotations

import html
import http.server
import json
import math
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.bench import procs

SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "30"))
# Taking turns over 3 rounds spreads the machine's drift; the check's 3 s smoke pass runs each way once.
ROUNDS = 3 if SECONDS >= 9 else 1
RATE = 100
SIZES = {"1 KB": 1024, "128 KB": 128 * 1024}
WAYS = ("none", "relay", "dashboard")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--enable-features=WebMCPTesting", "--enable-experimental-web-platform-features"]
TARGET_SHIFT = 0.05

PAGE = """<!doctype html><meta charset="utf-8"><title>observer effect</title>
{agent}
<script>
  // One tool whose result is `size` bytes of text, registered through Chromium's own host.
  window.registered = (async () => {{
    const size = {size}
    const text = "x".repeat(size)
    await document.modelContext.registerTool({{
      name: "fetch_page", description: "returns a page of text", inputSchema: {{ type: "object", properties: {{ q: {{ type: "string" }} }} }},
      execute: async (input) => ({{ content: [{{ type: "text", text }}] }}),
    }})
    return true
  }})()
  // Call it `rate` times a second for `seconds`, on a fixed schedule, timing each call as the page sees it.
  window.runCalls = async ({{ rate, seconds }}) => {{
    await window.registered
    const mc = document.modelContext
    const tool = (await mc.getTools()).find((t) => t.name === "fetch_page")
    const input = {{ q: "bench" }}
    const times = []
    const t0 = performance.now(), every = 1000 / rate
    for (let i = 0; performance.now() - t0 < seconds * 1000; i++) {{
      const wait = t0 + i * every - performance.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      const a = performance.now()
      await mc.executeTool(tool, input)
      times.push(performance.now() - a)
    }}
    return times
  }}
</script><body>observer effect</body>"""


class _Pages(http.server.BaseHTTPRequestHandler):
    """`/<size>` is the page without the agent; `/<size>?agent=URL` loads the agent from the relay at URL, and
    `&cfg=JSON` gives it that config (window.__WMCP_CONFIG__)."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        path, _, query = self.path.partition("?")
        if not path.strip("/").isdigit():
            self.send_error(404)
            return
        q = urllib.parse.parse_qs(query)
        agent = q.get("agent", [""])[0]
        tag = ""
        if "cfg" in q:  # our own JSON, re-encoded so nothing in it can close the script element
            config = json.dumps(json.loads(q["cfg"][0])).replace("<", "\\u003c")
            tag += f"<script>window.__WMCP_CONFIG__ = {config}</script>"
        if agent:
            tag += f'<script src="{html.escape(agent)}"></script>'
        body = PAGE.format(agent=tag, size=int(path.strip("/"))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        # Cross-origin isolated: performance.now() in 5 µs steps (the agent's script says it may be embedded).
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.end_headers()
        self.wfile.write(body)


def page_url(base: str, size: int, agent_url: str | None = None, config: dict[str, Any] | None = None) -> str:
    query = {**({"agent": agent_url} if agent_url else {}), **({"cfg": json.dumps(config)} if config is not None else {})}
    return f"{base}/{size}" + (f"?{urllib.parse.urlencode(query)}" if query else "")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.floor(p * len(ordered)))]


def _chromium_pids() -> list[int]:
    pids = []
    for pid in procs.descendants(os.getpid()):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        if "chrom" in name or "headless" in name:
            pids.append(pid)
    return pids


def _each(pids: list[int], read: Callable[[int], float]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += read(pid)
        except OSError:
            continue  # a helper process that ended meanwhile
    return total


def browser_cpu() -> float:
    """CPU seconds of every Chromium process this test started (the browser, its renderers and helpers)."""
    return _each(_chromium_pids(), procs.run_seconds)


def browser_slices() -> float:
    """Times any thread of those processes was put on a CPU: the browser's wake-ups."""
    return _each(_chromium_pids(), procs.run_slices)


def open_page(browser: Browser, url: str) -> tuple[BrowserContext, Page]:
    """The bench page at `url` in a context of its own, its tool registered."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.wait_for_function("window.registered")
    assert page.evaluate("crossOriginIsolated"), "the page must be cross-origin isolated for its 5 µs clock"
    return context, page


def timed_calls(page: Page, seconds: float, observer_pid: int | None = None) -> dict[str, Any]:
    """Warm up, then RATE calls a second for `seconds`: the page's own call times, and what the browser (and the
    observer process) spent meanwhile."""
    page.evaluate("runCalls({ rate: 20, seconds: 0.5 })")  # warm up the JIT (and the socket)
    b0, w0, m0, t0 = browser_cpu(), browser_slices(), procs.machine(), time.monotonic()
    o0 = procs.run_seconds(observer_pid) if observer_pid else 0.0
    times = page.evaluate("(a) => runCalls(a)", {"rate": RATE, "seconds": seconds})
    b1, w1, m1, t1 = browser_cpu(), browser_slices(), procs.machine(), time.monotonic()
    o1 = procs.run_seconds(observer_pid) if observer_pid else 0.0
    return {"times": times, "wall": t1 - t0, "browser": b1 - b0, "wakes": w1 - w0, "observer": o1 - o0,
            "machine": (m0, m1), "load": os.getloadavg()[0]}


def one_way(browser: Browser, base: str, size: int, way: str, seconds: float, run: Path) -> dict[str, Any]:
    run.mkdir(parents=True)

    def measure(observer: procs.Wmcp | None) -> dict[str, Any]:
        context, page = open_page(browser, page_url(base, size, observer.agent_url if observer else None))
        if observer is not None:  # the agent is connected: its session reached the relay
            deadline = time.monotonic() + 20
            while procs.healthz_sessions(observer.port) < 1:
                assert time.monotonic() < deadline, "the agent never reached the relay"
                time.sleep(0.1)
        result = timed_calls(page, seconds, observer.proc.pid if observer else None)
        context.close()
        return result

    if way == "none":
        return measure(None)
    with procs.wmcp(run, headless=way == "relay") as observer:
        return measure(observer)


@contextmanager
def chromium_and_pages() -> Iterator[tuple[Browser, str]]:
    """Debian's Chromium (a missing one fails the test with the install line) and the bench pages' base URL."""
    chromium = os.environ.get("WMCP_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).is_file():
        pytest.fail(f"Chromium not found at {chromium}: apt-get install -y chromium", pytrace=False)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=ARGS)
            yield browser, f"http://127.0.0.1:{httpd.server_address[1]}"
            browser.close()
    finally:
        httpd.shutdown()


def pooled(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One way's rounds as one measurement: every call timed, CPU over the summed call windows."""
    times = [t for r in rounds for t in r["times"]]
    wall = sum(r["wall"] for r in rounds)
    busy = sum(procs.cores_busy(*r["machine"]) * r["wall"] for r in rounds) / wall
    return {"calls": len(times), "p50": pct(times, 0.5), "p95": pct(times, 0.95), "browser_cpu": sum(r["browser"] for r in rounds) / wall,
            "observer_cpu": sum(r["observer"] for r in rounds) / wall, "machine": busy, "load": max(r["load"] for r in rounds)}


@pytest.mark.bench
def test_observer_effect(tmp_path: Path) -> None:
    rounds: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with chromium_and_pages() as (browser, base):
        for label, size in SIZES.items():
            for n in range(ROUNDS):
                for way in WAYS:
                    run = tmp_path / f"{way}-{size}-{n}"
                    rounds.setdefault((label, way), []).append(one_way(browser, base, size, way, SECONDS / ROUNDS, run))
    results = {key: pooled(r) for key, r in rounds.items()}

    print()
    print(f"observer effect: a page calling its tool {RATE}/s for {SECONDS:.0f} s per way ({ROUNDS} round{'s' if ROUNDS != 1 else ''}, taking turns), "
          f"Chromium native host, cross-origin isolated page, {os.cpu_count()} cores")
    print("  result  way        calls  page p50  page p95  p95 shift  browser CPU  CPU shift  wmcp-top CPU  machine busy")
    for label in SIZES:
        base_row = results[(label, "none")]
        for way in WAYS:
            r = results[(label, way)]
            p95_shift = r["p95"] / base_row["p95"] - 1 if base_row["p95"] else float("nan")
            cpu_shift = r["browser_cpu"] / base_row["browser_cpu"] - 1 if base_row["browser_cpu"] else float("nan")
            print(f"  {label:>6}  {way:<9} {r['calls']:6d}  {r['p50']:6.3f} ms {r['p95']:6.3f} ms  {p95_shift * 100:+7.1f} %"
                  f"  {r['browser_cpu'] * 100:8.1f} %  {cpu_shift * 100:+7.1f} %  {r['observer_cpu'] * 100:9.1f} %"
                  f"  {r['machine']:.1f} cores (load {r['load']:.1f})")
        full = results[(label, "dashboard")]
        met = full["p95"] <= base_row["p95"] * (1 + TARGET_SHIFT) and full["browser_cpu"] <= base_row["browser_cpu"] * (1 + TARGET_SHIFT)
        print(f"  {label:>6}  full stack within {TARGET_SHIFT * 100:.0f} % of no agent on p95 and browser CPU: {'yes' if met else 'NO'}")
    for (label, way), r in results.items():
        # every way kept the page's schedule (a stalled page would make far fewer calls)
        assert r["calls"] >= RATE * SECONDS * 0.5, f"{label} {way}: only {r['calls']} calls in {SECONDS} s"


# -- what each part of the agent costs ------------------------------------------------------------------------

# The agent's config for each part, switched on one at a time (`relay` is webmcp-profiler's name for the
# BroadcastChannel mirror). Every agent is loaded from the same headless relay; only the last two connect to it.
PARTS: dict[str, dict[str, Any] | None] = {
    "no agent": None,
    "agent alone": {"uplink": False, "relay": False},  # wraps and measures every call; nothing leaves the page
    "+ channel": {"uplink": False},  # and mirrors every span on the BroadcastChannel
    "+ uplink": {"relay": False},  # and streams them to the relay instead
    "whole agent": {},
}
PART_SIZE = int(os.environ.get("WMCP_BENCH_SIZE", "1024"))


def one_part(browser: Browser, base: str, relay: procs.Wmcp, config: dict[str, Any] | None, seconds: float) -> dict[str, Any]:
    context, page = open_page(browser, page_url(base, PART_SIZE, relay.agent_url if config is not None else None, config))
    if config is not None and config.get("uplink") is not False:
        page.wait_for_function("globalThis.__webmcpPerf && (__webmcpPerf.relay() || {}).state === 'open'", timeout=20_000)
    result = timed_calls(page, seconds)
    result["seen"] = page.evaluate("globalThis.__webmcpPerf ? [__webmcpPerf.spans().length, (__webmcpPerf.relay() || {}).acks || 0] : null")
    context.close()
    return result


@pytest.mark.bench
def test_what_each_part_of_the_agent_costs(tmp_path: Path) -> None:
    """The same page and schedule as above, the agent's parts switched on one at a time (PARTS), taking turns
    over ROUNDS rounds: where the whole agent's cost lies. WMCP_BENCH_SIZE sets the result's bytes (1024)."""
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in PARTS}
    with chromium_and_pages() as (browser, base), procs.wmcp(tmp_path / "relay", headless=True) as relay:
        for _ in range(ROUNDS):
            for name, config in PARTS.items():
                rounds[name].append(one_part(browser, base, relay, config, SECONDS / ROUNDS))

    print()
    print(f"what each part of the agent costs: {RATE} calls/s of a {PART_SIZE:,}-byte result for {SECONDS:.0f} s per part "
          f"({ROUNDS} round{'s' if ROUNDS != 1 else ''}, taking turns), {os.cpu_count()} cores")
    print("  part            calls  page p50  page p95  p95 shift  browser CPU  CPU shift  wake-ups/s")
    base_row: dict[str, float] = {}
    for name, runs in rounds.items():
        times = [t for r in runs for t in r["times"]]
        wall = sum(r["wall"] for r in runs)
        row = {"p95": pct(times, 0.95), "cpu": sum(r["browser"] for r in runs) / wall}
        base_row = base_row or row
        print(f"  {name:<14} {len(times):6d}  {pct(times, 0.5):6.3f} ms {row['p95']:6.3f} ms  {(row['p95'] / base_row['p95'] - 1) * 100:+7.1f} %"
              f"  {row['cpu'] * 100:8.1f} %  {(row['cpu'] - base_row['cpu']) * 100:+5.2f} pt  {sum(r['wakes'] for r in runs) / wall:8.0f}")
        assert len(times) >= RATE * SECONDS * 0.5, f"{name}: only {len(times)} calls in {SECONDS} s"
        for r in runs:  # each part really ran: the agent measured the calls, and the uplinked ones were acked
            config = PARTS[name]
            if config is None:
                assert r["seen"] is None, f"{name}: an agent was found in the page"
                continue
            assert r["seen"] is not None and r["seen"][0] > 0, f"{name}: the agent measured no call ({r['seen']})"
            assert (r["seen"][1] > 0) == (config.get("uplink") is not False), f"{name}: acks {r['seen'][1]}"
