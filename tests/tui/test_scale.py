"""The dashboard's cost follows the screen: hidden sessions have no widgets, a session with 10,000 tools shows
its top rows and says how many are hidden, and `/` reaches the rest (issues 16 and 11 item 6)."""

from __future__ import annotations

from pathlib import Path

from relay_bridge.core import synth
from relay_bridge.core.budget import MAX_TOOL_ROWS
from tests.liveness import LIVENESS_S
from tui.screens.dashboard import DashboardScreen
from tui.widgets.session_pane import ROWS_MAX
from tui.widgets.sparklines import Sparklines
from tui.widgets.tool_table import ToolTable

from .helpers import SID, SID2, cell, has_tab, live_app, open_page, row_keys, screen_text, shown, table, tabs, until

SID3 = "3c3c3c3c"


async def test_one_session_view_serves_every_tab(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        assert isinstance(app.screen_stack[0], DashboardScreen)  # the dashboard is the app's default screen
        pages = [await open_page(app, sid, f"https://site{i}.example") for i, sid in enumerate((SID, SID2, SID3))]
        await pages[1].send(synth.spans_frame(SID2, [synth.span(SID2, 0, "cart", 100.0, 7.0)]))
        await until(pilot, lambda: all(has_tab(app, s) for s in (SID, SID2, SID3)) and "search" in row_keys(app), what="three tabs")
        # hidden sessions have no widgets of their own: one table and one pair of sparklines, whatever the count
        assert len(app.query(ToolTable)) == 1 and len(app.query(Sparklines)) == 1
        tabs(app).active = f"s-{SID2}"
        await until(pilot, lambda: cell(app, "cart", "calls", SID2) == "1", what="the other session's numbers")
        assert len(app.query(ToolTable)) == 1
        for page in pages:
            await page.close()


async def test_ten_thousand_tool_names_show_the_top_rows_and_the_filter_reaches_the_rest(tmp_path: Path) -> None:
    """10,000 spans, each of its own tool (under MAX_TOOL_ROWS, issue 11's cap): the relay keeps every row; the
    table holds the top ROWS_MAX of them and says how many more there are."""
    app = live_app(tmp_path, relay={"buffer": 500})
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app, tools=())
        seq = 0
        for _ in range(20):  # 20 frames of 500
            batch = [synth.span(SID, s, f"tool_{s:05d}", 100.0 + s, 1.0 + s % 97, gap=1.0) for s in range(seq, seq + 500)]
            await page.send(synth.spans_frame(SID, batch))
            seq += 500
        kept = 10_000
        assert kept <= MAX_TOOL_ROWS
        session = lambda: app.store.sessions.get(SID)  # noqa: E731
        await until(
            pilot,
            lambda: session() is not None and session().counters.spans >= kept and len(session().stats.tools) == kept,
            timeout=LIVENESS_S,
            what="the tool rows the relay keeps",
        )
        await until(pilot, lambda: shown(app) and f"of {kept:,} by tool" in screen_text(app), timeout=LIVENESS_S, what="the hidden-rows line")
        assert table(app).row_count == ROWS_MAX
        text = screen_text(app)
        assert f"{kept - ROWS_MAX:,} more tools not shown: the first {ROWS_MAX} of {kept:,} by tool" in text
        assert row_keys(app)[:2] == ["tool_00000", "tool_00001"]
        await pilot.press("s")  # by calls (all 1), then the next keys move on to the numbers
        await pilot.press("s", "s", "s")  # p50: the slowest first, among the spans still in the 500-span ring
        ring = {span.tool for span in session().stats.ring.values()}
        slowest = {name for name in ring if int(name[5:]) % 97 == 96}  # wall 97 ms
        await until(pilot, lambda: app.dashboard.sort_key == "p50" and set(row_keys(app)[: len(slowest)]) == slowest, what="re-sorted top rows")
        assert cell(app, row_keys(app)[0], "p50") == "97ms"
        last = f"tool_{kept - 1:05d}"
        await pilot.press("slash", *last, "enter")
        await until(pilot, lambda: row_keys(app) == [last], what="the filter reaches a hidden tool")
        assert cell(app, last, "calls") == "1"
        assert "more tools not shown" not in screen_text(app)
        await page.close()
