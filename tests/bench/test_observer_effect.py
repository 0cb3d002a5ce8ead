"""Benchmark: what watching costs the page being watched (issue 16 item 4).

A page in real Chromium (native WebMCP host) calls its own tool through `document.modelContext.executeTool` at
100 calls/s and times every call with `performance.now()`. The page is cross-origin isolated (COOP + COEP), so
that clock ticks in 5 µs, not 100 µs: a 5 % band around a p95 of 1 ms is smaller than the coarse tick. The same
page runs three ways, for a 1 KB and a 128 KB result:

- `none`: no agent, nothing listening;
- `relay`: the agent loaded from `wmcp-top relay` (headless) and connected to it;
- `dashboard`: the agent loaded from `wmcp-top`, the full dashboard drawing on a 160x45 pseudo-terminal that
  reads everything it draws.

Every way's page is opened once (and its observer started once) before any call is timed; then the ways take
turns, ROUNDS rounds of ROUND_SECONDS each, the order reversed every other round, so neither the machine's drift
nor a context being torn down falls on one way. Per way: the page's own call p50/p95 over all its calls, the
browser's CPU (every thread of every Chromium process, schedstat, as a share of one core over the call windows),
the observer's CPU (the wmcp-top process), and how busy the machine was meanwhile. Each round also gives a paired
shift (a way against the `none` round beside it): their mean and its 95 % interval (Student's t) say whether a
way is within its target (issue 33: page p95 5 %; browser CPU 5 % unwatched, the headless relay's session, and
10 % watched, the dashboard's), beyond it, or whether this run cannot tell (the interval straddles it; on a
shared VM one 5 s round of the same page reads anywhere from 8 to 15 % of a core). Each verdict is
a time target (tests/bench/judge.py: asserted by the full run, printed by the short pass). What every run asserts
holds whatever the load: the agent connected in both observed ways, and every way kept the page's call schedule.

  pytest tests/bench/test_observer_effect.py -m bench -s    (WMCP_BENCH_SECONDS: seconds per way, default 30; under
  10, as in the check's short pass, a smoke run of 1 s a way)

`test_what_each_part_of_the_agent_costs` switches the agent's parts on one at a time (alone, with the channel
mirror, with the uplink, whole, whole measuring one call in ten) against no agent, on the same page and
schedule: where the cost lies. Beside them, with no agent, the floor: a few lines doing only part of what the
promises require of any agent (wrap and time each call, webmcp-profiler's `performance.measure` and its channel
message per span; no sizes, no statistics). Given WMCP_PEER (tests/bench/peer.py), webmcp-profiler's own build runs
as a part beside them. WMCP_BENCH_PARTS runs only the parts it names.
`test_where_each_part_costs_per_call` runs the same parts back to back (each call awaited, no pause) and splits
the browser's CPU per call by thread (the page's main thread, the rest of its renderer, the browser process, the
network service): the page's main thread, where most of the agent's cost lands, to a few µs.
"""

from __future__ import annotations

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

from tests.bench import judge, peer, procs
from tests.bench.floor import floor_js
from tests.bench.paired import interval, verdict
from tests.browser.conftest import BASE_ARGS, WEBMCP_ARGS
from tests.relay_thread import agent_tag

SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "30"))
# The check's short pass (WMCP_BENCH_SECONDS under 10) is a smoke run: each way once, for 1 s (a hundred calls),
# enough to show every way still loads, connects and keeps the schedule; its figures are not the README's.
WAY_SECONDS = SECONDS if SECONDS >= 10 else 1.0
# Short rounds, many of them: the drift falls on every way alike and the paired shifts give an interval.
ROUND_SECONDS = 5.0
ROUNDS = max(1, round(WAY_SECONDS / ROUND_SECONDS))
RATE = 100
SIZES = {"1 KB": 1024, "128 KB": 128 * 1024}
WAYS = ("none", "relay", "dashboard")
ARGS = BASE_ARGS + WEBMCP_ARGS
PEER_JS = peer.peer_js()
TARGET_SHIFT = 0.05  # the page's p95, every way; and the browser's CPU with nobody watching the session
# The browser's CPU band by way (issue 33): the headless relay's session is watched by no one, so its agent sends
# rarely; the dashboard shows the one session there is, so its agent sends at the rate the screen needs.
CPU_BAND = {"relay": 0.05, "dashboard": 0.10}

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
    `&cfg=JSON` gives it that config (window.__WMCP_CONFIG__); `?floor=measure,post` gives it the floor's script
    instead, with those of its parts (`?floor=` for the bare wrap); `?peer=1&perf=1` gives it webmcp-profiler
    (/peer.js, tests/bench/peer.py), switched on by the query as its users switch it on."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path == "/peer.js" and PEER_JS is not None:
            self._send(PEER_JS.encode(), "text/javascript; charset=utf-8")
            return
        if not path.strip("/").isdigit():
            self.send_error(404)
            return
        q = urllib.parse.parse_qs(query, keep_blank_values=True)  # `floor=` is the bare wrap
        agent = q.get("agent", [""])[0]
        tag = ""
        if "cfg" in q:  # our own JSON, re-encoded so nothing in it can close the script element
            config = json.dumps(json.loads(q["cfg"][0])).replace("<", "\\u003c")
            tag += f"<script>window.__WMCP_CONFIG__ = {config}</script>"
        if agent:
            tag += agent_tag(agent)
        if "floor" in q:
            parts = set(q["floor"][0].split(",")) if q["floor"][0] else set()
            tag += f"<script>{floor_js(measure='measure' in parts, post='post' in parts)}</script>"
        if "peer" in q:
            tag += '<script src="/peer.js"></script>'
        self._send(PAGE.format(agent=tag, size=int(path.strip("/"))).encode(), "text/html; charset=utf-8")

    def _send(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        # Cross-origin isolated: performance.now() in 5 µs steps (the agent's script says it may be embedded).
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.end_headers()
        self.wfile.write(body)


def page_url(
    base: str,
    size: int,
    agent_url: str | None = None,
    config: dict[str, Any] | None = None,
    floor: tuple[str, ...] | None = None,
    with_peer: bool = False,
) -> str:
    query = {
        **({"agent": agent_url} if agent_url else {}),
        **({"cfg": json.dumps(config)} if config is not None else {}),
        **({"floor": ",".join(floor)} if floor is not None else {}),
        **({"peer": "1", "perf": "1"} if with_peer else {}),
    }
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
    return {
        "times": times,
        "wall": t1 - t0,
        "browser": b1 - b0,
        "wakes": w1 - w0,
        "observer": o1 - o0,
        "machine": (m0, m1),
        "load": os.getloadavg()[0],
    }


@contextmanager
def chromium_and_pages() -> Iterator[tuple[Browser, str]]:
    """Debian's Chromium (a missing one fails the test with the install line) and the bench pages' base URL."""
    chromium = judge.chromium()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=ARGS)
            yield browser, f"http://127.0.0.1:{httpd.server_address[1]}"
            browser.close()
    finally:
        httpd.shutdown()


def open_agent_page(browser: Browser, url: str, observer: procs.Wmcp | None) -> tuple[BrowserContext, Page]:
    """The bench page, its agent (if any) connected to `observer` and its session held there."""
    context, page = open_page(browser, url)
    if observer is not None:
        page.wait_for_function("globalThis.__webmcpPerf && (__webmcpPerf.relay() || {}).state === 'open'", timeout=procs.LIVENESS_S * 1000)
        deadline = time.monotonic() + procs.LIVENESS_S
        while procs.healthz_sessions(observer.port) < 1:
            assert time.monotonic() < deadline, "the agent never reached the relay"
            time.sleep(0.1)
    return context, page


