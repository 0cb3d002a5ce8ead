"""Pilot tests: the app with its own relay on a real socket, fed by a websockets client as a page agent."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import jsonschema

from relay_bridge.core import synth
from relay_bridge.relay.server import RelayConfig
from tui.app import WmcpTopApp
from tui.widgets.inflight import InFlightPane
from tui.widgets.topbar import TopBar

from .helpers import ORIGIN_MS, SID, SID2, TOKEN, Heard, cell, has_tab, live_app, open_page, row_keys, spans, tab_text, table, until

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "relay_bridge" / "schema" / "report.v2.json").read_text())
FINDINGS = jsonschema.Draft202012Validator(
    json.loads((Path(__file__).resolve().parents[2] / "relay_bridge" / "schema" / "findings.v1.json").read_text()),
    format_checker=jsonschema.FormatChecker(),
)


async def test_first_screen_says_where_the_relay_listens_and_what_to_paste(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        text = str(app.query_one("#waiting").render())
        assert f"127.0.0.1:{app.relay.port}" in text
        assert f'<script src="http://127.0.0.1:{app.relay.port}/agent.js?v=' in text and f'data-wmcp="{TOKEN}"></script>' in text
        assert "local-network access" in text and "connect-src" in text
        await pilot.press("c")
        assert app.clipboard == app.relay.snippet.script_tag


async def test_a_frame_reaches_the_table_on_the_first_refresh_after_it(tmp_path: Path) -> None:
    """Latency by construction, not by a stopwatch (the figure is the load benchmark's frame -> screen p95): after
    a quiet spell the coalescer flushes on the leading edge, and the one refresh that carries the session shows
    the new numbers; no second refresh is needed. A new tool's row comes the same way."""
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await until(pilot, lambda: has_tab(app, SID) and "search" in row_keys(app), what="session and tools")
        assert app.coalescer is not None
        carried: list[set[str]] = []
        app.coalescer.subscribe(lambda dirty, relay: carried.append(set(dirty)))

        async def one_refresh_shows(frame: dict, shown: Callable[[], bool]) -> None:
            await until(pilot, lambda: app.coalescer is not None and app.coalescer.would_flush_at_once(), what="refresh cap clear")
            carried.clear()
            await page.send(frame)
            await until(pilot, shown, what="the frame on screen")
            assert [d for d in carried if SID in d] == [{SID}], "shown by the first refresh that carried the session"

        await one_refresh_shows(spans(SID, "search", 0, 3), lambda: cell(app, "search", "calls") == "3")
        await one_refresh_shows(spans(SID, "brand_new", 3, 1), lambda: "brand_new" in row_keys(app))
        await page.close()


async def test_sort_by_key_reverse_and_header_click(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app, tools=("alpha", "beta", "gamma"))
        await page.send(spans(SID, "beta", 0, 5, wall=5))
        await page.send(spans(SID, "gamma", 5, 2, wall=400))
        await page.send(spans(SID, "alpha", 7, 1, wall=50))
        await until(pilot, lambda: has_tab(app, SID) and cell(app, "alpha", "calls") == "1")
        assert row_keys(app) == ["alpha", "beta", "gamma"]  # by name first
        await pilot.press("s")  # next column: calls, biggest first
        await until(pilot, lambda: row_keys(app) == ["beta", "gamma", "alpha"], what="sorted by calls")
        await pilot.press("S")
        await until(pilot, lambda: row_keys(app) == ["alpha", "gamma", "beta"], what="reversed")
        # A header click sorts by that column: p95, slowest first.
        t = table(app)
        await pilot.click(t, offset=(t.column_x("p95") + 1, 0))
        await until(pilot, lambda: app.dashboard.sort_key == "p95", what="header click")
        assert row_keys(app) == ["gamma", "alpha", "beta"]
        assert "▼" in t.header_label("p95") or "▲" in t.header_label("p95")
        await page.close()


async def test_filter_by_tool_name(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app, tools=("get_cart", "get_product", "checkout"))
        await until(pilot, lambda: has_tab(app, SID) and len(row_keys(app)) == 3)
        await pilot.press("slash")
        await pilot.press(*"get_p")
        await until(pilot, lambda: row_keys(app) == ["get_product"], what="filtered")
        await pilot.press("enter")
        assert row_keys(app) == ["get_product"]
        await page.send(spans(SID, "checkout", 0, 1))  # still filtered as data arrives
        await until(pilot, lambda: app.store.sessions[SID].stats.totals.calls == 1)
        await pilot.pause()
        assert row_keys(app) == ["get_product"]
        await pilot.press("slash")
        await pilot.press("escape")
        await until(pilot, lambda: len(row_keys(app)) == 3, what="filter cleared")
        await page.close()


async def test_pause_freezes_the_screen_while_data_is_recorded(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 2))
        await until(pilot, lambda: has_tab(app, SID) and cell(app, "search", "calls") == "2")
        badge = app.query_one(TopBar).query_one("#paused")
        assert not badge.has_class("on")
        await pilot.press("p")
        assert app.paused and badge.has_class("on") and badge.display
        assert "PAUSED" in str(badge.render())
        await page.send(spans(SID, "search", 2, 5))
        await page.send(spans(SID, "new_tool", 7, 1))
        await until(pilot, lambda: app.store.sessions[SID].stats.totals.calls == 8, what="data recorded while paused")
        await pilot.pause(0.4)  # longer than a refresh interval: the screen must not move
        assert cell(app, "search", "calls") == "2"
        assert "new_tool" not in row_keys(app)
        await pilot.press("p")
        await until(pilot, lambda: cell(app, "search", "calls") == "7" and "new_tool" in row_keys(app), what="resumed")
        assert not badge.has_class("on")
        await page.close()


