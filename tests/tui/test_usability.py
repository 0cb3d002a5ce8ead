"""Pilot tests of issue 15: the dashboard as a new user meets it (no crash, no false alarm, every view reachable
by keyboard). Each test runs the real app on its own relay, fed over a real socket by tests/tui/helpers.Page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.command import CommandList, CommandPalette
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Static

from relay_bridge.core import synth
from relay_bridge.relay.replay import load_store
from tui.palette import Palette
from tui.screens.dashboard import TICK_INTERVAL
from tui.screens.schemas import SchemasScreen
from tui.widgets.inflight import InFlightPane, inflight_text

from .helpers import ORIGIN_MS, SID, SID2, Heard, cell, has_tab, live_app, open_page, row_keys, screen_text, shown, spans, table, tabs, until


async def test_screenshot_into_an_unusable_export_dir_is_a_toast_not_a_crash(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for bad in (Path("/proc/nope"), a_file, a_file / "below"):
        app = live_app(tmp_path)
        app.export_dir = bad
        heard = Heard()
        async with app.run_test(size=(120, 36), message_hook=heard) as pilot:
            page = await open_page(app)
            await until(pilot, lambda: shown(app), what="session tab")
            for key in ("ctrl+s", "e", "E", "t"):
                await pilot.press(key)
            await until(pilot, lambda: sum(n.severity == "error" for n in heard.notifications) == 4, what="four errors told")
            assert app.is_running and app.relay is not None  # the relay and its sessions stay up
            errors = [n for n in heard.notifications if n.severity == "error"]
            assert any("screenshot" in n.message for n in errors), [n.message for n in errors]
            await page.send(spans(SID, "search", 0, 1))
            await until(pilot, lambda: cell(app, "search", "calls") == "1", what="still live after the failures")
            await page.close()


async def test_two_exports_in_one_second_write_two_files(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    app._stamp = lambda: "20260101-000000"  # type: ignore[method-assign]  # the same second for every export
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 1))
        await until(pilot, lambda: cell(app, "search", "calls") == "1", what="row")
        for key in ("e", "e", "E", "E", "t", "t", "ctrl+s", "ctrl+s"):
            await pilot.press(key)
        await pilot.pause()
        files = sorted(p.name for p in (tmp_path / "exports").iterdir())
        assert files == sorted(
            [
                f"report-{SID}-20260101-000000.json",
                f"report-{SID}-20260101-000000-2.json",
                f"findings-{SID}-20260101-000000.json",
                f"findings-{SID}-20260101-000000-2.json",  # beside each report
                "capture-20260101-000000.json",
                "capture-20260101-000000-2.json",
                "trace-20260101-000000.json",
                "trace-20260101-000000-2.json",
                "wmcp-top-20260101-000000.svg",
                "wmcp-top-20260101-000000-2.svg",
            ]
        ), files
        await page.close()


async def test_exports_with_no_session_say_so_instead_of_writing_an_empty_file(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    heard = Heard()
    async with app.run_test(size=(120, 36), message_hook=heard) as pilot:
        for key in ("E", "t"):
            await pilot.press(key)
        await pilot.pause()
        assert not (tmp_path / "exports").exists() or not any((tmp_path / "exports").iterdir())
        notes = [n.message for n in heard.notifications]
        assert notes.count("no sessions yet: nothing to export") == 2, notes


async def test_a_call_in_flight_ends_with_its_session(tmp_path: Path) -> None:
    now = [ORIGIN_MS + 5_000.0]
    app = live_app(tmp_path, clock=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(synth.start_frame(SID, [(0, "slow", 4_000.0)]))
        pane = lambda: str(app.dashboard.view.query_one(InFlightPane).render())  # noqa: E731
        await until(pilot, lambda: shown(app) and "running 1.00s" in pane(), what="in flight shown")
        await page.send({"type": "bye", "session": SID, "reason": "pagehide"})
        await until(pilot, lambda: "ended with the session" in pane(), what="call ended with its session")
        seen = pane()
        assert "in flight: 0" in seen and "running" not in seen
        now[0] += 20_000.0  # time passes: the ended call does not count on
        await pilot.pause(TICK_INTERVAL * 2)
        assert pane() == seen
        await page.close()


async def test_a_running_call_ticks_on_screen_and_its_timer_lives_only_as_long_as_it(tmp_path: Path) -> None:
    """The running time of a call in flight moves with no frame arriving; the timer that moves it exists only
    while the shown session has calls in flight (an idle dashboard has no timer waking it)."""
    now = [ORIGIN_MS + 5_000.0]
    app = live_app(tmp_path, clock=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "fast", 0, 1))
        await until(pilot, lambda: shown(app) and cell(app, "fast", "calls") == "1", what="a settled call")
        assert app.dashboard._ticker is None
        pane = lambda: str(app.dashboard.view.query_one(InFlightPane).render())  # noqa: E731
        await page.send(synth.start_frame(SID, [(1, "slow", 4_000.0)]))
        await until(pilot, lambda: "running 1.00s" in pane(), what="in flight shown")
        assert app.dashboard._ticker is not None
        now[0] += 2_000.0  # no frame comes: only the ticker can show the new time
        await until(pilot, lambda: "running 3.00s" in pane(), timeout=TICK_INTERVAL * 6, what="the running time ticks on")
        await page.send(spans(SID, "slow", 1, 1))
        await until(pilot, lambda: "running" not in pane(), what="the call settled")
        await until(pilot, lambda: app.dashboard._ticker is None, timeout=TICK_INTERVAL * 4, what="the ticker stopped")
        await page.close()


def test_a_replayed_log_does_not_leave_calls_running(tmp_path: Path) -> None:
    """The log's own times end the call (the page's last word), not the time of the replay."""
    t0 = ORIGIN_MS
    frames = [
        {"t": t0, "c": 1, "open": True},
        {"t": t0 + 1, "c": 1, "f": synth.hello(SID, "https://shop.example", time_origin=t0)},
        {"t": t0 + 1_000, "c": 1, "f": synth.start_frame(SID, [(0, "slow", 1_000.0)])},
        {"t": t0 + 3_500, "c": 1, "f": {"type": "bye", "session": SID, "reason": "pagehide"}},
        {"t": t0 + 3_600, "c": 1, "close": True},
        {"t": t0 + 4_000, "c": 2, "open": True},  # a second page cut by a crash: no bye, no close line
        {"t": t0 + 4_001, "c": 2, "f": synth.hello(SID2, "https://shop.example", time_origin=t0)},
        {"t": t0 + 4_500, "c": 2, "f": synth.start_frame(SID2, [(0, "slow", 4_500.0)])},
        {"t": t0 + 6_000, "c": 2, "f": synth.spans_frame(SID2, [])},
    ]
    log = tmp_path / "run.jsonl"
    log.write_text("".join(json.dumps(f) + "\n" for f in frames))
    store = load_store(log)
    (call,) = store.sessions[SID].inflight.values()
    assert call.ended_at == 3_500.0
    (other,) = store.sessions[SID2].inflight.values()
    assert other.ended_at == 6_000.0
    text = inflight_text(store.sessions[SID], Palette(), lambda: ORIGIN_MS + 257_000.0).plain
    assert "ended with the session after 2.50s" in text and "running" not in text


def header_line(app) -> str:
    """The tool table's header row as shown on screen."""
    lines = screen_text(app).splitlines()
    return next(line for line in lines if " tool" in line and "calls" in line)


