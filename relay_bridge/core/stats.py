"""Per-session statistics: the ring buffer, per-tool aggregates, ledger totals and the summary line.

Pure: spans and registry changes in, numbers out. The definitions (design section 3) are shared with
page_agent/src/page/stats.js through tests/vectors/, so the two implementations cannot drift:

- `calls`/`errors` count every measured call since attach or reset; percentiles (webmcp-profiler's
  `sorted[min(n-1, floor(p*n))]`), min and max are over the spans still in the ring buffer.
- `blockingMs`, `totalBytes` (result bytes), `estTokens`, `estInputTokens` are running sums since reset.
- totals.calls = measured + unsampled calls; `hostGapMs` sums the non-null gaps.
- `schemaBytes` (totals) = descriptors of the tools registered now: paid in every conversation.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import msgspec

from relay_bridge.core.protocol import Span
from relay_bridge.core.units import summary_line


def quantile(sorted_values: list[float], p: float) -> float | None:
    """webmcp-profiler's quantile of ascending values, p in 0..1: `sorted[min(n-1, floor(p*n))]`; None when empty."""
    if not sorted_values:
        return None
    n = len(sorted_values)
    return sorted_values[min(n - 1, math.floor(p * n))]


# Rows and totals hold only numbers, so the cycle collector need not visit them (gc=False): a session may hold
# a row for every tool name its spans used, and a full collection over tens of thousands of tracked rows stalled
# the dashboard's loop for 100-280 ms (docs/limits.md, the budget flood).
class ToolRow(msgspec.Struct, gc=False):
    """Running per-tool counters; percentiles come from the ring buffer when asked."""

    calls: int = 0
    errors: int = 0
    refused: int = 0  # calls the browser refused before the page ran (span outcome "refused"): in no duration
    blockingMs: float = 0.0
    totalBytes: int = 0
    estTokens: int = 0
    estInputTokens: int = 0
    lastResultBytes: int = 0
    schemaBytes: int = 0
    registered: bool = False
    internal: bool = False


class Totals(msgspec.Struct, gc=False):
    calls: int = 0
    unsampledCalls: int = 0
    overlappingCalls: int = 0
    errors: int = 0
    refused: int = 0
    wallMs: float = 0.0
    blockingMs: float = 0.0
    resultBytes: int = 0
    estTokens: int = 0
    estInputTokens: int = 0
    hostGapMs: float = 0.0


