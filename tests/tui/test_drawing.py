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
            cells.extend((ch, tuple(color) if color is not None else None) for ch in seg.text)
        out.append(cells + [(" ", None)] * (width - len(cells)))  # an empty line is blank to the widget's width
    return out


def test_spark_bars_draw_what_textuals_sparkline_draws() -> None:
    low, high = Color.from_rgb(10, 20, 30), Color.from_rgb(200, 100, 50)
    rng = random.Random(16)
    cases = [[], [5.0], [1.0, 1.0, 1.0], [0.0, 10.0]] + [[rng.uniform(0, 500) for _ in range(rng.randrange(2, 90))] for _ in range(40)]
    for data in cases:
        for width, height in ((7, 1), (40, 2), (61, 2), (100, 3)):
            ours = [[(ch, tuple(blend(low, high, r).triplet) if r is not None else None) for ch, r in line]
                    for line in bar_rows(data, width, height)]
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
        bars.set_data(bars.data + (bars.data[-1] * 10 + 1,))
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

        def counting(cells, style, over=None):  # type: ignore[no-untyped-def]
            drawn.append("cursor" if over is not None else "row")
            return draw(cells, style, over)

        table._draw = counting  # type: ignore[method-assign]
        for _ in range(keys):
            order = table.order
            await pilot.press("s")
            await pilot.pause()
        assert table.order != order or keys == 1
        # every press drew the header and the cursor's line; no other row was drawn again
        assert drawn.count("row") <= keys, drawn
