"""A tool definition reviewed once by its content: what it weighs (inputs.Weights) and the security review's hits
on it (security.hits), the two costs of the rules that grow with a catalog.

Both are kept in content caches (inputs.WEIGHTS by the text's digest, security.REVIEWED by the canonical
definition's), so the rules cost a lookup a tool once a definition was reviewed anywhere. `pending` says which
texts the caches lack, `review` works them out exactly as the rules would (the same functions: a pure function of
the text, so any process may run it), and `learn` puts the results in the caches: the findings view has a worker
process review a flood's definitions, then runs the rules on the loop at the cost of lookups. `prepare` does the
three in place, for a diagnosis that starts cold (an export, `wmcp-top diagnose`): each text parsed once for both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from relay_bridge.core.lint import Hit
from relay_bridge.findings import security
from relay_bridge.findings.inputs import MISSING, WEIGHTS, ToolInput, Weights, parse_descriptor, weigh_raw

Reviewed = tuple[Weights | None, tuple[Hit, ...]]


def pending(tools: Iterable[ToolInput]) -> list[bytes]:
    """The distinct descriptor texts among `tools` (registered, not internal: what the rules read) whose weights or
    review the caches do not hold, each once, in the tools' order."""
    out: list[bytes] = []
    seen: set[bytes] = set()
    for t in tools:
        if t.raw is None or not t.registered or t.internal:
            continue
        key = WEIGHTS.key(t.raw)
        if key in seen:
            continue
        seen.add(key)
        w = WEIGHTS.lookup(key)
        if w is MISSING or not security.REVIEWED.known(security.review_key(w, t.raw)):
            out.append(t.raw)
    return out


def review(raw: bytes) -> Reviewed:
    """A descriptor text's weights and review hits, as `ToolInput.weight` and `security.hits` work them out."""
    return weigh_raw(raw), security.review(parse_descriptor(raw))


def review_all(raws: Sequence[bytes]) -> list[Reviewed]:
    return [review(raw) for raw in raws]


def prepare(tools: Iterable[ToolInput]) -> None:
    """Weigh and review the definitions among `tools` that the caches lack, each text parsed once for both (the
    rules read the weights and the review at two different times, and parsed it for each). As the rules fill the
    caches: a review is kept by the canonical definition's digest, and the first text of it in the tools' order
    is the one reviewed (two spellings of one definition, keys in another order, list their hits in theirs)."""
    for raw in pending(tools):
        weights = weigh_raw(raw)
        WEIGHTS.put(WEIGHTS.key(raw), weights)
        key = security.review_key(weights, raw)
        if not security.REVIEWED.known(key):
            security.REVIEWED.put(key, security.review(parse_descriptor(raw)))


def learn(raws: Sequence[bytes], results: Sequence[Reviewed]) -> None:
    """Put what `review` worked out (here or in another process) in the content caches."""
    for raw, (weights, hits) in zip(raws, results, strict=True):
        WEIGHTS.put(WEIGHTS.key(raw), weights)
        security.REVIEWED.put(security.review_key(weights, raw), hits)
