"""The session tab row (issue 45): where it scrolls and what its overflow mark says follow from the tabs' widths,
the selected tab and the terminal's width (tui/model/tab_row.py), never from the tabs' places mid-animation or
before the first layout; in the real app, the mark says from the press on where the row will rest."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.message import Message
from textual.widgets import Static

from tui.feed import frozen_demo_app
from tui.model.tab_row import TabRow, out_of_sight, overflow_marker, scroll_to_show, tab_row

from .helpers import drawn_mark, shown_mark, tab_row_at_rest, until

DEMO_TABS = [41, 51, 28, 59]  # the frozen demo's four tabs at 80 columns, in cells


def test_the_mark_names_each_side() -> None:
    assert [overflow_marker(*c) for c in ((0, 3), (2, 0), (1, 2), (0, 0))] == ["+3 ›", "‹ +2", "‹1 2›", ""]


def test_a_tab_cut_by_an_edge_is_out_of_sight_on_that_side() -> None:
    assert out_of_sight([10, 10, 10], 5, 15) == (1, 1)  # [0,10) cut on the left, [20,30) cut on the right
    assert out_of_sight([10, 10, 10], 10, 10) == (1, 1)  # the middle one exactly fills the view
    assert out_of_sight([10, 10, 10], 0, 30) == (0, 0)


def test_the_row_scrolls_to_centre_the_selected_tab_within_its_ends() -> None:
    assert scroll_to_show(DEMO_TABS, 0, 74) == 0  # the first: the row's start
    assert scroll_to_show(DEMO_TABS, 1, 73) == 30  # 41 + 51/2 - 73/2, halves rounded up
    assert scroll_to_show(DEMO_TABS, 3, 73) == 106  # the last: no further than the row's end (179 - 73)
    assert scroll_to_show([10, 100, 10], 1, 50) == 10  # wider than the view: its start in sight
    assert scroll_to_show(DEMO_TABS, None, 73) == 0


def test_the_row_rests_and_marks_from_its_widths_alone() -> None:
    assert [tab_row(DEMO_TABS, i, 80) for i in range(4)] == [
        TabRow(0, 0, 3, "+3 ›", 6),
        TabRow(30, 1, 2, "‹1 2›", 7),
        TabRow(70, 2, 1, "‹2 1›", 7),
        TabRow(105, 3, 0, "‹ +3", 6),
    ]
    assert tab_row(DEMO_TABS, 0, 179) == TabRow(0, 0, 0, "", 0)  # every tab fits: no mark
    # one cell short: the mark takes its 6 cells from the view, and the third tab [92,120) is cut at 114 as well
    assert tab_row(DEMO_TABS, 0, 178) == TabRow(0, 0, 1, "+1 ›", 6)
    assert tab_row(DEMO_TABS, 0, 120) == TabRow(0, 0, 2, "+2 ›", 6)


def test_a_wider_count_gets_a_wider_mark_and_the_view_is_counted_without_it() -> None:
    row = tab_row([5] * 40, 20, 60)
    assert (row.mark, row.mark_width) == ("‹16 15›", 9)
    assert out_of_sight([5] * 40, row.scroll_x, 60 - row.mark_width) == (row.left, row.right)


async def test_the_mark_is_what_the_tabs_places_make_at_rest_after_every_press(tmp_path: Path) -> None:
    """Issue 34: `+4 ›` with 4 sessions, `+3 ›` with the last tab selected (nothing is to its right)."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        marks = []
        for press in ("", "tab", "tab", "tab", "shift+tab"):
            if press:
                await pilot.press(press)
            await until(pilot, lambda: tab_row_at_rest(app), what=f"the row at rest after {press or 'start'}")
            marks.append(drawn_mark(app))
            assert shown_mark(app) == marks[-1]
        assert marks == ["+3 ›", "‹1 2›", "‹2 1›", "‹ +3", "‹2 1›"]


async def test_the_mark_says_where_the_row_will_rest_from_the_press_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It counted the tabs where they were drawn after each refresh of the scroll: `tab` showed `‹1 3›` (the
    tabs mid-way) before `‹1 2›`. Every text the mark is given, from the presses until the row is at rest."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: tab_row_at_rest(app), what="the row at rest")
        mark = app.dashboard.query_one("#more-tabs", Static)
        said: list[str] = []
        update = mark.update

        def heard(text: str) -> None:
            said.append(text)
            update(text)

        monkeypatch.setattr(mark, "update", heard)
        for press in ("tab", "tab", "tab", "shift+tab"):
            await pilot.press(press)
            await until(pilot, lambda: tab_row_at_rest(app), what=f"the row at rest after {press}")
        assert said == ["‹1 2›", "‹2 1›", "‹ +3", "‹2 1›"]


async def test_a_tab_pressed_before_the_first_layout_is_scrolled_into_view(tmp_path: Path) -> None:
    """Textual scrolls to a tab from where it is laid out: pressed before the row had a layout, nothing moved (a
    loaded check's picture said `+3 ›` for `‹1 2›`). Here `tab` is handled as soon as the fourth tab is mounted."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    early: dict[str, object] = {}

    def press() -> None:
        row = app.dashboard.tabs
        early["laid out"] = row.query_one("#tabs-scroll").size.width > 0
        app.dashboard.action_next_session()  # what `tab` does
        early["mark"] = shown_mark(app)

    def heard(message: Message) -> None:
        every_tab = isinstance(message, events.Mount) and app.screen_stack and len(app.dashboard.query("#tabs-list > Tab")) == 4
        if every_tab and "armed" not in early:
            early["armed"] = True
            app.call_later(press)

    async with app.run_test(size=(80, 24), message_hook=heard) as pilot:
        await until(pilot, lambda: "mark" in early and tab_row_at_rest(app), what="the row at rest")
        assert early == {"armed": True, "laid out": False, "mark": "‹1 2›"}, "pressed with no layout yet, the mark says where it will rest"
        row, selected = app.dashboard.tabs, app.dashboard.tabs.active_tab
        assert selected is not None and selected.id == "s-7b0d4e22"
        assert row.region.x <= selected.region.x and selected.region.right <= row.region.right, "the selected tab in view"
        assert drawn_mark(app) == "‹1 2›"