async def test_the_sort_arrow_is_always_on_the_sorted_column_with_one_meaning(tmp_path: Path) -> None:
    for size in ((120, 36), (90, 30), (70, 20)):
        app = live_app(tmp_path)
        async with app.run_test(size=size) as pilot:
            page = await open_page(app, tools=("alpha", "beta", "gamma"))
            await page.send(spans(SID, "beta", 0, 12, wall=5))
            await page.send(spans(SID, "gamma", 12, 2, wall=400))
            await until(pilot, lambda: shown(app) and cell(app, "gamma", "calls") == "2", what="rows")
            columns = table(app).column_keys
            for _ in range(len(columns) + 1):
                for _reverse in (False, True):
                    await pilot.pause()
                    seen = header_line(app)
                    assert seen.count("▲") + seen.count("▼") == 1, (size, app.dashboard.sort_key, seen)
                    label = {"err": "err", "tokens": "tokens"}.get(app.dashboard.sort_key, app.dashboard.sort_key)
                    order = row_keys(app)
                    first, last = order[0], order[-1]

                    # The arrow follows its label: after a space when the column has room, else in the gap after it
                    # (a sort press never widens a column).
                    def beside(arrow: str, label: str = label, seen: str = seen) -> bool:
                        return f"{label} {arrow}" in seen or f"{label}{arrow}" in seen

                    if "▲" in seen:  # ascending: smallest (or A) first, on names and numbers alike
                        assert beside("▲") and sort_value(app, first) <= sort_value(app, last), (size, app.dashboard.sort_key, seen, order)
                    else:
                        assert beside("▼") and sort_value(app, first) >= sort_value(app, last), (size, app.dashboard.sort_key, seen, order)
                    await pilot.press("S")
                await pilot.press("s")
            await page.close()


