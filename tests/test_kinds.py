"""A file of the wrong kind is named, with the command that reads it (issue 49: `replay report.json` said "not a
wmcp-top capture", `footprint --input capture.json` did not point to --from-capture, and compare called a capture
an unknown format). Every document is the one the project writes, made by its own code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from relay_bridge.cli import write_reports
from relay_bridge.core import synth
from relay_bridge.core.store import Store
from relay_bridge.exports import capture, kinds, report
from relay_bridge.findings import document
from relay_bridge.lanes import compare
from relay_bridge.lanes.bench import runner
from relay_bridge.lanes.footprint import analyze
from tests.frames import frame

ROOT = Path(__file__).resolve().parents[1]
SID = "c0ffee01"
DEMO_INPUT = ROOT / "relay_bridge" / "lanes" / "footprint" / "demo" / "files.json"


def test_the_formats_named_are_the_ones_written() -> None:
    assert kinds.BY_FORMAT[capture.FORMAT] is kinds.CAPTURE
    assert kinds.BY_FORMAT[report.FORMAT] is kinds.REPORT
    assert kinds.BY_FORMAT[document.FORMAT] is kinds.FINDINGS
    assert kinds.BY_FORMAT[analyze.FORMAT] is kinds.FOOTPRINT
    assert kinds.BY_FORMAT[compare.FORMAT] is kinds.COMPARISON
    assert kinds.BY_FORMAT[compare.THRESHOLDS_FORMAT] is kinds.THRESHOLDS
    assert kinds.BY_FORMAT[runner.BUDGET_FORMAT] is kinds.BUDGET


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """report.json, capture.json, findings.json (as `replay --report` writes them), a bench result, a session log
    line as the relay writes it, and a tools/list input."""
    store = Store()
    store.connect(1)
    for obj in (
        synth.hello(SID, "https://shop.example"),
        synth.tool(SID, "search", 1.0),
        synth.spans_frame(SID, [synth.span(SID, 0, "search", 5.0, 3.0)]),
    ):
        store.apply(1, frame(obj))
    written = {p.name: p for p in write_reports(store, tmp_path)}
    out = {"report": written[f"{SID}.json"], "capture": written["capture.json"], "findings": written["findings.json"]}
    bench = {"rows": [], "boot": {"domContentLoaded": 0, "load": 0}, "report": json.loads(out["report"].read_text())}
    out["bench"] = tmp_path / "bench.json"
    out["bench"].write_text(json.dumps(bench))
    out["log"] = tmp_path / "session-x-001.jsonl"
    out["log"].write_text('{"t":1.000,"c":1,"open":true}\n{"t":2.000,"c":1,"f":' + json.dumps(synth.hello(SID)) + "}\n")
    out["tools"] = DEMO_INPUT
    return out


def test_each_file_is_told_by_its_content(files: dict[str, Path]) -> None:
    expect = {
        "report": kinds.REPORT,
        "capture": kinds.CAPTURE,
        "findings": kinds.FINDINGS,
        "bench": kinds.BENCH,
        "log": kinds.SESSION_LOG,
        "tools": kinds.FOOTPRINT_INPUT,
    }
    assert {name: kinds.kind_of_bytes(path.read_bytes()) for name, path in files.items()} == expect
    assert kinds.kind_of_bytes(b"not json") is None and kinds.kind_of({"format": "someone-else/9"}) is None
    assert kinds.kind_of({"mcpServers": {}}) is kinds.CLIENT_CONFIG


def wmcp_top(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, WMCP_TOP_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)


def one_line(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2 and out.stderr.count("\n") == 1, (out.returncode, out.stderr)
    return out.stderr.strip()


def test_replay_names_what_it_was_given(files: dict[str, Path], tmp_path: Path) -> None:
    said = one_line(wmcp_top(tmp_path, "replay", str(files["report"]), "--report", str(tmp_path / "out")))
    assert said.endswith(
        f"{files['report']} is a report (webmcp-perf-report/2), not a wmcp-top capture or session log: "
        "`wmcp-top compare BASE HEAD` or `wmcp-top diagnose FILE` reads it"
    ), said
    said = one_line(wmcp_top(tmp_path, "replay", str(files["bench"]), "--report", str(tmp_path / "out")))
    assert "is a bench result" in said and "`wmcp-top compare BASE HEAD` reads it" in said
    said = one_line(wmcp_top(tmp_path, "replay", str(files["findings"]), "--report", str(tmp_path / "out")))
    assert "is a findings document (wmcp-top-findings/1)" in said and "no command reads it back" in said
    said = one_line(wmcp_top(tmp_path, "replay", str(files["tools"]), "--report", str(tmp_path / "out")))
    assert "is a tools/list result (MCP)" in said and "`wmcp-top footprint --input FILE` reads it" in said
    ok = wmcp_top(tmp_path, "replay", str(files["capture"]), "--report", str(tmp_path / "again"))
    assert ok.returncode == 0, ok.stderr


def test_footprint_input_points_a_capture_to_from_capture(files: dict[str, Path], tmp_path: Path) -> None:
    said = one_line(wmcp_top(tmp_path, "footprint", "--input", str(files["capture"])))
    assert "is a capture (wmcp-top-capture/1), not a tools/list result" in said and "`wmcp-top footprint --from-capture FILE`" in said
    said = one_line(wmcp_top(tmp_path, "footprint", "--input", str(files["report"])))
    assert "is a report (webmcp-perf-report/2), not a tools/list result" in said


def test_compare_names_a_capture_and_reads_a_bench_result(files: dict[str, Path], tmp_path: Path) -> None:
    said = one_line(wmcp_top(tmp_path, "compare", str(files["capture"]), str(files["report"])))
    assert "is a capture (wmcp-top-capture/1), not a report or bench result: `wmcp-top replay FILE`" in said, said
    ok = wmcp_top(tmp_path, "compare", str(files["bench"]), str(files["report"]))
    assert ok.returncode == 0 and "search" in ok.stdout, ok.stdout + ok.stderr
