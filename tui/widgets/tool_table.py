"""The per-tool table: rows keyed by tool name, each row's line drawn again only when its cells change.

It holds only the rows the dashboard chose to show (tui/model/tool_rows.py picks the top rows by the sort, from the
numbers behind the cells, so `2.1s` sorts above `950ms`), in the order given; a row's cells are rebuilt only
when its tool changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rich.console import JustifyMethod
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from relay_bridge.core.units import fmt_bytes, fmt_count, fmt_ms
from tui.model.sanitize import inert
from tui.palette import Palette


class Cell(Text):
    """A table cell that knows the number it shows, for sorting."""

    sort_value: Any = None

    @classmethod
    def of(cls, text: str | Text, value: Any, style: str = "", justify: JustifyMethod = "right") -> Cell:
        cell = cls(justify=justify, end="", no_wrap=True)
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


def _err_text(row: dict[str, Any], counted: int | None) -> str:
    if not counted:
        return str(row["errors"])
    return f"{row['errors']}+?" if row["calls"] else "?"


def make_cells(row: dict[str, Any], palette: Palette, registered: bool, counted: int | None = None) -> dict[str, Cell]:
    """`counted`: the tool's calls were only counted (toolactivated), not measured: shown as `N*` with a marker."""
    err_style = palette.style("error") if row["errors"] else palette.style("muted")
    name_style = "" if registered else palette.style("muted")
    name = inert(row["tool"], limit=48)
    if name_style:
        name.stylize(name_style)
    if counted is not None:
        name.append(" ∗counted", style=palette.style("slow"))
    calls = row["calls"] + (counted or 0)
    cells = {
        "tool": Cell.of(name, row["tool"], justify="left"),
        "calls": Cell.of(fmt_count(calls) + ("*" if counted is not None else ""), calls, palette.style("slow") if counted is not None else ""),
        # a counted call's outcome is never seen (no span): `?` beside the measured errors, never a false 0
        "err": Cell.of(_err_text(row, counted), row["errors"], err_style if not counted else palette.style("slow")),
        "min": Cell.of(fmt_ms(row["minMs"]), _num(row["minMs"]), palette.for_ms(row["minMs"])),
        "p50": Cell.of(fmt_ms(row["p50Ms"]), _num(row["p50Ms"]), palette.for_ms(row["p50Ms"])),
        "p95": Cell.of(fmt_ms(row["p95Ms"]), _num(row["p95Ms"]), palette.for_ms(row["p95Ms"])),
        "max": Cell.of(fmt_ms(row["maxMs"]), _num(row["maxMs"]), palette.for_ms(row["maxMs"])),
        "blocking": Cell.of(
            fmt_ms(row["blockingMs"]) if row["blockingMs"] else "0", row["blockingMs"], "" if row["blockingMs"] else palette.style("muted")
        ),
        "bytes": Cell.of(fmt_bytes(row["totalBytes"]), row["totalBytes"]),
        "tokens": Cell.of(fmt_count(row["estTokens"]), row["estTokens"]),
        "schema": Cell.of(
            fmt_bytes(row["schemaBytes"]) if row["schemaBytes"] else "–", row["schemaBytes"], "" if row["schemaBytes"] else palette.style("muted")
        ),
    }
    return cells


