"""Benchmark: what diagnosing costs, beside a control, on the largest session a store keeps.

The dashboard's summary line diagnoses the shown session again when its numbers moved (at most once a
second); the findings view diagnoses every session, and runs footprint's duplicate scan when the catalog changed. This times both on a full
ring (500 spans) over 50 tools with 300-byte descriptions, every span carrying facts, against the control of
reading the same session's aggregates (what the tool table does on every refresh anyway). The short pass asserts
only what noise cannot flip: the findings are right and the same on every run; the times are printed.

  pytest tests/bench/test_findings_cost.py -m bench -s     (WMCP_BENCH_SECONDS sets each block's length, default 3)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest

from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.findings import diagnose, from_session
from relay_bridge.findings.schema import find_duplicates
from tests.findings.builders import BloatFacts, Facts, RepeatFacts, attach
from tests.frames import frame

SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "3"))
SID, TOOLS, SPANS, SESSIONS = "be000000", 50, 500, 8


def _store() -> Store:
    store = Store(buffer=SPANS)
    for n in range(SESSIONS):
        sid = f"{0xBE000000 + n:08x}"
        store.connect(n + 1)
        store.apply(n + 1, frame(synth.hello(sid, f"https://s{n}.example")))
        for i in range(TOOLS):
            store.apply(n + 1, frame(synth.tool(sid, f"tool_{i:02d}", 1.0, description=f"Tool {i} does one thing. " * 12)))
        spans = [
            synth.span(sid, s, f"tool_{s % TOOLS:02d}", 10.0 + s * 600, 5.0 + s % 90, result_bytes=4000, gap=None if s == 0 else 500.0)
            for s in range(SPANS)
        ]
        store.apply(n + 1, frame(synth.spans_frame(sid, spans)))
        attach(
            store.sessions[sid],
            {s: Facts(bloat=BloatFacts(4000, 900, 1200, 20), repeat=RepeatFacts(s - 1) if s % 7 == 0 else None) for s in range(SPANS)},
        )
    return store


def _per_call_ms(fn: Callable[[], object]) -> float:
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS / 3:
        fn()
        n += 1
    return (time.perf_counter() - start) * 1000 / n


@pytest.mark.bench
def test_diagnosing_a_full_session_costs_a_few_ms() -> None:
    store = _store()
    one = store.sessions[SID]
    first = diagnose([from_session(one)], duplicates=False)
    assert {f.rule for f in first} >= {"bloat.whitespace", "bloat.repeated-keys", "repeats", "time.host-gaps"}
    assert diagnose([from_session(one)], duplicates=False) == first  # same input, same findings
    control = _per_call_ms(lambda: one.stats.aggregates())
    summary = _per_call_ms(lambda: diagnose([from_session(one)], duplicates=False))
    view = _per_call_ms(lambda: diagnose([from_session(s) for s in store.sessions.values()], duplicates=False))
    catalog = _per_call_ms(lambda: find_duplicates([from_session(s) for s in store.sessions.values()]))
    print(
        f"\nfindings cost, {SPANS} spans x {TOOLS} tools a session: control (aggregates) {control:.2f} ms · "
        f"summary line (one session) {summary:.2f} ms · findings view per change ({SESSIONS} sessions) {view:.2f} ms · "
        f"duplicates, once per catalog change ({SESSIONS * TOOLS} tools) {catalog:.2f} ms"
    )
