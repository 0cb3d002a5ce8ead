"""compare: crafted pairs of reports (improvement, regression, tool added, tool removed, /1 against /2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from relay_bridge.lanes.compare import CompareError, compare
from tests.liveness import LIVENESS_S

ROOT = Path(__file__).resolve().parents[2]
# wmcp-top's own thresholds format with every key at its default (no thresholds at all judges nothing)
DEFAULTS = {"format": "wmcp-top-thresholds/1"}


def row(
    tool: str, calls: int = 20, errors: int = 0, p50: float = 10.0, p95: float = 20.0, total_bytes: int = 2000, tokens: int = 500
) -> dict[str, Any]:
    return {
        "tool": tool,
        "calls": calls,
        "errors": errors,
        "minMs": p50 / 2,
        "p50Ms": p50,
        "p95Ms": p95,
        "maxMs": p95 * 1.2,
        "blockingMs": 0,
        "lastResultBytes": total_bytes // max(calls, 1),
        "totalBytes": total_bytes,
        "estTokens": tokens,
        "estInputTokens": 10,
        "schemaBytes": 120,
    }


def report(*rows: dict[str, Any], fmt: str = "webmcp-perf-report/2") -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": fmt,
        "session": {"id": "0a0b0c0d", "origin": "http://127.0.0.1", "userAgent": "x", "generatedAt": 1, "version": "t"},
        "ledger": {},
        "tools": list(rows),
        "spans": [],
    }
    if fmt.endswith("/1"):
        for r in doc["tools"]:
            r.pop("estInputTokens", None)
    return doc


def status(result: dict[str, Any]) -> dict[str, str]:
    return {t["tool"]: t["status"] for t in result["tools"]}


def run_cli(tmp_path: Path, base: dict, head: dict, *extra: str, thresholds: dict | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    args = [sys.executable, "-m", "relay_bridge.lanes.compare", str(tmp_path / "base.json"), str(tmp_path / "head.json"), *extra]
    if thresholds is not None:
        (tmp_path / "th.json").write_text(json.dumps(thresholds))
        args += ["--thresholds", str(tmp_path / "th.json")]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=LIVENESS_S)


def test_improvement_exits_zero(tmp_path: Path) -> None:
    base, head = report(row("search", p50=10, p95=20)), report(row("search", p50=4, p95=8))
    result = compare(base, head, DEFAULTS)
    assert status(result) == {"search": "improved"} and result["regressions"] == 0
    out = run_cli(tmp_path, base, head, thresholds=DEFAULTS)
    assert out.returncode == 0, out.stderr
    assert "search" in out.stdout and "improved" in out.stdout


def test_regression_exits_one_and_names_the_tool(tmp_path: Path) -> None:
    base = report(row("search"), row("price"))
    head = report(row("search", p95=45), row("price"))
    result = compare(base, head, DEFAULTS)
    assert status(result) == {"search": "regressed", "price": "same"}
    assert result["tools"][1]["metrics"]["p95Ms"]["verdict"] == "regressed"
    out = run_cli(tmp_path, base, head, "--json", str(tmp_path / "out.json"), thresholds=DEFAULTS)
    assert out.returncode == 1
    assert "search: regressed: p95Ms 20ms -> 45ms (+125%)" in out.stdout
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["format"] == "wmcp-top-compare/1" and written["regressions"] == 1


def test_the_table_prints_the_readme_units(tmp_path: Path) -> None:
    """Durations, bytes and tokens as the dashboard prints them (README: units): 1000-based KB, 2.40s, 3.1K."""
    base = report(row("search", p50=950, p95=2400, total_bytes=300_000, tokens=60_000))
    head = report(row("search", p50=1200, p95=2500, total_bytes=308_000, tokens=62_000))
    out = run_cli(tmp_path, base, head)
    line = next(x for x in out.stdout.splitlines() if x.startswith("search"))
    assert "950ms→1.20s" in line and "2.40s→2.50s" in line and "15KB→15KB" in line and "3.0K→3.1K" in line, line


def test_a_change_in_milliseconds_reads_as_a_change(tmp_path: Path) -> None:
    """Issue 34: 100 ms -> 140 ms printed `0.1s→0.1s`; three significant digits tell them apart."""
    out = run_cli(tmp_path, report(row("search", p50=100, p95=127)), report(row("search", p50=140, p95=160)))
    line = next(x for x in out.stdout.splitlines() if x.startswith("search"))
    assert "100ms→140ms" in line and "127ms→160ms" in line, line


def test_bytes_tokens_and_errors_are_judged_per_call(tmp_path: Path) -> None:
    # twice the calls and twice the bytes: the same per call, not a regression
    assert status(compare(report(row("a")), report(row("a", calls=40, total_bytes=4000, tokens=1000)), DEFAULTS)) == {"a": "same"}
    grown = compare(report(row("a")), report(row("a", total_bytes=3000)), DEFAULTS)
    assert status(grown) == {"a": "regressed"} and grown["tools"][0]["metrics"]["bytesPerCall"]["verdict"] == "regressed"
    errs = compare(report(row("a")), report(row("a", errors=3)), DEFAULTS)
    assert errs["tools"][0]["metrics"]["errors"]["verdict"] == "regressed"


def test_tool_added_and_removed(tmp_path: Path) -> None:
    base = report(row("old"), row("kept"))
    head = report(row("kept"), row("new"))
    result = compare(base, head, DEFAULTS)
    assert status(result) == {"kept": "same", "new": "added", "old": "removed"}
    out = run_cli(tmp_path, base, head)
    assert out.returncode == 0 and "1 added, 1 removed" in out.stdout
    strict = run_cli(tmp_path, base, head, thresholds={"default": {"failOnRemoved": True}})
    assert strict.returncode == 1 and "old: regressed: tool removed" in strict.stdout


def test_v1_against_v2_skips_bytes_and_tokens_and_says_why(tmp_path: Path) -> None:
    # /1 counted UTF-16 units and no input tokens: bigger /2 numbers are not a regression of the page
    base = report(row("search", total_bytes=2000, tokens=400), fmt="webmcp-perf-report/1")
    head = report(row("search", total_bytes=5000, tokens=1400), fmt="webmcp-perf-report/2")
    result = compare(base, head, DEFAULTS)
    assert result["crossFormat"] is True and result["notes"]
    cell = result["tools"][0]["metrics"]["bytesPerCall"]
    assert cell["verdict"] == "skipped" and "/1" in cell["reason"]
    assert result["tools"][0]["metrics"]["tokensPerCall"]["verdict"] == "skipped"
    assert status(result) == {"search": "same"}
    out = run_cli(tmp_path, base, head, thresholds=DEFAULTS)
    assert out.returncode == 0 and "UTF-16" in out.stdout
    # timings are comparable across formats and still judged
    slow = compare(base, report(row("search", p50=30), fmt="webmcp-perf-report/2"), DEFAULTS)
    assert status(slow) == {"search": "regressed"}
    # like with like: two /1 reports do judge bytes
    same_fmt = compare(base, report(row("search", total_bytes=5000, tokens=400), fmt="webmcp-perf-report/1"), DEFAULTS)
    assert same_fmt["crossFormat"] is False and status(same_fmt) == {"search": "regressed"}


def test_per_tool_thresholds_override(tmp_path: Path) -> None:
    base, head = report(row("slowpoke")), report(row("slowpoke", p95=45))
    loose = {"format": "wmcp-top-thresholds/1", "tools": {"slowpoke": {"p95Pct": 200}}}
    assert status(compare(base, head, loose)) == {"slowpoke": "same"}
    assert run_cli(tmp_path, base, head, thresholds=loose).returncode == 0


@pytest.mark.parametrize("content, message", [("not json", "is not JSON"), ('{"format": "other"}', "unknown format")])
def test_bad_input_is_one_line_exit_two(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "bad.json").write_text(content)
    (tmp_path / "ok.json").write_text(json.dumps(report(row("a"))))
    out = subprocess.run(
        [sys.executable, "-m", "relay_bridge.lanes.compare", str(tmp_path / "bad.json"), str(tmp_path / "ok.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=LIVENESS_S,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wmcp-top: ") and message in lines[0]


def test_bad_thresholds_rejected() -> None:
    with pytest.raises(CompareError, match="unknown key"):
        compare(report(row("a")), report(row("a")), {"default": {"p99Pct": 3}})


def test_top_level_rules_are_honoured_and_unknown_keys_refused(tmp_path: Path) -> None:
    """Issue 34: top-level rules of a wmcp-top-thresholds/1 file were ignored, and unknown keys accepted."""
    base, head = report(row("search", p95=20)), report(row("search", p95=45))
    strict = {"format": "wmcp-top-thresholds/1", "p95Pct": 10, "p95FloorMs": 1}
    loose = {"format": "wmcp-top-thresholds/1", "p95Pct": 500}
    assert status(compare(base, head, strict)) == {"search": "regressed"}
    assert status(compare(base, head, loose)) == {"search": "same"}  # the built-in 25 % would have regressed it
    assert run_cli(tmp_path, base, head, thresholds=loose).returncode == 0
    cases: list[tuple[dict[str, Any], str]] = [
        ({"format": "wmcp-top-thresholds/1", "p95pct": 500}, "unknown key 'p95pct'"),
        ({"format": "wmcp-top-thresholds/1", "defaults": {"p95Pct": 1}}, "unknown key 'defaults'"),
        ({"format": "wmcp-top-thresholds/1", "p95Pct": 5, "default": {"p95Pct": 9}}, "both at the top level and under default"),
        ({"format": "wmcp-top-thresholds/1", "p95Pct": "5"}, "must be a number"),
        ({"format": "wmcp-top-thresholds/1", "tools": ["search"]}, "tools must be an object"),
    ]
    for bad, message in cases:
        out = run_cli(tmp_path, base, head, thresholds=bad)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1 and message in lines[0], (bad, out.stderr)


def test_shipped_schemas_agree_with_the_loaders() -> None:
    import jsonschema

    from relay_bridge.lanes.bench.runner import BenchError, check_budget
    from relay_bridge.lanes.compare import DEFAULT_THRESHOLDS, THRESHOLD_KEYS

    schema_dir = ROOT / "relay_bridge" / "schema"
    th_schema = json.loads((schema_dir / "thresholds.v1.json").read_text())
    budget_schema = json.loads((schema_dir / "budget.v1.json").read_text())
    assert set(th_schema["$defs"]["rules"]["properties"]) == set(THRESHOLD_KEYS)
    validator = jsonschema.Draft202012Validator(th_schema)
    assert validator.is_valid({"format": "wmcp-top-thresholds/1", "p95Pct": 50})  # rules at the top level
    assert not validator.is_valid({"format": "wmcp-top-thresholds/1", "p95pct": 50})
    assert not validator.is_valid({"default": {"p99Pct": 3}})
    jsonschema.Draft202012Validator(th_schema).validate({"p95Ms": 5, "relative": 0.25})  # webmcp-profiler's flat file
    jsonschema.Draft202012Validator(th_schema).validate(
        {"format": "wmcp-top-thresholds/1", "default": DEFAULT_THRESHOLDS, "tools": {"a": {"p95Pct": 50}}}
    )
    good = {"format": "wmcp-top-budget/1", "default": {"p95Ms": 100}, "tools": {"search": {"bytes": 4000, "tokens": 1000}}}
    jsonschema.Draft202012Validator(budget_schema).validate(good)
    assert check_budget(good) == good
    bad = {"tools": {"search": {"p99Ms": 1}}}
    assert not jsonschema.Draft202012Validator(budget_schema).is_valid(bad)
    with pytest.raises(BenchError):
        check_budget(bad)


def test_without_thresholds_a_regression_exits_one_by_the_defaults(tmp_path: Path) -> None:
    """Issue 49: p50 doubled and +41 % bytes reported "changed" and exit 0, though the README promises exit 1."""
    base = report(row("search", p50=10, p95=20, total_bytes=2000))
    head = report(row("search", p50=20, p95=22, total_bytes=2820))
    out = run_cli(tmp_path, base, head, "--json", str(tmp_path / "out.json"))
    assert out.returncode == 1, out.stdout
    assert "search: regressed: p50Ms 10ms -> 20ms (+100%)" in out.stdout and "bytesPerCall" in out.stdout
    assert "judged by the default thresholds" in out.stdout
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["judged"] is True and written["defaultThresholds"] is True and written["thresholds"]["p50Pct"] == 20.0
    quiet = run_cli(tmp_path, base, head, "--no-judge")  # webmcp-profiler's compare without thresholds
    assert quiet.returncode == 0 and "search" in quiet.stdout and "nothing judged" in quiet.stdout
    both = run_cli(tmp_path, base, head, "--no-judge", thresholds=DEFAULTS)
    assert both.returncode == 2 and "not allowed with" in both.stderr
