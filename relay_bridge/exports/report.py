"""Report `webmcp-perf-report/2` for one session, with webmcp-profiler's field names and closed objects.

Every object holds exactly the fields the schema (schema/report.v2.json) names, so tools written for the
original format read ours. The ledger's totals are the relay's own (one definition, stats.py); the page's
ledger contributes what only the page knows (when the host was found, where, when the first registration came).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from relay_bridge import __version__
from relay_bridge.core.protocol import Span
from relay_bridge.core.store import Session

FORMAT = "webmcp-perf-report/2"

SPAN_FIELDS = (
    "sessionId",
    "seq",
    "tool",
    "invokedAt",
    "settledAt",
    "wallMs",
    "blockingMs",
    "inputBytes",
    "resultBytes",
    "contentTypes",
    "imageBytes",
    "estInputTokens",
    "estTextTokens",
    "estImageTokens",
    "estTokens",
    "isError",
    "error",
    "gapSincePrevCallMs",
    "synthetic",
    "serializable",
)
FACT_FIELDS = (
    "resultType",
    "envelope",
    "substituted",
    "depth",
    "parent",
    "overlapped",
    "errorType",
    "refusal",
    "consent",
    "consentMismatch",
    "invokedBy",
)


def span_record(span: Span) -> dict[str, Any]:
    return {name: getattr(span, name) for name in SPAN_FIELDS}


def span_facts(span: Span) -> dict[str, Any]:
    return {name: getattr(span, name) for name in FACT_FIELDS if getattr(span, name) is not None}


def ledger(session: Session) -> dict[str, Any]:
    page = session.ledger
    tools = {
        name: {
            "schemaBytes": rec.schemaBytes,
            "registeredAt": rec.registeredAt,
            "unregisteredAt": rec.unregisteredAt,
            "internal": rec.internal,
        }
        for name, rec in sorted(session.tools.items())
        if rec.rejected is None
    }
    spans = session.spans()
    return {
        "sessionId": session.id,
        "attachedAt": session.info.attachedAt,
        "hostFoundAt": page.hostFoundAt if page else None,
        "hostLocation": page.hostLocation if page else None,
        "firstRegistrationAt": page.firstRegistrationAt if page else min((t.registeredAt for t in session.tools.values()), default=None),
        "registeredTools": sorted(name for name, rec in session.tools.items() if rec.registered),
        "tools": tools,
        "firstCallAt": page.firstCallAt if page and page.firstCallAt is not None else min((s.invokedAt for s in spans), default=None),
        "lastSettledAt": max((s.settledAt for s in spans), default=page.lastSettledAt if page else None),
        "totals": session.stats.totals_dict(),
    }


def iso_time(epoch_ms: float) -> str:
    """Epoch ms as JavaScript's `Date.prototype.toISOString()` writes it (UTC, milliseconds, `Z`): 000's generatedAt."""
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def build_report(session: Session, *, spans: bool | int = True, tool: str | None = None, generated_at: float | None = None) -> dict[str, Any]:
    """`spans=False` omits spans, an int keeps the newest N; `tool` filters rows and spans. `generated_at` is epoch
    ms (now by default), written as an ISO-8601 string; `tools` holds only tools with spans, all numbers."""
    chosen = session.spans()
    if tool is not None:
        chosen = [s for s in chosen if s.tool == tool]
    if spans is False:
        chosen = []
    elif spans is not True:
        chosen = chosen[-int(spans) :] if int(spans) > 0 else []
    rows = session.stats.report_rows()
    if tool is not None:
        rows = [r for r in rows if r["tool"] == tool]
    return {
        "format": FORMAT,
        "session": {
            "id": session.id,
            "origin": session.info.origin,
            "userAgent": session.info.userAgent,
            "generatedAt": iso_time(generated_at if generated_at is not None else time.time() * 1000),
            "version": f"wmcp-top/{__version__}",
        },
        "ledger": ledger(session),
        "tools": rows,
        "spans": [span_record(s) for s in chosen],
    }
