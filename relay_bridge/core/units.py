"""Human units: bytes, counts, durations and the one-line cost split.

These are arithmetic-identical to page_agent/src/page/stats.js (tests/vectors/format.json holds both to the
digit): one decimal is `floor(x * 10 + 0.5) / 10`, never Python's banker's `round` or JavaScript's `toFixed`.
"""

from __future__ import annotations

import math


def round1(x: float) -> float:
    return math.floor(x * 10 + 0.5) / 10


def round0(x: float) -> int:
    return math.floor(x + 0.5)


def _scaled(value: float, units: tuple[str, ...], base: float) -> str:
    """`value` is already >= base: one decimal under 10, whole numbers above, carrying into the next unit."""
    i = 0
    v = value / base
    while True:
        small = round1(v)
        if small < 10:
            return f"{small:.1f}{units[i]}"
        whole = round0(v)
        if whole < 1000 or i == len(units) - 1:
            return f"{whole}{units[i]}"
        i += 1
        v = v / base


def fmt_bytes(n: float) -> str:
    """1000-based: 512B, 9.8KB, 310KB, 1.2MB."""
    if n < 1000:
        return f"{round0(n)}B"
    return _scaled(n, ("KB", "MB", "GB"), 1000.0)


def fmt_count(n: float) -> str:
    """Token counts: 950, 2.5K, 78K, 1.2M."""
    if n < 1000:
        return str(round0(n))
    return _scaled(n, ("K", "M", "B"), 1000.0)


def fmt_duration(ms: float) -> str:
    """Three significant digits, so two numbers that differ read differently: 8.5ms, 127ms, 1.27s, 12.7s, 127s,
    then minutes. Each step is counted in whole units of its last digit (tenths of a ms, ms, centiseconds, ...),
    so a value that rounds up into the next step is written there (9.96 ms is 10ms, never 10.0ms)."""
    tenths = round0(ms * 10)
    if tenths < 100:
        return f"{tenths // 10}.{tenths % 10}ms"
    whole = round0(ms)
    if whole < 1000:
        return f"{whole}ms"
    centis = round0(ms / 10)
    if centis < 1000:
        return f"{centis // 100}.{centis % 100:02d}s"
    decis = round0(ms / 100)
    if decis < 1000:
        return f"{decis // 10}.{decis % 10}s"
    secs = round0(ms / 1000)
    if secs < 600:
        return f"{secs}s"
    return f"{secs // 60}m{secs % 60:02d}s"


def fmt_ms(ms: float | None) -> str:
    """A table cell: wall or blocking time of one call (the one duration format; a dash when there is none)."""
    if ms is None:
        return "–"
    return fmt_duration(ms)


def summary_line(schema_bytes: int, wall_ms: float, result_bytes: int, est_tokens: int, host_gap_ms: float) -> str:
    """`schemas 9.8KB (~2.5K tok) · tools 0.3s · payloads 310KB (~78K tok) · host gaps 39s`."""
    schema_tokens = math.ceil(schema_bytes / 4)
    return (
        f"schemas {fmt_bytes(schema_bytes)} (~{fmt_count(schema_tokens)} tok)"
        f" · tools {fmt_duration(wall_ms)}"
        f" · payloads {fmt_bytes(result_bytes)} (~{fmt_count(est_tokens)} tok)"
        f" · host gaps {fmt_duration(host_gap_ms)}"
    )
