"""What a repaint costs is what changed (issue 16 item 2): the sparklines are drawn as Textual draws them but
from lines kept until the data moves, and a sort key press draws no tool row again."""

from __future__ import annotations

import random
from pathlib import Path

from rich.color import Color
from rich.console import Console
from rich.segment import Segment
from textual.renderables.sparkline import Sparkline as TextualSparkline

from tui.feed import frozen_demo_app
from tui.widgets.spark_bars import SparkBars, bar_rows, blend
from tui.widgets.tool_table import ToolTable


def _textual_cells(data: list[float], width: int, height: int) -> list[list[tuple[str, tuple[int, int, int] | None]]]:
    """Textual's own sparkline renderable, cell by cell: (character, colour or None for a blank)."""
    low, high = Color.from_rgb(10, 20, 30), Color.from_rgb(200, 100, 50)
    spark = TextualSparkline(data, width=width, height=height, min_color=low, max_color=high)
    console = Console(width=width, color_system="truecolor", legacy_windows=False)
    lines = list(Segment.split_lines(console.render(spark, console.options.update(width=width, height=height))))
    out = []
    for line in lines:
        cells: list[tuple[str, tuple[int, int, int] | None]] = []
        for seg in line:
            color = seg.style.color.triplet if seg.style is not None and seg.style.color is not None else None
            cells.extend((ch, (color[0], color[1], color[2]) if color is not None else None) for ch in seg.text)
        out.append(cells + [(" ", None)] * (width - len(cells)))  # an empty line is blank to the widget's width
    return out


def test_spark_bars_draw_what_textuals_sparkline_draws() -> None:
    low, high = Color.from_rgb(10, 20, 30), Color.from_rgb(200, 100, 50)
    rng = random.Random(16)
    cases = [[], [5.0], [1.0, 1.0, 1.0], [0.0, 10.0]] + [[rng.uniform(0, 500) for _ in range(rng.randrange(2, 90))] for _ in range(40)]
    for data in cases:
        for width, height in ((7, 1), (40, 2), (61, 2), (100, 3)):
            ours = [[(ch, tuple(blend(low, high, r).triplet) if r is not None else None) for ch, r in line] for line in bar_rows(data, width, height)]
            assert ours == _textual_cells(data, width, height), (data, width, height)


async def test_spark_bars_keep_their_lines_until_the_data_moves(tmp_path: Path) -> None:
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        bars = app.query_one("#walls", SparkBars)
        drawn = bars.render_line(0)
        assert bars.render_line(0) is drawn, "a repaint of the same data is the kept line"
        bars.set_data(bars.data)
        assert bars.render_line(0) is drawn, "the same data again draws nothing"
        bars.set_data((*bars.data, bars.data[-1] * 10 + 1))
        assert bars.render_line(0) is not drawn


async def test_a_sort_key_press_draws_no_tool_row_again(tmp_path: Path) -> None:
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        table = app.query_one(ToolTable)
        assert table.row_count >= 4
        keys = len(table.columns_now())
        for _ in range(keys):  # once round every column: each has had the sort arrow's room
            await pilot.press("s")
        await pilot.pause()
        drawn: list[str] = []
        draw = table._draw

        def counting(cells, style, over=None):
            drawn.append("cursor" if over is not None else "row")
            return draw(cells, style, over)

        table._draw = counting  # type: ignore[method-assign]  # replaced on purpose: the test counts the calls
        for _ in range(keys):
            order = table.order
            await pilot.press("s")
            await pilot.pause()
        assert table.order != order or keys == 1
        # every press drew the header and the cursor's line; no other row was drawn again
        assert drawn.count("row") <= keys, drawn


def _cells(strips: list) -> list[list[tuple[str, object]]]:
    """Strips as (character, style) cells, so two drawings compare whatever their segments' boundaries."""
    return [[(ch, seg.style) for seg in strip for ch in seg.text] for strip in strips]


async def test_the_tables_direct_lines_are_what_textuals_styles_cache_draws(tmp_path: Path) -> None:
    from textual.geometry import Region
    from textual.scroll_view import ScrollView

    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(72, 40)) as pilot:  # narrow: the table scrolls sideways
        await pilot.pause()
        table = app.query_one(ToolTable)
        assert table._plain_box(), "the dashboard's table has no gutter: it draws its own lines"
        table.set_columns_layout("full")  # frozen: nothing shows the session again to narrow it
        await pilot.pause()
        width, height = table.size
        assert table.virtual_size.width > width, "the check needs a table wider than its view"
        for scroll_x in (0, 7):
            table.scroll_to(x=scroll_x, animate=False, immediate=True)
            await pilot.pause()
            table.move_cursor(row=1)
            for crop in (Region(0, 0, width, height), Region(3, 1, width - 10, 4), Region(0, height - 3, width, 3)):
                ours = table.render_lines(crop)
                table._styles_cache.clear()
                theirs = ScrollView.render_lines(table, crop)
                assert len(ours) == len(theirs) == crop.height
                assert _cells(ours) == _cells(theirs), (scroll_x, crop)
        table.styles.padding = (0, 1)  # a gutter: Textual's styles cache draws it
        await pilot.pause()
        assert not table._plain_box()
        crop = Region(0, 0, table.size.width, table.size.height)
        assert _cells(table.render_lines(crop)) == _cells(ScrollView.render_lines(table, crop))


async def test_a_row_that_only_moved_is_not_filtered_again(tmp_path: Path) -> None:
    """Textual's truecolor filter rebuilds every segment of a line it meets; a row that moved (a sort press) is
    handed to the compositor as the very strip it filtered before."""
    from textual.geometry import Region

    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        table = app.query_one(ToolTable)
        keys = len(table.columns_now())
        for _ in range(keys):  # once round every column: each has had the sort arrow's room
            await pilot.press("s")
        await pilot.pause()
        crop = Region(0, 0, table.size.width, table.size.height)

        def shown() -> dict[str, object]:
            strips = table.render_lines(crop)
            top = table.scroll_offset.y
            return {key: strips[1 + i - top] for i, key in enumerate(table.order) if top <= i < top + crop.height - 1 and i != table.cursor_row}

        before = shown()
        moved = 0
        for _ in range(keys):
            order = table.order
            await pilot.press("s")
            await pilot.pause()
            now = shown()
            moved += sum(1 for key in now if key in before and order.index(key) != table.order.index(key))
            for key, strip in now.items():
                if key in before:
                    assert strip is before[key], f"{key}: drawn and filtered again after a sort press"
            before.update(now)
        assert moved, "the presses moved rows"
