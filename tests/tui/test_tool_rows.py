"""The shown session's tool rows: the stats' change log and the top rows by the sort (pure, no Textual)."""

from __future__ import annotations

import random

import msgspec

from relay_bridge.core import protocol as p
from relay_bridge.core import synth
from relay_bridge.core.stats import SessionStats
from tui.model.tool_rows import ToolRows

SID = "a1b2c3d4"


def span(seq: int, tool: str, wall: float = 5.0, error: bool = False) -> p.Span:
    return msgspec.convert(synth.span(SID, seq, tool, seq * 10.0, wall, gap=1.0, is_error=error), p.Span)


def test_change_log_names_only_what_changed_and_the_tool_an_eviction_touched() -> None:
    stats = SessionStats(buffer=3)
    for seq, tool in enumerate(["a", "b", "c"]):
        stats.add(span(seq, tool))
    seen = stats.version
    assert stats.changed_since(seen) == []
    stats.add(span(3, "d"))  # evicts seq 0, a span of "a": a's percentiles changed too
    assert set(stats.changed_since(seen)) == {"a", "d"}
    stats.register("e", 120)
    assert stats.changed_since(seen)[0] == "e"


def test_incremental_rows_equal_a_full_rebuild() -> None:
    rng = random.Random(7)
    stats = SessionStats(buffer=50)
    rows = ToolRows()
    seq = 0
    for _ in range(40):
        for _ in range(rng.randrange(1, 30)):
            stats.add(span(seq, f"t{rng.randrange(80)}", rng.uniform(1, 99), rng.random() < 0.1))
            seq += 1
        if rng.random() < 0.2:
            stats.register(f"t{rng.randrange(100)}", rng.randrange(50, 400))
        if rng.random() < 0.1:
            stats.unregister(f"t{rng.randrange(100)}")
        if rng.random() < 0.05:
            stats.reset()
        rows.update(stats)
        assert rows.rows == {r["tool"]: r for r in stats.aggregates()}


def test_top_rows_follow_the_sort_and_count_the_rest() -> None:
    stats = SessionStats(buffer=500)
    seq = 0
    for i in range(1000):
        for _ in range(1 + i % 7):
            stats.add(span(seq, f"tool{i:04d}", wall=float(i)))
            seq += 1
    rows = ToolRows()
    assert rows.update(stats) is None  # first sight: every row built
    top = rows.top("calls", False, 10)
    assert [r["calls"] for r in top.rows] == [7] * 10 and top.matching == 1000 and top.hidden == 990
    assert [r["tool"] for r in rows.top("tool", False, 3).rows] == ["tool0000", "tool0001", "tool0002"]
    assert [r["tool"] for r in rows.top("tool", True, 2).rows] == ["tool0999", "tool0998"]
    assert rows.top("p95", False, 1).rows[0]["tool"] == "tool0999"  # the slowest still in the ring
    found = rows.top("calls", False, 10, text_filter="TOOL077")
    assert found.matching == 10 and {r["tool"] for r in found.rows} == {f"tool077{d}" for d in range(10)}
    evicted = next(iter(stats.ring.values())).tool
    stats.add(span(seq, "tool0500"))
    assert rows.update(stats) == {"tool0500", evicted}  # two rows to redraw, not a thousand
