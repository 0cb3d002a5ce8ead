"""Small reads every rule shares: a tool's spans in the ring, and scaling a count seen there to all its calls."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from relay_bridge.findings.inputs import SessionInput, SpanInput, ToolInput


def spans_by_tool(s: SessionInput) -> dict[str, list[SpanInput]]:
    out: dict[str, list[SpanInput]] = {}
    for span in s.spans:
        out.setdefault(span.tool, []).append(span)
    return out


def tools_by_name(s: SessionInput) -> dict[str, ToolInput]:
    return {t.name: t for t in s.tools}


def seen_calls(tool: ToolInput | None, ring: list[SpanInput], match: Callable[[SpanInput], bool]) -> int:
    """Calls of the tool that `match`, over every call since attach: the ring's count scaled by calls / spans kept
    (exact while the ring holds every call, which it does up to its buffer, 500 by default)."""
    k = sum(1 for span in ring if match(span))
    if tool is None or not ring or tool.calls <= len(ring):
        return k
    return round(k * tool.calls / len(ring))


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def fair_shares(demands: Mapping[str, int], total: int) -> dict[str, int]:
    """`total` split between claimants so that none gets more than it asks and none is cut while another gets
    more than it (water-filling): what one origin floods with cannot shrink another's share below an equal one.
    Shares are whole numbers; what rounding leaves goes to claimants in key order."""
    shares = dict.fromkeys(demands, 0)
    left, open_ = total, sorted(k for k, d in demands.items() if d > 0)
    while left > 0 and open_:
        each = max(1, left // len(open_))
        still = []
        for k in open_:
            if left <= 0:
                break
            give = min(each, demands[k] - shares[k], left)
            shares[k] += give
            left -= give
            if shares[k] < demands[k]:
                still.append(k)
        open_ = still
    return shares


def carried_tokens(span: SpanInput) -> int:
    """The tokens a span carries, as the relay can check them: its `estTokens`, never more than its own bytes give
    by the design's rule (ceil(bytes / 4) for input and result, images at decoded size). A saving is built from
    these, so a page's claim cannot make one larger than what its calls carried."""
    by_bytes = math.ceil(span.inputBytes / 4) + math.ceil(span.resultBytes / 4) + math.ceil(span.imageBytes * 0.75 / 4)
    return max(0, min(span.estTokens, by_bytes))


def carried_input_tokens(span: SpanInput) -> int:
    return max(0, min(span.estInputTokens, math.ceil(span.inputBytes / 4)))
