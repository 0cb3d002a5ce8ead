"""The findings document `wmcp-top-findings/1`: ranked findings of one or more sessions, written beside a report.

Report v2 is closed (webmcp-profiler's schema allows no field beyond its own), so findings travel in a document
of their own (schema/findings.v1.json). Numbers, rule ids, our own one-line fixes, tool names and session
origins only: never a body.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import msgspec

from relay_bridge import __version__
from relay_bridge.exports.report import iso_time
from relay_bridge.findings import images, schema
from relay_bridge.findings.engine import diagnose, total_tokens
from relay_bridge.findings.inputs import SessionInput, from_session
from relay_bridge.findings.model import Finding, ranked

FORMAT = "wmcp-top-findings/1"
TOKEN_RULES = {
    "text": "ceil(bytes / 4)",
    "image": f"ceil(width x height / {images.PIXELS_PER_TOKEN}) (evidence only); ranked by the byte rule ceil(bytes / 4)",
}


def finding_record(f: Finding, rank: int, origins: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"rank": rank, **msgspec.to_builtins(f)}
    out["tools"] = list(f.tools)
    for key in ("at", "severity", "source", "reason", "sessions", "origins"):  # empty on most rules
        if not out.get(key):
            out.pop(key, None)
    if f.sessions:  # a cross-session finding: every session it draws on, with its origin
        out["sessions"] = [{"id": sid, "origin": (origins or {}).get(sid, "")} for sid in f.sessions]
        out["origins"] = list(f.origins)
    return out


def build_document(
    sessions: Sequence[SessionInput],
    findings: Sequence[Finding],
    *,
    source: str = "live",
    label: str = "",
    generated_at: float | None = None,
    coverage: dict[str, Any] | None = None,
    not_run: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    ms = sum(f.saving.ms or 0.0 for f in findings if f.saving.msPer == "total")
    origins = {s.id: s.origin for s in sessions}
    doc: dict[str, Any] = {
        "format": FORMAT,
        "generatedAt": iso_time(generated_at if generated_at is not None else time.time() * 1000),
        "version": f"wmcp-top/{__version__}",
        "source": {"kind": source, "label": label},
        "tokenRules": dict(TOKEN_RULES),
        "sessions": [{"id": s.id, "origin": s.origin, "calls": s.calls} for s in sessions],
        "total": {"tokens": total_tokens(findings), "ms": round(ms, 1), "findings": len(findings)},
        "findings": [finding_record(f, n, origins) for n, f in enumerate(findings, 1)],
    }
    if coverage is not None:
        doc["coverage"] = coverage
    if not_run:
        doc["notRun"] = [{"rule": rule, "reason": why} for rule, why in not_run]
    return doc


def diagnosis(sessions: Sequence[SessionInput]) -> tuple[list[Finding], dict[str, Any]]:
    """Every rule over `sessions`, ranked, and what the cross-tool analysis covered (schema.catalog)."""
    own = diagnose(sessions, duplicates=False, prepare=True)  # first: the cross-tool analysis finds the weights made
    found = schema.catalog(sessions)
    return ranked(own + found.findings), found.coverage


def session_findings(sessions: Sequence[Any], *, source: str = "live", label: str = "", generated_at: float | None = None) -> dict[str, Any]:
    """The findings document of store sessions (relay_bridge.core.store.Session): what an export writes beside its report."""
    inputs = [from_session(s) for s in sessions]
    findings, coverage = diagnosis(inputs)
    return build_document(inputs, findings, source=source, label=label, generated_at=generated_at, coverage=coverage)
