"""Keys a k9s/htop/lazygit user reaches for (issue 34, section 4), in the real app: j/k and g/G in every list and
pane, a column picker for sorting, ctrl+c quits from the dashboard."""

from __future__ import annotations

from pathlib import Path

from textual.containers import VerticalScroll
from textual.widgets import DataTable, OptionList

from tui.feed import frozen_demo_app

from .helpers import shown, table, until

DEMO = "3f2a9c01"


async def test_j_k_g_G_move_in_every_list_and_pane(tmp_path: Path) -> None:
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: shown(app, DEMO), what="demo shown")
        tools = table(app, DEMO)
        tools.focus()
        await pilot.press("j", "j")
        assert tools.cursor_row == 2
        await pilot.press("k")
        assert tools.cursor_row == 1
        await pilot.press("G")
        assert tools.cursor_row == 5  # the demo session has six tools
        await pilot.press("g")
        assert tools.cursor_row == 0
        for key, selector in (("l", "#events"), ("w", "#tools")):
            await pilot.press(key)
            await until(pilot, lambda: app.screen.query(selector), what=f"view {key}")
            rows = app.screen.query_one(selector, DataTable)
            await until(pilot, lambda: rows.row_count > 2, what=f"rows in {key}")
            await pilot.press("g")
            start = rows.cursor_row
            await pilot.press("j")
            assert rows.cursor_row == start + 1, key
            await pilot.press("k")
            assert rows.cursor_row == start, key
            await pilot.press("G")
            assert rows.cursor_row == rows.row_count - 1, key
            await pilot.press("g")
            assert rows.cursor_row == 0, key
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is app.dashboard, what="back")
        await pilot.press("question_mark")
        await until(pilot, lambda: app.screen.query(VerticalScroll), what="help")
        pane = app.screen.query_one(VerticalScroll)
        await pilot.press("j", "j", "j")
        await until(pilot, lambda: pane.scroll_y > 0, what="j scrolls the help")
        await pilot.press("G")
        await until(pilot, lambda: pane.scroll_y == pane.max_scroll_y, what="G: the end of the help")
        await pilot.press("g")
        await until(pilot, lambda: pane.scroll_y == 0, what="g: its top")


async def test_sort_by_any_column_in_one_pick(tmp_path: Path) -> None:
    """Issue 34: the only way to sort by schema was ten presses of `s`. `o` (or `>`) opens a column picker."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: shown(app, DEMO), what="demo shown")
        await pilot.press("o")
        await until(pilot, lambda: app.screen.query(OptionList), what="the picker")
        picker = app.screen.query_one(OptionList)
        assert picker.highlighted == 0  # the current sort: tool
        await pilot.press("G", "enter")  # the last column: schema
        await until(pilot, lambda: app.dashboard.sort_key == "schema", what="sorted by schema")
        assert app.screen is app.dashboard and table(app, DEMO).sort_key == "schema"
        await pilot.press("greater_than_sign")
        await until(pilot, lambda: app.screen.query(OptionList), what="the picker again")
        await pilot.press("k", "enter")  # one up from schema: tokens
        await until(pilot, lambda: app.dashboard.sort_key == "tokens", what="sorted by tokens")
        await pilot.press("o", "escape")
        await until(pilot, lambda: app.screen is app.dashboard, what="esc keeps the sort")
        assert app.dashboard.sort_key == "tokens"


async def test_ctrl_c_quits_from_the_dashboard(tmp_path: Path) -> None:
    """Issue 34: ctrl+c said "press ctrl+q to quit"; htop and k9s quit on it."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: shown(app, DEMO), what="demo shown")
        table(app, DEMO).focus()
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, what="quit on ctrl+c")


async def test_the_invoke_hint_does_not_ask_for_what_is_on(tmp_path: Path) -> None:
    """Issue 34: started with --allow-invoke, the hint still said "start wmcp-top with --allow-invoke"."""
    from relay_bridge.core import synth

    from .helpers import SID, live_app, open_page, screen_text

    for allow in (False, True):
        app = live_app(tmp_path, relay={"allow_invoke": allow})
        async with app.run_test(size=(120, 36)) as pilot:
            page = await open_page(app)
            await page.send(synth.status(SID, "tools-registered", "Tools registered."))
            await until(pilot, lambda: "x calls the selected tool from here" in screen_text(app), what="the hint")
            assert ("--allow-invoke" in screen_text(app)) is not allow, allow
            await page.close()


