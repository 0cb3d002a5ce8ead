"""webmcp-profiler, the peer the agent's costs are set against (issue 47), when a run is given its built IIFE.

It is not on the npm registry this project installs from, and its code is not ours to commit: `WMCP_PEER` names
its built `dist/webmcp-profiler.iife.js` (built from its own repository with its own `vite.iife.config.ts`). Given
it, the load-cost and per-call benchmarks add it as a way of their own, switched on as its users switch it on
(`?perf=1`, which its gate reads), and print the whole agent's added cost over its added cost. Not given, they say
so and compare against the floor agent (tests/bench/floor.py) alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV = "WMCP_PEER"
NAME = "webmcp-profiler"
# What it does in a page, read through its console API (which takes the name the agent's does): spans kept, and
# the `performance.measure` entries it made.
DID = """globalThis.__webmcpPerf && !__webmcpPerf.overhead
  ? [__webmcpPerf.spans().length, performance.getEntriesByType("measure").filter((m) => m.name.startsWith("webmcp:")).length]
  : null"""


def peer_js() -> str | None:
    """The peer's script text, or None when this run was given none."""
    path = os.environ.get(ENV)
    if not path:
        return None
    file = Path(path)
    if not file.is_file():
        pytest.fail(f"{ENV}={path}: no such file (webmcp-profiler's built dist/webmcp-profiler.iife.js)", pytrace=False)
    text = file.read_text(encoding="utf-8")
    if "__webmcpPerf" not in text:
        pytest.fail(f"{ENV}={path}: not webmcp-profiler's IIFE (it defines no __webmcpPerf)", pytrace=False)
    return text


def missing() -> str:
    return f"({NAME} not given: set {ENV} to its built IIFE to add it; compared with the floor agent alone)"
