"""A sparkline drawn with the line API: its lines are built once per change of data, size or theme.

It draws what Textual's `Sparkline` draws (the same buckets, bars and colour blend, so it looks the same), but
Textual's goes through a Rich renderable that yields one styled segment per cell on every repaint, and was half
of the dashboard's drawing time. Here a repaint of unchanged data costs a cached `Strip`, and a change builds
each line from runs of cells that share a colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

BARS = "▁▂▃▄▅▆▇█"


def buckets(data: Sequence[float], width: int) -> list[float]:
    """The largest value of each of `width` equal slices of `data` (Textual's partition: empty slices are
    skipped, and the bars then step through the slices that remain)."""
    n = len(data)
    out = []
    for i in range(width):
        part = data[n * i // width : n * (i + 1) // width]  # int(Fraction(n, width) * i), without Fractions
        if part:
            out.append(max(part))
    return out


def bar_rows(data: Sequence[float], width: int, height: int) -> list[list[tuple[str, float | None]]]:
    """Each line of the sparkline, top first, as (character, height ratio) cells; a ratio of None is blank."""
    if width <= 0 or height <= 0:
        return [[] for _ in range(max(0, height))]
    if not data:
        blank: list[tuple[str, float | None]] = [(" ", None)] * width
        bottom: list[tuple[str, float | None]] = [("▁", 0.0)] * width
        return [list(blank) for _ in range(height - 1)] + [bottom]
    if len(data) == 1:
        return [[("█", 1.0)] * width for _ in range(height)]
    low, high = min(data), max(data)
    extent = high - low or 1
    summaries = buckets(data, width)
    step = len(summaries) / width
    levels = len(BARS) * height - 1
    ratios = []
    at = 0.0
    for _ in range(width):  # stepped by adding, as Textual does (its float sums pick the same bucket)
        ratios.append((summaries[int(at)] - low) / extent)
        at += step
    rows: list[list[tuple[str, float | None]]] = []
    for line in reversed(range(height)):
        floor, ceiling = line * len(BARS), (line + 1) * len(BARS)
        cells: list[tuple[str, float | None]] = []
        for ratio in ratios:
            index = int(ratio * levels)
            if index < floor:
                cells.append((" ", None))
            elif index >= ceiling:
                cells.append(("█", ratio))
            else:
                cells.append((BARS[index % len(BARS)], ratio))
        rows.append(cells)
    return rows


def blend(low: RichColor, high: RichColor, ratio: float) -> RichColor:
    if low.triplet is None or high.triplet is None:
        return high
    (r1, g1, b1), (r2, g2, b2) = low.triplet, high.triplet
    return RichColor.from_rgb(r1 + (r2 - r1) * ratio, g1 + (g2 - g1) * ratio, b1 + (b2 - b1) * ratio)


class SparkBars(Widget):
    """Bars of `data` (newest last) over the widget's width, coloured from the min colour to the max colour."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"sparkline--max-color", "sparkline--min-color"}
    DEFAULT_CSS = """
    SparkBars { height: 1; }
    SparkBars > .sparkline--max-color { color: $primary; }
    SparkBars > .sparkline--min-color { color: $primary 30%; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.data: tuple[float, ...] = ()
        self._lines: list[Strip] | None = None
        self._drawn_for: tuple[int, int] = (0, 0)

    def set_data(self, data: Sequence[float]) -> None:
        """Show `data`; a repaint happens only when it differs from what is shown."""
        data = tuple(data)
        if data != self.data:
            self.data = data
            self._lines = None
            self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines = None  # a theme change: the colours were blended from the old ones

    def _draw(self, width: int, height: int) -> list[Strip]:
        _, base = self.background_colors
        low = (base + self.get_component_styles("sparkline--min-color").color).rich_color
        high = (base + self.get_component_styles("sparkline--max-color").color).rich_color
        under = self.rich_style
        styles: dict[float, Style] = {}
        lines = []
        for cells in bar_rows(self.data, width, height):
            segments: list[Segment] = []
            run, run_ratio = "", -1.0  # cells of one colour are one segment
            for char, ratio in cells:
                key = -1.0 if ratio is None else ratio
                if key != run_ratio and run:
                    segments.append(Segment(run, styles[run_ratio]))
                    run = ""
                if key not in styles:
                    styles[key] = under if ratio is None else under + Style(color=blend(low, high, ratio))
                run, run_ratio = run + char, key
            if run:
                segments.append(Segment(run, styles[run_ratio]))
            lines.append(Strip(segments, width))
        return lines

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        if self._lines is None or self._drawn_for != (width, height):
            self._lines, self._drawn_for = self._draw(width, height), (width, height)
        return self._lines[y] if 0 <= y < len(self._lines) else Strip.blank(width, self.rich_style)


__all__ = ["SparkBars", "bar_rows", "buckets"]