async def test_session_tabs_switch_by_key_and_by_click(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        a = await open_page(app, SID, "https://shop.example")
        b = await open_page(app, SID2, "https://docs.example", tools=("search_docs",), visibility="hidden")
        await until(pilot, lambda: has_tab(app, SID2) and has_tab(app, SID))
        assert app.selected_session_id == SID
        labels = {sid: tab_text(app, sid) for sid in (SID, SID2)}
        assert labels[SID] == f"shop.example {SID} live"
        assert labels[SID2] == f"docs.example {SID2} hidden"
        await pilot.press("tab")
        assert app.selected_session_id == SID2
        await pilot.press("tab")
        assert app.selected_session_id == SID
        await pilot.press("shift+tab")
        assert app.selected_session_id == SID2
        await pilot.click(f"#s-{SID}")
        await until(pilot, lambda: app.selected_session_id == SID, what="tab click")
        await pilot.press("l")  # over a view, tab belongs to the view (focus), not to the session tabs
        await pilot.press("tab")
        assert app.selected_session_id == SID
        await pilot.press("escape")
        # State words follow the session: a closed socket is `disconnected`, a bye is `ended`.
        await b.close()
        await until(pilot, lambda: tab_text(app, SID2).endswith("disconnected"), what="disconnected label")
        await a.send({"type": "bye", "session": SID, "reason": "pagehide"})
        await until(pilot, lambda: tab_text(app, SID).endswith("ended"), what="ended label")
        await a.close()


async def test_exports_write_files_and_the_report_validates(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    heard = Heard()
    async with app.run_test(size=(120, 36), message_hook=heard) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 4, image_bytes=4000, result_bytes=5000))
        await page.send(spans(SID, "cart", 4, 2, is_error=True, error="boom"))
        await until(pilot, lambda: has_tab(app, SID) and cell(app, "cart", "calls") == "2")
        await pilot.press("e")
        await pilot.press("E")
        await pilot.press("t")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any(p.suffix == ".svg" for p in (tmp_path / "exports").iterdir()), what="the screenshot written")
        files = sorted(p.name for p in (tmp_path / "exports").iterdir())
        reports = [f for f in files if f.startswith(f"report-{SID}-")]
        assert len(reports) == 1 and any(f.startswith("capture-") for f in files) and any(f.startswith("trace-") for f in files)
        # The findings of the same session, beside its report (report v2 is closed), valid under their own schema.
        [findings] = [f for f in files if f.startswith(f"findings-{SID}-")]
        FINDINGS.validate(json.loads((tmp_path / "exports" / findings).read_text()))
        assert any(f.endswith(".svg") for f in files)
        doc = json.loads((tmp_path / "exports" / reports[0]).read_text())
        jsonschema.validate(doc, SCHEMA)
        assert doc["format"] == "webmcp-perf-report/2" and len(doc["spans"]) == 6
        assert {r["tool"]: r["errors"] for r in doc["tools"]} == {"cart": 2, "search": 0}
        trace = json.loads((tmp_path / "exports" / next(f for f in files if f.startswith("trace-"))).read_text())
        assert sum(1 for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] != "gap") == 6
        notes = [n.message for n in heard.notifications]
        assert any(reports[0] in m for m in notes), notes
        await page.close()