def sort_value(app, tool: str):
    t = table(app)
    return t.cell(tool, app.dashboard.sort_key).sort_value


async def test_the_palette_has_one_working_entry_per_action(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for word in ("Quit", "Screenshot", "Help", "Status"):
            assert len([t for t in titles if t.split(" (")[0] == word]) == 1, (word, titles)
        assert "Quit" not in titles and "Screenshot" not in titles and not any(t.startswith("SVG") for t in titles)
        # the one Screenshot entry, chosen in the real palette, writes the file
        await pilot.press("ctrl+p")
        await pilot.press(*"screenshot")

        def found() -> bool:
            palette: Any = app.screen  # Screen[object] and CommandPalette's Screen[...] do not overlap for mypy
            return isinstance(palette, CommandPalette) and palette.query_one(CommandList).option_count > 0

        await until(pilot, found, what="palette matches")
        await pilot.press("enter")
        await until(pilot, lambda: (tmp_path / "exports").is_dir() and any((tmp_path / "exports").glob("*.svg")), what="screenshot from the palette")


async def test_the_schemas_header_adds_up_to_its_rows(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app, tools=("search", "cart"))
        empty = await open_page(app, sid=SID2, origin="https://other.example", tools=())  # a session with no tools
        await until(pilot, lambda: has_tab(app, SID2) and len(row_keys(app)) == 2, what="tools")
        await pilot.press("w")
        await until(pilot, lambda: getattr(app.screen, "report", None) is not None, what="schemas")
        screen: Any = app.screen
        assert isinstance(screen, SchemasScreen)
        rows = screen.report["tools"]
        s = screen.report["summary"]
        table = screen.query_one("#tools", DataTable)
        seen = [int(table.get_cell_at(Coordinate(i, table.get_column_index("bytes"))).plain) for i in range(table.row_count)]
        assert sum(seen) == sum(r["bytes"] for r in rows) == s["definitionBytes"]
        header = str(screen.query_one("#summary", Static).render())
        assert "2 tools in 1 session (1 more with none)" in header, header
        assert f"{sum(seen)} B of definitions + {s['envelopeBytes']} B envelope = catalog {s['catalogBytes']} B" in header, header
        await page.close()
        await empty.close()


async def test_the_demo_answers_a_call_from_the_terminal_at_once(tmp_path: Path) -> None:
    from relay_bridge.lanes import demo
    from relay_bridge.relay.server import InvokeRefused
    from tui.feed import demo_feed

    app = live_app(tmp_path, relay={"allow_invoke": True}, feed=demo_feed(speed=20.0))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: demo.SHOP in app.store.sessions and "search_products" in app.store.sessions[demo.SHOP].tools, what="demo tools")
        assert app.relay is not None
        # The demo once never answered (the relay's 30 s timeout): 60 s is a hang guard a loaded machine cannot reach.
        result = await app.relay.invoke(demo.SHOP, "search_products", {"query": "bowl"}, timeout=60)
        assert result.ok and result.text is not None and "synthetic" in result.text
        try:
            refused = await app.relay.invoke(demo.SHOP, "no_such_tool", {}, timeout=60)
        except InvokeRefused as exc:  # the relay may refuse first; either way, an answer, not a timeout
            assert "no answer" not in str(exc)
        else:
            assert not refused.ok and "cannot" in (refused.error or "")


