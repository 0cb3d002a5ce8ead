"""Issue 17 items 5-8 in the running app: a timeline entry's detail (facts always, payloads only when the page
and the terminal both opted in), clearing the timeline, saying when rows are left out, calls from the terminal
marked, the PAYLOADS badge and the count of registered tools in the top bar."""

from __future__ import annotations

import json
import re
from pathlib import Path

from textual.widgets import DataTable

from relay_bridge.core import synth
from tui.screens.entry_detail import EntryDetailScreen
from tui.screens.timeline import MAX_ROWS, TimelineScreen
from tui.widgets.topbar import TopBar

from .helpers import SID, SID2, live_app, open_page, screen_text, until

CANARY = "CANARY-detail-40c7"


async def open_timeline(app, pilot):
    await until(pilot, lambda: app.selected_session_id == SID, what="the session's tab")
    await pilot.press("l")
    await until(pilot, lambda: isinstance(app.screen, TimelineScreen), what="timeline")
    return app.screen


def rows_of(screen: TimelineScreen) -> list[tuple[str, str]]:
    return [(r.kind, str(r.entry.detail.get("seq")) if r.entry is not None else "") for r in screen._rows]


async def open_entry(app, pilot, screen: TimelineScreen, kind: str, seq: int) -> EntryDetailScreen:
    await until(pilot, lambda: (kind, str(seq)) in rows_of(screen), what=f"{kind} #{seq} listed")
    table = screen.query_one("#events", DataTable)
    table.move_cursor(row=rows_of(screen).index((kind, str(seq))))
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, EntryDetailScreen) and "(page clock)" in screen_text(app), what="entry detail painted")
    return app.screen


async def test_payloads_shown_only_with_both_opt_ins_and_never_written(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    app = live_app(tmp_path, relay={"show_payloads": True, "log_dir": logs})
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=("search",))
        await until(pilot, lambda: app.relay.payloads.session == SID, what="the shown session's payloads are held")
        bar = app.query_one(TopBar)
        assert bar.query_one("#payloads").has_class("on"), "a PAYLOADS badge while payloads are shown"
        await page.send({"type": "payload", "session": SID, "seq": 0, "arguments": json.dumps({"q": CANARY}), "result": f"found {CANARY}\nline two"})
        await page.send(
            synth.spans_frame(SID, [synth.span(SID, 0, "search", 100.0, 12.5, result_bytes=2048), synth.span(SID, 1, "search", 200.0, 3.0, gap=87.5)])
        )
        await until(pilot, lambda: SID in app.store.sessions and app.store.sessions[SID].stats.totals.calls == 2, what="spans stored")
        timeline = await open_timeline(app, pilot)
        await open_entry(app, pilot, timeline, "settle", 0)
        text = screen_text(app)
        assert "wallMs" in text and "12.5 ms" in text and "resultBytes" in text and "2.0KB (2048 B)" in text
        assert CANARY in text and "arguments" in text and "result (as the agent read it)" in text and "line two" in text
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is timeline, what="back to the timeline")
        await open_entry(app, pilot, timeline, "settle", 1)
        assert "no payload held for this entry" in screen_text(app), "a call the page sent no payload for says so"
        assert CANARY not in screen_text(app)
        await pilot.press("escape")
        # A Prompt API step: the prompt and the answer, from the page's payload frame for that step.
        ps = f"{SID}-1"
        await page.send(
            {
                "type": "prompt",
                "session": SID,
                "promptSession": ps,
                "kind": "prompt",
                "at": 300.0,
                "seq": 0,
                "totalMs": 40.0,
                "charsIn": 9,
                "charsOut": 14,
            }
        )
        await page.send(
            {"type": "payload", "session": SID, "seq": 0, "promptSession": ps, "arguments": f"Say hi {CANARY}", "result": "Bonjour, world"}
        )
        await until(pilot, lambda: ("prompt", "0") in rows_of(timeline), what="the prompt step listed")
        await open_entry(app, pilot, timeline, "prompt", 0)
        await until(pilot, lambda: "Bonjour, world" in screen_text(app), what="the answer shown")
        assert "prompt" in screen_text(app) and f"Say hi {CANARY}" in screen_text(app)
        await pilot.press("escape")
        # Exports made from the keyboard hold no body.
        await pilot.press("escape")
        for key in ("e", "E", "t"):
            await pilot.press(key)
        await until(pilot, lambda: len(list((tmp_path / "exports").glob("*"))) >= 3, what="exports written")
        await page.close()
    for path in list((tmp_path / "exports").glob("*")) + list(logs.glob("*.jsonl")):
        assert CANARY not in path.read_text(encoding="utf-8"), path.name