async def test_call_in_flight_grows_then_is_replaced_by_its_span(tmp_path: Path) -> None:
    now = [ORIGIN_MS + 5_000.0]
    app = live_app(tmp_path, clock=lambda: now[0])
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await page.send(synth.start_frame(SID, [(0, "search", 4_000.0)]))  # invoked 1 s before "now"
        pane = lambda: str(app.dashboard.view.query_one(InFlightPane).render())  # noqa: E731
        await until(pilot, lambda: has_tab(app, SID) and "running 1.00s" in pane(), what="in flight shown")
        assert "in flight: 1" in pane()
        now[0] += 2_500.0
        await until(pilot, lambda: "running 3.50s" in pane(), what="running time ticks")
        await page.send({"type": "event", "session": SID, "at": 6_000.0, "kind": "toolcancel", "detail": {"seq": 0}})
        await until(pilot, lambda: "cancelled by host" in pane(), what="cancellation marker")
        await page.send(synth.spans_frame(SID, [synth.span(SID, 0, "search", 4_000.0, 3_600.0)]))
        await until(pilot, lambda: "in flight: none" in pane(), what="span replaced the call")
        assert cell(app, "search", "calls") == "1" and cell(app, "search", "p50") == "3.60s"
        await page.close()


HOSTILE_MARKUP = "[bold red]x[/]"
HOSTILE_ESC = "\x1b[31mevil\x1b]0;pwned\x07"


async def test_untrusted_names_render_literally(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app, origin="https://[red]o[/red].example", tools=(HOSTILE_MARKUP, HOSTILE_ESC))
        await page.send(spans(SID, HOSTILE_MARKUP, 0, 1, is_error=True, error="[blink]E[/] \x1b[2J"))
        await page.send(
            {"type": "status", "session": SID, "phase": "measuring", "message": "[reverse]m[/]\x1b[5m", "hints": ["[link=http://x]h[/link]"]}
        )
        await until(pilot, lambda: has_tab(app, SID) and len(row_keys(app)) == 2)
        await pilot.pause()
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\x07" not in svg
        # Rich/Textual markup stays text: the brackets are on screen.
        assert "[bold&#160;red]x[/]" in svg or "[bold red]x[/]" in svg
        assert "␛[31mevil␛]0;pwned␇" in svg
        assert "[red]o[/red].example" in svg
        assert "[reverse]m[/]␛[5m" in svg
        # The cell holds plain text with no style taken from the page.
        name_cell = table(app).cell(HOSTILE_MARKUP, "tool")
        assert name_cell.plain == HOSTILE_MARKUP and not name_cell.spans and not name_cell.style
        # Same in the views: timeline (error message), inspector, status.
        await pilot.press("l")
        await pilot.pause()
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "[blink]E[/]" in svg and "␛[2J" in svg
        await pilot.press("escape")
        await pilot.press("i")
        await pilot.pause()
        svg = app.export_screenshot()
        assert "\x1b" not in svg
        assert "␛[31mevil␛]0;pwned␇" in svg  # the first row (ESC sorts before "[")
        await pilot.press("escape")
        await pilot.press("down")
        await pilot.press("i")
        await pilot.pause()
        svg = app.export_screenshot()
        assert "\x1b" not in svg and ("[bold&#160;red]x[/]" in svg or "[bold red]x[/]" in svg)
        await pilot.press("escape")
        await pilot.press("d")
        await pilot.pause()
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "[link=http://x]h[/link]" in svg
        await page.close()


async def test_port_in_use_is_a_one_line_usage_error(tmp_path: Path) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        app = WmcpTopApp(relay_config=RelayConfig(port=port, token=TOKEN, log_dir=None), export_dir=tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
        assert app.return_code == 2
        assert app.startup_error == f"port {port} is in use (another wmcp-top?); try --port 0"
    finally:
        busy.close()


async def test_compact_layout_at_60x20_says_so(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 2))
        await until(pilot, lambda: has_tab(app, SID) and cell(app, "search", "calls") == "2")
        assert app.compact
        badge = app.query_one(TopBar).query_one("#compact")
        assert badge.has_class("on") and "compact layout" in str(badge.render())
        assert table(app).column_keys == ["tool", "calls", "err", "p50", "p95", "bytes"]
        await pilot.resize_terminal(120, 36)
        await until(pilot, lambda: not app.compact and len(table(app).column_keys) == 11, what="full layout")
        assert cell(app, "search", "calls") == "2"
        await page.close()


