"""Helpers for the footprint tests: run the command in-process or as a subprocess, validate against the schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
GOLDEN = HERE / "golden"
SCHEMA = json.loads((ROOT / "relay_bridge" / "schema" / "footprint.v1.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def validate(report: dict[str, Any]) -> None:
    VALIDATOR.validate(report)
    # What the schema cannot say: the parts of every tool sum to its bytes, ranks are 1..n.
    for n, tool in enumerate(report["tools"], 1):
        assert sum(tool["breakdown"].values()) == tool["bytes"], tool["name"]
        assert tool["rank"] == n
    assert report["summary"]["envelopeBytes"] == report["summary"]["catalogBytes"] - report["summary"]["definitionBytes"]


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The standalone entry point in-process (fast); returns (code, stdout, stderr)."""
    from relay_bridge.lanes.footprint.__main__ import main

    try:
        code = main(args)
    except SystemExit as exc:  # argparse errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def run_sub(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "relay_bridge.lanes.footprint", *args], cwd=cwd or ROOT, capture_output=True, text=True, encoding="utf-8", timeout=60
    )


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def tool(name: str, description: str | None = None, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"name": name, "inputSchema": schema if schema is not None else {"type": "object"}}
    if description is not None:
        t["description"] = description
    return t