def quiet_browser(window: float = 0.5, share: float = 0.05, deadline: float = 20.0) -> None:
    """Wait until the browser is back to idle (under `share` of a core over `window` seconds): pages just opened
    go on loading, compiling and connecting for a while, which must not fall on the first way timed."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        b0, t0 = browser_cpu(), time.monotonic()
        time.sleep(window)  # the window the CPU share is measured over, not a wait for an event
        if (browser_cpu() - b0) / (time.monotonic() - t0) < share:
            return
    print(f"  (the browser did not go quiet within {deadline:.0f} s)")


def take_turns(pages: dict[str, Page], observers: dict[str, int | None] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every page in turn, ROUNDS times, the order reversed every other round: each way's rounds. Every page is
    warmed up first (its JIT, its socket), then the browser left to go quiet."""
    if judge.judging():  # the short pass times one round, whose own warm-up is enough for figures it only prints
        for page in pages.values():
            page.evaluate("runCalls({ rate: 50, seconds: 0.5 })")
    quiet_browser()
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in pages}
    order = list(pages)
    for n in range(ROUNDS):
        for name in order if n % 2 == 0 else order[::-1]:
            rounds[name].append(timed_calls(pages[name], WAY_SECONDS / ROUNDS, (observers or {}).get(name)))
    return rounds


def cpu_share(run: dict[str, Any]) -> float:
    """The browser's CPU over one round's call window, as a share of one core."""
    return run["browser"] / run["wall"]