async def test_help_status_and_inspector_scroll_by_keyboard(tmp_path: Path) -> None:
    from tui.screens.help import HelpScreen
    from tui.screens.inspector import InspectorScreen
    from tui.screens.status import StatusScreen

    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        pages = [await open_page(app, sid=f"5e55{i:04d}", tools=()) for i in range(4)]
        big = {"type": "object", "properties": {f"field_{i}": {"type": "string", "description": f"field number {i}"} for i in range(30)}}
        await pages[0].send(synth.tool("5e550000", "wide", 10.0, description="a tool with many fields", schema=big))
        await until(pilot, lambda: len(app.dashboard.session_ids()) == 4, what="four sessions")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), what="status")
        assert "5e550003" not in screen_text(app)  # the fourth session is below the fold at 80x24
        await pilot.press("end")
        await until(pilot, lambda: "5e550003" in screen_text(app), what="status scrolled to the end")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.dashboard, what="dashboard")
        tabs(app).active = "s-5e550000"
        await until(pilot, lambda: "wide" in row_keys(app, "5e550000"), what="wide row")
        await pilot.press("i")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen), what="inspector")
        assert "field_29" not in screen_text(app)
        await pilot.press("pagedown", "pagedown", "pagedown", "pagedown", "pagedown", "end")
        await until(pilot, lambda: "field_29" in screen_text(app), what="inspector scrolled to the descriptor's end")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.dashboard, what="dashboard")
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        assert "Themes:" not in screen_text(app)
        await pilot.press("end")
        await until(pilot, lambda: "Themes:" in screen_text(app), what="help scrolled to its end")
        for page in pages:
            await page.close()


LOOKALIKES = [
    "se\u00adarch",
    "\u115fsearch",
    "search\u3164",
    "sea\u180erch",
    "se\u034farch",
    "search\ufe0f",
    "\ufff9search\ufffb",
    "search\U000e0041",
    "\u0301search",
    "search \u0301",
    "search\u00a0",
    "sea\u2028rch",
]


def test_every_invisible_or_ignorable_character_shows_on_screen() -> None:
    from tui.model.sanitize import inert, inert_str

    seen = {inert(name).plain for name in LOOKALIKES}
    assert len(seen) == len(LOOKALIKES) and "search" not in seen
    for name in LOOKALIKES:
        text = inert_str(name)
        assert all((ch.isprintable() and not ch.isspace()) or ch == " " for ch in text), (name, text)
    for fine in ("naïve", "e\u0301", "こんにちは", "क्षि", "Ünïcödé ✓"):
        assert inert_str(fine) == fine  # real letters, accents (composed or not) and scripts pass


async def test_two_tool_names_that_differ_only_invisibly_look_different(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app, tools=("search", "se\u00adarch", "search\ufe0f"))
        await until(pilot, lambda: shown(app) and len(row_keys(app)) == 3, what="three rows")
        seen = [table(app).cell(key, "tool").plain for key in row_keys(app)]
        assert len(set(seen)) == 3 and "se\\u00adarch" in seen and "search\\ufe0f" in seen, seen
        await until(pilot, lambda: "se\\u00adarch" in screen_text(app), what="escape on screen")
        await page.close()


