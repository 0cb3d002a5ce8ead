"""Filling a DataTable whose rows are rebuilt whole on every change (the timeline, prompts and schemas views); a
DataTable whose cursor is in view once its rows are measured; and one that keeps what it rendered while its
look did not change (the findings view's).

Textual's DataTable works out auto-width columns in its own idle handler. A table cleared and refilled from
another widget's callback may be painted before it gets an idle turn, and then draws every cell cut to its
header's width ("2.2" for "2.2K", "prom" for "prompt"). So the columns get their width here, from the cells
they will hold, when the rows are set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

Column = tuple["str | Text", str]  # header, column key
Row = tuple[Sequence[Text], "str | None"]  # cells, row key (None: the table makes one)


def fill(table: DataTable, columns: Sequence[Column], rows: Sequence[Row]) -> None:
    """Replace every column and row of `table`; each column as wide as its widest cell or header."""
    widths = [Text(label).cell_len if isinstance(label, str) else label.cell_len for label, _ in columns]
    for cells, _ in rows:
        for i, cell in enumerate(cells):
            widths[i] = max(widths[i], cell.cell_len)
    table.clear(columns=True)
    for (label, key), width in zip(columns, widths, strict=False):
        table.add_column(label, key=key, width=width)
    for cells, row_key in rows:
        table.add_row(*cells, key=row_key)


class Table(DataTable[Text]):
    """A cursor moved among rows DataTable has not measured yet (measured on its next idle turn) is scrolled to
    after the next refresh. On a busy app the refresh can come first, and the scroll then stops where the
    measured rows end: the timeline opened short of its newest entry. This one takes the scroll when it measures
    them (Textual's private hooks: textual is pinned exactly)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._scroll_due = False

    def move_cursor(self, *, row: int | None = None, column: int | None = None, animate: bool = False, scroll: bool = True) -> None:
        self._scroll_due = self._scroll_due or (scroll and self._require_update_dimensions)
        super().move_cursor(row=row, column=column, animate=animate, scroll=scroll)

    def _scroll_cursor_into_view(self, animate: bool = False) -> None:
        super()._scroll_cursor_into_view(animate=animate)
        if not self._require_update_dimensions:
            self._scroll_due = False  # taken over measured rows: it landed

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(new_rows)
        if self._scroll_due:
            self._scroll_cursor_into_view()


class SteadyTable(Table):
    """Textual applies a screen's styles again each time it is shown, and a DataTable then drops every cell it
    rendered, though nothing it draws with changed: a kept view's screenful of rows was rendered again at each
    opening (under a flood's findings, most of what showing the findings view cost beyond an empty one). This
    one drops them only when its own rules or the theme moved; its base style and pseudo-classes (focus, hover)
    are in every cached cell's key already."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._look: tuple[Any, ...] | None = None

    def notify_style_update(self) -> None:
        look = (self.app.theme, self.styles.get_render_rules())
        if look == self._look:
            Widget.notify_style_update(self)  # the widget's own style caches (its ancestors' styles may have moved)
            self.refresh()
            return
        self._look = look
        super().notify_style_update()
