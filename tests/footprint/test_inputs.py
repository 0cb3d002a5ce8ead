"""Inputs: the three shapes, names, refusals with one clear line, and every limit at the limit and one over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relay_bridge.lanes.footprint import LIMITS, FootprintError
from relay_bridge.lanes.footprint.files import InputSpec, read_inputs

from .conftest import FIXTURES, run_main, tool, validate, write_json


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run_main(list(args), capsys)
    assert code == 2, (out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("wmcp-top: "), err
    return lines[0]


def test_three_shapes_and_default_names() -> None:
    servers, rows = read_inputs(
        [InputSpec.parse(str(FIXTURES / n)) for n in ("duplicates_a.json", "duplicates_b.json")]
        + [InputSpec.parse(f"named={FIXTURES / 'duplicates_c.json'}")]
    )
    assert [(s.name, s.shape, len(s.tools)) for s in servers] == [
        ("duplicates_a", "tools-list", 2),
        ("duplicates_b", "jsonrpc", 2),
        ("named", "tools-list", 1),
    ]
    assert [r["name"] for r in rows] == [None, None, "named"]
    servers, _ = read_inputs([InputSpec.parse(str(FIXTURES / "nonascii.json"))])
    assert [s.name for s in servers] == ["café", "日本"] and {s.shape for s in servers} == {"aggregate"}


def test_input_spec_parsing() -> None:
    assert InputSpec.parse("files=a/b.json") == InputSpec("files", "a/b.json")
    assert InputSpec.parse("dir/x=y.json") == InputSpec(None, "dir/x=y.json")
    assert InputSpec.parse("plain.json").server_name == "plain"
    with pytest.raises(FootprintError):
        InputSpec.parse("=x.json")


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("refused_mcpservers.json", "client configuration (mcpServers)"),
        ("refused_nextcursor.json", "nextCursor is set"),
        ("refused_rpc_nextcursor.json", "result: nextCursor is set"),
        ("refused_rpc_error.json", "JSON-RPC error response holds no tools"),
        ("refused_array.json", "expected a JSON object"),
        ("refused_tools_not_array.json", "tools must be an array"),
        ("refused_schema_array.json", "inputSchema must be an object"),
        ("refused_description_number.json", "description must be a string when present"),
        ("refused_empty_name.json", "name must be a non-empty string"),
        ("refused_dup_tool.json", "tool name 'read_file' appears twice"),
        ("refused_dup_server.json", "server name 's' appears twice"),
        ("refused_tool_not_object.json", "a tool must be an object"),
        ("refused_nan.json", "not valid JSON"),
        ("refused_not_json.json", "not valid JSON (line 2"),
        ("refused_unknown_shape.json", "not a tools/list result"),
    ],
)
def test_refused_inputs(fixture: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(capsys, "--input", str(FIXTURES / fixture))
    assert expected in line, line


def test_no_input_schema_is_measured_and_linted_and_refused_only_with_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """WebMCP tools may take no input (issue 17 item 10): `inputSchema` null or absent is measured, linted, and
    refused only under --strict, as mcp-footprint (seed 003) refuses it."""
    out = tmp_path / "r.json"
    code, _, err = run_main(["--input", str(FIXTURES / "no_schema.json"), "--json", str(out)], capsys)
    assert code == 0, err
    report = json.loads(out.read_text(encoding="utf-8"))
    validate(report)
    rows = {t["name"]: t for t in report["tools"]}
    assert rows["a"]["bytes"] == len('{"description":"x","name":"a"}') and rows["a"]["inputSchema"] is None
    assert rows["reset_view"]["bytes"] == len('{"description":"Put the map back where it started","inputSchema":null,"name":"reset_view"}')
    found = {(f["tool"], f["code"], f["message"].split(":")[0]) for f in report["lint"] if f["code"] == "no-input-schema"}
    assert found == {("a", "no-input-schema", "no inputSchema (absent)"), ("reset_view", "no-input-schema", "no inputSchema (null)")}
    assert not [f for f in report["lint"] if f["code"] == "schema-not-object"], "one finding, not two"
    line = _refused(capsys, "--strict", "--input", str(FIXTURES / "no_schema.json"))
    assert "tools[0]: inputSchema must be an object" in line, line


def test_same_stem_twice_and_named_aggregate_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").mkdir()
    a = write_json(tmp_path / "s.json", {"tools": []})
    b = write_json(tmp_path / "x" / "s.json", {"tools": []})
    assert "server name 's' appears twice" in _refused(capsys, "--input", str(a), "--input", str(b))
    assert "names its own servers" in _refused(capsys, "--input", f"n={FIXTURES / 'nonascii.json'}")
    assert "no such file" in _refused(capsys, "--input", str(tmp_path / "missing.json"))
    assert "exactly one source" in _refused(capsys, "--demo", "--input", str(a))
    assert "exactly one source" in _refused(capsys)
    assert "unrecognized arguments" in _refused(capsys, "--demo", "--bogus")


def _padded(path: Path, size: int) -> Path:
    head = b'{"tools":[]}'
    path.write_bytes(head + b" " * (size - len(head)))
    return path


def test_input_bytes_at_the_limit_pass_one_over_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    limit = LIMITS.input_bytes
    assert limit == 16 * 1024 * 1024
    code, out, _ = run_main(["--input", str(_padded(tmp_path / "at.json", limit))], capsys)
    assert code == 0 and "1 server, 0 tool definitions" in out
    line = _refused(capsys, "--input", str(_padded(tmp_path / "over.json", limit + 1)))
    assert "over the limit of 16777216 bytes" in line
    # The budget is per invocation: two halves that together pass it are refused too.
    half = _padded(tmp_path / "half.json", limit // 2 + 1)
    other = _padded(tmp_path / "other.json", limit // 2)
    assert "over the limit" in _refused(capsys, "--input", str(half), "--input", str(other))


def _deep(levels: int) -> str:
    # root {1} tools [2] tool {3} inputSchema {4}, then nested arrays in "default": depth = 4 + arrays
    arrays = levels - 4
    return json.dumps({"tools": [{"name": "deep", "inputSchema": {"type": "object", "default": "@"}}]}).replace('"@"', "[" * arrays + "]" * arrays)


def test_nesting_at_the_limit_passes_one_over_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "at.json").write_text(_deep(64))
    (tmp_path / "over.json").write_text(_deep(65))
    code, out, err = run_main(["--input", str(tmp_path / "at.json")], capsys)
    assert code == 0, err
    assert "1 tool definition" in out
    assert "nesting is 65 levels, over the limit of 64" in _refused(capsys, "--input", str(tmp_path / "over.json"))
    # Far deeper than Python's own parser can go: still one clear line, not a traceback.
    (tmp_path / "abyss.json").write_text("[" * 200_000 + "]" * 200_000)
    assert "nesting is deeper than 64 levels" in _refused(capsys, "--input", str(tmp_path / "abyss.json"))


def test_server_count_at_the_limit_passes_one_over_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def agg(n: int) -> dict[str, object]:
        return {"servers": [{"name": f"s{i:03d}", "tools": [tool(f"t{i}")]} for i in range(n)]}

    code, out, _ = run_main(["--input", str(write_json(tmp_path / "at.json", agg(200)))], capsys)
    assert code == 0 and out.splitlines()[1] == "200 servers, 200 tool definitions"
    assert "201 servers, over the limit of 200" in _refused(capsys, "--input", str(write_json(tmp_path / "over.json", agg(201))))


def test_tool_count_at_the_limit_passes_one_over_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    at = write_json(tmp_path / "at.json", {"servers": [{"name": f"s{k}", "tools": [tool(f"t{i}") for i in range(1000)]} for k in (1, 2)]})
    code, out, _ = run_main(["--input", str(at), "--top", "0"], capsys)
    assert code == 0 and out.splitlines()[1] == "2 servers, 2000 tool definitions"
    over = write_json(tmp_path / "over.json", {"tools": [tool("one_more")]})
    assert "2001 tools, over the limit of 2000" in _refused(capsys, "--input", str(at), "--input", str(over))


def _full_disk() -> None:
    """A disk that fills after 2 KB: writes past it fail with EFBIG (Python ignores SIGXFSZ), as ENOSPC would."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.RLIM_INFINITY))


def test_a_full_disk_leaves_no_torn_report_and_no_temporary_file(tmp_path: Path) -> None:
    """Issue 34: `footprint --html` on a full disk left a torn file, which the next run refused to overwrite."""
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    cmd = [sys.executable, "-m", "tui.cli", "footprint", "--demo", "--html", str(out / "r.html"), "--json", str(out / "r.json")]
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path / "home"))
    full = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60, preexec_fn=_full_disk)
    assert full.returncode == 2 and "r.html: cannot write" in full.stderr and full.stderr.count("\n") == 1, full.stderr
    assert list(out.iterdir()) == []  # neither the torn report nor its temporary file
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert (out / "r.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
    assert sorted(p.name for p in out.iterdir()) == ["r.html", "r.json"]


def test_a_dashboard_export_that_fails_leaves_no_tmp(tmp_path: Path) -> None:
    """Issue 34: dashboard exports left `.tmp` files behind on error."""
    import resource

    from relay_bridge.cli import write_json

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, hard))
    try:
        with pytest.raises(OSError):
            write_json(tmp_path / "capture.json", {"spans": ["x" * 100] * 100})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert list(tmp_path.iterdir()) == []