async def test_the_timeline_follows_the_tail_only_from_the_newest_event(tmp_path: Path) -> None:
    from textual.widgets import DataTable as Table

    from tui.screens.timeline import TimelineScreen

    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 10))
        await until(pilot, lambda: cell(app, "search", "calls") == "10", what="rows")
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen), what="timeline")
        events = app.screen.query_one("#events", Table)
        await until(pilot, lambda: events.row_count > 10 and events.cursor_row == events.row_count - 1, what="at the tail")
        await pilot.press("up", "up", "up")
        reading = events.coordinate_to_cell_key(Coordinate(events.cursor_row, 0)).row_key.value
        what = events.get_row(reading)[2].plain
        await page.send(spans(SID, "search", 10, 5, at=5000.0))
        await until(pilot, lambda: events.row_count > 15, what="new events listed")
        assert events.coordinate_to_cell_key(Coordinate(events.cursor_row, 0)).row_key.value == reading  # still reading it
        assert events.get_row_at(events.cursor_row)[2].plain == what
        await pilot.press("end")  # back on the newest event: the tail is followed again
        assert events.cursor_row == events.row_count - 1
        before = events.row_count
        await page.send(spans(SID, "search", 15, 2, at=9000.0))
        await until(pilot, lambda: events.row_count == before + 2, what="more events")
        assert events.cursor_row == events.row_count - 1  # followed the tail
        await page.close()


async def test_timeline_filters_by_number_keys_and_marks_state_without_colour(tmp_path: Path) -> None:
    from tui.screens.timeline import TimelineScreen

    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 2))
        await until(pilot, lambda: cell(app, "search", "calls") == "2", what="rows")
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen), what="timeline")
        screen: Any = app.screen
        assert isinstance(screen, TimelineScreen)
        await until(pilot, lambda: "▐X▌ 1 tools" in screen_text(app) and "▐X▌ 2 calls" in screen_text(app), what="boxes")
        await pilot.press("2")
        await until(pilot, lambda: not screen.shown["calls"], what="calls hidden by key 2")
        await until(pilot, lambda: "▐ ▌ 2 calls" in screen_text(app), what="an unchecked box is blank, not just another colour")
        assert "settle" not in screen_text(app)
        await pilot.press("2")
        await until(pilot, lambda: screen.shown["calls"] and "settle" in screen_text(app), what="calls back")
        await page.close()


async def test_pause_is_one_moment_for_every_view_and_tab(tmp_path: Path) -> None:
    from tui.screens.timeline import TimelineScreen

    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        other = await open_page(app, sid=SID2, origin="https://other.example", tools=("lookup",))
        await other.send(synth.status(SID2, "host-found", "a host is there"))
        await page.send(spans(SID, "search", 0, 5))
        await until(pilot, lambda: shown(app) and cell(app, "search", "calls") == "5", what="five calls")
        await pilot.press("p")
        await page.send(spans(SID, "search", 5, 3, at=2000.0))
        await other.send(synth.status(SID2, "measuring", "measuring calls"))
        session = app.store.sessions[SID]
        await until(pilot, lambda: session.stats.totals.calls == 8 and app.store.sessions[SID2].phase == "measuring", what="recorded")
        assert cell(app, "search", "calls") == "5"  # the table is frozen...
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, TimelineScreen), what="timeline")
        text = screen_text(app)
        assert "#4 search" in text and "#7 search" not in text  # ...and the timeline opened now shows the same moment
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.dashboard, what="dashboard")
        tabs(app).active = f"s-{SID2}"
        await until(pilot, lambda: shown(app, SID2), what="other tab")
        text = screen_text(app)
        assert "host-found" in text and "measuring" not in text  # the other tab too: its phase at the pause
        await pilot.press("p")  # resumed: everything current
        await until(pilot, lambda: "measuring" in screen_text(app), what="other tab current")
        tabs(app).active = f"s-{SID}"
        await until(pilot, lambda: cell(app, "search", "calls") == "8", what="table current")
        await page.close()
        await other.close()


async def test_q_and_esc_go_back_from_every_view_and_q_quits_from_the_dashboard(tmp_path: Path) -> None:
    from textual.widgets import Input

    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await until(pilot, lambda: shown(app) and len(row_keys(app)) == 2, what="rows")
        for key in ("d", "l", "i", "w", "m", "question_mark"):
            for back in ("q", "escape"):
                await pilot.press(key)
                await until(pilot, lambda: app.screen is not app.dashboard, what=f"view {key}")
                await pilot.press(back)
                await until(pilot, lambda: app.screen is app.dashboard, what=f"{back} back from {key}")
                assert app.is_running
        # Esc on the dashboard clears a filter kept with enter
        await pilot.press("slash", "s", "e", "enter")
        await until(pilot, lambda: row_keys(app) == ["search"], what="filtered")
        assert not app.dashboard.query_one("#filter", Input).display
        await pilot.press("escape")
        await until(pilot, lambda: row_keys(app) == ["cart", "search"], what="filter cleared by esc")
        assert app.dashboard.text_filter == ""
        await page.close()
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, what="q quits from the dashboard")


