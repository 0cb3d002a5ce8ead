"""Benchmark: what the diagnosis facts cost the page, in headless Chromium (docs/diagnosis-facts.md).

The facts run off the call path (an idle callback after the call was accounted), so the call path's figure is
tests/bench/test_agent_overhead.py's, unchanged. This measures the idle-time work itself, with the agent's own
modules (page_agent/src, loaded as ES modules):
  - facts per call (bloat, schema check, repeat hash) for a pretty-printed 1 KB and 128 KB JSON result;
  - one image re-encoded (decode, JPEG q0.8 as is and fitted to 1568 px): the main thread's task time over
    the re-encodings, read from the DevTools Protocol (Performance.getMetrics TaskDuration) less an idle control
    of the same length, per image, for a 2400 x 1200 and a 1024 x 768 PNG; in the agent's worker and in the page
    (the fallback where a page's CSP forbids the worker).

  WMCP_BENCH_SECONDS=3 pytest tests/bench/test_facts_cost.py -m bench -s
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

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "page_agent" / "src"
IMAGES = 5  # re-encodings per size

PAGE = b"""<!doctype html><meta charset="utf-8"><title>facts cost</title><body>bench
<script type="module">
import { FactsTaker } from "/src/page/facts.js"
import { measureImage } from "/src/page/images.js"
window.facts = async ({ rows, calls }) => {
  const text = JSON.stringify(Array.from({ length: rows }, (_, i) => ({ id: i, name: `item ${i}`, price: i * 1.25, ok: i % 2 === 0 })), null, 2)
  const value = { content: [{ type: "text", text }] }
  const schema = { type: "object", properties: { q: { type: "string", maxLength: 40 }, n: { type: "integer", minimum: 1 } }, required: ["q"] }
  let sent = 0
  const taker = new FactsTaker({ send: () => sent++, schemaOf: () => schema })
  const idle = () => new Promise((r) => requestIdleCallback(r)) // queued after the taker's own: it has run by then
  for (let i = 0; i < calls; i++) {
    taker.take({ seq: i, tool: "t", input: { q: "query " + (i % 50), n: i }, value, ok: true, profile: "chromium", refused: false })
    if (i % 20 === 19) await idle()
  }
  await idle()
  return { textBytes: new TextEncoder().encode(text).length, perCallMs: taker.cost.ms / taker.cost.calls, calls: taker.cost.calls, sent, dropped: taker.cost.dropped, isolated: crossOriginIsolated }
}
window.makePng = async (w, h) => {
  const c = document.createElement("canvas")
  c.width = w
  c.height = h
  const ctx = c.getContext("2d")
  const g = ctx.createLinearGradient(0, 0, w, h)
  g.addColorStop(0, "#2060c0")
  g.addColorStop(1, "#f0a030")
  ctx.fillStyle = g
  ctx.fillRect(0, 0, w, h)
  let seed = 12345
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296)
  for (let i = 0; i < (w * h) / 960; i++) {
    ctx.fillStyle = `rgba(${(rnd() * 255) | 0},${(rnd() * 255) | 0},${(rnd() * 255) | 0},0.6)`
    ctx.beginPath()
    ctx.arc(rnd() * w, rnd() * h, 3 + rnd() * 40, 0, 2 * Math.PI)
    ctx.fill()
  }
  const blob = await new Promise((r) => c.toBlob(r, "image/png"))
  const bytes = new Uint8Array(await blob.arrayBuffer())
  let bin = ""
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000))
  window.png = btoa(bin)
  return window.png.length
}
window.reencode = async (n, worker) => {
  const cost = { ms: 0, images: 0, inPage: 0 }
  const t0 = performance.now()
  let last = null
  for (let i = 0; i < n; i++) last = await measureImage(window.png, { cost, worker })
  return { wallMs: (performance.now() - t0) / n, syncMs: cost.ms / n, images: cost.images, inPage: cost.inPage, last }
}
window.parseMs = (rows, n) => {
  const text = JSON.stringify(Array.from({ length: rows }, (_, i) => ({ id: i, name: `item ${i}`, price: i * 1.25, ok: i % 2 === 0 })), null, 2)
  JSON.parse(text)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) JSON.parse(text)
  return (performance.now() - t0) / n
}
window.idle = (ms) => new Promise((r) => setTimeout(r, ms))
window.ready = true
</script>"""


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/":
            body, ctype = PAGE, "text/html; charset=utf-8"
        elif path.startswith("/src/") and path.endswith(".js") and ".." not in path and (SRC / path[5:]).is_file():
            body, ctype = (SRC / path[5:]).read_bytes(), "text/javascript; charset=utf-8"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        # cross-origin isolated: performance.now() ticks in 5 us steps, not 100 us
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _task_seconds(cdp: Any) -> float:
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


@pytest.mark.bench
def test_facts_cost() -> None:
    chromium = judge.chromium()
    seconds = float(os.environ.get("WMCP_BENCH_SECONDS", "10"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=BASE_ARGS)
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/")
            page.wait_for_function("window.ready === true")
            calls = max(50, int(seconds * 100))
            small = page.evaluate("(o) => facts(o)", {"rows": 10, "calls": calls})
            large = page.evaluate("(o) => facts(o)", {"rows": 1600, "calls": max(20, calls // 10)})
            # the control: JSON.parse of the same text, in the same page and moment
            small["parseMs"] = page.evaluate("([r, n]) => parseMs(r, n)", [10, calls])
            large["parseMs"] = page.evaluate("([r, n]) => parseMs(r, n)", [1600, max(20, calls // 10)])
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            images = []
            for w, h in ((2400, 1200), (1024, 768)):
                b64 = page.evaluate("([w, h]) => makePng(w, h)", [w, h])
                for worker in (True, False):  # the agent's path, and the in-page fallback (a page whose CSP forbids the worker)
                    page.evaluate("([n, w]) => reencode(n, w)", [1, worker])  # warm up the encoders
                    t0 = _task_seconds(cdp)
                    r = page.evaluate("([n, w]) => reencode(n, w)", [IMAGES, worker])
                    busy = _task_seconds(cdp) - t0
                    t1 = _task_seconds(cdp)
                    page.evaluate("(ms) => idle(ms)", r["wallMs"] * IMAGES)
                    control = _task_seconds(cdp) - t1
                    images.append((w, h, b64 * 3 // 4, worker, r, (busy - control) * 1000 / IMAGES))
            browser.close()
    finally:
        httpd.shutdown()

    for label, r in (("1 KB", small), ("128 KB", large)):
        print(
            f"\nfacts per call, {label:>6} pretty JSON ({r['textBytes']} B): {r['perCallMs'] * 1000:.1f} us CPU in an idle callback "
            f"(control: JSON.parse of the same text {r['parseMs'] * 1000:.1f} us) [{r['calls']} calls]"
        )
    for w, h, size, worker, r, main_ms in images:
        last = r["last"]
        print(
            f"\nimage re-encode {w}x{h} PNG {size / 1e6:.2f} MB, {'worker ' if worker else 'in page'}: main-thread task time {main_ms:.1f} ms "
            f"per image (our synchronous steps {r['syncMs']:.1f} ms), wall {r['wallMs']:.1f} ms; "
            f"JPEG q0.8 {last['jpegBytes']} B, fitted {last['fitWidth']}x{last['fitHeight']} {last['fitBytes']} B [{r['images']} images]"
        )
    assert small["sent"] == small["calls"] == calls and large["sent"] == large["calls"] == max(20, calls // 10), "every call got its facts"
    assert small["dropped"] == large["dropped"] == 0
    assert small["isolated"], "the page must be cross-origin isolated for a fine timer"
    assert large["textBytes"] > 128 * 1024
    big, small_img = images[0][4]["last"], images[2][4]["last"]
    assert (big["width"], big["height"], big["fitWidth"], big["fitHeight"]) == (2400, 1200, 1568, 784)
    assert (small_img["fitWidth"], small_img["fitHeight"]) == (1024, 768) and small_img["fitBytes"] == small_img["jpegBytes"]
    assert all(r["images"] == IMAGES for *_, r, _ in images)
    assert [r["inPage"] for *_, worker, r, _ in images] == [0, IMAGES, 0, IMAGES], "the worker took the work where allowed"
    assert images[0][4]["last"] == images[1][4]["last"], "one encoder, one answer, on either path"
