"""Rules on schema weight: what the tool definitions cost in every conversation, before any call.

- `schema.unused`: a tool registered now and never called in the session (no measured call, none counted), once
  the session has made at least MIN_CALLS calls. Saving: ceil(schemaBytes / 4) tokens per conversation, where
  schemaBytes is the agent's measure of the descriptor (design section 3). Fix: register it only where the page
  can use it, or drop it. Assumption: the host sends every registered tool's definition in the conversation; it
  is sent again with every model request, so per conversation is a floor (prompt caching may discount repeats).
- `schema.description`: a tool's own description over DESCRIPTION_MAX_BYTES UTF-8 bytes. Saving: ceil((bytes -
  DESCRIPTION_MAX_BYTES) / 4) tokens per conversation: what cutting it to the limit saves.
- `schema.enums`: enum and const members (footprint's breakdown part `enums`, canonical bytes of `"enum":[...]`)
  over ENUM_MAX_BYTES in one tool. Saving: ceil((bytes - ENUM_MAX_BYTES) / 4) tokens per conversation.
  A tool reported unused is not reported again for its description or enums (its whole definition is counted).
- `schema.similar`: two tools of one session whose descriptions footprint finds similar (Jaccard >= 0.8 over
  word sets: relay_bridge.core.similarity): merging them saves the smaller definition, ceil(bytes / 4)
  tokens per conversation (canonical bytes, footprint's measure). The MAX_SIMILAR most similar pairs a session.
- `schema.diverged`: one tool name registered with different definitions in sessions of one origin (footprint's
  "same name, different definition"): no token saving is computed (each conversation sees one page's tools); it
  says the site ships two versions of one tool, and names every session it draws on.
Both run over a bounded, fairly shared input (`catalog`): footprint's own limits, split between origins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from relay_bridge.core.canonical import utf16_key
from relay_bridge.core.limits import LIMITS, Limits
from relay_bridge.core.similarity import similar_within
from relay_bridge.findings.common import fair_shares
from relay_bridge.findings.inputs import SessionInput, SpanInput, ToolInput
from relay_bridge.findings.model import Finding, Saving, tokens

MIN_CALLS = 10
DESCRIPTION_MAX_BYTES = 1024
ENUM_MAX_BYTES = 512
MAX_SIMILAR = 16  # schema.similar findings a session (the most similar pairs)
MAX_DIVERGED = 16  # schema.diverged findings an origin (the most split names)


def _per_conversation(n_bytes: int) -> Saving:
    return Saving(tokens(n_bytes), "conversation", bytes=n_bytes)


def find(s: SessionInput, by_tool: Mapping[str, list[SpanInput]]) -> list[Finding]:
    out = []
    enough = s.calls >= MIN_CALLS
    for t in s.tools:
        if not t.registered or t.internal:
            continue
        if enough and t.calls == 0 and t.counted == 0:
            out.append(
                Finding(
                    "schema.unused",
                    s.id,
                    (t.name,),
                    {"schemaBytes": t.schema_bytes, "sessionCalls": s.calls},
                    "drop this tool, or register it only on the pages that use it",
                    _per_conversation(t.schema_bytes),
                )
            )
            continue
        w = t.weight()
        if w is None:
            continue
        if w.description_bytes > DESCRIPTION_MAX_BYTES:
            out.append(
                Finding(
                    "schema.description",
                    s.id,
                    (t.name,),
                    {"descriptionBytes": w.description_bytes, "limitBytes": DESCRIPTION_MAX_BYTES},
                    f"cut the description to {DESCRIPTION_MAX_BYTES} bytes; move examples and policy out of it",
                    _per_conversation(w.description_bytes - DESCRIPTION_MAX_BYTES),
                )
            )
        if w.enum_bytes > ENUM_MAX_BYTES:
            out.append(
                Finding(
                    "schema.enums",
                    s.id,
                    (t.name,),
                    {"enumBytes": w.enum_bytes, "limitBytes": ENUM_MAX_BYTES},
                    "replace long enums with a string checked in the page, or a lookup tool",
                    _per_conversation(w.enum_bytes - ENUM_MAX_BYTES),
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class Catalog:
    """The cross-tool findings (`schema.similar`, `schema.diverged`) and what the analysis covered: how many tool
    definitions each origin registered, how many entered (its fair share of LIMITS.tools), the similarity
    operations it was given and spent, and whether anything was cut."""

    findings: list[Finding]
    coverage: dict[str, Any]


Entering = dict[str, list[tuple[SessionInput, list[ToolInput]]]]  # origin -> [(session, its tools that enter)]


def candidates(s: SessionInput) -> list[ToolInput]:
    """A session's tools the analysis may take, in the order it takes them (registered, by name)."""
    return sorted((t for t in s.tools if t.registered and not t.internal), key=lambda t: utf16_key(t.name))


def entering(
    sessions: Sequence[SessionInput], limits: Limits = LIMITS, ordered: Mapping[str, list[ToolInput]] | None = None
) -> tuple[Entering, dict[str, int]]:
    """The tools that enter the analysis, by origin and session, and each origin's demand (its tools): at most
    limits.tools in all, split fairly between origins and, inside an origin, between its sessions (each keeps
    its first tools by name). `ordered`: each session's `candidates`, when the caller keeps them."""
    by_origin: Entering = {}
    for s in sorted(sessions, key=lambda s: s.id):
        tools = ordered[s.id] if ordered is not None and s.id in ordered else candidates(s)
        by_origin.setdefault(s.origin, []).append((s, tools))
    demand = {o: sum(len(t) for _, t in group) for o, group in by_origin.items()}
    origin_share = fair_shares(demand, limits.tools)
    out: Entering = {}
    for origin, group in by_origin.items():
        share = fair_shares({s.id: len(t) for s, t in group}, origin_share[origin])
        out[origin] = [(s, tools[: share[s.id]]) for s, tools in group]
    return out, demand