async def test_the_status_view_names_the_session_log_and_an_idle_run_leaves_no_file(tmp_path: Path, monkeypatch) -> None:
    from tui.screens.status import StatusScreen

    logs = tmp_path / "logs"
    idle = live_app(tmp_path, relay={"log_dir": logs})
    async with idle.run_test(size=(200, 50)) as pilot:
        await pilot.press("d")
        await until(pilot, lambda: isinstance(idle.screen, StatusScreen), what="status")
        await until(pilot, lambda: f"session log: nothing written yet (in {logs})" in screen_text(idle), what="no log yet")
    assert not list(logs.glob("*.jsonl"))  # no page came: no empty file

    app = live_app(tmp_path, relay={"log_dir": logs})
    async with app.run_test(size=(200, 50)) as pilot:
        page = await open_page(app)
        assert app.relay is not None and app.relay.session_log is not None
        await until(pilot, lambda: app.relay.session_log.path is not None, what="log written")
        await pilot.press("d")
        await until(pilot, lambda: f"session log: {app.relay.session_log.path}" in screen_text(app), what="log path shown")
        await page.close()

    # the demo logs apart from real runs (their pruning and `replay` of the newest run never mix them)
    from tui.cli import build_parser
    from tui.run import build_app

    monkeypatch.setenv("WMCP_TOP_HOME", str(tmp_path / "home"))
    demo = build_app(build_parser().parse_args(["--demo", "--port", "0"]))
    real = build_app(build_parser().parse_args(["--port", "0"]))
    assert demo.relay_config is not None and real.relay_config is not None
    assert demo.relay_config.log_dir == real.relay_config.log_dir / "demo"


async def test_the_trace_carries_error_text_and_calls_still_in_flight(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        other = await open_page(app, sid=SID2, origin="https://other.example", tools=("lookup",))
        await page.send(spans(SID, "cart", 0, 1, is_error=True, error="RangeError: qty must be at least 1"))
        await page.send(synth.start_frame(SID, [(1, "search", 5_000.0)]))  # still running at export
        await other.send(synth.start_frame(SID2, [(0, "lookup", 2_000.0)]))
        await other.send({"type": "bye", "session": SID2, "reason": "pagehide"})  # ended unsettled
        await until(
            pilot,
            lambda: (
                app.store.sessions[SID].inflight and app.store.sessions[SID2].state == "ended" and app.store.sessions[SID].stats.totals.calls == 1
            ),
            what="state",
        )
        await pilot.press("t")
        await until(pilot, lambda: (tmp_path / "exports").is_dir() and any((tmp_path / "exports").glob("trace-*.json")), what="trace")
        trace = json.loads(next((tmp_path / "exports").glob("trace-*.json")).read_text())
        calls = [e for e in trace["traceEvents"] if e["ph"] in ("X", "B") and e.get("cat") != "gap"]
        error = next(e for e in calls if e["name"] == "cart")
        assert error["cat"] == "error" and error["args"]["error"] == "RangeError: qty must be at least 1"
        running = next(e for e in calls if e["name"] == "search")
        assert running["ph"] == "B" and running["args"]["inFlight"] and "dur" not in running
        assert running["tid"] != error["tid"]  # a lane of its own
        ended = next(e for e in calls if e["name"] == "lookup")
        assert ended["ph"] == "X" and ended["cat"] == "unsettled" and ended["dur"] >= 0
        await page.close()
        await other.close()


async def test_80_columns_show_every_key_and_break_nothing_mid_word(tmp_path: Path) -> None:
    from tui.feed import frozen_demo_app

    for size in ((80, 24), (100, 30), (120, 36)):
        app = frozen_demo_app(30.0, export_dir=tmp_path)
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: shown(app, "3f2a9c01"), what="demo shown")
            keys = ("d Status", "l Timeline", "i Inspect", "w Schemas", "m Prompts", "? Help", "q Quit")
            await until(pilot, lambda: all(k in screen_text(app) for k in keys), what=f"every key at {size}")
            text = screen_text(app)
            assert "host gaps 28.0s" in text, (size, text)  # a label stays with its value
    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "Press c to copy" in screen_text(app), what="first screen")
        lines = screen_text(app).splitlines()
        tag = next(line for line in lines if "<script src=" in line)
        assert tag.rstrip().endswith("…")  # cut, not wrapped: no half a tag on the next line
        assert not any(line.strip().startswith(("cript>", "t>", ")")) for line in lines)