async def test_no_color_reverses_the_cursor_row(tmp_path: Path, monkeypatch) -> None:
    """Issue 34: under NO_COLOR the tool table's cursor row was not told apart (the README says reversed)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: shown(app, DEMO), what="demo shown")
        tools = table(app, DEMO)
        tools.focus()
        await pilot.press("j")
        await pilot.pause()

        def reversed_text(y: int) -> str:
            return "".join(s.text for s in tools.render_line(y) if s.style is not None and s.style.reverse)

        cursor_y = tools.cursor_row + 1  # under the header
        name = tools.order[tools.cursor_row]
        assert name in reversed_text(cursor_y), "the cursor row is not reversed"
        assert name not in reversed_text(cursor_y + 1)


async def test_sort_presses_do_not_widen_columns(tmp_path: Path) -> None:
    """Issue 34: each sort press widened its column for the arrow, and the column stayed wide after."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: shown(app, DEMO), what="demo shown")
        tools = table(app, DEMO)
        keys = tools.column_keys
        before = [tools.column_x(k) for k in keys]
        width = tools.virtual_size.width
        for _ in range(len(keys) + 1):  # every column in turn, back to the first
            await pilot.press("s")
            await pilot.pause()
            assert [tools.column_x(k) for k in keys] == before and tools.virtual_size.width == width, tools.sort_key
            label = tools.header_label(tools.sort_key)
            assert label.endswith(("▲", "▼")) and len(label) <= max(len(tools.sort_key), tools._widths.get(tools.sort_key, 0)) + 1
        header = "".join(s.text for s in tools.render_line(0))
        assert header.rstrip().endswith(tools.header_label(keys[-1]) if tools.sort_key == keys[-1] else "schema")


async def test_no_footer_is_clipped_at_80_or_100_columns(tmp_path: Path) -> None:
    """Issue 34: the views' one-row footers cut `i Inspect`, `w Schemas` and `m Prompts` at 80 and 100 columns."""
    from .helpers import screen_text

    for size in ((80, 24), (100, 30)):
        app = frozen_demo_app(30.0, export_dir=tmp_path)
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: shown(app, DEMO), what="demo shown")
            for key in ("", "d", "l", "w", "m", "i"):
                if key:
                    await pilot.press(key)
                    await until(pilot, lambda: app.screen is not app.dashboard, what=f"view {key}")
                screen = app.screen
                wanted = [b.description for _, b, enabled, _ in screen.active_bindings.values() if b.show and enabled]

                def footer() -> str:
                    return " ".join(screen_text(app).splitlines()[-2:])

                await until(pilot, lambda: all(f" {w} " in f" {footer()} " for w in wanted), what=f"{size} {key or 'dashboard'}: {wanted}")
                if key:
                    await pilot.press("escape")
                    await until(pilot, lambda: app.screen is app.dashboard, what="back")


async def test_a_page_refused_for_its_token_is_said_on_the_main_screen(tmp_path: Path) -> None:
    """Issue 34: after `snippet --rotate-token` a page with the old tag left the dashboard "waiting", unexplained.
    The relay counts token refusals per origin; the first screen, the top bar and `d` say which page."""
    from websockets.exceptions import InvalidStatus

    from relay_bridge.core.store import MAX_REFUSED_ORIGINS
    from tests.liveness import connect

    from .helpers import live_app, screen_text

    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.relay is not None
        url = f"ws://127.0.0.1:{app.relay.port}/relay?t={'0' * 32}"  # the token before a rotation
        for _ in range(2):
            try:
                async with connect(url, origin="https://shop.example"):
                    raise AssertionError("an old token was accepted")
            except InvalidStatus as exc:
                assert exc.response.status_code == 403
        await until(pilot, lambda: "refused for its token: https://shop.example (2×)" in screen_text(app), what="the hint")
        assert "token refused 2" in screen_text(app).splitlines()[0]
        await pilot.press("d")
        await until(pilot, lambda: "refused for its token: https://shop.example (2×)" in screen_text(app), what="status says it")
        # hostile pages inventing origins cannot grow the table: the rest are counted together
        for i in range(MAX_REFUSED_ORIGINS + 5):
            try:
                async with connect(url, origin=f"https://x{i}.example"):
                    pass
            except InvalidStatus:
                pass
        assert len(app.store.token_refusals) == MAX_REFUSED_ORIGINS and app.store.token_refusals["other origins"] >= 5