def _diverged(origin: str, group: list[tuple[SessionInput, list[ToolInput]]]) -> list[Finding]:
    """One tool name with several definitions in sessions of one origin (the site ships two versions of one
    tool). Pages of two origins are two sites: the same name there is no finding, so no page can file one about
    another origin's session."""
    defs: dict[str, dict[bytes, list[tuple[str, int]]]] = {}
    for s, tools in group:
        for t in tools:
            w = t.weight()
            if w is not None:
                defs.setdefault(t.name, {}).setdefault(w.fingerprint, []).append((s.id, w.size))
    split = [(name, d) for name, d in defs.items() if len(d) > 1]
    # The most-split names first, at most MAX_DIVERGED an origin; the others are counted in the last one.
    split.sort(key=lambda nd: (-len(nd[1]), -sum(len(v) for v in nd[1].values()), utf16_key(nd[0])))
    out = []
    kept = split[:MAX_DIVERGED]
    for n, (name, d) in enumerate(kept):
        sessions = sorted({sid for holders in d.values() for sid, _ in holders})
        sizes = [size for holders in d.values() for _, size in holders]
        evidence: dict[str, int | float] = {"definitions": len(d), "sessions": len(sessions), "minBytes": min(sizes), "maxBytes": max(sizes)}
        if n == len(kept) - 1 and len(split) > len(kept):
            evidence["otherNamesDiverged"] = len(split) - len(kept)
        out.append(
            Finding(
                "schema.diverged",
                "",
                (name,),
                evidence,
                "one tool name has several definitions in this site's sessions: ship one",
                Saving(),
                sessions=tuple(sessions),
                origins=(origin,),
            )
        )
    return out


def _similar(s: SessionInput, tools: list[ToolInput], budget: int, limits: Limits) -> tuple[list[Finding], dict[str, Any]]:
    scan = similar_within([t.words() for t in tools], budget, limits, keep=MAX_SIMILAR)
    out = []
    for jaccard, i, j in scan["pairs"]:
        wa, wb = tools[i].weight(), tools[j].weight()
        if wa is None or wb is None:
            continue
        out.append(
            Finding(
                "schema.similar",
                s.id,
                tuple(sorted((tools[i].name, tools[j].name))),
                {"bytesA": wa.size, "bytesB": wb.size, "jaccard": jaccard},
                "merge the two tools into one with a parameter, or make their descriptions say how they differ",
                _per_conversation(min(wa.size, wb.size)),
            )
        )
    return out, scan


def catalog(sessions: Sequence[SessionInput], limits: Limits = LIMITS) -> Catalog:
    """Similar descriptions inside each session and diverged definitions inside each origin, bounded by
    footprint's own limits (tools, similarity operations, pairs kept) shared fairly: an origin that registers
    more gets no more than an equal share of what the analysis may spend, so another origin's tools are still
    compared. What was cut is said in `coverage`, per origin."""
    return analyse(*entering(sessions, limits), limits)


def analyse(entered: Entering, demand: Mapping[str, int], limits: Limits = LIMITS) -> Catalog:
    """`catalog` on the tools `entering` let in: reads only those tools and the sessions' ids (so a caller may
    hand it sessions stripped to their id and origin, as the findings view does to its worker process)."""
    sims_demand = {o: sum(len(t) * (len(t) - 1) // 2 * limits.max_words for _, t in group) for o, group in entered.items()}
    budget_share = fair_shares(sims_demand, limits.similarity_budget)
    findings: list[Finding] = []
    by_origin: dict[str, dict[str, Any]] = {}
    for origin, group in entered.items():
        findings.extend(_diverged(origin, group))
        session_budget = fair_shares({s.id: len(t) * (len(t) - 1) // 2 * limits.max_words for s, t in group}, budget_share[origin])
        ops, complete, found = 0, True, 0
        for s, tools in group:
            got, scan = _similar(s, tools, session_budget[s.id], limits)
            findings.extend(got)
            ops += scan["operations"]
            found += scan["found"]
            complete = complete and scan["complete"]
        compared = sum(len(t) for _, t in group)
        by_origin[origin] = {
            "sessions": len(group),
            "tools": demand[origin],
            "compared": compared,
            "budget": budget_share[origin],
            "operations": ops,
            "similarPairs": found,
            "complete": complete and compared == demand[origin],
        }
    coverage = {
        "tools": sum(demand.values()),
        "compared": sum(o["compared"] for o in by_origin.values()),
        "limits": {"tools": limits.tools, "similarityBudget": limits.similarity_budget},
        "complete": all(o["complete"] for o in by_origin.values()),
        "byOrigin": by_origin,
    }
    return Catalog(findings[: limits.pairs_kept], coverage)


def find_duplicates(sessions: Sequence[SessionInput]) -> list[Finding]:
    """The cross-tool findings of `catalog` (what the summary line leaves to the findings view)."""
    return catalog(sessions).findings
