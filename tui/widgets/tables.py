"""Filling a DataTable whose rows are rebuilt whole on every change (the prompts and schemas views).

Textual's DataTable works out auto-width columns in its own idle handler. A table cleared and refilled from
another widget's callback may be painted before it gets an idle turn, and then draws every cell cut to its
header's width ("2.2" for "2.2K", "prom" for "prompt"). So the columns get their width here, from the cells
they will hold, when the rows are set.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import DataTable

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
