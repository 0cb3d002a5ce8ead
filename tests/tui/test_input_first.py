"""Keys before page frames (relay_bridge/relay/hold.py): a key the input thread told the app of holds the
relay's frames until the repaint that shows the key's action; a key bound to nothing holds them no longer than
the hold's own time."""

from __future__ import annotations

from pathlib import Path

from tui.app import WmcpTopApp

from .helpers import cell, live_app, open_page, until


def _held(app: WmcpTopApp) -> bool:
    assert app.relay is not None
    return app.relay.frames.held


async def test_a_bound_key_releases_the_frames_once_its_answer_is_painted(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        page = await open_page(app)
        await until(pilot, lambda: cell(app, "search", "calls") is not None, what="the session's table")
        assert app.relay is not None
        app.input_arrived()
        assert _held(app)
        app.relay.frames.hold(60)  # as the input thread's hold, but long: only the answer can end it here
        await pilot.press("s")  # sort: a binding, so an action
        await until(pilot, lambda: not _held(app), timeout=10, what="the release after the sort's repaint")
        await page.close()


async def test_frames_held_by_an_unbound_key_go_on_after_the_hold_time(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        app.input_arrived()
        assert _held(app)
        await pilot.press("ctrl+y")  # bound to nothing: no action says it was answered
        await until(pilot, lambda: not _held(app), timeout=5, what="the hold running out")
