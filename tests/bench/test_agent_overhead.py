"""Benchmark: what the page agent adds to a tool call, in headless Chromium.

p50 of (instrumented - raw) execute() time in the same run, for a 1 KB result (2,000 calls) and a 128 KB
result (200 calls), plus the deferred accounting's own CPU time per call (serialising and counting, done
after the host already has its value). The agent runs as users run it: loaded as a classic script, with its
uplink connected to a real relay and its BroadcastChannel read (it posts per span only when the page asks,
issue 33).

The page is cross-origin isolated (COOP + COEP), so performance.now() ticks in 5 us steps; calls are timed
in batches (raw and instrumented interleaved, same payload object) and the per-call p50 is taken over batches.

  pytest tests/bench/test_agent_overhead.py -m bench -s
"""

from __future__ import annotations

import http.server
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from tests.bench import judge
from tests.browser.conftest import BASE_ARGS
from tests.relay_thread import RelayThread

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "page_agent" / "dist" / "agent.js"
ARGS = BASE_ARGS
TARGET_1KB_MS = 0.01
TARGET_128KB_MS = 0.05

PAGE = b"""<!doctype html><meta charset="utf-8"><title>agent overhead</title>
<script src="/cfg.js"></script><script src="/agent.js"></script><body>bench</body>"""

BENCH = """async ({ size, calls, batch }) => {
  const pad = "x".repeat(size - 11)
  const payload = { blob: pad }                      // JSON text is `size` bytes
  if (JSON.stringify(payload).length !== size) throw new Error("payload size")
  const raw = { name: "raw", execute: (input) => payload }
  const inst = { name: "inst" + size, execute: (input) => payload }
  if (__webmcpPerf.instrument([inst]) !== 1) throw new Error("not instrumented")
  const input = { q: "bench" }
  const now = () => performance.now()
  const time = async (tool) => {
    const t0 = now()
    for (let i = 0; i < batch; i++) await tool.execute(input)
    return (now() - t0) / batch
  }
  const yieldTask = () => new Promise((r) => setTimeout(r, 0))
  for (let w = 0; w < 3; w++) { await time(raw); await time(inst); await yieldTask() }   // warm up the JIT
  const before = __webmcpPerf.overhead()
  const diffs = [], raws = [], insts = []
  for (let b = 0; b < calls / batch; b++) {
    // Alternate the order so neither side always runs second.
    let r, m
    if (b % 2) { r = await time(raw); m = await time(inst) } else { m = await time(inst); r = await time(raw) }
    raws.push(r); insts.push(m); diffs.push(m - r)
    await yieldTask()                                 // let the deferred accounting run, off the timed path
  }
  await yieldTask()
  const after = __webmcpPerf.overhead()
  const p50 = (xs) => xs.slice().sort((a, b) => a - b)[Math.ceil(xs.length / 2) - 1]
  return {
    isolated: crossOriginIsolated,
    resolutionUs: Math.min(...Array.from({ length: 20 }, () => { let a = now(), b = a; while (b === a) b = now(); return (b - a) * 1000 })),
    rawP50: p50(raws), instP50: p50(insts), addedP50: p50(diffs),
    accounted: after.accounted - before.accounted,
    accountingPerCallMs: (after.ms - before.ms) / Math.max(1, after.accounted - before.accounted),
    spans: __webmcpPerf.spans().length,
  }
}"""


class _Handler(http.server.BaseHTTPRequestHandler):
    relay_url = ""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/":
            body, ctype = PAGE, "text/html; charset=utf-8"
        elif path == "/agent.js":
            body, ctype = AGENT.read_bytes(), "text/javascript; charset=utf-8"
        elif path == "/cfg.js":
            body = f'window.__WMCP_UPLINK__ = "{self.relay_url}";'.encode()
            ctype = "text/javascript; charset=utf-8"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.bench
def test_agent_overhead(tmp_path: Path) -> None:
    os.environ.setdefault("WMCP_TOP_HOME", str(tmp_path))
    chromium = judge.chromium()
    relay = RelayThread(tmp_path)
    _Handler.relay_url = relay.ws_url
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/?perf=1")
            page.wait_for_function("window.__webmcpPerf && __webmcpPerf.active && __webmcpPerf.relay().state === 'open'")
            small = page.evaluate(BENCH, {"size": 1000, "calls": 2000, "batch": 20})
            large = page.evaluate(BENCH, {"size": 128 * 1024, "calls": 200, "batch": 10})
            browser.close()
    finally:
        httpd.shutdown()
        relay.close()

    for label, r in (("1 KB", small), ("128 KB", large)):
        print(
            f"\nagent overhead {label:>6}: +{r['addedP50'] * 1000:.2f} us p50 on the call path "
            f"(raw {r['rawP50'] * 1000:.2f} us, instrumented {r['instP50'] * 1000:.2f} us); "
            f"deferred accounting {r['accountingPerCallMs'] * 1000:.1f} us CPU per call "
            f"[{r['accounted']} calls, timer {r['resolutionUs']:.0f} us, isolated={r['isolated']}]"
        )
    assert small["isolated"] and large["isolated"], "the page must be cross-origin isolated for a fine timer"
    assert small["accounted"] == 2000 and large["accounted"] == 200, "every timed call was measured"
    judge.time_targets(
        [
            judge.at_most("1 KB: ms added p50", small["addedP50"], TARGET_1KB_MS, ".4f"),
            judge.at_most("128 KB: ms added p50", large["addedP50"], TARGET_128KB_MS, ".4f"),
        ]
    )
