"""Does this run judge time targets? One answer for every benchmark in tests/bench.

A time figure (a CPU share, a latency, µs per call, one way cheaper than another) on a shared machine moves with
whatever else runs: a short run cannot hold it, whatever its headroom. So the check's short pass
(WMCP_BENCH_SECONDS=3) asserts only what noise cannot flip (memory, loss, correctness, that the benchmark ran
and produced its figures) and prints every time target met or not; the full run (each benchmark's default
length, or WMCP_BENCH_SECONDS >= 10) asserts them too, and its figures are the ones the docs quote.
WMCP_BENCH_JUDGE=1 or 0 says so outright, whatever the length.
"""

from __future__ import annotations

import os

from tests.browser.conftest import chromium_path, headless_path

# From this many seconds a run has the samples its time targets need.
FULL_SECONDS = 10.0


def judging() -> bool:
    """Whether this run asserts its time targets (else it prints them)."""
    said = os.environ.get("WMCP_BENCH_JUDGE", "").strip()
    if said:
        return said not in ("0", "no", "false")
    seconds = os.environ.get("WMCP_BENCH_SECONDS", "").strip()
    return not seconds or float(seconds) >= FULL_SECONDS


def chromium() -> str:
    """The Chromium a benchmark's pages run in: the whole browser users run when the run judges time (its figures
    are the docs'), its headless shell when the run judges only what load cannot flip (the check's short pass, four
    benchmarks at a time on two cores): the same build, about half the CPU a page (tests/browser/conftest.py
    headless_path). The extension's benchmark needs the whole browser either way."""
    return chromium_path() if judging() else headless_path()


def time_targets(checks: list[tuple[bool, str]]) -> None:
    """Print each time target (met or not, and what it says); when judging, fail on every one not met."""
    for ok, said in checks:
        print(f"  time target {'met' if ok else 'NOT met'}: {said}")
    missed = [said for ok, said in checks if not ok]
    if judging():
        assert not missed, "time targets not met: " + "; ".join(missed)
    elif missed:
        print("  (a short pass: time targets are judged by the full run, WMCP_BENCH_SECONDS >= 10 or unset)")


def at_most(name: str, value: float, limit: float, fmt: str = ".3f") -> tuple[bool, str]:
    """One `value <= limit` target, said with both figures."""
    ok = value <= limit
    return ok, f"{name} {value:{fmt}} {'<=' if ok else '>'} {limit:{fmt}}"
