"""The security review in the diagnosis: the review rules of relay_bridge.core.lint over every registered tool's
definition, and the rug pull (a definition changed after its first registration in the session).

A finding carries the rule's severity and source, a JSON pointer into the definition (`at.pointer`), our reason,
and counts only as evidence (never the page's text: the quote that matched stays in footprint's report). No
saving: a security finding is ranked by severity (relay_bridge.findings.model.rank_key). Each distinct definition
is linted once (remembered by a digest of its canonical bytes), so a live view that diagnoses again pays for new definitions only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from relay_bridge.core import budget
from relay_bridge.core.lint import RULES, Hit, lint_descriptor
from relay_bridge.core.lint.redefinition import said
from relay_bridge.findings.inputs import ContentCache, SessionInput, SpanInput, ToolInput, Weights
from relay_bridge.findings.model import Finding, Saving

MAX_AT = 256  # a pointer names page keys: capped like the schema rule's


# Hits by a 128-bit digest of the canonical definition: the key holds none of the definition. As many as every
# live session may register (the relay's 64 sessions x budget.MAX_TOOLS), so a refresh never reviews again a
# definition it reviewed before: a flood of distinct definitions past a smaller cache made every refresh review
# them all again (least recently used first out is the worst order for a scan in a loop).
REMEMBERED = budget.MAX_TOOLS * 64
REVIEWED = ContentCache(REMEMBERED)


def review_key(weights: Weights | None, raw: bytes) -> bytes:
    """What the hits on the definition of text `raw` are remembered by: its canonical digest, or for a text no
    canonical form measures its own digest (so a page cannot have those reviewed again at every refresh)."""
    return weights.fingerprint if weights is not None else b"text:" + ContentCache.key(raw)


def hits(t: ToolInput) -> tuple[Hit, ...]:
    """The review rules' hits on a tool's definition (none without one). The definition is parsed only when its
    digest is new."""
    weights = t.weight()
    if weights is not None:
        key = weights.fingerprint
    elif t.raw is not None:
        key = review_key(None, t.raw)
    else:  # a definition given as a value that footprint cannot measure (tests build those): nothing to key it by
        return review(t.parsed())
    found: tuple[Hit, ...] = REVIEWED.get_by(key, t, lambda t: review(t.parsed()))
    return found


def review(descriptor: dict[str, Any] | None) -> tuple[Hit, ...]:
    """The review rules' hits on a parsed definition (uncached: `hits` remembers them by content)."""
    if descriptor is None or not isinstance(descriptor.get("name"), str):
        return ()
    return tuple(h for h in lint_descriptor(descriptor) if h.rule.review)


def _finding(session: str, tool: str, hit: Hit) -> Finding:
    rule = hit.rule
    return Finding(
        f"lint.{rule.code}",
        session,
        (tool,),
        dict[str, Any](hit.numbers),
        rule.do,
        Saving(),
        {"pointer": hit.pointer[:MAX_AT]},
        rule.severity,
        rule.source,
        hit.reason,
    )


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    out: list[Finding] = []
    rug = RULES["rug-pull"]
    for t in s.tools:
        if not t.registered or t.internal:
            continue
        if t.drift:
            evidence: dict[str, Any] = {"fieldsChanged": len(t.drift)}
            for c in t.drift:
                evidence[f"{c.field}BytesBefore"] = max(c.before, 0)
                evidence[f"{c.field}BytesAfter"] = max(c.after, 0)
            at = {"pointer": "/" + t.drift[0].field} if t.drift[0].field != "other" else {}
            out.append(
                Finding(
                    "lint.rug-pull",
                    s.id,
                    (t.name,),
                    evidence,
                    rug.do,
                    Saving(),
                    at,
                    rug.severity,
                    rug.source,
                    f"changed since first registered: {said(t.drift)}",
                )
            )
        out.extend(_finding(s.id, t.name, h) for h in hits(t))
    return out
