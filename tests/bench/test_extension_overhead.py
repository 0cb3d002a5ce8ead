"""Benchmark: the browser extension's agent against no agent and against the script-tag agent, in headless
Chromium, with the method of test_agent_overhead.py (p50 of instrumented − raw execute() time in the same page,
batches interleaved, cross-origin isolated page for a 5 µs timer).

The extension injects the same agent (only its socket differs), so the call path should cost the same; what
differs is delivery: a span goes page → MessagePort → isolated world → chrome.runtime port → service worker →
WebSocket, instead of page → WebSocket. So the second figure is the ack round trip (call settled → the relay's
ack for it back in the page), p50 over 100 sequential calls (8 in a short pass), script tag vs extension.

  pytest tests/bench/test_extension_overhead.py -m bench -s
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from relay_bridge.relay.extension import extension_id
from tests.bench import judge
from tests.bench.test_agent_overhead import AGENT, ARGS, BENCH
from tests.browser.conftest import chromium_path
from tests.extension.conftest import EXT, launch, pair, wait_js
from tests.relay_thread import RelayThread

TAG_PAGE = b"""<!doctype html><meta charset="utf-8"><title>script tag</title>
<script src="/cfg.js"></script><script src="/agent.js"></script><body>bench</body>"""
# Sequential calls timed to their ack. While a page keeps calling, a batch leaves every 250 ms (pacing.js), so
# each call takes about that: the short pass (tests/bench/judge.py: it prints the figure, judges nothing) times 8
# of them, not 100.
RTT_CALLS = 100 if judge.judging() else 8
BARE_PAGE = b"""<!doctype html><meta charset="utf-8"><title>no script tag</title><body>bench</body>"""

ACK_RTT = """async ({ n }) => {
  const api = __webmcpPerf
  const sid = api.sessionId
  const tool = { name: "rtt", execute: () => ({ ok: 1 }) }
  api.instrument([tool])
  const port = new MessageChannel()
  const tick = () => new Promise((r) => { port.port1.onmessage = r; port.port2.postMessage(0) })
  const acked = () => api.relay().acked[sid]
  const held = () => api.spans().reduce((m, s) => Math.max(m, s.seq), -1)
  while (acked() < held()) await tick()
  const rtts = []
  for (let i = 0; i < n; i++) {
    const a = acked()
    const t0 = performance.now()
    await tool.execute({})
    while (acked() <= a) await tick()
    rtts.push(performance.now() - t0)
    await new Promise((r) => setTimeout(r, 0))
  }
  rtts.sort((x, y) => x - y)
  return { p50: rtts[Math.min(n - 1, Math.floor(0.5 * n))], p95: rtts[Math.min(n - 1, Math.floor(0.95 * n))] }
}"""


class _Handler(http.server.BaseHTTPRequestHandler):
    relay_url = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        pages = {
            "/tag": (TAG_PAGE, "text/html; charset=utf-8"),
            "/bare": (BARE_PAGE, "text/html; charset=utf-8"),
            "/agent.js": (AGENT.read_bytes(), "text/javascript; charset=utf-8"),
            "/cfg.js": (f"window.__WMCP_UPLINK__ = {json.dumps(self.relay_url)};".encode(), "text/javascript; charset=utf-8"),
        }
        if path not in pages:
            self.send_error(404)
            return
        body, ctype = pages[path]
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def measure(page: Any) -> dict[str, Any]:
    wait_js(page, "window.__webmcpPerf && __webmcpPerf.active && __webmcpPerf.relay().state === 'open'")
    small = page.evaluate(BENCH, {"size": 1000, "calls": 2000, "batch": 20})
    large = page.evaluate(BENCH, {"size": 128 * 1024, "calls": 200, "batch": 10})
    rtt = page.evaluate(ACK_RTT, {"n": RTT_CALLS})
    return {"small": small, "large": large, "rtt": rtt}


@pytest.mark.bench
def test_extension_overhead(tmp_path: Path) -> None:
    os.environ.setdefault("WMCP_TOP_HOME", str(tmp_path))
    relay = RelayThread(tmp_path)
    _Handler.relay_url = relay.ws_url
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    results: dict[str, dict[str, Any]] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=ARGS)
            page = browser.new_page()
            page.goto(f"{base}/tag?perf=1")
            results["script tag"] = measure(page)
            browser.close()
            assert EXT is not None
            ctx = launch(p, tmp_path / "profile")
            pair(ctx, extension_id(json.loads((EXT / "manifest.json").read_text())), relay.port, relay.token)
            page = ctx.new_page()
            page.goto(f"{base}/bare")
            assert page.evaluate("document.scripts.length") == 0, "no script tag: the agent came from the extension"
            results["extension"] = measure(page)
            ctx.close()
    finally:
        httpd.shutdown()
        relay.close()

    for lane, r in results.items():
        for label, key in (("1 KB", "small"), ("128 KB", "large")):
            x = r[key]
            print(
                f"\n{lane:>10} {label:>6}: +{x['addedP50'] * 1000:.2f} us p50 on the call path over no agent "
                f"(raw {x['rawP50'] * 1000:.2f} us, instrumented {x['instP50'] * 1000:.2f} us) [{x['accounted']} calls, isolated={x['isolated']}]"
            )
        print(f"{lane:>10} ack round trip: p50 {r['rtt']['p50']:.2f} ms, p95 {r['rtt']['p95']:.2f} ms (call settled -> relay's ack back in the page)")
    for lane, r in results.items():
        assert r["small"]["isolated"] and r["small"]["accounted"] == 2000 and r["large"]["accounted"] == 200, lane
    judge.time_targets(
        [judge.at_most("the extension's agent, 1 KB: ms added p50 (the script tag's target)", results["extension"]["small"]["addedP50"], 0.01, ".4f")]
    )
