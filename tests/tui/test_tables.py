"""tui.widgets.tables.fill: a table rebuilt whole is as wide as its cells from the moment it is filled, not from
DataTable's next idle turn (the prompts view drew "2.2" for "2.2K" when it was painted before that turn)."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tui.widgets import tables


class _Table(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()


async def test_a_refilled_table_is_as_wide_as_its_cells_before_any_idle_turn() -> None:
    async with _Table().run_test(size=(60, 8)) as pilot:
        table = pilot.app.query_one(DataTable)
        tables.fill(table, [("kind", "kind"), (Text("out", justify="right"), "out")], [([Text("prompt"), Text("2.2K", justify="right")], None)])
        # Refilled again, as a view does on every change, with no turn of the app in between.
        columns: list[tables.Column] = [("kind", "kind"), (Text("out", justify="right"), "out"), ("error", "error")]
        tables.fill(
            table,
            columns,
            [
                ([Text("stream"), Text("12.5K", justify="right"), Text("AbortError")], "a"),
                ([Text("prompt"), Text("20", justify="right"), Text("")], "b"),
            ],
        )
        assert [(c.width, c.auto_width) for c in table.ordered_columns] == [(6, False), (5, False), (10, False)]
        assert table.row_count == 2 and table.get_row_index("b") == 1
        await pilot.pause()
        line = table.render_line(1).text  # the first row, under the header
        assert "stream" in line and "12.5K" in line and "AbortError" in line, line


async def test_a_header_wider_than_every_cell_sets_the_width() -> None:
    async with _Table().run_test(size=(60, 8)) as pilot:
        table = pilot.app.query_one(DataTable)
        tables.fill(table, [("session", "ps")], [([Text("a")], None)])
        assert [c.width for c in table.ordered_columns] == [len("session")]
