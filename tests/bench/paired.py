"""Paired rounds: is a shift inside a band, beyond it, or not resolved by the run?

A benchmark that takes turns (a way, then the baseline beside it, round after round) gets one paired shift per
round; their mean and its 95 % interval (Student's t) separate a real shift from this machine's noise, which on a
shared VM is larger than the 5 % bands the targets set.
"""

from __future__ import annotations

import math

# Student's t, two-sided 95 %, by degrees of freedom; between two rows the smaller one (the wider interval).
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}


def interval(values: list[float]) -> tuple[float, float]:
    """The mean of `values` and the half-width of its 95 % interval (nan from one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan")
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    t = T95[max(df for df in T95 if df <= n - 1)]
    return mean, t * sd / math.sqrt(n)


def verdict(mean: float, half: float, band: float) -> str:
    """Within `band`, beyond it, or not resolved by this run."""
    if math.isnan(half):
        return "yes" if mean <= band else "NO"
    if mean + half <= band:
        return "yes"
    if mean - half > band:
        return "NO"
    return "cannot tell"