class SessionStats:
    """Numbers of one session. `buffer` caps the ring of spans kept for percentiles and export."""

    def __init__(self, buffer: int = 500) -> None:
        self.buffer = max(1, buffer)
        self.ring: OrderedDict[int, Span] = OrderedDict()
        self.tools: dict[str, ToolRow] = {}
        self.totals = Totals()
        self._measured = 0  # spans since reset (unsampled calls come from the agent's ledger)
        self._first_seq: int | None = None
        # Change log for readers that show a few rows of many tools (the dashboard): which tools' rows changed
        # since a version, found without scanning every tool. `epoch` moves when every row may have changed.
        self.version = 0
        self.epoch = 0
        # tool -> version of its last change, oldest first. A plain dict of str -> int, which the cycle collector
        # leaves untracked (an OrderedDict it walks on every full collection: 16,384 entries a session)
        self._touched: dict[str, int] = {}

    # -- ingest -------------------------------------------------------------------------------------------

    def add(self, span: Span) -> Span | None:
        """Account one new span (the caller has deduplicated by seq). Returns the span evicted, if any.
        A call started from the terminal (`invokedBy == "terminal"`) is not part of the agent's run: it is kept
        for the timeline and export, but counts in no total, row or percentile."""
        if span.invokedBy == "terminal":
            return self._keep(span, None)
        row = self._row(span.tool)
        self._touch(span.tool)
        row.calls += 1
        row.blockingMs += span.blockingMs
        row.totalBytes += span.resultBytes
        row.estTokens += span.estTokens
        row.estInputTokens += span.estInputTokens
        row.lastResultBytes = span.resultBytes
        t = self.totals
        self._measured += 1
        t.calls = self._measured + t.unsampledCalls
        if span.outcome == "refused":
            row.refused += 1
            t.refused += 1
        else:
            t.wallMs += span.wallMs
        t.blockingMs += span.blockingMs
        t.resultBytes += span.resultBytes
        t.estTokens += span.estTokens
        t.estInputTokens += span.estInputTokens
        if span.isError:
            row.errors += 1
            t.errors += 1
        if span.gapSincePrevCallMs is not None:
            t.hostGapMs += span.gapSincePrevCallMs
        if self._first_seq is None or span.seq < self._first_seq:
            self._first_seq = span.seq
        if span.overlapped if span.overlapped is not None else (span.gapSincePrevCallMs is None and span.seq != self._first_seq):
            t.overlappingCalls += 1
        return self._keep(span, span.tool)

    def _keep(self, span: Span, touched: str | None) -> Span | None:
        """Into the ring; the span it evicts, if any. `touched`: the tool add() just marked changed."""
        self.ring[span.seq] = span
        if len(self.ring) > self.buffer:
            evicted = self.ring.popitem(last=False)[1]
            if evicted.tool != touched:
                self._touch(evicted.tool)  # its percentiles no longer count that span
            return evicted
        return None

    def update_blocking(self, seq: int, blocking_ms: float) -> bool:
        span = self.ring.get(seq)
        if span is None:
            return False
        delta = blocking_ms - span.blockingMs
        # a new span, not a changed one: spans are shared with snapshots (a paused screen's moment)
        self.ring[seq] = msgspec.structs.replace(span, blockingMs=blocking_ms)
        if span.invokedBy == "terminal":
            return True
        self.totals.blockingMs += delta
        row = self.tools.get(span.tool)
        if row is not None:
            row.blockingMs += delta
            self._touch(span.tool)
        return True

    def set_unsampled(self, n: int) -> None:
        self.totals.unsampledCalls = n
        self.totals.calls = self._measured + n

    def register(self, name: str, schema_bytes: int, internal: bool = False) -> None:
        row = self._row(name)
        self._touch(name)
        row.schemaBytes = schema_bytes
        row.registered = True
        row.internal = internal

    def unregister(self, name: str) -> None:
        row = self.tools.get(name)
        if row is None:
            return
        self._touch(name)
        row.registered = False
        row.schemaBytes = 0
        if row.calls == 0:
            del self.tools[name]

    def reset(self) -> None:
        """Clear spans and totals; keep the tool registry (schema bytes stay)."""
        self.ring.clear()
        self.totals = Totals()
        self._measured = 0
        self._first_seq = None
        kept: dict[str, ToolRow] = {}
        for name, row in self.tools.items():
            if row.registered:
                kept[name] = ToolRow(schemaBytes=row.schemaBytes, registered=True, internal=row.internal)
        self.tools = kept
        self._new_epoch()

    def _touch(self, name: str) -> None:
        self.version += 1
        self._touched.pop(name, None)  # to the end: the newest change last
        self._touched[name] = self.version
        if len(self._touched) > 2 * len(self.tools) + 1024:
            self._new_epoch()  # names come and go (unregistered, never called): forget the gone ones

    def _new_epoch(self) -> None:
        self.epoch += 1
        self._touched = dict.fromkeys(self.tools, self.version)

    def changed_since(self, version: int) -> list[str]:
        """Tools whose row changed after `version` (a value of `self.version` read earlier in this epoch),
        newest first; a name no longer in `tools` was removed. Costs the number of changes, not of tools."""
        out = []
        for name, v in reversed(self._touched.items()):
            if v <= version:
                break
            out.append(name)
        return out

    def _row(self, name: str) -> ToolRow:
        row = self.tools.get(name)
        if row is None:
            row = self.tools[name] = ToolRow()
        return row

    def snapshot(self) -> SessionStats:
        """A copy that later spans do not change, made in O(ring + tools): spans are never changed in place, so
        they are shared; rows and totals, which are, are copied."""
        copy = SessionStats.__new__(SessionStats)
        copy.__dict__.update(self.__dict__)  # counts, version and epoch as they are now
        copy.ring = OrderedDict(self.ring)
        copy.tools = {name: msgspec.structs.replace(row) for name, row in self.tools.items()}
        copy.totals = msgspec.structs.replace(self.totals)
        copy._touched = {}  # nothing changes in a copy: readers rebuild from it once (it is another object)
        return copy

    # -- read ---------------------------------------------------------------------------------------------

    @property
    def schema_bytes(self) -> int:
        return sum(r.schemaBytes for r in self.tools.values() if r.registered)

    def wall_times(self) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for span in self.ring.values():
            if span.invokedBy != "terminal" and span.outcome != "refused":
                out.setdefault(span.tool, []).append(span.wallMs)
        return out

    def aggregates(self) -> list[dict[str, Any]]:
        """Rows of report v2's `tools[]`, sorted by tool name."""
        walls = self.wall_times()
        return [self.aggregate(name, walls) for name in sorted(self.tools)]

    def aggregate(self, name: str, walls: dict[str, list[float]]) -> dict[str, Any]:
        """One row of `aggregates()`; `walls` is `wall_times()`, read once for many rows."""
        row = self.tools[name]
        values = sorted(walls.get(name, ()))
        refused = {"refused": row.refused} if row.refused else {}  # present only when the browser refused a call
        return {
            "tool": name,
            "calls": row.calls,
            "errors": row.errors,
            "minMs": values[0] if values else None,
            "p50Ms": quantile(values, 0.5),
            "p95Ms": quantile(values, 0.95),
            "maxMs": values[-1] if values else None,
            "blockingMs": row.blockingMs,
            "lastResultBytes": row.lastResultBytes,
            "totalBytes": row.totalBytes,
            "estTokens": row.estTokens,
            "estInputTokens": row.estInputTokens,
            "schemaBytes": row.schemaBytes,
            **refused,
        }

    def report_rows(self) -> list[dict[str, Any]]:
        """report v2's `tools[]` (and 000's aggregates()): tools with spans in the ring, the internal one excluded,
        so every number is a number."""
        return [r for r in self.aggregates() if r["minMs"] is not None and not self.tools[r["tool"]].internal]

    def totals_dict(self) -> dict[str, Any]:
        t = self.totals
        schema = self.schema_bytes
        return {
            "calls": t.calls,
            "unsampledCalls": t.unsampledCalls,
            "overlappingCalls": t.overlappingCalls,
            "errors": t.errors,
            **({"refused": t.refused} if t.refused else {}),
            "wallMs": t.wallMs,
            "blockingMs": t.blockingMs,
            "resultBytes": t.resultBytes,
            "estTokens": t.estTokens,
            "estInputTokens": t.estInputTokens,
            "hostGapMs": t.hostGapMs,
            "schemaBytes": schema,
            "estSchemaTokens": math.ceil(schema / 4),
        }

    def summary(self) -> str:
        t = self.totals
        return summary_line(self.schema_bytes, t.wallMs, t.resultBytes, t.estTokens, t.hostGapMs)
