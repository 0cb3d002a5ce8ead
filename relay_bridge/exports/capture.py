"""Capture `wmcp-top-capture/1`: every session's v2 report plus what v2 cannot hold.

Per session: the v2 report, the session info, descriptors with annotations sent/kept, whether each tool is
measured or only counted (and its counted calls), span facts (what the
agent received: resultType, envelope, substituted, depth, parent, overlapped), the diagnosis facts
(`diagnosisFacts`: image, bloat, schema, repeat, refused per seq), calls still in flight, the
timeline, the phase and coverage, and counters. `relay_bridge.relay.replay` reads it back.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from relay_bridge import __version__
from relay_bridge.core import protocol as p
from relay_bridge.core.store import Session, Store, StoreSnapshot
from relay_bridge.exports.report import build_report, span_facts

FORMAT = "wmcp-top-capture/1"


def diagnosis_facts(facts: p.Facts) -> dict[str, Any]:
    """One call's diagnosis facts as the capture writes them: every bloat figure, zeros too (an agent may leave
    those out on the wire, docs/protocol.md)."""
    out: dict[str, Any] = msgspec.to_builtins(facts)
    bloat = facts.bloat
    if bloat is not None:
        figures = ((f.encode_name, getattr(bloat, f.name)) for f in msgspec.structs.fields(bloat))
        out["bloat"] = {name: value for name, value in figures if value is not None}
    return out


def session_capture(session: Session, generated_at: float) -> dict[str, Any]:
    counted = session.counted_only()
    return {
        "report": build_report(session, generated_at=generated_at),
        "info": msgspec.to_builtins(session.info),
        "agent": session.agent,
        "config": msgspec.to_builtins(session.config),
        "state": session.state,
        "phase": session.phase,
        "status": msgspec.to_builtins(session.status) if session.status is not None else None,
        "coverage": session.coverage,
        "lost": session.lost,
        "counters": msgspec.to_builtins(session.counters),
        "tools": [
            {
                "name": rec.name,
                "schemaBytes": rec.schemaBytes,
                "registeredAt": rec.registeredAt,
                "unregisteredAt": rec.unregisteredAt,
                "descriptor": msgspec.json.decode(rec.descriptor) if rec.descriptor else None,
                "annotationsSent": rec.annotationsSent,
                "annotationsKept": rec.annotationsKept,
                "internal": rec.internal,
                "rejected": rec.rejected,
                # Counted, not measured: calls seen only through the host's `toolactivated` (no timing, no bytes).
                "measured": rec.name not in counted or session.ledger is None or session.ledger.tools[rec.name].measured,
                "counted": counted.get(rec.name, 0),
            }
            for rec in session.tools.values()
        ],
        "facts": {str(span.seq): span_facts(span) for span in session.spans() if span_facts(span)},
        # Diagnosis facts per seq (docs/diagnosis-facts.md): numbers, never a body.
        "diagnosisFacts": {str(seq): diagnosis_facts(f) for seq, f in sorted(session.facts.items())},
        "inflight": [
            {"seq": c.seq, "tool": c.tool, "invokedAt": c.invokedAt, "depth": c.depth, "parent": c.parent, "cancelled": c.cancelled_at is not None}
            for c in session.inflight.values()
        ],
        "timeline": [{"at": e.at, "kind": e.kind, "detail": e.detail} for e in session.timeline],
        "unsampledCalls": session.stats.totals.unsampledCalls,
    }


def build_capture(store: Store | StoreSnapshot, generated_at: float | None = None, *, lazy: bool = False) -> dict[str, Any]:
    """`lazy`: the sessions as an iterator, each built as it is read (relay_bridge.exports.jsonfile writes it as
    the list), so a writer holds one session's capture at a time, not all 64 of a flood's."""
    now = generated_at if generated_at is not None else time.time() * 1000
    sessions = (session_capture(s, now) for s in list(store.sessions.values()))
    return {
        "format": FORMAT,
        "generatedAt": now,
        "relay": {"version": f"wmcp-top/{__version__}", "counters": store.counter_view()},
        "sessions": sessions if lazy else list(sessions),
    }