async def test_without_show_payloads_the_detail_has_facts_and_says_how_to_see_payloads(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        page = await open_page(app, tools=("search",))
        assert app.relay.payloads is None
        assert not app.query_one(TopBar).query_one("#payloads").has_class("on")
        await page.send({"type": "payload", "session": SID, "seq": 0, "result": f"found {CANARY}"})
        await page.send(
            synth.spans_frame(SID, [synth.span(SID, 0, "search", 100.0, 12.5, is_error=True, error="card declined") | {"errorType": "TypeError"}])
        )
        await until(pilot, lambda: SID in app.store.sessions and app.store.sessions[SID].stats.totals.calls == 1, what="span stored")
        timeline = await open_timeline(app, pilot)
        await open_entry(app, pilot, timeline, "error", 0)
        text = screen_text(app)
        assert "card declined" in text and "TypeError" in text, "the facts are always there"
        assert "payloads are off: start wmcp-top with --show-payloads" in text
        assert CANARY not in text
        await page.close()


async def test_timeline_clear_and_the_row_cap_is_stated(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        page = await open_page(app, tools=("search",))
        n = MAX_ROWS + 50
        await page.send(synth.spans_frame(SID, [synth.span(SID, i, "search", 100.0 + i * 10, 1.0) for i in range(n)]))
        await until(pilot, lambda: SID in app.store.sessions and app.store.sessions[SID].stats.totals.calls == n, what="spans stored")
        timeline = await open_timeline(app, pilot)
        await until(pilot, lambda: f"newest {MAX_ROWS} of" in screen_text(app), what="the cap is stated")
        await pilot.press("ctrl+l")
        await until(pilot, lambda: timeline._rows == [], what="cleared")
        assert "cleared (ctrl+l: show all)" in screen_text(app) and f"newest {MAX_ROWS} of" not in screen_text(app)
        await page.send(synth.spans_frame(SID, [synth.span(SID, n, "search", 100.0 + n * 10, 1.0)]))
        await until(pilot, lambda: ("settle", str(n)) in rows_of(timeline), what="a new entry after the clear")
        assert len(timeline._rows) == 1
        await pilot.press("ctrl+l")
        await until(pilot, lambda: len(timeline._rows) == MAX_ROWS, what="everything again")
        await page.close()


async def test_calls_from_the_terminal_are_marked_and_not_in_the_agents_totals(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        page = await open_page(app, tools=("search",))
        terminal = synth.span(SID, 1, "search", 150.0, 400.0, synthetic=True) | {"invokedBy": "terminal"}
        await page.send(
            synth.start_frame(SID, [(1, "search", 150.0)])
            | {"calls": [{"seq": 1, "tool": "search", "invokedAt": 150.0, "depth": 0, "parent": None, "invokedBy": "terminal"}]}
        )
        await page.send(
            synth.spans_frame(SID, [synth.span(SID, 0, "search", 100.0, 10.0), terminal, synth.span(SID, 2, "search", 700.0, 10.0, gap=590.0)])
        )
        await until(pilot, lambda: SID in app.store.sessions and app.store.sessions[SID].acked == 2, what="spans stored")
        totals = app.store.sessions[SID].stats.totals
        assert totals.calls == 2 and totals.wallMs == 20.0 and totals.hostGapMs == 590.0
        timeline = await open_timeline(app, pilot)
        await until(pilot, lambda: "from the terminal" in screen_text(app), what="terminal call marked")
        marked = [r.kind for r in timeline._rows if "from the terminal" in r.what.plain]
        assert marked == ["start", "settle"]
        await page.close()


async def test_top_bar_counts_the_registered_tools_of_the_shown_session(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        page = await open_page(app, tools=("search", "cart", "pay"))
        other = await open_page(app, sid=SID2, tools=("one",))
        bar = app.query_one(TopBar)
        where = lambda: str(bar.query_one("#where").render())  # noqa: E731
        await until(pilot, lambda: "3 tools" in where(), what="3 tools of the shown session")
        await page.send(synth.tool(SID, "cart", 50.0, change="unregistered"))
        await until(pilot, lambda: "2 tools" in where(), what="a withdrawal counts down")
        await pilot.press("tab")
        await until(pilot, lambda: re.search(r"\b1 tool\b", where()) is not None, what="the other session's count")
        await page.close()
        await other.close()
