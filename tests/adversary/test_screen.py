"""What shows on screen (the real app, App.run_test): a session log that cannot be written is said in the status
view and so is its recovery; refusals of a socket's frames for a session it does not own are shown as that; a
page-chosen visibility shows inert."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from relay_bridge.core import synth
from tests.liveness import LIVENESS_S
from tests.tui.helpers import SID, live_app, open_page, screen_text, shown, spans, until
from tui.screens.status import StatusScreen


async def test_the_status_view_says_when_the_log_cannot_be_written_and_when_it_can_again(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    app = live_app(tmp_path, relay={"log_dir": logs})
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: app.relay is not None and app.relay.port, what="relay")
        shutil.rmtree(logs)
        logs.write_text("a file where the log directory was")  # the log cannot open its first part
        page = await open_page(app, SID)
        await page.send(spans(SID, "search", 0, 3))
        thief = await open_page(app, "7e1ef000", tools=())
        await thief.send({"type": "bye", "session": SID, "reason": "forged"})
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), what="status")
        await until(pilot, lambda: "session log: CANNOT WRITE" in screen_text(app), what="the log's error")
        assert "refused:not_owner 1" in screen_text(app)
        logs.unlink()
        logs.mkdir()
        await until(pilot, lambda: "session log: writing again" in screen_text(app), timeout=LIVENESS_S, what="the recovery")
        written = [json.loads(line) for f in logs.glob("session-*.jsonl") for line in f.read_text().splitlines()]
        assert any(rec.get("f", {}).get("type") == "spans" for rec in written), "what waited in memory was written"
        await page.close()
        await thief.close()


async def test_the_status_view_shows_a_page_chosen_visibility_inert(tmp_path: Path) -> None:
    """`visibility` is page text (the hello's field, a `visibility` event's `state`): an OSC 52 in it must not
    reach the terminal as a clipboard write."""
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: app.relay is not None and app.relay.port, what="relay")
        said = await open_page(app, SID, tools=(), visibility="\x1b]52;c;QUJD\x07")
        told = await open_page(app, "7e1ef000", tools=())
        await told.send(synth.event("7e1ef000", 5.0, "visibility", state="\x1b[2J\x9b1m[red]x[/]"))
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen) and "7e1ef000" in screen_text(app), what="status")
        await until(pilot, lambda: "␛[2J\\x9b1m[red]x[/]" in screen_text(app), what="the event's state, inert")
        text = screen_text(app)
        assert "live · ␛]52;c;QUJD␇ · " in text
        assert "\x1b" not in text and "\x9b" not in text
        await said.close()
        await told.close()


async def test_event_detail_keys_are_page_text_and_show_inert(tmp_path: Path) -> None:
    """An event's detail keys come from the page like its values: the timeline's line and the entry's detail show
    them inert (an OSC 52 there must not reach the terminal as a clipboard write)."""
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: app.relay is not None and app.relay.port, what="relay")
        page = await open_page(app, SID, tools=())
        await page.send(synth.event(SID, 5.0, "custom", **{"\x1b]52;c;QUJD\x07": 1, "[red]k[/]": "v"}))
        await until(pilot, lambda: shown(app) and any(e.kind == "custom" for e in app.store.sessions[SID].timeline), what="the event")
        await pilot.press("l")
        await until(pilot, lambda: "␛]52;c;QUJD␇=1" in screen_text(app), what="the key inert in the timeline")
        assert "[red]k[/]=v" in screen_text(app) and "\x1b" not in screen_text(app)
        await pilot.press("home", "enter")  # the event is the oldest entry (the attach is stamped by the relay's clock)
        await until(pilot, lambda: "(esc: back)" in screen_text(app) and "custom  " in screen_text(app), what="the entry's detail")
        text = screen_text(app)
        assert "␛]52;c;QUJD␇" in text and "[red]k[/]" in text and "\x1b" not in text
        await page.close()


async def test_the_status_view_says_when_the_run_s_log_was_capped(tmp_path: Path) -> None:
    app = live_app(tmp_path, relay={"log_dir": tmp_path / "logs"})
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: app.relay is not None and app.relay.port, what="relay")
        log = app.relay.session_log
        log.rotate_bytes, log.run_bytes = 20_000, 60_000  # a flood's gigabyte, in miniature
        page = await open_page(app, SID)
        for n in range(40):
            await page.send(spans(SID, "search", n * 10, 10))
            log.flush()
        await until(pilot, lambda: log.capped_parts > 0, what="the cap")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), what="status")
        await until(pilot, lambda: "session log: run capped at 60000 bytes" in screen_text(app), what="the cap said")
        await page.close()
