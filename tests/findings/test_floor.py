"""A saving below its floor is not a finding (issue 49: "time.slow-tool … saves 0.4ms" on a tool whose calls all
take 120 ms give or take the timer's jitter)."""

from __future__ import annotations

from relay_bridge.findings.engine import diagnose
from relay_bridge.findings.timing import SLOW_SAVING_FLOOR_MS
from tests.findings.builders import session_input


def _session(walls: list[float]) -> dict:
    spans = [{"seq": i, "tool": "render", "wallMs": w} for i, w in enumerate(walls)]
    return {"id": "f100f100", "tools": [{"name": "render", "calls": len(walls), "schemaBytes": 100}], "spans": spans}


def test_a_steady_slow_tool_saves_nothing_worth_a_finding() -> None:
    steady = [120.0 + (0.1 if i % 3 == 0 else 0.0) for i in range(12)]  # 0.4 ms above the median in all
    assert not [f for f in diagnose([session_input(_session(steady))]) if f.rule == "time.slow-tool"]


def test_a_slow_tool_with_a_real_tail_is_still_found() -> None:
    tailed = [120.0] * 10 + [400.0, 500.0]
    [finding] = [f for f in diagnose([session_input(_session(tailed))]) if f.rule == "time.slow-tool"]
    assert finding.saving.ms == 660.0 and finding.saving.ms >= SLOW_SAVING_FLOOR_MS
