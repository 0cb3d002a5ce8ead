"""Repeated definitions across servers: exact matches, same names with different definitions, similar descriptions.

Pairs are always between tools of two different servers; a tool is never compared with its own server's tools.
Exact and same-name pairs come from grouping (every cross-server pair is covered, at no quadratic cost).
Similar descriptions are compared pairwise under a budget of word-membership operations (seed 003):

- words: lowercase Unicode letter/digit runs; the underscore splits words (`read_file` is `read`, `file`);
- a description enters matching with 6..128 unique words (fewer says too little, more costs too much);
- similar when Jaccard(words A, words B) >= 0.8, decided in integers (5*common >= 4*union, no float edge);
- a pair whose sizes alone rule 0.8 out (small/large < 0.8) is decided without membership operations;
- otherwise it costs min(|A|, |B|) operations (each word of the smaller set looked up in the larger). When the
  next pair would pass the budget the scan stops, is marked incomplete, and reports the eligible pairs it did not
  examine. Order is fixed (servers, then tools, by name) so the same input always stops at the same pair.

Matching is pairwise: similar A~B and B~C do not make A~C.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from relay_bridge.core.limits import LIMITS, Limits

EXACT = "exact match"
SAME_NAME = "same name, different definition"
SIMILAR = "similar description"
LABELS = (EXACT, SAME_NAME, SIMILAR)

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


@dataclass(slots=True)
class Entry:
    """A tool as the pair scan sees it. `index` is its place in the fixed (server, name) order."""

    index: int
    server: str
    name: str
    canonical: bytes
    description: str | None


def _rank(labels: int, jaccard: float | None, i: int, j: int) -> tuple[int, float, int, int]:
    strongest = 0 if labels & 1 else 1 if labels & 2 else 2
    return (strongest, -(jaccard or 0.0), i, j)


def find_pairs(entries: list[Entry], limits: Limits = LIMITS) -> dict[str, Any]:
    """The `pairs` and `similarity` sections of the report. `entries` must be in (server, name) order."""
    found: dict[tuple[int, int], list[Any]] = {}  # (i, j) -> [label bits, jaccard or None]

    def mark(i: int, j: int, bit: int, jac: float | None = None) -> None:
        key = (i, j) if i < j else (j, i)
        slot = found.setdefault(key, [0, None])
        slot[0] |= bit
        if jac is not None:
            slot[1] = jac

    by_definition: dict[bytes, list[Entry]] = {}
    by_name: dict[str, list[Entry]] = {}
    for e in entries:
        by_definition.setdefault(e.canonical, []).append(e)
        by_name.setdefault(e.name, []).append(e)
    for group in by_definition.values():
        for x, a in enumerate(group):
            for b in group[x + 1 :]:
                if a.server != b.server:
                    mark(a.index, b.index, 1)
    for group in by_name.values():
        for x, a in enumerate(group):
            for b in group[x + 1 :]:
                if a.server != b.server and a.canonical != b.canonical:
                    mark(a.index, b.index, 2)

    similarity = _scan(entries, limits, mark)

    counts = dict.fromkeys(LABELS, 0)
    for bits, _ in found.values():
        for n, label in enumerate(LABELS):
            if bits & (1 << n):
                counts[label] += 1
    ranked = sorted(found.items(), key=lambda kv: _rank(kv[1][0], kv[1][1], *kv[0]))
    kept = ranked[: limits.pairs_kept]
    items = []
    for (i, j), (bits, jac) in kept:
        a, b = entries[i], entries[j]
        items.append(
            {
                "a": {"server": a.server, "tool": a.name},
                "b": {"server": b.server, "tool": b.name},
                "labels": [label for n, label in enumerate(LABELS) if bits & (1 << n)],
                "jaccard": jac,
            }
        )
    pairs = {
        "found": len(found),
        "kept": len(items),
        "truncated": len(found) > len(items),
        "notKept": len(found) - len(items),
        "byLabel": {label: counts[label] for label in LABELS},
        "items": items,
    }
    return {"pairs": pairs, "similarity": similarity}


def _scan(entries: list[Entry], limits: Limits, mark: Any) -> dict[str, Any]:
    skipped = {"noDescription": 0, "tooFewWords": 0, "tooManyWords": 0}
    eligible: list[tuple[Entry, frozenset[str]]] = []
    for e in entries:
        if not e.description:
            skipped["noDescription"] += 1
            continue
        ws = words(e.description)
        if len(ws) < limits.min_words:
            skipped["tooFewWords"] += 1
        elif len(ws) > limits.max_words:
            skipped["tooManyWords"] += 1
        else:
            eligible.append((e, ws))

    per_server: dict[str, int] = {}
    for e, _ in eligible:
        per_server[e.server] = per_server.get(e.server, 0) + 1
    n = len(eligible)
    total_pairs = n * (n - 1) // 2 - sum(k * (k - 1) // 2 for k in per_server.values())

    ops = examined = 0
    complete = True
    budget = limits.similarity_budget
    # Jaccard >= t as integers: with t = 0.8, 5*common >= 4*union. Kept general for a changed threshold.
    ratio = Fraction(str(limits.jaccard))  # 0.8 -> 4/5 exactly; float 0.8 is a hair above 4/5
    num, den = ratio.numerator, ratio.denominator
    for x in range(n):
        if not complete:
            break
        a, wa = eligible[x]
        la = len(wa)
        for y in range(x + 1, n):
            b, wb = eligible[y]
            if a.server == b.server:
                continue
            lb = len(wb)
            small, large = (la, lb) if la <= lb else (lb, la)
            if small * den < large * num:  # even if every small word were shared, Jaccard < threshold
                examined += 1
                continue
            if ops + small > budget:
                complete = False
                break
            ops += small
            examined += 1
            common = len(wa & wb)  # set intersection walks the smaller set: `small` lookups
            union = la + lb - common
            if common * den >= union * num:
                mark(a.index, b.index, 4, round(common / union, 4))
    return {
        "complete": complete,
        "operations": ops,
        "budget": budget,
        "eligibleTools": n,
        "skippedTools": skipped,
        "eligiblePairs": total_pairs,
        "examinedPairs": examined,
        "notExamined": total_pairs - examined,
    }


def similar_within(word_sets: list[frozenset[str]], budget: int, limits: Limits = LIMITS, keep: int = 16) -> dict[str, Any]:
    """Similar descriptions among one group's tools (the findings' `schema.similar`, inside one session).

    Unlike `_scan`, every pair examined costs at least one operation (a pair the sizes rule out too), so the loop
    itself, not only the membership tests, stops at `budget`: a group of any size costs at most `budget` steps.
    Only the `keep` most similar pairs are held (a heap), so memory does not follow the pairs found. Sets outside
    `min_words..max_words` do not enter. Returns `pairs` [(jaccard, i, j)] best first, `found`, `operations`,
    `examined`, `eligiblePairs` and `complete`."""
    eligible = [(i, ws) for i, ws in enumerate(word_sets) if limits.min_words <= len(ws) <= limits.max_words]
    n = len(eligible)
    ratio = Fraction(str(limits.jaccard))
    num, den = ratio.numerator, ratio.denominator
    best: list[tuple[float, int, int]] = []  # min-heap of (jaccard, -i, -j): the weakest kept pair on top
    ops = examined = found = 0
    complete = True
    for x in range(n):
        i, wa = eligible[x]
        la = len(wa)
        for y in range(x + 1, n):
            j, wb = eligible[y]
            lb = len(wb)
            small, large = (la, lb) if la <= lb else (lb, la)
            ruled_out = small * den < large * num
            cost = 1 if ruled_out else small
            if ops + cost > budget:
                complete = False
                break
            ops += cost
            examined += 1
            if ruled_out:
                continue
            common = len(wa & wb)
            union = la + lb - common
            if common * den >= union * num:
                found += 1
                item = (round(common / union, 4), -i, -j)
                if len(best) < keep:
                    heapq.heappush(best, item)
                elif item > best[0]:
                    heapq.heapreplace(best, item)
        if not complete:
            break
    pairs = [(jac, -ni, -nj) for jac, ni, nj in sorted(best, reverse=True)]
    return {"pairs": pairs, "found": found, "operations": ops, "examined": examined, "eligiblePairs": n * (n - 1) // 2, "complete": complete}
