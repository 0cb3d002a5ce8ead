"""Every rule over every session, ranked by what the fixes save (relay_bridge.findings.model.rank_key)."""

from __future__ import annotations

from collections.abc import Sequence

from relay_bridge.findings import bloat, definitions, errors, images, repeats, schema, security, timing
from relay_bridge.findings.common import spans_by_tool
from relay_bridge.findings.inputs import SessionInput
from relay_bridge.findings.model import Finding, ranked

SESSION_RULES = (images.find, bloat.find, schema.find, timing.find, errors.find, repeats.find, security.find)


def diagnose(sessions: Sequence[SessionInput], duplicates: bool = True, prepare: bool = False) -> list[Finding]:
    """The findings of `sessions`, ranked. `duplicates` runs footprint's pair search across them (O(catalog));
    a caller that only needs one session's own findings may skip it. `prepare`: each session's new definitions
    are weighed and reviewed first, from one parse each (definitions.prepare), for a caller whose caches are cold
    (an export, `wmcp-top diagnose`); a view whose worker filled them would only digest every text again."""
    found: list[Finding] = []
    for s in sessions:
        if prepare:  # a session at a time: a log of more sessions than the caches hold never evicts what it reads
            definitions.prepare(s.tools)
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
