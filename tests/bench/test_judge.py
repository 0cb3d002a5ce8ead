"""Which runs judge time targets (tests/bench/judge.py): the check's short pass never fails on one."""

from __future__ import annotations

import pytest

from tests.bench import judge


@pytest.mark.parametrize(
    ("seconds", "said", "judged"),
    [
        (None, None, True),
        ("3", None, False),
        ("9.5", None, False),
        ("10", None, True),
        ("30", None, True),
        ("3", "1", True),
        ("30", "0", False),
        (None, "no", False),
    ],
)
def test_the_full_run_judges_and_the_short_pass_prints(monkeypatch: pytest.MonkeyPatch, seconds: str | None, said: str | None, judged: bool) -> None:
    for name, value in (("WMCP_BENCH_SECONDS", seconds), ("WMCP_BENCH_JUDGE", said)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert judge.judging() is judged


def test_a_missed_target_fails_only_a_judged_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    checks = [judge.at_most("own CPU share", 0.191, 0.14), judge.at_most("RSS MB", 80.0, 100.0, ".0f")]
    monkeypatch.setenv("WMCP_BENCH_SECONDS", "3")
    monkeypatch.delenv("WMCP_BENCH_JUDGE", raising=False)
    judge.time_targets(checks)  # printed, not asserted
    out = capsys.readouterr().out
    assert "NOT met: own CPU share 0.191 > 0.140" in out and "met: RSS MB 80 <= 100" in out
    monkeypatch.setenv("WMCP_BENCH_SECONDS", "30")
    with pytest.raises(AssertionError, match=r"own CPU share 0\.191 > 0\.140"):
        judge.time_targets(checks)
    judge.time_targets(checks[1:])  # all met: no failure
