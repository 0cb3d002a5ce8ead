"""What a finding is: a rule's verdict on one session, with the evidence (numbers only) and the saving.

A `Saving` says what applying the finding's one-line fix would save, in the unit that is the point:

- `tokens`: the total the fix saves. `scope` says how it adds up: `conversation` (paid once in every conversation:
  tool definitions), or `calls` (`perCall` tokens x `calls` calls seen in this session: results, repeats, errors);
- `bytes`: bytes the fix saves over the same calls (images, bloat), where bytes are the point;
- `ms`: wall time the fix saves (time rules), where time is the point: in total, or (`msPer: roundTrip`) for every
  model round trip the fix avoids.

Ranking (one total order, so the view, `diagnose` and the document agree): high-severity security findings
first (relay_bridge.findings.security: an attack does not wait for a saving); then findings that save tokens,
most tokens first; then findings that save only time, most ms first; then bytes only; then the rest (evidence
without a computable saving: the other security findings, worst severity first). Ties go by rule id, session,
then tools, so the same input always ranks the same.
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec

Scope = Literal["conversation", "calls", "none"]
Number = int | float


class Saving(msgspec.Struct, frozen=True, omit_defaults=True):
    tokens: int = 0
    scope: Scope = "none"
    perCall: int | None = None  # tokens a call, when scope is "calls"
    calls: int | None = None  # calls seen that the saving is multiplied by
    bytes: int | None = None
    ms: float | None = None
    msPer: Literal["total", "roundTrip"] = "total"  # roundTrip: saved for every model round trip avoided


class Finding(msgspec.Struct, frozen=True):
    rule: str  # e.g. "images.reencode": the rule's id (docs/diagnosis.md lists each with its formula)
    session: str  # the session id; "" for a finding drawn from several sessions (then `sessions` names them all)
    tools: tuple[str, ...]  # the tool(s) it is about; empty for a session-wide verdict
    evidence: dict[str, Number]  # numbers only: never page text
    do: str  # one line: what to change (our words; no page text)
    saving: Saving
    # Identifiers from the tool's own descriptor (a JSON Schema keyword and a pointer into its inputSchema), never
    # a body: where a schema finding is.
    at: dict[str, str] = {}
    # Security findings (relay_bridge.findings.security) only: the rule's severity, where it comes from, and why it
    # fired, in our words; empty for the saving rules.
    severity: str = ""
    source: str = ""
    reason: str = ""
    # A cross-session finding: every session it draws on and their origins (sorted), so it is shown under those
    # and no other. Empty for a finding about one session.
    sessions: tuple[str, ...] = ()
    origins: tuple[str, ...] = ()

    def about(self, session: str) -> bool:
        """Whether the finding draws on `session` (shown under it)."""
        return session == self.session or session in self.sessions


_SEVERITY_ORDER = {"high": 0, "error": 1, "suspicious": 2, "warning": 3}


def rank_key(f: Finding) -> tuple[int, float, str, str, tuple[str, ...]]:
    s = f.saving
    if f.severity == "high":
        tier, amount = -1, 0.0
    elif s.tokens > 0:
        tier, amount = 0, float(s.tokens)
    elif s.ms:
        tier, amount = 1, s.ms
    elif s.bytes:
        tier, amount = 2, float(s.bytes)
    else:
        tier, amount = 3, float(_SEVERITY_ORDER.get(f.severity, 4))
        return (tier, amount, f.rule, f.session, f.tools)
    return (tier, -amount, f.rule, f.session, f.tools)


def ranked(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=rank_key)


def tokens(n_bytes: float) -> int:
    """Text tokens, design section 3: ceil(bytes / 4)."""
    return math.ceil(n_bytes / 4) if n_bytes > 0 else 0
