"""`update_rows` (tui/widgets/relayout.py): a new text that takes the rows the old one took is drawn without a
layout pass of the screen; one that takes more or fewer rows is laid out, and the widget's height follows it."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from tui.widgets.relayout import update_rows


class OneLine(App[None]):
    CSS = "Static { width: 20; height: auto; }"

    def compose(self) -> ComposeResult:
        yield Static("")


async def test_a_layout_pass_only_when_the_rows_change() -> None:
    app = OneLine()
    async with app.run_test(size=(40, 10)) as pilot:
        widget = app.query_one(Static)
        await pilot.pause()
        rows = update_rows(widget, "12 calls", 0)
        assert rows == 1
        await pilot.pause()
        assert widget.region.height == 1

        rows = update_rows(widget, "13 calls", rows)  # a new number, the same one row
        assert rows == 1 and not widget._layout_required

        rows = update_rows(widget, "13 calls · 4.2 KB · 120 ms", rows)  # wraps onto a second row at 20 cells
        assert rows == 2 and widget._layout_required
        await pilot.pause()
        assert widget.region.height == 2 and "120 ms" in widget.visual.plain

        rows = update_rows(widget, "14 calls", rows)
        await pilot.pause()
        assert rows == 1 and widget.region.height == 1
