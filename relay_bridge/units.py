"""Human units: bytes, counts, durations and the one-line cost split.

These are arithmetic-identical to page_agent/src/stats.js (tests/vectors/format.json holds both to the
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
    """Under 100 ms in ms; then seconds with one decimal under 10 s; whole seconds; then minutes."""
    if round0(ms) < 100:
        return f"{round0(ms)}ms"
    s = ms / 1000
    if round1(s) < 10:
        return f"{round1(s):.1f}s"
    whole = round0(s)
    if whole < 600:
        return f"{whole}s"
    return f"{whole // 60}m{whole % 60:02d}s"


def fmt_ms(ms: float | None) -> str:
    """A table cell: wall or blocking time of one call."""
    if ms is None:
        return "–"
    if ms < 10:
        return f"{round1(ms):.1f}ms"
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
