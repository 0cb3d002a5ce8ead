"""Small reads every rule shares: a tool's spans in the ring, and scaling a count seen there to all its calls."""

from __future__ import annotations

from collections.abc import Callable

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
