"""The benchmarks' paired-round statistics (tests/bench/paired.py): a verdict a broken formula would get wrong."""

from __future__ import annotations

import math

import pytest

from tests.bench.paired import interval, verdict


def test_interval_is_the_mean_and_students_t_half_width() -> None:
    mean, half = interval([0.01, 0.02, 0.03])
    assert mean == pytest.approx(0.02)
    assert half == pytest.approx(4.30 * 0.01 / math.sqrt(3))  # sd 0.01, 2 degrees of freedom
    mean, half = interval([0.1] * 40)
    assert mean == pytest.approx(0.1)
    assert half == pytest.approx(0.0)
    assert math.isnan(interval([0.3])[1])  # one round: no interval


def test_between_rows_of_the_table_the_interval_is_the_wider_one() -> None:
    values = [(-1) ** i * 0.01 for i in range(12)]  # 11 degrees of freedom: row 10 (2.23), not row 12 (2.18)
    assert interval(values)[1] == pytest.approx(2.23 * 0.01 * math.sqrt(12 / 11) / math.sqrt(12))
    values = [(-1) ** i * 0.01 for i in range(50)]  # past the last row: row 30 (2.04)
    assert interval(values)[1] == pytest.approx(2.04 * 0.01 * math.sqrt(50 / 49) / math.sqrt(50))


@pytest.mark.parametrize(
    ("mean", "half", "said"),
    [
        (0.02, 0.02, "yes"),
        (0.03, 0.03, "cannot tell"),
        (0.08, 0.02, "NO"),
        (0.05, 0.0, "yes"),
        (0.06, float("nan"), "NO"),
        (0.04, float("nan"), "yes"),
    ],
)
def test_verdict_says_within_beyond_or_undecided(mean: float, half: float, said: str) -> None:
    assert verdict(mean, half, 0.05) == said
