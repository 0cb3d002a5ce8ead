"""Every rule over every session, ranked by what the fixes save (relay_bridge.findings.model.rank_key)."""

from __future__ import annotations

from collections.abc import Sequence

from relay_bridge.findings import bloat, errors, images, repeats, schema, security, timing
from relay_bridge.findings.common import spans_by_tool
from relay_bridge.findings.inputs import SessionInput
from relay_bridge.findings.model import Finding, ranked

SESSION_RULES = (images.find, bloat.find, schema.find, timing.find, errors.find, repeats.find, security.find)


def diagnose(sessions: Sequence[SessionInput], duplicates: bool = True) -> list[Finding]:
    """The findings of `sessions`, ranked. `duplicates` runs footprint's pair search across them (O(catalog));
    a caller that only needs one session's own findings may skip it."""
    found: list[Finding] = []
    for s in sessions:
        by_tool = spans_by_tool(s)  # read by most rules: grouped once
        for rule in SESSION_RULES:
            found.extend(rule(s, by_tool))
    if duplicates:
        found.extend(schema.find_duplicates(sessions))
    return ranked(found)


def total_tokens(findings: Sequence[Finding]) -> int:
    """What applying every finding would save, in tokens (each saving is counted once: the rules do not overlap,
    except that a fix of one may make another smaller)."""
    return sum(f.saving.tokens for f in findings)
