"""Benchmark: what sizing a long tool result costs the page (page_agent/src/measure.js `jsonStringBytes`).

The agent counts a long text's JSON bytes (UTF-8, quotes, escapes) where the text is, instead of building the
JSON text and measuring that: no copy of a 128 KB result per call for the page's garbage collector. The
baseline in the same run is that copy (JSON.stringify + Buffer.byteLength), in node, over four texts a tool
returns (plain, lines with quotes, not ASCII, a JSON text). Both must agree on every byte, and the agent's way
must not cost more than the copy it replaces.

  pytest tests/bench/test_text_sizing.py -m bench -s     (WMCP_BENCH_SECONDS: the run's length, default 30)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SECONDS = min(float(os.environ.get("WMCP_BENCH_SECONDS", "30")), 10.0)  # a few seconds say all there is


@pytest.mark.bench
def test_sizing_a_long_text_costs_less_than_copying_it() -> None:
    out = subprocess.run(["node", str(HERE / "sizes.mjs"), str(SECONDS)], capture_output=True, text=True, timeout=120, check=True)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    print()
    print("sizing a long text as JSON, µs a call (node; best of 3 rounds, taking turns):")
    print("  text                           chars     sized  copy+measure")
    for r in rows:
        print(f"  {r['name']:<28} {r['chars']:8,d} {r['sized']:8.1f} {r['baseline']:12.1f}")
    assert len(rows) == 4
    for r in rows:
        assert r["agree"], f"{r['name']}: the sizes differ"
        assert r["sized"] <= r["baseline"] * 1.25, f"{r['name']}: sizing {r['sized']:.1f} µs > copying {r['baseline']:.1f} µs"
