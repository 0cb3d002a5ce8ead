"""The shown session's tool rows, kept current from the stats' change log, and the top few by the sort.

A session may hold thousands of tools; the screen shows a few dozen rows. Per refresh this costs the tools that
changed (`SessionStats.changed_since`) plus one pass to pick the top rows, never a rebuild of every row. Pure:
no Textual, no I/O.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from relay_bridge.core.stats import SessionStats

# The tool table's column key -> the row field it shows (tui/widgets/tool_table.COLUMNS).
SORT_FIELDS = {
    "tool": "tool",
    "calls": "calls",
    "err": "errors",
    "min": "minMs",
    "p50": "p50Ms",
    "p95": "p95Ms",
    "max": "maxMs",
    "blocking": "blockingMs",
    "bytes": "totalBytes",
    "tokens": "estTokens",
    "schema": "schemaBytes",
}


NO_NUMBER = float("-inf")


def sort_order(column: str, reverse: bool) -> tuple[Callable[[dict[str, Any]], Any], bool]:
    """The key and direction that put rows in the table's order: names a to z, numbers largest first (no
    number last); `reverse` flips it. Equal keys keep the rows' own order (heapq and sorted are stable), so
    the rows kept at the cut are the same on every refresh."""
    field_name = SORT_FIELDS.get(column, "tool")
    if field_name == "tool":
        return (lambda r: r["tool"].lower()), reverse
    return (lambda r: NO_NUMBER if (v := r[field_name]) is None else v), not reverse


@dataclass
class Top:
    rows: list[dict[str, Any]]  # in display order
    matching: int  # rows that pass the filter (shown + hidden)

    @property
    def hidden(self) -> int:
        return self.matching - len(self.rows)


@dataclass
class ToolRows:
    """Aggregate rows of one session's tools, updated by what changed since the last `update`."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    _stats: SessionStats | None = None
    _epoch: int = -1
    _version: int = 0

    def update(self, stats: SessionStats) -> set[str] | None:
        """Bring the rows to `stats`. Returns the names whose rows changed, or None when every row was rebuilt
        (another session, or a reset)."""
        if stats is not self._stats or stats.epoch != self._epoch:
            self._stats, self._epoch, self._version = stats, stats.epoch, stats.version
            walls = stats.wall_times()
            self.rows = {name: stats.aggregate(name, walls) for name in stats.tools}
            return None
        names = stats.changed_since(self._version)
        self._version = stats.version
        if not names:
            return set()
        walls = stats.wall_times()
        for name in names:
            if name in stats.tools:
                self.rows[name] = stats.aggregate(name, walls)
            else:
                self.rows.pop(name, None)
        return set(names)

    def top(self, column: str, reverse: bool, limit: int, text_filter: str = "") -> Top:
        """The first `limit` rows in the table's order among those whose name contains `text_filter`."""
        rows: Any = self.rows.values()
        if text_filter:
            needle = text_filter.lower()
            rows = [r for r in rows if needle in r["tool"].lower()]
        matching = len(rows)
        key, descending = sort_order(column, reverse)
        if matching <= limit:
            return Top(sorted(rows, key=key, reverse=descending), matching)
        pick = heapq.nlargest if descending else heapq.nsmallest
        return Top(pick(limit, rows, key=key), matching)
