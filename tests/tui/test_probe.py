"""The benchmark's latency probe (tui/probes/latency.py) times the event loop's turns without a timer of its own."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tui.probes.latency import HOLD_NOTED, Probe


def _spin(seconds: float) -> None:
    """Hold the loop doing work (not sleeping), as a slow callback would."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


@pytest.mark.serial
def test_a_turn_that_holds_the_loop_is_noted_with_its_cpu_and_short_turns_are_not(tmp_path: Path) -> None:
    path = tmp_path / "probe.txt"
    probe = Probe(path)

    async def main() -> bool:
        loop = asyncio.get_running_loop()
        watching = probe.watch_loop(loop)
        for _ in range(20):  # short turns
            await asyncio.sleep(0)
        await asyncio.sleep(0.01)  # a turn through the selector, then one callback that works for 60 ms
        loop.call_soon(_spin, 0.06)
        await asyncio.sleep(0.01)
        await asyncio.sleep(0.01)
        return watching

    assert asyncio.run(main())
    probe.close()
    holds = [line.split() for line in path.read_text().splitlines() if line.startswith("s ")]
    assert len(holds) == 1, holds
    _, _, wall_ms, cpu_ms = holds[0]
    assert float(wall_ms) >= 60 and float(cpu_ms) >= 55, holds
    assert HOLD_NOTED * 1000 < 60


def test_the_probe_adds_no_timer_to_the_loop(tmp_path: Path) -> None:
    """An idle loop with the probe on has nothing scheduled: the probe does not wake the process it measures."""
    probe = Probe(tmp_path / "probe.txt")

    async def main() -> int:
        loop = asyncio.get_running_loop()
        probe.watch_loop(loop)
        await asyncio.sleep(0)
        return len(loop._scheduled)  # type: ignore[attr-defined]  # asyncio's private timer list: what the test counts

    assert asyncio.run(main()) == 0
    probe.close()