def pooled(rounds: list[dict[str, Any]], base: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One way's rounds as one measurement (every call timed, CPU over the summed call windows), and, against the
    `base` way's rounds, the paired shift of each round: mean and 95 % half-width of the p95 and CPU shifts."""
    times = [t for r in rounds for t in r["times"]]
    wall = sum(r["wall"] for r in rounds)
    busy = sum(procs.cores_busy(*r["machine"]) * r["wall"] for r in rounds) / wall
    out = {
        "calls": len(times),
        "p50": pct(times, 0.5),
        "p95": pct(times, 0.95),
        "browser_cpu": sum(r["browser"] for r in rounds) / wall,
        "observer_cpu": sum(r["observer"] for r in rounds) / wall,
        "wakes": sum(r["wakes"] for r in rounds) / wall,
        "machine": busy,
        "load": max(r["load"] for r in rounds),
    }
    if base is not None:
        out["p95_shift"] = interval([pct(r["times"], 0.95) / pct(b["times"], 0.95) - 1 for r, b in zip(rounds, base)])
        out["cpu_shift"] = interval([cpu_share(r) / cpu_share(b) - 1 for r, b in zip(rounds, base)])
        out["cpu_points"] = interval([cpu_share(r) - cpu_share(b) for r, b in zip(rounds, base)])
    return out


def shown(shift: tuple[float, float], scale: float = 100.0, unit: str = "%") -> str:
    mean, half = shift
    return f"{mean * scale:+6.1f}{'' if math.isnan(half) else f' ± {half * scale:4.1f}'} {unit}"


@pytest.mark.bench
def test_observer_effect(tmp_path: Path) -> None:
    results: dict[tuple[str, str], dict[str, Any]] = {}
    with (
        chromium_and_pages() as (browser, base),
        procs.wmcp(tmp_path / "relay", headless=True) as relay,
        procs.wmcp(tmp_path / "dashboard", headless=False) as dashboard,
    ):
        observers = {"none": None, "relay": relay, "dashboard": dashboard}
        for label, size in SIZES.items():
            opened = {way: open_agent_page(browser, page_url(base, size, o.agent_url if o else None), o) for way, o in observers.items()}
            for way, watched in (("relay", False), ("dashboard", True)):  # each way is the cadence CPU_BAND says
                opened[way][1].wait_for_function(f"__webmcpPerf.relay().watched === {str(watched).lower()}", timeout=20_000)
            rounds = take_turns({way: page for way, (_, page) in opened.items()}, {way: o.proc.pid for way, o in observers.items() if o})
            for way in WAYS:
                results[(label, way)] = pooled(rounds[way], rounds["none"] if way != "none" else None)
            for context, _ in opened.values():
                context.close()

    print()
    print(
        f"observer effect: a page calling its tool {RATE}/s for {WAY_SECONDS:.0f} s per way ({ROUNDS} round{'s' if ROUNDS != 1 else ''} "
        f"of {WAY_SECONDS / ROUNDS:.0f} s, taking turns), Chromium native host, cross-origin isolated page, {os.cpu_count()} cores; "
        "shifts: pooled, and the mean of each round's paired shift ± its 95 % interval"
    )
    print(
        "  result  way        calls  page p50  page p95  p95 shift (pooled, paired)       browser CPU  CPU shift (pooled, paired)       wmcp-top CPU  machine busy"
    )
    for label in SIZES:
        base_row = results[(label, "none")]
        for way in WAYS:
            r = results[(label, way)]
            p95_shift = r["p95"] / base_row["p95"] - 1 if base_row["p95"] else float("nan")
            cpu_shift = r["browser_cpu"] / base_row["browser_cpu"] - 1 if base_row["browser_cpu"] else float("nan")
            paired = (shown(r["p95_shift"]), shown(r["cpu_shift"])) if way != "none" else ("", "")
            print(
                f"  {label:>6}  {way:<9} {r['calls']:6d}  {r['p50']:6.3f} ms {r['p95']:6.3f} ms  {p95_shift * 100:+7.1f} %  {paired[0]:<18}"
                f"  {r['browser_cpu'] * 100:8.1f} %  {cpu_shift * 100:+7.1f} %  {paired[1]:<18}  {r['observer_cpu'] * 100:9.1f} %"
                f"  {r['machine']:.1f} cores (load {r['load']:.1f})"
            )
    for (label, way), r in results.items():
        # every way kept the page's schedule (a stalled page would make far fewer calls)
        assert r["calls"] >= RATE * WAY_SECONDS * 0.5, f"{label} {way}: only {r['calls']} calls in {WAY_SECONDS} s"
    # The targets: each interval's upper end within its band ("yes"); "cannot tell" is not met.
    checks = []
    for label in SIZES:
        for way, band in CPU_BAND.items():
            r = results[(label, way)]
            for what, shift, limit in (("page p95", r["p95_shift"], TARGET_SHIFT), ("browser CPU", r["cpu_shift"], band)):
                said = verdict(shift[0], shift[1], limit)
                checks.append((said == "yes", f"{label} {way}: {what} shift {shown(shift).strip()} within {limit * 100:.0f} %: {said}"))
    judge.time_targets(checks)


# -- what each part of the agent costs ------------------------------------------------------------------------

# The agent's config for each part, switched on one at a time (`relay` is webmcp-profiler's name for the
# BroadcastChannel mirror). Every agent is loaded from the same headless relay; only the last two connect to it.
PARTS: dict[str, dict[str, Any] | None] = {
    "no agent": None,
    "agent alone": {"uplink": False, "relay": False},  # wraps and measures every call; nothing leaves the page
    "+ channel": {"uplink": False},  # and mirrors every span on the BroadcastChannel (no uplink: it posts)
    "+ uplink": {"relay": False},  # and streams them to the relay instead
    "whole agent": {},  # the script tag as shipped: the uplink, the channel read but not posted to (issue 33)
    "whole, posting": {"relay": True},  # and, as a page asking for webmcp-profiler's reader, a message per span
    "whole, sampled": {"sample": 0.1},  # the knob a user has: every tenth call measured
}
PART_SIZE = int(os.environ.get("WMCP_BENCH_SIZE", "1024"))
# The floor's parts (tests/bench/floor.py), beside the agent's: what the promises cost with no agent at all.
FLOORS: dict[str, tuple[str, ...]] = {
    "floor: wrap": (),  # two clock reads and a span kept
    "floor: +measure": ("measure",),  # and webmcp-profiler's performance.measure
    "floor: +channel": ("measure", "post"),  # and its channel message per span
}
# WMCP_BENCH_PARTS: only these parts and floors, by name, comma-separated (no agent always runs). Fewer pages
# taking turns sit closer to the no-agent round each is paired with.
ONLY = {name.strip() for name in os.environ.get("WMCP_BENCH_PARTS", "").split(",") if name.strip()}


# webmcp-profiler, when this run is given it (tests/bench/peer.py): a page of its own beside the parts and floors.
PEERS = [peer.NAME] if PEER_JS is not None else []


def chosen(names: dict[str, Any] | list[str]) -> list[str]:
    """Those of `names` this run takes (WMCP_BENCH_PARTS)."""
    unknown = ONLY - set(PARTS) - set(FLOORS) - set(PEERS)
    assert not unknown, f"WMCP_BENCH_PARTS names no part {sorted(unknown)}; the parts are {[*PARTS, *FLOORS, *PEERS]}"
    return [name for name in names if not ONLY or name == "no agent" or name in ONLY]


# What a page did: its agent's spans and acks; its floor's spans, measures and channel posts; the peer's spans and
# measures (the peer's console API takes the agent's name, not its `overhead`).
DID = f"""[globalThis.__webmcpPerf && __webmcpPerf.overhead ? [__webmcpPerf.spans().length, (__webmcpPerf.relay() || {{}}).acks || 0] : null,
  globalThis.__wmcpFloor ? [__wmcpFloor.spans.length, __wmcpFloor.measured, __wmcpFloor.posted] : null,
  {peer.DID}]"""


def open_parts(browser: Browser, base: str, relay: procs.Wmcp) -> dict[str, tuple[BrowserContext, Page]]:
    """A page of its own for every PARTS entry (its agent loaded from `relay`, and connected to it when its
    uplink is on) and every FLOORS entry."""
    opened = {}
    for name in chosen(PARTS):
        config = PARTS[name]
        url = page_url(base, PART_SIZE, relay.agent_url if config is not None else None, config)
        opened[name] = open_agent_page(browser, url, relay if uplinked(name) else None)
    for name in chosen(FLOORS):
        opened[name] = open_page(browser, page_url(base, PART_SIZE, floor=FLOORS[name]))
    for name in chosen(PEERS):
        opened[name] = open_page(browser, page_url(base, PART_SIZE, with_peer=True))
    return opened


def assert_each_part_ran(did: dict[str, list[Any]]) -> None:
    """Each page ran as configured (`did`: DID of each, after its calls): every agent measured calls and the
    uplinked ones were acked, no agent sneaked into the others, every floor did its parts and no more, and the
    peer, when given, kept spans and measures."""
    for name in chosen(PARTS):
        agent, floor, other = did[name]
        config = PARTS[name]
        assert floor is None and other is None, f"{name}: a floor or the peer was found in the page"
        if config is None:
            assert agent is None, f"{name}: an agent was found in the page"
            continue
        assert agent is not None and agent[0] > 0, f"{name}: the agent measured no call ({agent})"
        assert (agent[1] > 0) == (config.get("uplink") is not False), f"{name}: acks {agent[1]}"
    for name in chosen(FLOORS):
        agent, floor, other = did[name]
        parts = FLOORS[name]
        assert agent is None and other is None, f"{name}: an agent was found in the page"
        assert floor is not None and floor[0] > 0, f"{name}: the floor kept no span ({floor})"
        assert (floor[1] > 0) == ("measure" in parts), f"{name}: measures {floor[1]}"
        assert (floor[2] > 0) == ("post" in parts), f"{name}: channel posts {floor[2]}"
    for name in chosen(PEERS):
        agent, floor, other = did[name]
        assert agent is None and floor is None, f"{name}: the agent or a floor was found in the page"
        assert other is not None and other[0] > 0 and other[1] > 0, f"{name}: spans and measures {other}"


@pytest.mark.bench
def test_what_each_part_of_the_agent_costs(tmp_path: Path) -> None:
    """The same page and schedule as above, the agent's parts switched on one at a time (PARTS), each on a page of
    its own opened once, taking turns over ROUNDS rounds: where the whole agent's cost lies. Beside them the FLOORS
    pages, no agent but the bare work its promises require: what no agent can undercut. WMCP_BENCH_SIZE sets the
    result's bytes (1024)."""
    with chromium_and_pages() as (browser, base), procs.wmcp(tmp_path / "relay", headless=True) as relay:
        opened = open_parts(browser, base, relay)
        rounds = take_turns({name: page for name, (_, page) in opened.items()})
        did = {name: page.evaluate(DID) for name, (_, page) in opened.items()}
        for context, _ in opened.values():
            context.close()

    print()
    print(
        f"what each part of the agent costs: {RATE} calls/s of a {PART_SIZE:,}-byte result for {WAY_SECONDS:.0f} s per part "
        f"({ROUNDS} round{'s' if ROUNDS != 1 else ''} of {WAY_SECONDS / ROUNDS:.0f} s, taking turns), {os.cpu_count()} cores; "
        "CPU shift: pooled, and the mean of each round's paired shift ± its 95 % interval"
    )
    print("  part              calls  page p50  page p95  p95 shift  browser CPU  CPU shift (pooled, paired)    wake-ups/s")
    base_rounds = rounds["no agent"]
    b = pooled(base_rounds)
    for name, runs in rounds.items():
        r = pooled(runs, base_rounds)
        print(
            f"  {name:<16} {r['calls']:6d}  {r['p50']:6.3f} ms {r['p95']:6.3f} ms  {(r['p95'] / b['p95'] - 1) * 100:+7.1f} %"
            f"  {r['browser_cpu'] * 100:8.1f} %  {(r['browser_cpu'] - b['browser_cpu']) * 100:+5.2f} pt  {shown(r['cpu_points'], unit='pt'):<16}"
            f"  {r['wakes']:8.0f}"
        )
        assert r["calls"] >= RATE * WAY_SECONDS * 0.5, f"{name}: only {r['calls']} calls in {WAY_SECONDS} s"
    assert_each_part_ran(did)
    judge.time_targets(under_the_peers({name: [cpu_share(r) for r in runs] for name, runs in rounds.items()}, "browser CPU, points of a core", 100.0))


# The targets beside the peers (issue 47 item 2): the whole agent adds to a call at most what the floor agent does,
# the least any webmcp-profiler-compatible agent does (wrap, two clock reads, performance.measure), and at most half
# what webmcp-profiler adds with its defaults, when the run is given it. Issue 33 set the floor's target against
# `floor: +channel` while the agent posted a channel message per span; the relay's script posts none.
AGENT = "whole agent"
# Each peer, and the share of its added cost the whole agent may add.
PEER_SHARES = {"floor: +measure": 1.0, peer.NAME: 0.5}


def under_the_peers(by_round: dict[str, list[float]], what: str, scale: float) -> list[tuple[bool, str]]:
    """The whole agent against each of PEER_SHARES in this run, round by round (`by_round`: each name's figure per
    round, the rounds taken in turns): the ratio of their shifts over no agent, and the verdict of the paired
    difference between the agent's shift and the peer's share of its own (its interval's upper end at most 0).
    Nothing to say of a peer this run left out (WMCP_BENCH_PARTS, or no WMCP_PEER)."""
    targets = []
    base = by_round["no agent"]
    for name, share in PEER_SHARES.items():
        if name == peer.NAME and PEER_JS is None:
            print(f"  {peer.missing()}")
            continue
        if AGENT not in by_round or name not in by_round:
            print(f"  ({AGENT!r} or {name!r} not in this run: no verdict against it)")
            continue
        agent = sum(a - b for a, b in zip(by_round[AGENT], base)) / len(base)
        other = sum(f - b for f, b in zip(by_round[name], base)) / len(base)
        diff = interval([(a - b) - share * (f - b) for a, f, b in zip(by_round[AGENT], by_round[name], base)])
        said = verdict(*diff, 0.0)
        ratio = agent / other if other > 0 else float("nan")
        print(f"  {AGENT} / {name}, {what}: {agent * scale:+.2f} / {other * scale:+.2f} = {ratio:.2f} (target at most {share:g})")
        targets.append((said == "yes", f"{AGENT} at most {share:g}x {name}, {what}: difference {shown(diff, scale, '').strip()}: {said}"))
    return targets


# -- where each part's cost lands, thread by thread ---------------------------------------------------------------

# The page calls back to back (each call awaited, no pause), so a round is short and its CPU is all the call's:
# the baseline's own work is the same every round, and the paired shift per call resolves a few µs of the agent's
# work where the paced rounds above resolve tenths of a point. B2B_CALLS per round, twice the rounds above (at least 2).
BACK_TO_BACK = """async (calls) => {
  await window.registered
  const mc = document.modelContext
  const tool = (await mc.getTools()).find((t) => t.name === "fetch_page")
  const input = { q: "bench" }
  for (let i = 0; i < calls; i++) await mc.executeTool(tool, input)
}"""
# Per call, judged: 3,000 calls a round and twice the rounds. A fixed cost of about 40 µs a call against a page's
# 120 read ±15 µs at 1,000 calls and 6 rounds on a shared 2-core machine, and ±5 at this.
B2B_CALLS = 3000 if SECONDS >= 10 else 200
# Where a thread's CPU goes in the report: the page's main thread (its script, the agent's, Blink), the rest of
# the page's renderer (its IO thread carries every IPC message), the browser process, the network service (the
# socket), everything else.
PLACES = ("page main thread", "page IO and workers", "browser process", "network service", "other")


def _places(pid: int) -> tuple[str, str]:
    """Where one Chromium process's threads go in PLACES: (its main thread, its other threads)."""
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()  # Chromium rewrites it: one string, spaces between flags
    if b"--type=renderer" in cmdline:
        return "page main thread", "page IO and workers"
    if b"NetworkService" in cmdline:
        return "network service", "network service"
    return ("other", "other") if b"--type=" in cmdline else ("browser process", "browser process")


def cpu_by_place() -> dict[str, float]:
    """CPU seconds of every thread of every Chromium process, summed by PLACES. Every renderer counts: the pages
    not calling sit idle, and only one page calls at a time."""
    out = dict.fromkeys(PLACES, 0.0)
    for pid in _chromium_pids():
        try:
            main, rest = _places(pid)
            for tid, seconds in procs.thread_seconds(pid).items():
                out[main if tid == pid else rest] += seconds
        except OSError:
            continue  # a process that ended meanwhile
    return out


def _at(per_call: dict[str, float], place: str) -> float:
    """One round's CPU µs per call in `place`, or in every place of the browser ("all")."""
    return sum(per_call[p] for p in PLACES) if place == "all" else per_call[place]


# The relay (`wmcp-top relay`) is not the browser: its CPU a call is printed beside "all", not in it. On a machine of
# few cores it still costs the page: a relay that burns more CPU a span raises the page's own main-thread time.
RELAY = "relay"
# How long a round goes on after its calls: an unwatched agent's last batch leaves within a second (pacing.js
# UNWATCHED_MS), and the relay acks it.
ROUND_TAIL_S = 1.5
# An agent page's last span seq (a read accounts what is pending), and whether its relay acked it.
LAST_SEQ = "(() => { const s = __webmcpPerf.spans(); return s.length ? s[s.length - 1].seq : -1 })()"
ACKED = "(last) => last < 0 || Object.values(__webmcpPerf.relay().acked).some((a) => a >= last)"


def uplinked(name: str) -> bool:
    """Is `name` an agent part that streams to the relay?"""
    config = PARTS.get(name)
    return config is not None and config.get("uplink") is not False


@pytest.mark.bench
def test_where_each_part_costs_per_call(tmp_path: Path) -> None:
    """The PARTS and FLOORS pages calling back to back, taking turns: the CPU each part adds per call, on the
    page's main thread and in each other place (PLACES), paired against no agent round by round; and the relay's."""
    rounds = max(2, 2 * ROUNDS) if judge.judging() else 1  # an interval needs two rounds; the short pass only prints
    with chromium_and_pages() as (browser, base), procs.wmcp(tmp_path / "relay", headless=True) as relay:
        opened = open_parts(browser, base, relay)
        for _, page in opened.values():
            page.evaluate(BACK_TO_BACK, 200)  # warm up the JIT, the socket, the channel
        quiet_browser()
        per_call: dict[str, list[dict[str, float]]] = {name: [] for name in opened}
        order = list(opened)
        for n in range(rounds):
            for name in order if n % 2 == 0 else order[::-1]:
                page = opened[name][1]
                before, relay_before = cpu_by_place(), procs.run_seconds(relay.proc.pid)
                page.evaluate(BACK_TO_BACK, B2B_CALLS)
                called = time.monotonic()
                if uplinked(name):
                    # The round ends when the relay has acked its last span: what the round sent and the relay's
                    # work on it count in this part's round, not in the next part's.
                    page.wait_for_function(ACKED, arg=page.evaluate(LAST_SEQ), polling=250, timeout=procs.LIVENESS_S * 1000)
                # Every part's round lasts as long after its calls, waiting or not: the browser's own timers spend a
                # little in that time (up to 10 ms a second), which only the parts that waited would count.
                time.sleep(max(0.0, called + ROUND_TAIL_S - time.monotonic()))
                after, relay_after = cpu_by_place(), procs.run_seconds(relay.proc.pid)
                per_call[name].append(
                    {p: (after[p] - before[p]) / B2B_CALLS * 1e6 for p in PLACES} | {RELAY: (relay_after - relay_before) / B2B_CALLS * 1e6}
                )
        did = {name: page.evaluate(DID) for name, (_, page) in opened.items()}
        for context, _ in opened.values():
            context.close()

    print()
    print(
        f"where each part costs: {B2B_CALLS:,} back-to-back calls of a {PART_SIZE:,}-byte result per round, {rounds} rounds, "
        f"taking turns; CPU µs per call by place (no agent: absolute; parts: paired shift ± 95 % interval)"
    )
    print("  part" + " " * 12 + "".join(f"{p:>22}" for p in [*PLACES, "all", RELAY]))
    base_rounds = per_call["no agent"]
    for name, runs in per_call.items():
        cells = []
        for place in [*PLACES, "all", RELAY]:
            if name == "no agent":
                cells.append(f"{sum(_at(r, place) for r in runs) / len(runs):20.1f}  ")
            else:
                mean, half = interval([_at(r, place) - _at(b, place) for r, b in zip(runs, base_rounds)])
                cells.append(f"{mean:+11.1f} ± {half:5.1f}  ")
        print(f"  {name:<16}" + "".join(cells))
    assert_each_part_ran(did)
    for name, runs in per_call.items():
        assert all(r["page main thread"] > 0 for r in runs), f"{name}: no main-thread CPU was read"
    judge.time_targets(
        under_the_peers({name: [_at(r, "page main thread") for r in runs] for name, runs in per_call.items()}, "page main thread CPU µs a call", 1.0)
        + under_the_peers({name: [_at(r, "all") for r in runs] for name, runs in per_call.items()}, "browser CPU µs a call", 1.0)
    )
