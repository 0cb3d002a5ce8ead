"""The per-tool table: rows keyed by tool name, cells updated in place (`update_cell`), never rebuilt.

It holds only the rows the dashboard chose to show (tui/tool_rows.py picks the top rows by the sort, from the
numbers behind the cells, so `2.1s` sorts above `950ms`), in the order given; a row's cells are rebuilt only
when its tool changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, ColumnKey, RowDoesNotExist

from relay_bridge.units import fmt_bytes, fmt_count, fmt_ms

from ..palette import Palette
from ..sanitize import inert


class Cell(Text):
    """A table cell that knows the number it shows, for sorting."""

    sort_value: Any = None

    @classmethod
    def of(cls, text: str | Text, value: Any, style: str = "", justify: str = "right") -> "Cell":
        cell = cls(justify=justify, end="", no_wrap=True)  # type: ignore[arg-type]
        if isinstance(text, Text):
            cell.append_text(text)
        else:
            cell.append(text, style=style)
        if style and isinstance(text, Text):
            cell.stylize(style)
        cell.sort_value = value
        return cell


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    field: str | None
    compact: bool  # shown in the compact layout (a split pane, under 80 columns)
    narrow: bool = True  # shown from 80 to 99 columns, where the full table would scroll sideways


COLUMNS = (
    Column("tool", "tool", "tool", True),
    Column("calls", "calls", "calls", True),
    Column("err", "err", "errors", True),
    Column("min", "min", "minMs", False, narrow=False),
    Column("p50", "p50", "p50Ms", True),
    Column("p95", "p95", "p95Ms", True),
    Column("max", "max", "maxMs", False, narrow=False),
    Column("blocking", "blocking", "blockingMs", False),
    Column("bytes", "bytes", "totalBytes", True),
    Column("tokens", "tokens", "estTokens", False),
    Column("schema", "schema", "schemaBytes", False),
)
SORT_KEYS = tuple(c.key for c in COLUMNS)
LAYOUTS = ("compact", "narrow", "full")


def columns_for(layout: str) -> list[Column]:
    """The columns a table layout shows: compact under 80 columns, narrow (no min/max) under 100, else all."""
    if layout == "compact":
        return [c for c in COLUMNS if c.compact]
    if layout == "narrow":
        return [c for c in COLUMNS if c.narrow]
    return list(COLUMNS)


def _num(value: Any) -> float:
    return float("-inf") if value is None else float(value)


def make_cells(row: dict[str, Any], palette: Palette, registered: bool) -> dict[str, Cell]:
    err_style = palette.style("error") if row["errors"] else palette.style("muted")
    name_style = "" if registered else palette.style("muted")
    name = inert(row["tool"], limit=48)
    if name_style:
        name.stylize(name_style)
    cells = {
        "tool": Cell.of(name, row["tool"], justify="left"),
        "calls": Cell.of(fmt_count(row["calls"]), row["calls"]),
        "err": Cell.of(str(row["errors"]), row["errors"], err_style),
        "min": Cell.of(fmt_ms(row["minMs"]), _num(row["minMs"]), palette.for_ms(row["minMs"])),
        "p50": Cell.of(fmt_ms(row["p50Ms"]), _num(row["p50Ms"]), palette.for_ms(row["p50Ms"])),
        "p95": Cell.of(fmt_ms(row["p95Ms"]), _num(row["p95Ms"]), palette.for_ms(row["p95Ms"])),
        "max": Cell.of(fmt_ms(row["maxMs"]), _num(row["maxMs"]), palette.for_ms(row["maxMs"])),
        "blocking": Cell.of(fmt_ms(row["blockingMs"]) if row["blockingMs"] else "0", row["blockingMs"], "" if row["blockingMs"] else palette.style("muted")),
        "bytes": Cell.of(fmt_bytes(row["totalBytes"]), row["totalBytes"]),
        "tokens": Cell.of(fmt_count(row["estTokens"]), row["estTokens"]),
        "schema": Cell.of(fmt_bytes(row["schemaBytes"]) if row["schemaBytes"] else "–", row["schemaBytes"], "" if row["schemaBytes"] else palette.style("muted")),
    }
    return cells


class ToolTable(DataTable):
    """One session's tools. `sync(rows)` adds, removes and updates rows by key; `set_sort` re-sorts."""

    DEFAULT_CSS = """
    ToolTable { height: 1fr; min-height: 4; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kw)
        self.columns_layout = "full"
        self.sort_key = "tool"
        self.sort_reverse = False
        self._cells: dict[str, dict[str, str]] = {}  # row key -> column -> plain text shown (to skip no-op updates)
        self._order: list[str] = []  # row keys in the order shown
        self._columns_for: str | None = None

    def on_mount(self) -> None:
        self._ensure_columns()

    def columns_now(self) -> list[Column]:
        return columns_for(self.columns_layout)

    def _ensure_columns(self) -> None:
        if self._columns_for == self.columns_layout:
            return
        self._columns_for = self.columns_layout
        self.clear(columns=True)  # only when the layout changes (compact / narrow / full), never for data
        self._cells.clear()
        self._order = []
        for col in self.columns_now():
            self.add_column(self._label(col), key=col.key)

    def _label(self, col: Column) -> Text:
        if col.key == self.sort_key:
            return Text(col.label + (" ▲" if not self.sort_reverse else " ▼"), style="bold")
        return Text(col.label)

    def set_columns_layout(self, layout: str) -> None:
        if layout != self.columns_layout:
            self.columns_layout = layout
            self._ensure_columns()

    def set_sort(self, key: str, reverse: bool) -> None:
        """Mark the sorted column in its header; the rows come in that order from `sync`."""
        self.sort_key, self.sort_reverse = key, reverse
        for col in self.columns_now():
            column = self.columns.get(ColumnKey(col.key))
            if column is not None:
                column.label = self._label(col)
        self.refresh()

    def sync(self, rows: list[dict[str, Any]], palette: Palette, registered: Callable[[str], bool],
             changed: set[str] | None = None) -> bool:
        """Bring the table to `rows`, in that order. `changed` names the tools whose numbers changed since the
        last call (None: any may have); other rows keep their cells untouched. Returns whether anything changed."""
        self._ensure_columns()
        keys = [r["tool"] for r in rows]
        wanted = set(keys)
        changed_any = False
        for key in list(self._cells):
            if key not in wanted:
                self.remove_row(key)
                del self._cells[key]
                changed_any = True
        columns = self.columns_now()
        for row in rows:
            key = row["tool"]
            shown = self._cells.get(key)
            if shown is not None and changed is not None and key not in changed:
                continue
            cells = make_cells(row, palette, registered(key))
            if shown is None:
                self.add_row(*(cells[c.key] for c in columns), key=key)
                self._cells[key] = {c.key: cells[c.key].plain + str(cells[c.key].spans) for c in columns}
                changed_any = True
                continue
            for col in columns:
                sig = cells[col.key].plain + str(cells[col.key].spans)
                if shown.get(col.key) != sig:
                    try:
                        self.update_cell(key, col.key, cells[col.key], update_width=True)
                    except CellDoesNotExist:  # pragma: no cover - columns changed under us
                        continue
                    shown[col.key] = sig
                    changed_any = True
        if keys != self._order:
            self._order = keys
            rank = {key: i for i, key in enumerate(keys)}
            self.sort("tool", key=lambda cell: rank.get(getattr(cell, "sort_value", None), 0))
            changed_any = True
        return changed_any

    def forget(self) -> None:
        """Drop every row (another session is about to be shown); the columns stay."""
        self.clear()
        self._cells.clear()
        self._order = []

    def move_to(self, tool: str) -> None:
        """Put the cursor back on `tool`'s row, if it is shown."""
        try:
            self.move_cursor(row=self.get_row_index(tool), animate=False)
        except RowDoesNotExist:  # filtered out, or gone
            return

    def selected_tool(self) -> str | None:
        if not self.row_count:
            return None
        try:
            row_key, _ = self.coordinate_to_cell_key((self.cursor_row, 0))
        except CellDoesNotExist:
            return None
        return row_key.value
