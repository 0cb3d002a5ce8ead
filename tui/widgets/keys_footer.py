"""The dashboard's footer: every key on one row from 120 columns, on two rows from 80 to 119 (so d, l, i, w and m
are never cut off), and as much as fits in the compact layout."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer

TWO_ROW_COLUMNS = 6  # keys a row when the footer takes two rows


class KeysFooter(Footer):
    def compose(self) -> ComposeResult:
        yield from super().compose()
        if self.app.has_class("-two-row-footer"):
            # Footer puts every key in one grid row (an inline style, so CSS cannot change it): use two rows
            self.styles.grid_size_columns = TWO_ROW_COLUMNS
