"""What kind of file a JSON document is, and which command reads it: one answer for every command that refuses
a file of the wrong kind (replay, footprint, compare), so the message names what the file is and where it goes
instead of calling it "not a capture".

Pure: the caller reads the file; `kind_of` takes the parsed document, `kind_of_bytes` the file's bytes (a whole
JSON document, or the first line of a JSON-lines session log). The format names of documents the lanes write are
spelled here as strings (the exports import no lane); tests/test_kinds.py holds them to the lanes' constants.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Kind:
    key: str
    name: str  # what the file is, for a sentence: "a report (webmcp-perf-report/2)"
    readers: tuple[str, ...]  # the commands that read it; empty for documents only people and CI read
    made_by: str = ""  # for documents no command reads back: what writes them


CAPTURE = Kind(
    "capture", "a capture (wmcp-top-capture/1)", ("wmcp-top replay FILE", "wmcp-top diagnose FILE", "wmcp-top footprint --from-capture FILE")
)
REPORT = Kind("report", "a report (webmcp-perf-report/2)", ("wmcp-top compare BASE HEAD", "wmcp-top diagnose FILE"))
REPORT_V1 = Kind("report-v1", "a webmcp-profiler report (webmcp-perf-report/1)", ("wmcp-top compare BASE HEAD",))
SESSION_LOG = Kind("session-log", "a session log (JSON lines)", ("wmcp-top replay FILE", "wmcp-top diagnose FILE"))
FINDINGS = Kind("findings", "a findings document (wmcp-top-findings/1)", (), "wmcp-top diagnose --json and replay --report")
BENCH = Kind("bench", "a bench result ({rows, boot, report})", ("wmcp-top compare BASE HEAD",))
FOOTPRINT_INPUT = Kind("footprint-input", "a tools/list result (MCP)", ("wmcp-top footprint --input FILE",))
FOOTPRINT = Kind("footprint", "a footprint report (wmcp-top-footprint/1)", (), "wmcp-top footprint --json")
THRESHOLDS = Kind("thresholds", "a thresholds file (wmcp-top-thresholds/1)", ("wmcp-top compare BASE HEAD --thresholds FILE",))
BUDGET = Kind("budget", "a budget file (wmcp-top-budget/1)", ("wmcp-top bench URL --budget FILE",))
COMPARISON = Kind("comparison", "a comparison (wmcp-top-compare/1)", (), "wmcp-top compare --json")
CLIENT_CONFIG = Kind("client-config", "an MCP client configuration (mcpServers)", ())

BY_FORMAT = {
    "wmcp-top-capture/1": CAPTURE,
    "webmcp-perf-report/2": REPORT,
    "webmcp-perf-report/1": REPORT_V1,
    "wmcp-top-findings/1": FINDINGS,
    "wmcp-top-footprint/1": FOOTPRINT,
    "wmcp-top-thresholds/1": THRESHOLDS,
    "wmcp-top-budget/1": BUDGET,
    "wmcp-top-compare/1": COMPARISON,
}
LOG_LINE_KEYS = frozenset({"f", "open", "close", "rej", "squat"})  # relay_bridge.relay.sessionlog's line


def kind_of(doc: Any) -> Kind | None:
    """The kind of a parsed JSON document (or of one line of a session log); None when it is none of them."""
    if not isinstance(doc, dict):
        return None
    fmt = doc.get("format")
    if isinstance(fmt, str):
        return BY_FORMAT.get(fmt)
    report = doc.get("report")
    if isinstance(report, dict) and isinstance(doc.get("rows"), list) and BY_FORMAT.get(str(report.get("format"))) in (REPORT, REPORT_V1):
        return BENCH
    if isinstance(doc.get("c"), int) and LOG_LINE_KEYS & doc.keys():
        return SESSION_LOG
    if "mcpServers" in doc:
        return CLIENT_CONFIG
    result = doc.get("result")
    if isinstance(doc.get("tools"), list) or isinstance(doc.get("servers"), list) or (isinstance(result, dict) and "tools" in result):
        return FOOTPRINT_INPUT
    return None


def kind_of_bytes(data: bytes) -> Kind | None:
    """The kind of a file's content: a whole JSON document, else the first line of a JSON-lines file."""
    for text in (data, data.split(b"\n", 1)[0]):
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            continue
        return kind_of(doc)
    return None


def wrong_kind(label: str, kind: Kind | None, wanted: str) -> str:
    """One line for a file given where `wanted` was expected: what it is and which command reads it."""
    if kind is None:
        return f"{label}: not {wanted}"
    if kind.readers:
        where = " or ".join(f"`{r}`" for r in kind.readers)
        return f"{label} is {kind.name}, not {wanted}: {where} reads it"
    if kind.made_by:
        return f"{label} is {kind.name}, not {wanted}: it is written by {kind.made_by} for people and CI, and no command reads it back"
    return f"{label} is {kind.name}, not {wanted}"
