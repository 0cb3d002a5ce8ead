"""Chrome trace-event JSON (Perfetto, chrome://tracing): one process per session, a complete `X` event per span.

Overlapping calls go on separate lanes (threads), assigned greedily by start time, so no slice is dropped or
mis-nested. Host gaps (host + model wait) are slices on their own lane. Timestamps are epoch microseconds
(`(timeOrigin + invokedAt) * 1000`), so several sessions line up on one timeline. An error slice carries the
error text the agent kept (its errorPolicy: message, name or nothing). Calls still in flight at export are open
slices (a `B` event with no end, shown as not finished), each on a lane of its own; a call its session's end
closed unsettled is a complete slice up to that end, `cat` "unsettled".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from relay_bridge.core.protocol import Span

if TYPE_CHECKING:
    from relay_bridge.core.store import InFlight

GAP_TID = 0


def assign_lanes(spans: Iterable[Span]) -> dict[int, int]:
    """seq -> lane (1-based): each span takes the lowest lane that is free when it starts."""
    lanes: list[float] = []  # settledAt of the last span on each lane
    out: dict[int, int] = {}
    for span in sorted(spans, key=lambda s: (s.invokedAt, s.seq)):
        for i, busy_until in enumerate(lanes):
            if busy_until <= span.invokedAt:
                lanes[i] = span.settledAt
                out[span.seq] = i + 1
                break
        else:
            lanes.append(span.settledAt)
            out[span.seq] = len(lanes)
    return out


def span_events(spans: list[Span], time_origin: float, pid: int = 1) -> list[dict[str, Any]]:
    """The `X` events of one session: calls on lanes >= 1, host gaps on lane 0. Sorted by (tid, ts)."""
    lanes = assign_lanes(spans)
    events: list[dict[str, Any]] = []
    for span in spans:
        events.append(
            {
                "name": span.tool,
                "cat": "error" if span.isError else "call",
                "ph": "X",
                "ts": (time_origin + span.invokedAt) * 1000,
                "dur": span.wallMs * 1000,
                "pid": pid,
                "tid": lanes[span.seq],
                "args": {
                    "seq": span.seq,
                    "resultBytes": span.resultBytes,
                    "estTokens": span.estTokens,
                    "blockingMs": span.blockingMs,
                    "synthetic": span.synthetic,
                    **({"error": span.error} if span.isError and span.error else {}),
                },
            }
        )
        gap = span.gapSincePrevCallMs
        if gap is not None and gap > 0:
            events.append(
                {
                    "name": "host gap",
                    "cat": "gap",
                    "ph": "X",
                    "ts": (time_origin + span.invokedAt - gap) * 1000,
                    "dur": gap * 1000,
                    "pid": pid,
                    "tid": GAP_TID,
                    "args": {"beforeSeq": span.seq},
                }
            )
    events.sort(key=lambda e: (e["tid"], e["ts"], e["args"].get("seq", -1)))
    return events


def open_events(calls: Iterable[InFlight], time_origin: float, pid: int, first_lane: int) -> list[dict[str, Any]]:
    """Calls without a span yet: open `B` slices, or, ended with their session, complete ones up to that end."""
    events: list[dict[str, Any]] = []
    for lane, call in enumerate(sorted(calls, key=lambda c: (c.invokedAt, c.seq)), start=first_lane):
        event: dict[str, Any] = {
            "name": call.tool,
            "pid": pid,
            "tid": lane,
            "ts": (time_origin + call.invokedAt) * 1000,
            "args": {"seq": call.seq, "inFlight": True, "cancelledByHost": call.cancelled_at is not None},
        }
        if call.ended_at is not None:
            event.update(cat="unsettled", ph="X", dur=max(0.0, call.ended_at - call.invokedAt) * 1000)
        else:
            event.update(cat="call", ph="B")
        events.append(event)
    return events


def metadata_events(pid: int, process_name: str, lanes: int) -> list[dict[str, Any]]:
    meta = [
        {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": process_name}},
        {"name": "thread_name", "ph": "M", "pid": pid, "tid": GAP_TID, "args": {"name": "host + model wait"}},
    ]
    for lane in range(1, lanes + 1):
        meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": lane, "args": {"name": f"calls (lane {lane})"}})
    return meta


def trace_document(sessions: list[tuple[Any, ...]]) -> dict[str, Any]:
    """`sessions` is a list of (process name, timeOrigin, spans) or (process name, timeOrigin, spans, calls in
    flight)."""
    events: list[dict[str, Any]] = []
    for pid, (name, origin, spans, *rest) in enumerate(sessions, start=1):
        body = span_events(spans, origin, pid)
        lanes = max((e["tid"] for e in body), default=0)
        body += open_events(rest[0] if rest else (), origin, pid, lanes + 1)
        lanes = max((e["tid"] for e in body), default=0)
        events.extend(metadata_events(pid, name, max(lanes, 1)))
        events.extend(body)
    return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"producer": "wmcp-top"}}
