"""Benchmark: what the page agent costs a page at load (issue 47 item 1), in Chromium with its native WebMCP host.

Four ways, side by side in one run, and a fifth when the run is given webmcp-profiler's build (tests/bench/peer.py):

- `no agent`: the bench page alone (it registers one tool whose result is 1 KB of text);
- `empty script`: the page with a tag like the agent's fetching an empty script served the same way: what any
  agent a page loads with a script tag costs it before running a line (the parser waits for the fetch), the
  control that says where a page of iframes spends its time;
- `floor agent`: the page with tests/bench/floor.py's script inline before its own (the execute() wrapper, two clock
  reads, one `performance.measure` a call: the least any webmcp-profiler-compatible agent does);
- `whole agent`: the page with the agent as users load it, the tag `wmcp-top snippet` prints before the page's own
  scripts (`<script src=".../agent.js" data-wmcp="TOKEN">`): the built page_agent/dist/agent-eager.js (what the
  relay serves as /agent.js: the agent's eager part) with a real relay's address baked in as the relay bakes it
  (no token in it: the agent takes the token from the tag), and beside it /agent-rest.js (dist/agent-rest.js, the
  rest, which the eager part fetches after the load event), both served by this test as the relay serves them (by
  content hash, `?v=`, kept for good: a page's frames fetch each once) so the benchmark does not depend on the
  relay's own server; its uplink connects to that relay with the tag's token;
- `webmcp-profiler` (given WMCP_PEER): the page with its built IIFE in a script tag before the page's own, opened
  with `?perf=1` as its users switch it on.

Every load is cold: a fresh browser context (no HTTP or code cache) on an origin of its own (`<n>.localhost`, so
the relay's per-origin connect budget never refuses a socket). The ways take turns, LOADS rounds of one load each,
the order reversed every other round. Per way, medians over the rounds of:

- script bytes, raw and gzip (level 9, each script alone, as a server compresses it), of every script the page
  evaluated before its load event: its inline scripts and the scripts it fetched (resource timing);
- main-thread script time and task time at load: Chromium's own counters (CDP `Performance.getMetrics`,
  `ScriptDuration` and `TaskDuration`, deltas from before the navigation to its load event), kept in thread CPU
  time (`timeDomain: threadTicks`). Chosen over a trace because they are Blink's own accounting of every task of
  the page's main thread (its same-origin frames included), cost nothing to keep and need no parsing, and in
  thread time a main thread the shared machine preempts is not charged for the wait: six cold loads of one page
  read their task time within 15 % of their median (load average above 15) while their load events ranged from
  35 to 600 ms. The window ends when Playwright hears the load event, a few ms after it: a trace of three loads put
  14-16 ms of the whole agent's script before the load event and 1-2 ms in the 500 ms after it (its socket's open
  and first messages), part of which the window may count;
- JS heap (CDP `Runtime.getHeapUsage` after `HeapProfiler.collectGarbage`) after load, and after 500 calls of the
  page's 1 KB tool through `document.modelContext.executeTool`;
- a page of 10 same-origin iframes, each running the way's script: its load event (wall clock, from navigation
  start), and its main-thread task time.

Ratios are printed to no agent and to the floor. The time targets (tests/bench/judge.py: asserted by the full
run, printed by the short pass): the 10-iframe page's load event with the whole agent within 1.2x its load event
without one (issue 47; the median of the rounds' paired ratios), and the whole agent's added script time at load
at most SCRIPT_OVER_FLOOR times the floor agent's (differences of medians), and, given webmcp-profiler, at most
SCRIPT_OVER_PEER times its own (docs/observer-cost.md). The eager script's gzip against
the issue's 14 KB is printed, not asserted here (the build's size budget holds it). What every run asserts holds
whatever the load: every way loaded in every frame, the agents attached and measured all 500 calls (the whole
agent's uplink open), and the byte counts are exact (each way's scripts are exactly what the test served it).

  pytest tests/bench/test_load_cost.py -m bench -s    (WMCP_BENCH_SECONDS under 10, as in the check's short pass:
  3 rounds; otherwise 20)
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import statistics
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, CDPSession, Page, sync_playwright

from relay_bridge.relay.assets import PLACEHOLDER
from tests.bench import judge, peer
from tests.bench.floor import floor_js
from tests.browser.conftest import BASE_ARGS, WEBMCP_ARGS
from tests.relay_thread import RelayThread

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "page_agent" / "dist" / "agent-eager.js"
# Twenty paired cold loads, as issue 47's table; the short pass only shows that every way loads and measures.
LOADS = 20 if judge.judging() else 3
CALLS = 500
FRAMES = 10
PEER_JS = peer.peer_js()
# webmcp-profiler's IIFE, as its users load it (a script tag, switched on by `?perf=1`), when the run is given it.
WAYS = {"none": "no agent", "empty": "empty script", "floor": "floor agent", "agent": "whole agent", **({"peer": peer.NAME} if PEER_JS else {})}
FRAMES_OVER_NONE = 1.2  # issue 47: a page of 10 iframes, each running the agent, within 1.2x its load without
# The whole agent's added script time at load over the floor agent's, for runs not given webmcp-profiler: issue 47
# asks for half its added time (+3.9 ms on the machine, so about +2 ms), and the floor adds about 0.14 ms
# here: +2 ms is about 14 floors (docs/observer-cost.md).
SCRIPT_OVER_FLOOR = 14.0
# Issue 47, against webmcp-profiler when the run is given it (tests/bench/peer.py): the added script time at load at
# most half its added script time (its IIFE, `?perf=1`), the JS heap after load at most its own (printed: counted).
SCRIPT_OVER_PEER = 0.5
HEAP_OVER_PEER = 1.0
GZIP_TARGET = 14 * 1024  # issue 47: webmcp-profiler's whole IIFE is 14,362 B
# Issue 47: the JS heap after load at most 1.0x webmcp-profiler's added heap (+94 KB on the machine). Heap is
# counted, not timed: printed beside the figure, as the gzip size is.
HEAP_TARGET_KB = 94
# The figures said as added over no agent: their name, unit and scale.
SHOWN = {
    "script": ("script", "ms", 1.0),
    "task": ("tasks", "ms", 1.0),
    "heap_load": ("heap", "KB", 1 / 1024),
    "heap_calls": ("heap after calls", "KB", 1 / 1024),
    "frames_load": ("10 frames' load", "ms", 1.0),
}

FLOOR_JS = floor_js(measure=True, post=False)
# The page's own script: one tool with a 1 KB result, registered through Chromium's host, and a way to call it.
PAGE_JS = """window.registered = (async () => {
  const text = "x".repeat(1024)
  await document.modelContext.registerTool({
    name: "fetch_page", description: "returns a page of text", inputSchema: { type: "object", properties: { q: { type: "string" } } },
    execute: async () => ({ content: [{ type: "text", text }] }),
  })
  return true
})()
window.callTool = async (n) => {
  await window.registered
  const mc = document.modelContext
  const tool = (await mc.getTools()).find((t) => t.name === "fetch_page")
  for (let i = 0; i < n; i++) await mc.executeTool(tool, { q: "bench" })
}"""
PAGE = '<!doctype html><meta charset="utf-8"><title>load cost</title>{way}<script>{page}</script><body>load cost</body>'
FRAMES_PAGE = '<!doctype html><meta charset="utf-8"><title>load cost, {n} frames</title><body>{frames}</body>'
WAY_TAGS = {
    "none": "",
    "empty": '<script src="/empty.js?v={v}" data-wmcp="{token}"></script>',
    "floor": f"<script>{FLOOR_JS}</script>",
    "agent": '<script src="/agent.js?v={v}" data-wmcp="{token}"></script>',
    "peer": '<script src="/webmcp-profiler.iife.js"></script>',
}
# The query a way's pages are opened with: webmcp-profiler's gate switches it on by `?perf=1`.
QUERY = {"peer": "perf=1"}

# What a page evaluated before its load event: its inline scripts, and the path and decoded size of every script it
# fetched by then (the test's server is the only one serving scripts).
EVALUATED = """() => {
  const loaded = performance.getEntriesByType("navigation")[0].loadEventStart
  return {
    inline: [...document.scripts].filter((s) => !s.src).map((s) => s.text),
    fetched: performance.getEntriesByType("resource")
      .filter((e) => e.initiatorType === "script" && e.responseEnd <= loaded)
      .map((e) => [new URL(e.name).pathname, e.decodedBodySize]),
  }
}"""
# What each way's script did in a page: the agent's calls accounted and uplink state, the floor's spans and measures,
# the peer's spans and measures.
DID = f"""() => [globalThis.__webmcpPerf && __webmcpPerf.overhead ? [__webmcpPerf.overhead().accounted, (__webmcpPerf.relay() || {{}}).state || null] : null,
  globalThis.__wmcpFloor ? [__wmcpFloor.spans.length, __wmcpFloor.measured] : null, {peer.DID}]"""


class _Pages(http.server.BaseHTTPRequestHandler):
    """`/page/<way>`: the bench page with that way's script; `/frames/<way>`: FRAMES iframes of it; `/agent.js`: the
    agent as `scripts['/agent.js']` holds it (the built file, the relay's address baked in), and beside it, by name,
    every other script the build put in page_agent/dist (any the agent fetches is then counted, not refused)."""

    scripts: dict[str, bytes] = {}
    token = ""  # the relay's, on the agent's tag
    version = ""  # the agent's content hash, on the tags' URLs

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        kind, _, way = path.strip("/").partition("/")
        if path in self.scripts:
            body, ctype = self.scripts[path], "text/javascript; charset=utf-8"
        elif kind == "page" and way in WAY_TAGS:
            body, ctype = (
                PAGE.format(way=WAY_TAGS[way].replace("{token}", self.token).replace("{v}", self.version), page=PAGE_JS).encode(),
                "text/html; charset=utf-8",
            )
        elif kind == "frames" and way in WAY_TAGS:
            query = f"&{QUERY[way]}" if way in QUERY else ""
            frames = "".join(f'<iframe src="/page/{way}?frame={i}{query}"></iframe>' for i in range(FRAMES))
            body, ctype = FRAMES_PAGE.format(n=FRAMES, frames=frames).encode(), "text/html; charset=utf-8"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        # A script asked for by content hash is kept for good, as the relay serves it (the tag `wmcp-top snippet`
        # prints and the rest's URL carry `?v=`): a page's frames fetch it once. Pages are fetched every time.
        cacheable = path in self.scripts and "v=" in self.path.partition("?")[2]
        self.send_header("Cache-Control", "public, max-age=31536000, immutable" if cacheable else "no-store")
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def served(ws_url: str, token: str) -> Iterator[int]:
    """The bench pages and the agent (/agent.js: dist/agent-eager.js with `ws_url` baked in, `token` on its tag;
    dist's other scripts, the rest among them, as built) on 127.0.0.1: the port."""
    if not AGENT.is_file():
        pytest.fail(f"{AGENT} is missing: build the page agent first (node page_agent/build.mjs)", pytrace=False)
    built = AGENT.read_bytes()
    assert PLACEHOLDER in built, f"{AGENT} has no uplink placeholder: not the agent's build"
    _Pages.scripts = {f"/{path.name}": path.read_bytes() for path in AGENT.parent.glob("*.js")}
    _Pages.scripts["/agent.js"] = built.replace(PLACEHOLDER, json.dumps(ws_url).encode(), 1)
    _Pages.scripts["/empty.js"] = b""
    if PEER_JS is not None:
        _Pages.scripts["/webmcp-profiler.iife.js"] = PEER_JS.encode()
    _Pages.version = hashlib.sha256(_Pages.scripts["/agent.js"]).hexdigest()[:8]
    _Pages.token = token
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def metrics(cdp: CDPSession) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


def heap(cdp: CDPSession) -> float:
    """The page's JS heap in use after a full collection, bytes."""
    cdp.send("HeapProfiler.collectGarbage")
    return float(cdp.send("Runtime.getHeapUsage")["usedSize"])


@contextmanager
def cold(browser: Browser) -> Iterator[tuple[Page, CDPSession]]:
    """A page in a fresh context (no cache of any kind), its main thread's counters on, in thread CPU time."""
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
        yield page, cdp
        assert not errors, f"the page threw: {errors}"
    finally:
        context.close()


def load(page: Page, cdp: CDPSession, url: str) -> dict[str, float]:
    """Navigate to `url`; the main thread's script and task time (ms) from before it to its load event."""
    before = metrics(cdp)
    page.goto(url)
    after = metrics(cdp)
    return {what: (after[name] - before.get(name, 0.0)) * 1000 for what, name in (("script", "ScriptDuration"), ("task", "TaskDuration"))}


def scripts_of(page: Page, scripts: dict[str, bytes]) -> list[bytes]:
    """Every script the page evaluated before its load event, as bytes: its inline ones, and the fetched ones as the
    server sent them (each fetched size checked against what was sent)."""
    seen = page.evaluate(EVALUATED)
    out = [text.encode() for text in seen["inline"]]
    for path, size in seen["fetched"]:
        assert path in scripts, f"the page fetched a script the test never served: {path}"
        assert size == len(scripts[path]), f"{path}: {size} bytes decoded, {len(scripts[path])} sent"
        out.append(scripts[path])
    return out


def until(page: Page, condition: str) -> None:
    """Wait in the page, on its own timers, until `condition` holds (at most 20 s). Not `page.wait_for_function`:
    that injects Playwright's own script into the page, about 380 KB of JS heap that only the way waiting would pay."""
    held = page.evaluate(
        f"async () => {{ for (const end = Date.now() + 20000; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) if ({condition}) return true; return false }}"
    )
    assert held, f"not within 20 s: {condition}"


def one_way(browser: Browser, origin: str, way: str) -> dict[str, Any]:
    """One cold load of `way`'s page and one of its 10-frame page: every figure of one round."""
    out: dict[str, Any] = {}
    query = f"?{QUERY[way]}" if way in QUERY else ""
    with cold(browser) as (page, cdp):
        out.update(load(page, cdp, f"{origin}/page/{way}{query}"))
        # Before anything of the test's runs in the page: its look at the scripts holds elements, and the first
        # element a page's script holds makes the engine build the HTMLElement and Element interfaces (77 KB).
        out["heap_load"] = heap(cdp)
        evaluated = scripts_of(page, _Pages.scripts)
        out["scripts"] = evaluated
        if way == "agent":  # as users load it: connected to its relay before it is called
            until(page, "(__webmcpPerf.relay() || {}).state === 'open'")
        page.evaluate("(n) => callTool(n)", CALLS)
        if way == "agent":  # its accounting runs after the host has each result: wait for the last call's
            until(page, f"__webmcpPerf.overhead().accounted >= {CALLS}")
        if way == "peer":
            until(page, f"__webmcpPerf.spans().length >= {CALLS}")
        out["heap_calls"] = heap(cdp)
        out["did"] = page.evaluate(DID)
    with cold(browser) as (page, cdp):
        frames = load(page, cdp, f"{origin}/frames/{way}")
        out["frames_task"] = frames["task"]
        out["frames_load"] = page.evaluate('performance.getEntriesByType("navigation")[0].loadEventStart')
        out["frames_did"] = [frame.evaluate(DID) for frame in page.main_frame.child_frames]
    return out


def check_ran(way: str, r: dict[str, Any]) -> None:
    """What load cannot flip: `way`'s script attached in the page and in every frame, and measured every call."""
    agent, floor, other = r["did"]
    if way == "agent":
        assert floor is None and other is None and agent is not None, f"{WAYS[way]}: agent {agent}, floor {floor}, peer {other}"
        assert agent == [CALLS, "open"], f"{WAYS[way]}: {agent[0]} calls measured of {CALLS}, uplink {agent[1]}"
    elif way == "floor":
        assert agent is None and other is None and floor == [CALLS, CALLS], f"{WAYS[way]}: agent {agent}, floor {floor}, peer {other}"
    elif way == "peer":
        assert agent is None and floor is None and other == [CALLS, CALLS], f"{WAYS[way]}: agent {agent}, floor {floor}, peer {other}"
    else:
        assert agent is None and floor is None and other is None, f"{WAYS[way]}: agent {agent}, floor {floor}, peer {other}"
    frames = r["frames_did"]
    assert len(frames) == FRAMES, f"{WAYS[way]}: {len(frames)} frames loaded of {FRAMES}"
    for ran in frames:
        assert [x is not None for x in ran] == [way == "agent", way == "floor", way == "peer"], f"{WAYS[way]}: a frame ran {ran}"


def check_bytes(by_way: dict[str, list[bytes]]) -> None:
    """Exact: the page's own script in every way, plus the empty script, the floor's inline script, or the agent as
    served."""
    own = [PAGE_JS.encode()]
    assert by_way["none"] == own, f"no agent: the page evaluated {[len(s) for s in by_way['none']]} bytes, not its own {len(own[0])}"
    assert by_way["empty"] == [*own, b""], f"empty script: {[len(s) for s in by_way['empty']]} bytes"
    assert by_way["floor"] == [FLOOR_JS.encode(), *own], f"floor agent: {[len(s) for s in by_way['floor']]} bytes"
    assert by_way["agent"][:1] == own and _Pages.scripts["/agent.js"] in by_way["agent"], (
        f"whole agent: {[len(s) for s in by_way['agent']]} bytes, the agent as served is {len(_Pages.scripts['/agent.js'])}"
    )
    if "peer" in by_way:
        assert by_way["peer"] == [*own, _Pages.scripts["/webmcp-profiler.iife.js"]], f"{peer.NAME}: {[len(s) for s in by_way['peer']]} bytes"


@pytest.mark.bench
def test_load_cost(tmp_path: Path) -> None:
    rounds: dict[str, list[dict[str, Any]]] = {way: [] for way in WAYS}
    relay = RelayThread(tmp_path)
    try:
        # As the relay bakes its address (no token) and `wmcp-top snippet` writes the tag (the token in data-wmcp).
        with served(f"ws://127.0.0.1:{relay.port}/relay", relay.token) as port, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=judge.chromium(), args=BASE_ARGS + WEBMCP_ARGS)
            order = list(WAYS)
            for n in range(LOADS):
                for way in order if n % 2 == 0 else order[::-1]:
                    rounds[way].append(one_way(browser, f"http://r{n}-{way}.localhost:{port}", way))
            browser.close()
    finally:
        relay.close()

    for way, runs in rounds.items():
        for r in runs:
            check_ran(way, r)
    evaluated = {way: runs[0]["scripts"] for way, runs in rounds.items()}
    for way, runs in rounds.items():
        assert all(r["scripts"] == evaluated[way] for r in runs), f"{WAYS[way]}: the scripts evaluated changed between loads"
    check_bytes(evaluated)

    # Each way's own scripts (what it adds to the page's): raw, and gzip of each alone.
    own = {way: [s for s in scripts if s not in evaluated["none"]] for way, scripts in evaluated.items()}
    raw = {way: sum(len(s) for s in scripts) for way, scripts in own.items()}
    gz = {way: sum(len(gzip.compress(s, 9, mtime=0)) for s in scripts) for way, scripts in own.items()}
    figures = ("script", "task", "heap_load", "heap_calls", "frames_load", "frames_task")
    med = {way: {f: statistics.median([r[f] for r in runs]) for f in figures} for way, runs in rounds.items()}

    def paired(way: str, base: str, figure: str) -> float:
        """The median over rounds of `way`'s figure over `base`'s in the same round."""
        return statistics.median([r[figure] / b[figure] for r, b in zip(rounds[way], rounds[base])])

    def added(way: str, figure: str) -> float:
        return med[way][figure] - med["none"][figure]

    print()
    print(f"load cost: {LOADS} cold loads a way taking turns (medians), Chromium native host, main thread in thread CPU time")
    print(
        f"  {'way':<12}  {'script bytes raw / gzip':>23}  {'script at load':>14}  {'tasks at load':>13}  {'heap at load':>12}  {'heap, 500 calls':>15}  {'10 frames: load':>15}  {'tasks':>8}"
    )
    for way, label in WAYS.items():
        m = med[way]
        print(
            f"  {label:<12}  {raw[way]:>13,} / {gz[way]:>7,}  {m['script']:11.2f} ms  {m['task']:10.2f} ms  {m['heap_load'] / 1024:9,.0f} KB"
            f"  {m['heap_calls'] / 1024:12,.0f} KB  {m['frames_load']:12.1f} ms  {m['frames_task']:5.1f} ms"
        )
    print("  added over no agent (difference of medians), and the paired ratio to no agent / to the floor agent (median of rounds):")
    for way in [w for w in WAYS if w != "none"]:
        cells = []
        for figure, (name, unit, scale) in SHOWN.items():
            to_floor = f" / {paired(way, 'floor', figure):.2f}x" if way == "agent" else ""
            cells.append(f"{name} {added(way, figure) * scale:+,.2f} {unit} ({paired(way, 'none', figure):.2f}x{to_floor})")
        print(f"  {WAYS[way]:<12}  " + ", ".join(cells))
    floor_script = added("floor", "script")
    over_floor = added("agent", "script") / floor_script if floor_script > 0 else float("inf")
    print(f"  the whole agent's added script time at load over the floor agent's: {over_floor:.1f}x")
    print(f"  eager script (printed; the build's size budget holds it): {gz['agent']:,} B gzip, issue 47's target {GZIP_TARGET:,} B")
    print(
        f"  JS heap after load (printed): whole agent {added('agent', 'heap_load') / 1024:+,.0f} KB, issue 47's target {HEAP_TARGET_KB:+,} KB (webmcp-profiler's)"
    )
    print(
        f"  10 frames' load event (printed): whole agent / empty script {paired('agent', 'empty', 'frames_load'):.2f}x;"
        f" empty script / no agent {paired('empty', 'none', 'frames_load'):.2f}x (a tag's fetch, with no code of its own)"
    )
    frames_ratio = paired("agent", "none", "frames_load")
    targets = [
        judge.at_most("10 frames' load event, whole agent / no agent", frames_ratio, FRAMES_OVER_NONE, ".2f"),
        judge.at_most("added script time at load, whole agent / floor agent", over_floor, SCRIPT_OVER_FLOOR, ".1f"),
    ]
    if "peer" in WAYS:
        # Issue 47's targets against the peer itself, its added cost read in this run.
        def over_peer(figure: str) -> float:
            theirs = added("peer", figure)
            return added("agent", figure) / theirs if theirs > 0 else float("inf")

        print(
            f"  whole agent / {peer.NAME}: script bytes gzip {gz['agent']:,} / {gz['peer']:,} B; added script time at load"
            f" {over_peer('script'):.2f}x (target at most {SCRIPT_OVER_PEER:g}); added heap after load {over_peer('heap_load'):.2f}x"
            f" (target at most {HEAP_OVER_PEER:g}); added heap after {CALLS} calls {over_peer('heap_calls'):.2f}x;"
            f" 10 frames' load event {paired('agent', 'peer', 'frames_load'):.2f}x"
        )
        targets.append(judge.at_most(f"added script time at load, whole agent / {peer.NAME}", over_peer("script"), SCRIPT_OVER_PEER, ".2f"))
    else:
        print(f"  {peer.missing()}")
    judge.time_targets(targets)
