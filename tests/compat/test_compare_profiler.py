"""compare with webmcp-profiler's thresholds files: its keys, its meaning, its exit codes, its bench JSON."""

from __future__ import annotations

from typing import Any

from relay_bridge.lanes.compare import compare


def row(tool: str, **kw: Any) -> dict[str, Any]:
    r = {
        "tool": tool,
        "calls": 10,
        "errors": 0,
        "minMs": 1.0,
        "p50Ms": 10.0,
        "p95Ms": 20.0,
        "maxMs": 30.0,
        "blockingMs": 0.0,
        "lastResultBytes": 100,
        "totalBytes": 1000,
        "estTokens": 260,
        "estInputTokens": 10,
        "schemaBytes": 120,
    }
    r.update(kw)
    return r


def report(*rows: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": "webmcp-perf-report/2",
        "session": {"id": "0a0b0c0d", "origin": "o", "userAgent": "u", "generatedAt": "2026-01-01T00:00:00.000Z", "version": "t"},
        "ledger": {},
        "tools": list(rows),
        "spans": [],
    }


def statuses(result: dict[str, Any]) -> dict[str, str]:
    return {t["tool"]: t["status"] for t in result["tools"]}


def test_no_thresholds_judges_nothing() -> None:
    result = compare(report(row("a")), report(row("a", p95Ms=500.0, errors=9)))
    assert result["regressions"] == 0 and result["judged"] is False and statuses(result) == {"a": "changed"}


def test_absolute_growth_limits_mean_what_they_mean_in_webmcp_profiler() -> None:
    base = report(row("a"))
    # p95 +1.5 ms against a 1 ms limit: a violation in 000, though only +7.5 % (wmcp-top's default rule would pass it)
    assert statuses(compare(base, report(row("a", p95Ms=21.5)), {"p95Ms": 1})) == {"a": "regressed"}
    assert statuses(compare(base, report(row("a", p95Ms=20.9)), {"p95Ms": 1})) == {"a": "same"}
    # summed bytes and tokens, not per call: twice the calls, twice the bytes breaks totalBytes +500
    twice = report(row("a", calls=20, totalBytes=2000, estTokens=520))
    assert statuses(compare(base, twice, {"totalBytes": 500})) == {"a": "regressed"}
    assert statuses(compare(base, twice, {"estTokens": 300})) == {"a": "same"}
    assert statuses(compare(base, report(row("a", lastResultBytes=150)), {"lastResultBytes": 49})) == {"a": "regressed"}
    assert statuses(compare(base, report(row("a", schemaBytes=200)), {"schemaBytes": 79})) == {"a": "regressed"}
    assert statuses(compare(base, report(row("a", errors=2)), {"errorRate": 0.1})) == {"a": "regressed"}
    assert statuses(compare(base, report(row("a", errors=1)), {"errorRate": 0.1})) == {"a": "same"}


def test_relative_is_a_ratio_on_000s_keys() -> None:
    base = report(row("a"))
    assert statuses(compare(base, report(row("a", p50Ms=13.0)), {"relative": 0.25})) == {"a": "regressed"}
    assert statuses(compare(base, report(row("a", p50Ms=12.0)), {"relative": 0.25})) == {"a": "same"}
    # totalBytes is not among the relative keys in webmcp-profiler
    assert statuses(compare(base, report(row("a", totalBytes=5000)), {"relative": 0.25})) == {"a": "same"}


def test_the_same_key_means_the_same_in_wmcp_tops_format() -> None:
    base, head = report(row("a")), report(row("a", p95Ms=21.5))
    assert statuses(compare(base, head, {"format": "wmcp-top-thresholds/1", "default": {"p95Ms": 1, "p95Pct": 1000}})) == {"a": "regressed"}
    assert statuses(compare(base, head, {"format": "wmcp-top-thresholds/1"})) == {"a": "same"}, "the defaults are percentage rules"


def test_webmcp_profiler_bench_json_is_read_as_its_report() -> None:
    bench = {"rows": [], "boot": {"domContentLoaded": 1, "load": 2}, "report": report(row("a"))}
    slow = {"rows": [], "boot": {"domContentLoaded": 1, "load": 2}, "report": report(row("a", p50Ms=50.0))}
    assert statuses(compare(bench, slow, {"p50Ms": 5})) == {"a": "regressed"}
