"""Benchmark: what sizing a long tool result costs the page (page_agent/src/measure.js `jsonStringBytes`).

The agent counts a long text's JSON bytes (UTF-8, quotes, escapes) where the text is, instead of building the
JSON text and measuring that: no copy of a 128 KB result per call for the page's garbage collector. The
baseline in the same run is that copy (JSON.stringify, then its UTF-8 bytes: Buffer.byteLength in node, the
engine's TextEncoder in Chromium), over five texts a tool returns (plain, lines with quotes, not ASCII, CJK, a
JSON text), in node and in Chromium (the page's engine; its TextEncoder costs many times node's). Both ways
must agree on every byte, and in node the agent's way must not cost more than the copy it replaces.

  pytest tests/bench/test_text_sizing.py -m bench -s     (WMCP_BENCH_SECONDS: the run's length, default 30)
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SECONDS = min(float(os.environ.get("WMCP_BENCH_SECONDS", "30")), 10.0)  # a few seconds say all there is
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NODE_RUN = "import {{ run }} from {module}; console.log(JSON.stringify(run({seconds}, (t) => Buffer.byteLength(t, 'utf8'))))"
PAGE_RUN = """async (seconds) => {
  const { run } = await import("/tests/bench/sizes.mjs")
  const encoder = new TextEncoder()
  return run(seconds, (t) => encoder.encode(t).length)
}"""


class _Files(http.server.SimpleHTTPRequestHandler):
    """The repository's files (the page imports sizes.mjs and the agent's own modules from it)."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".mjs": "text/javascript", ".js": "text/javascript"}

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def served() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Files, directory=str(ROOT)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


def in_chromium(seconds: float) -> list[dict[str, Any]]:
    chromium = os.environ.get("WMCP_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).is_file():
        pytest.fail(f"Chromium not found at {chromium}: apt-get install -y chromium", pytrace=False)
    with served() as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(f"{base}/README.md")
        rows = page.evaluate(PAGE_RUN, seconds)
        browser.close()
    return rows


@pytest.mark.bench
def test_sizing_a_long_text_costs_less_than_copying_it() -> None:
    module = json.dumps((HERE / "sizes.mjs").as_uri())
    script = NODE_RUN.format(module=module, seconds=SECONDS / 2)
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120, check=True)
    rows = {"node": json.loads(out.stdout), "Chromium": in_chromium(SECONDS / 2)}
    print()
    print("sizing a long text as JSON, µs a call (best of 3 rounds, taking turns):")
    print("  text                           chars   node: sized  copy+measure   Chromium: sized  copy+measure")
    for n, c in zip(rows["node"], rows["Chromium"]):
        print(f"  {n['name']:<28} {n['chars']:8,d} {n['sized']:13.1f} {n['baseline']:13.1f} {c['sized']:17.1f} {c['baseline']:13.1f}")
    for engine, found in rows.items():
        assert len(found) == 5, f"{engine}: {found}"
        for r in found:
            assert r["agree"], f"{engine}, {r['name']}: the sizes differ"
    for r in rows["node"]:
        assert r["sized"] <= r["baseline"] * 1.25, f"{r['name']}: sizing {r['sized']:.1f} µs > copying {r['baseline']:.1f} µs"