class ToolTable(ScrollView, can_focus=True):
    """One session's tools, drawn line by line: each row's line is kept until that row's cells change, so a
    refresh costs the rows that changed (sorting moves lines, it does not draw them again). `sync(rows)` adds,
    removes and updates rows by key, in the order given; `set_sort` marks the sorted column."""

    COMPONENT_CLASSES = {"tool-table--header", "tool-table--cursor"}
    DEFAULT_CSS = """
    ToolTable { height: 1fr; min-height: 4; background: $surface; color: $foreground; }
    ToolTable > .tool-table--header { text-style: bold; background: $panel; color: $foreground; }
    ToolTable > .tool-table--cursor {
        background: $block-cursor-blurred-background; color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }
    ToolTable:focus > .tool-table--cursor {
        background: $block-cursor-background; color: $block-cursor-foreground; text-style: $block-cursor-text-style;
    }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor(-1000000)", "First", show=False),
        Binding("end", "cursor(1000000)", "Last", show=False),
    ]

    class HeaderSelected(Message):
        """A column header was clicked: sort by it."""

        def __init__(self, table: ToolTable, column_key: str) -> None:
            super().__init__()
            self.table = table
            self.column_key = column_key

        @property
        def control(self) -> ToolTable:
            return self.table

    cursor_row: reactive[int] = reactive(0, init=False)

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.columns_layout = "full"
        self.sort_key = "tool"
        self.sort_reverse = False
        self._cells: dict[str, dict[str, Cell]] = {}  # row key -> column -> the cell shown
        self._order: list[str] = []  # row keys in the order shown
        # column -> width: cells and the sort arrow grow it, and it never shrinks while shown, so moving the sort
        # arrow around (a key press) leaves every line as it was drawn
        self._widths: dict[str, int] = {}
        self._lines: dict[str, Strip] = {}  # row key -> its drawn line (no cursor), until its cells change
        self._header: Strip | None = None
        self._base: Style | None = None  # the widget's own style, read once a render pass
        self._shown_widths: list[tuple[Column, int]] | None = None
        self._cropped: dict[str, tuple[Strip, tuple[Any, ...], Strip]] = {}  # row key -> line, view, cropped line
        # The cursor row and the blank lines below the rows, each kept with what it was drawn from: the same Strip
        # object each pass, so the line filters' cache on it holds (see render_lines)
        self._kept: dict[str, tuple[tuple[Any, ...], Strip]] = {}

    # -- columns ------------------------------------------------------------------------------------------

    def columns_now(self) -> list[Column]:
        return columns_for(self.columns_layout)

    @property
    def column_keys(self) -> list[str]:
        return [c.key for c in self.columns_now()]

    @property
    def descending(self) -> bool:
        """Numbers sort largest first and names A to Z unless reversed; the arrow shows which it is now."""
        return (self.sort_key != "tool") != self.sort_reverse

    def _label(self, col: Column) -> Text:
        """The header of a column; the sorted one's arrow goes after a space when the column has room for both,
        else into the gap after the column: a sort press never widens a column (nor leaves it wider)."""
        if col.key == self.sort_key:
            gap = " " if self._width(col) >= len(col.label) + 2 else ""
            return Text(col.label + gap + ("▼" if self.descending else "▲"), style="bold")
        return Text(col.label)

    def header_label(self, key: str) -> str:
        return next(self._label(c).plain for c in self.columns_now() if c.key == key)

    def column_x(self, key: str) -> int:
        """Where column `key` starts, in cells from the table's left edge."""
        x = 0
        for col in self.columns_now():
            if col.key == key:
                return x
            x += self._width(col) + 2
        raise KeyError(key)

    def _width(self, col: Column) -> int:
        return max(len(col.label), self._widths.get(col.key, 0))  # labels are ASCII

    def _column_widths(self) -> list[tuple[Column, int]]:
        """The shown columns and their widths, worked out once until a width, the sort or the layout changes."""
        if self._shown_widths is None:
            self._shown_widths = [(col, self._width(col)) for col in self.columns_now()]
        return self._shown_widths

    def set_columns_layout(self, layout: str) -> None:
        if layout != self.columns_layout:
            self.columns_layout = layout
            self._shown_widths = None
            self._redraw_all()

    def set_sort(self, key: str, reverse: bool) -> None:
        """Mark the sorted column in its header; the rows come in that order from `sync`."""
        self.sort_key, self.sort_reverse = key, reverse
        self._header = None  # only the header changes: the arrow never widens a column (see _label)
        self.refresh()  # the rows keep their lines; `sync` moves them

    def _redraw_all(self) -> None:
        self._lines.clear()
        self._header = None
        self._resize()
        self.refresh()

    def _resize(self) -> None:
        width = sum(self._width(c) + 2 for c in self.columns_now())
        size = Size(width, len(self._order) + 1)
        old = self.virtual_size
        if size.height == old.height and max(size.width, old.width) <= self.size.width:
            # Only the width changed (a sort arrow moved), and no horizontal scrollbar comes or goes: the
            # reactive's screen-wide layout pass (a third of a key press) would change nothing.
            self.set_reactive(ToolTable.virtual_size, size)
            return
        self.virtual_size = size

    # -- rows ---------------------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self._order)

    @property
    def order(self) -> list[str]:
        """Row keys (tool names) top to bottom."""
        return list(self._order)

    def cell(self, tool: str, column: str) -> Cell | None:
        row = self._cells.get(tool)
        return row.get(column) if row is not None else None

    def sync(
        self,
        rows: list[dict[str, Any]],
        palette: Palette,
        registered: Callable[[str], bool],
        changed: set[str] | None = None,
        counted: dict[str, int] | None = None,
    ) -> bool:
        """Bring the table to `rows`, in that order. `changed` names the tools whose numbers changed since the
        last call (None: any may have); other rows keep their cells and their drawn lines. `counted`: tools
        counted, not measured (Session.counted_only), marked in the name and calls cells. Returns whether
        anything changed."""
        counted = counted or {}
        keys = [r["tool"] for r in rows]
        wanted = set(keys)
        changed_any = False
        for key in list(self._cells):
            if key not in wanted:
                del self._cells[key]
                self._cropped.pop(key, None)
                self._lines.pop(key, None)
                changed_any = True
        grew = False
        redrawn: list[str] = []
        for row in rows:
            key = row["tool"]
            shown = self._cells.get(key)
            if shown is not None and changed is not None and key not in changed:
                continue
            cells = make_cells(row, palette, registered(key), counted.get(key))
            if shown is not None and all(_same(shown.get(k), cells[k]) for k in cells):
                continue
            self._cells[key] = cells
            self._lines.pop(key, None)
            redrawn.append(key)
            changed_any = True
            for col, cell in cells.items():
                if cell.cell_len > self._widths.get(col, 0):
                    self._widths[col] = cell.cell_len
                    self._shown_widths = None
                    grew = True
        moved = keys != self._order
        if moved:
            self._order = keys
            changed_any = True
            if self.cursor_row >= len(keys):
                self.cursor_row = max(0, len(keys) - 1)
        if grew:
            self._redraw_all()
        elif moved:
            self._resize()
            self.refresh()  # rows moved: every visible line is a kept line in a new place
        else:
            for key in redrawn:  # the same rows in the same places: repaint only the lines that changed
                self.refresh_lines(self._order.index(key) + 1)
        return changed_any

    def forget(self) -> None:
        """Drop every row (another session is about to be shown); the columns stay."""
        self._cells.clear()
        self._cropped.clear()
        self._order = []
        self._widths.clear()
        self._shown_widths = None
        self.cursor_row = 0
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._redraw_all()

    def move_cursor(self, *, row: int) -> None:
        self.cursor_row = max(0, min(row, len(self._order) - 1))

    def move_to(self, tool: str) -> None:
        """Put the cursor back on `tool`'s row, if it is shown."""
        if tool in self._cells:
            self.move_cursor(row=self._order.index(tool))

    def selected_tool(self) -> str | None:
        if not self._order:
            return None
        return self._order[min(self.cursor_row, len(self._order) - 1)]

    def watch_cursor_row(self) -> None:
        height = max(1, self.size.height - 1)
        top = self.scroll_offset.y
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + height:
            self.scroll_to(y=self.cursor_row - height + 1, animate=False)
        self.refresh()

    def action_cursor(self, step: int) -> None:
        self.move_cursor(row=self.cursor_row + step)

    def action_page(self, direction: int) -> None:
        self.move_cursor(row=self.cursor_row + direction * max(1, self.size.height - 2))

    def on_click(self, event: events.Click) -> None:
        x = event.x + self.scroll_offset.x
        if event.y == 0:
            for col in self.columns_now():
                width = self._width(col) + 2
                if x < width:
                    self.post_message(self.HeaderSelected(self, col.key))
                    return
                x -= width
            return
        row = self.scroll_offset.y + event.y - 1
        if 0 <= row < len(self._order):
            self.move_cursor(row=row)

    def on_resize(self) -> None:
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()  # a theme change: the lines were drawn with the old styles
        self._header = None

    # -- drawing ------------------------------------------------------------------------------------------

    def _draw(self, cells: Mapping[str, Text], style: Style, over: Style | None = None) -> Strip:
        """One row's line: `style` under the cells' own styles, `over` (the cursor) on top of them. Each cell
        keeps its segments, already over `style`: a line drawn again (a column grew, the sort arrow moved) only
        pads and joins them."""
        space = Segment(" ", style)
        segments: list[Segment] = []
        for col, width in self._column_widths():
            text = cells.get(col.key)
            if text is None:
                parts, used = [], 0
            elif text.cell_len == width + 1 and not isinstance(text, Cell):
                # a header's sort arrow in the gap after its column (the column itself is not widened)
                parts, used = self._segments(text, style), width + 1
            elif text.cell_len > width:
                cut = text.copy()
                cut.truncate(width, overflow="ellipsis")
                parts, used = list(Segment.apply_style(cut.render(self.app.console), style)), cut.cell_len
            else:
                parts, used = self._segments(text, style), text.cell_len
            pad = Segment(" " * max(0, width - used), style)
            segments.append(space)
            if getattr(text, "justify", None) == "right":
                segments.append(pad)
                segments.extend(parts)
            else:
                segments.extend(parts)
                segments.append(pad)
            if used <= width:
                segments.append(space)
        return Strip(list(Segment.apply_style(segments, None, over)) if over else segments)

    def _segments(self, text: Text, style: Style) -> list[Segment]:
        """The cell's segments over `style`, rendered once per cell and style (a Cell keeps them)."""
        kept = getattr(text, "_segments", None)
        if kept is not None and kept[0] == style:
            return kept[1]
        plain, spans = text.plain, text.spans
        get_style = self.app.console.get_style
        if not spans:  # most cells: one string in one style
            segments = [Segment(plain, style + get_style(text.style) if text.style else style)]
        elif len(spans) == 1 and not text.style and spans[0].start == 0 and spans[0].end >= len(plain):
            segments = [Segment(plain, style + get_style(spans[0].style))]
        else:
            segments = list(Segment.apply_style(text.render(self.app.console), style))
        try:
            text._segments = (style, segments)  # type: ignore[attr-defined]  # the cell's drawn line, cached on the Text (rich has no slot for it)
        except AttributeError:
            pass
        return segments

    def render_lines(self, crop: Region) -> list[Strip]:
        self._base = self.rich_style  # once a pass: it walks the widget's ancestors
        if not self._plain_box():
            return super().render_lines(crop)
        # Textual's styles cache wraps every line it draws in a new Strip, so the line filters (the truecolor
        # filter rebuilds every segment) run again for each line of each refresh, kept or not. With no border,
        # padding, outline, tint or opacity it would add nothing else: give the compositor our kept strips, whose
        # own filter caches then hit for every row that only moved (a sort press, a row climbing the order).
        width = self.size.width
        _, background = self.background_colors
        filters = self.get_line_filters()
        strips: list[Strip] = []
        for y in crop.line_range:
            strip = self.render_line(y)
            if strip.cell_length != width:
                strip = strip.adjust_cell_length(width, self._base)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def _plain_box(self) -> bool:
        """Whether the styles cache would draw our lines as they are (no gutter, outline, tint or opacity)."""
        styles = self.styles
        return (
            not any(styles.gutter)
            and not any(edge for edge, _ in styles.outline)
            and not styles.tint.a
            and self.opacity == 1.0
            and styles.text_opacity == 1.0
            and not (styles.has_rule("hatch") and styles.hatch != "none")
        )

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self._base if self._base is not None else self.rich_style
        if y == 0:
            if self._header is None:
                header_style = self.get_component_rich_style("tool-table--header")
                self._header = self._draw({c.key: self._label(c) for c in self.columns_now()}, base + header_style)
            return self._header.crop_extend(scroll_x, scroll_x + width, base + self.get_component_rich_style("tool-table--header"))
        index = scroll_y + y - 1
        if index >= len(self._order):
            return self._keep("blank", (width, base), lambda: Strip.blank(width, base))
        key = self._order[index]
        if index == self.cursor_row:
            cursor = self.get_component_rich_style("tool-table--cursor")
            cells = self._cells[key]
            return self._keep(
                "cursor",
                (cells, base, cursor, scroll_x, width, self._column_widths()),
                lambda: self._draw(cells, base, cursor).crop_extend(scroll_x, scroll_x + width, base + cursor),
            )
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = self._draw(self._cells[key], base)
        # The same Strip object for the same line and view: Textual caches the line filters' output on it
        # (its truecolor filter rebuilds every segment), so a row that only moved costs nothing to draw again.
        kept = self._cropped.get(key)
        if kept is not None and kept[0] is line and kept[1] == (scroll_x, width, base):
            return kept[2]
        cropped = line.crop_extend(scroll_x, scroll_x + width, base)
        self._cropped[key] = (line, (scroll_x, width, base), cropped)
        return cropped

    def _keep(self, slot: str, made: tuple[Any, ...], draw: Callable[[], Strip]) -> Strip:
        """The Strip kept in `slot` while it is drawn from `made` (compared item by item, the same objects first)."""
        kept = self._kept.get(slot)
        if kept is None or kept[0] != made:
            kept = self._kept[slot] = (made, draw())
        return kept[1]


def _same(a: Cell | None, b: Cell) -> bool:
    return a is not None and a.plain == b.plain and a.spans == b.spans and a.style == b.style