async def test_every_action_has_a_palette_command_and_keys_are_remappable(tmp_path: Path) -> None:
    from tui import keys

    keymap = tmp_path / "keymap.toml"
    keymap.write_text('[keys]\n"wmcp.pause" = "x"\n"wmcp.nonsense" = "y"\n')
    app = live_app(tmp_path, keymap_file=keymap)
    async with app.run_test(size=(120, 36)) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for action in keys.ACTIONS:
            if action.scope in ("app", "dashboard") and action.palette:
                assert any(t.startswith(action.description + " (") for t in titles), action.id
        assert any(t == "Theme" or t.startswith("Theme") for t in titles)
        assert any("unknown binding id 'wmcp.nonsense'" in p for p in app.keymap_problems)
        await pilot.press("x")
        assert app.paused
        await pilot.press("p")  # p no longer pauses: remapped
        assert app.paused


async def test_replay_plays_a_capture_in_the_ui(tmp_path: Path) -> None:
    from relay_bridge.exports.capture import build_capture
    from tui.feed import demo_store, replay_feed

    store, _ = demo_store(20.0)
    path = tmp_path / "capture.json"
    path.write_text(json.dumps(build_capture(store, generated_at=ORIGIN_MS)))
    app = WmcpTopApp(feed=replay_feed(path, 0.0), export_dir=tmp_path, source_label="replay capture.json")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: len(app.dashboard.session_ids()) == 4, what="four sessions replayed")
        shop = next(iter(store.sessions))
        await until(pilot, lambda: cell(app, "get_product", "calls", shop) == str(store.sessions[shop].stats.tools["get_product"].calls))
        assert app.store.sessions[shop].stats.summary() == store.sessions[shop].stats.summary()


async def test_at_80_columns_the_table_fits_without_sideways_scrolling(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        page = await open_page(app, tools=("search_products", "get_product"))
        await page.send(spans(SID, "search_products", 0, 3))
        await until(pilot, lambda: has_tab(app, SID) and cell(app, "search_products", "calls") == "3")
        t = table(app)
        assert t.column_keys == ["tool", "calls", "err", "p50", "p95", "blocking", "bytes", "tokens", "schema"]
        assert t.virtual_size.width <= t.scrollable_content_region.width, "the narrow table still scrolls sideways"
        await pilot.resize_terminal(120, 36)
        await until(pilot, lambda: "min" in table(app).column_keys, what="full table at 120 columns")
        await page.close()


async def test_paused_exports_are_the_moment_on_screen(tmp_path: Path) -> None:
    """Issue 34: `p` then `e` exported live data (80 calls) while the screen showed 75; now e/E/t write the
    paused moment and the notice says so."""
    app = live_app(tmp_path)
    notes: list[str] = []
    async with app.run_test(size=(120, 36), message_hook=lambda m: notes.append(str(getattr(m, "notification", "")))) as pilot:
        page = await open_page(app)
        await page.send(spans(SID, "search", 0, 2))
        await until(pilot, lambda: has_tab(app, SID) and cell(app, "search", "calls") == "2")
        await pilot.press("p")
        await page.send(spans(SID, "search", 2, 5))
        await until(pilot, lambda: app.store.sessions[SID].stats.totals.calls == 7, what="data recorded while paused")
        report, capture, trace = app.action_export_report(), app.action_export_capture(), app.action_export_trace()
        assert report and capture and trace
        assert json.loads(report.read_text())["tools"][0]["calls"] == 2
        assert json.loads(capture.read_text())["sessions"][0]["report"]["tools"][0]["calls"] == 2
        assert sum(1 for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X" and e.get("name") == "search") == 2
        # report, its findings beside it, capture, trace
        await until(pilot, lambda: sum("(the paused moment, as shown)" in n for n in notes) == 4, what="the notices say so")
        await pilot.press("p")
        live = app.action_export_report()
        assert live and json.loads(live.read_text())["tools"][0]["calls"] == 7 and "paused" not in notes[-1]
        await page.close()
