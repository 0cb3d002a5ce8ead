"""webmcp-profiler's report constraints, as a test oracle: the facts of its published JSON Schema
(schema/report.v2.json of the webmcp-profiler package), checked field by field so a report that passes is one
webmcp-profiler's own tools accept. relay_bridge/schema/report.v2.json holds the same constraints (and more);
`assert_valid` checks both."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "relay_bridge" / "schema" / "report.v2.json").read_text())

SPAN = {
    "sessionId": "id",
    "seq": "int",
    "tool": "name",
    "invokedAt": "num",
    "settledAt": "num",
    "wallMs": "num+",
    "blockingMs": "num+",
    "inputBytes": "int",
    "resultBytes": "int",
    "contentTypes": "counts",
    "imageBytes": "int",
    "estInputTokens": "int",
    "estTextTokens": "int",
    "estImageTokens": "int",
    "estTokens": "int",
    "isError": "bool",
    "error": "error",
    "gapSincePrevCallMs": "num?",
    "synthetic": "bool",
    "serializable": "bool",
}
ROW = (
    dict.fromkeys(("minMs", "p50Ms", "p95Ms", "maxMs", "blockingMs"), "num+")
    | dict.fromkeys(("calls", "errors", "lastResultBytes", "totalBytes", "estTokens", "estInputTokens", "schemaBytes"), "int")
    | {"tool": "str"}
)
TOTALS = dict.fromkeys(
    ("calls", "unsampledCalls", "overlappingCalls", "errors", "resultBytes", "estTokens", "estInputTokens", "schemaBytes", "estSchemaTokens"), "int"
) | dict.fromkeys(("wallMs", "blockingMs", "hostGapMs"), "num+")
LEDGER_TOOL = {"schemaBytes": "int", "registeredAt": "num", "unregisteredAt": "num?", "internal": "bool"}


def _ok(kind: str, v: Any) -> bool:
    num = isinstance(v, (int, float)) and not isinstance(v, bool)
    return {
        "id": isinstance(v, str) and re.fullmatch(r"[0-9a-f]{8}", v) is not None,
        "int": isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "num": num,
        "num+": num and v >= 0,
        "num?": v is None or num,
        "str": isinstance(v, str),
        "name": isinstance(v, str) and len(v) >= 1,
        "bool": isinstance(v, bool),
        "error": v is None or (isinstance(v, str) and len(v) <= 201),
        "counts": isinstance(v, dict) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in v.values()),
    }[kind]


def _closed(obj: Any, fields: dict[str, str], where: str) -> None:
    assert isinstance(obj, dict) and set(obj) == set(fields), f"{where}: fields {sorted(obj) if isinstance(obj, dict) else obj}"
    for k, kind in fields.items():
        assert _ok(kind, obj[k]), f"{where}.{k} = {obj[k]!r} is not {kind}"


def assert_profiler_valid(doc: dict[str, Any]) -> None:
    """Every constraint of webmcp-profiler's report schema."""
    assert set(doc) == {"format", "session", "ledger", "tools", "spans"}
    assert doc["format"] == "webmcp-perf-report/2"
    s = doc["session"]
    assert set(s) == {"id", "origin", "userAgent", "generatedAt", "version"}
    assert _ok("id", s["id"]) and isinstance(s["version"], str)
    assert s["origin"] is None or isinstance(s["origin"], str)
    assert s["userAgent"] is None or isinstance(s["userAgent"], str)
    assert isinstance(s["generatedAt"], str), "generatedAt is an ISO-8601 string"
    datetime.fromisoformat(s["generatedAt"].replace("Z", "+00:00"))
    led = doc["ledger"]
    assert set(led) == {
        "sessionId",
        "attachedAt",
        "hostFoundAt",
        "hostLocation",
        "firstRegistrationAt",
        "registeredTools",
        "tools",
        "firstCallAt",
        "lastSettledAt",
        "totals",
    }
    assert _ok("id", led["sessionId"]) and _ok("num", led["attachedAt"])
    for k in ("hostFoundAt", "firstRegistrationAt", "firstCallAt", "lastSettledAt"):
        assert _ok("num?", led[k]), k
    assert led["hostLocation"] in ("document", "navigator", "window", None)
    assert all(isinstance(n, str) for n in led["registeredTools"])
    for name, rec in led["tools"].items():
        _closed(rec, LEDGER_TOOL, f"ledger.tools.{name}")
    _closed(led["totals"], TOTALS, "ledger.totals")
    for i, row in enumerate(doc["tools"]):
        _closed(row, ROW, f"tools[{i}]")
    for i, span in enumerate(doc["spans"]):
        _closed(span, SPAN, f"spans[{i}]")


def assert_valid(doc: dict[str, Any]) -> None:
    """Valid under the project's schema and under webmcp-profiler's constraints; one row per tool with spans, the
    internal report tool never among them."""
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert_profiler_valid(doc)
    internal = {n for n, t in doc["ledger"]["tools"].items() if t["internal"]}
    rows = [r["tool"] for r in doc["tools"]]
    assert not internal & set(rows), "the internal report tool has no row"
    assert len(rows) == len(set(rows))
    with_spans = {s["tool"] for s in doc["spans"]}
    assert with_spans <= set(rows), "every tool with spans has its row"