async def test_tabs_name_same_origin_pages_mark_overflow_and_dismiss_ended_sessions(tmp_path: Path) -> None:
    from .helpers import tab_text

    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        a = await open_page(app, title="Cart")
        b = await open_page(app, sid=SID2, title="Checkout")
        others = [await open_page(app, sid=f"e0e0e0{i:02d}", origin=f"https://site{i}.example", title="Other") for i in range(3)]
        await until(pilot, lambda: len(app.dashboard.session_ids()) == 5, what="five tabs")
        # same origin: the page title tells them apart; a single-origin tab needs none
        await until(pilot, lambda: "Cart" in tab_text(app, SID) and "Checkout" in tab_text(app, SID2), what="titles")
        assert "Other" not in tab_text(app, "e0e0e000")
        # five tabs do not fit 80 columns: a marker says how many are out of sight
        await until(pilot, lambda: "›" in screen_text(app).splitlines()[1], what="overflow marker")
        assert "+" in screen_text(app).splitlines()[1]
        # D closes the tabs of ended sessions (not of live ones); the data stays in the store
        await b.send({"type": "bye", "session": SID2, "reason": "pagehide"})
        await others[0].close()
        await until(pilot, lambda: app.store.sessions[SID2].state == "ended" and app.store.sessions["e0e0e000"].state != "live", what="ended")
        await pilot.press("D")
        await until(pilot, lambda: app.dashboard.session_ids() == [SID, "e0e0e001", "e0e0e002"], what="dismissed")
        assert SID2 in app.store.sessions and "e0e0e000" in app.store.sessions
        # the header counts the sessions with a tab (issue 49: it still said five)
        await until(pilot, lambda: "· 3 sessions, 3 live ·" in screen_text(app).splitlines()[0], what="the header's count")
        assert "Cart" not in tab_text(app, SID)  # alone on its origin now
        for page in (a, *others[1:]):
            await page.close()


async def test_hints_offer_the_terminal_action_before_the_console(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(
            synth.status(SID, "measuring", "Measuring tool calls.", hints=["__webmcpPerf.summary() prints the split; .report() returns the document"])
        )
        await until(pilot, lambda: "__webmcpPerf.summary()" in screen_text(app), what="hints")
        lines = screen_text(app).splitlines()
        ours = next(i for i, line in enumerate(lines) if "e writes this session's report" in line)
        console = next(i for i, line in enumerate(lines) if "__webmcpPerf.summary()" in line)
        assert ours < console
        await page.close()


async def test_no_color_is_colourless_not_greyscale(tmp_path: Path, monkeypatch) -> None:
    import re

    from tui.feed import frozen_demo_app

    monkeypatch.setenv("NO_COLOR", "1")
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: shown(app, "3f2a9c01"), what="demo shown")
        svg = app.export_screenshot()
    # the terminal's default foreground and background only (besides the SVG's window buttons): no greys
    window = {"#ff5f57", "#febc2e", "#28c840", "#292929"}
    fills = set(re.findall(r"fill: (#[0-9a-f]{6})", svg)) | set(re.findall(r'fill="(#[0-9a-f]{6})"', svg))
    assert len(fills - window) <= 1, sorted(fills - window)
