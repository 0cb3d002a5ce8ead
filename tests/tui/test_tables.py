"""tui.widgets.tables: a table rebuilt whole is as wide as its cells from the moment it is filled, not from
DataTable's next idle turn (the prompts view drew "2.2" for "2.2K" when it was painted before that turn); a
cursor moved among rows not measured yet is in view once they are."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tests.tui.helpers import until
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


class _Unmeasured(tables.Table):
    """Its rows stay unmeasured while `held`: the idle turn that measures them comes after the next refresh, as
    it can on a busy app."""

    held = True

    async def _on_idle(self, event: events.Idle) -> None:
        if self.held:
            event.prevent_default()  # DataTable's own idle handler (the measure) is not run


class _Plain(DataTable[Text]):
    held = True

    async def _on_idle(self, event: events.Idle) -> None:
        if self.held:
            event.prevent_default()


class _Tail(App[None]):
    def __init__(self, table: DataTable[Text]) -> None:
        super().__init__()
        self.table = table

    def compose(self) -> ComposeResult:
        yield self.table


async def _tail_after_late_measure(table: _Unmeasured | _Plain) -> tuple[float, float]:
    async with _Tail(table).run_test(size=(40, 8)) as pilot:
        table.add_column("n", key="n")
        table.add_rows([Text(str(i))] for i in range(50))
        table.move_cursor(row=49)
        scrolled: list[bool] = []
        table.call_after_refresh(scrolled.append, True)  # after the scrolls move_cursor asked for
        await until(pilot, lambda: scrolled, what="the scroll asked for after the refresh, run on rows not measured")
        assert table.scroll_y == 0
        table.held = False
        table.call_later(table.refresh)  # a message, then an idle turn: the rows are measured
        await until(pilot, lambda: table.virtual_size.height > 50, what="the rows measured")
        return table.scroll_y, table.max_scroll_y


async def test_the_cursor_is_in_view_once_rows_measured_after_the_refresh_are() -> None:
    """The timeline opens on its newest entry even when the table measures its rows after the scroll to it."""
    scroll_y, most = await _tail_after_late_measure(_Unmeasured(cursor_type="row"))
    assert scroll_y == most > 0
    # The same order on Textual's own table leaves it at the top: the test reproduces the race it guards.
    scroll_y, most = await _tail_after_late_measure(_Plain(cursor_type="row"))
    assert scroll_y == 0 < most


async def test_a_reader_scrolled_away_stays_where_they_are_when_rows_come() -> None:
    """A scroll asked for is taken once: rows rebuilt to the same size and then a new row do not pull a reader who
    scrolled away (mouse wheel) back to the cursor."""
    table = tables.Table(cursor_type="row")

    async def settled(what: str) -> None:
        done: list[bool] = []
        table.call_after_refresh(done.append, True)
        await until(pilot, lambda: done and not table._require_update_dimensions, what=what)

    rows: list[tables.Row] = [([Text(str(i))], str(i)) for i in range(50)]
    async with _Tail(table).run_test(size=(40, 8)) as pilot:
        tables.fill(table, [("n", "n")], rows)
        table.move_cursor(row=49)
        await settled("the first rows measured")
        tables.fill(table, [("n", "n")], rows)  # the same rows again: the table's size does not change
        table.move_cursor(row=49)
        await settled("the rows measured again")
        assert table.scroll_y == table.max_scroll_y > 0
        table.scroll_to(y=0, animate=False, immediate=True)
        table.add_row(Text("50"), key="50")
        await settled("the new row measured")
        assert table.scroll_y == 0
