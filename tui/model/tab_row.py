"""The session tab row as a function of its state: where it scrolls to and what its overflow mark says.

The dashboard's tabs scroll (animated) to show the selected one. Which tabs are out of sight follows from the
tabs' widths, the selected tab and the row's width, that is from where the scroll will end: never from where the
tabs are on screen while they move or before they are first laid out, which is what made the mark race.
"""

from __future__ import annotations

from dataclasses import dataclass

TAB_GUTTER = 2  # Textual's Tab pads its label by one cell on each side
MARK_GUTTER = 2  # #more-tabs pads its text by one cell on each side (tui/app.tcss)


@dataclass(frozen=True, slots=True)
class TabRow:
    scroll_x: int  # the tabs' scroll offset at rest
    left: int  # tabs wholly or partly out of sight on the left
    right: int  # and on the right
    mark: str  # what #more-tabs says ("": hidden)
    mark_width: int  # its cells, padding included (0: hidden)


def overflow_marker(left: int, right: int) -> str:
    if left and right:
        return f"‹{left} {right}›"
    if right:
        return f"+{right} ›"
    return f"‹ +{left}" if left else ""


def scroll_to_show(widths: list[int], selected: int | None, view: int) -> int:
    """The scroll offset that centres the selected tab in a view `view` cells wide (its start kept in sight when
    it is wider than the view), within what the row can scroll."""
    most = max(0, sum(widths) - view)
    if selected is None or not 0 <= selected < len(widths):
        return 0
    start, width = sum(widths[:selected]), widths[selected]
    goal = start if width >= view else (2 * start + width - view + 1) // 2  # the centre, halves rounded up
    return min(max(goal, 0), most)


def out_of_sight(widths: list[int], scroll_x: int, view: int) -> tuple[int, int]:
    """How many tabs are not wholly inside [scroll_x, scroll_x + view), on the left and on the right."""
    left = right = 0
    start = 0
    for width in widths:
        end = start + width
        if start < scroll_x:
            left += 1
        elif end > scroll_x + view:
            right += 1
        start = end
    return left, right


def tab_row(widths: list[int], selected: int | None, row_width: int) -> TabRow:
    """Where the row of tabs `widths` cells wide rests with tab `selected` chosen in a row `row_width` cells wide,
    and its mark. The mark takes its cells from the tabs' view, so the view is counted with the mark in place;
    a wider count can need a wider mark, so the mark's width grows until it holds its count (it never shrinks:
    a narrower text is padded), which ends within a few steps."""
    if sum(widths) <= row_width:
        return TabRow(0, 0, 0, "", 0)
    mark_width = len(overflow_marker(0, 1)) + MARK_GUTTER
    while True:
        view = max(0, row_width - mark_width)
        scroll_x = scroll_to_show(widths, selected, view)
        left, right = out_of_sight(widths, scroll_x, view)
        mark = overflow_marker(left, right)
        if len(mark) + MARK_GUTTER <= mark_width:
            return TabRow(scroll_x, left, right, mark, mark_width)
        mark_width = len(mark) + MARK_GUTTER
