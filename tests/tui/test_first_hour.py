"""A user's first hour, second pass (issue 49, points 9 and 10): what the screen draws at 60 and 100 columns, the
compact header, the overflow mark as the docs show it, a screenshot without the notifications, ctrl+c in the
command palette, and `c` under tmux."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.liveness import LIVENESS_S
from tui.feed import frozen_demo_app
from tui.model.tab_row import overflow_marker

from .helpers import at_rest, live_app, screen_text, until

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("size", [(60, 20), (100, 30)])
async def test_the_last_column_holds_no_stray_letter(tmp_path: Path, size: tuple[int, int]) -> None:
    """ "▏^p palettet" (the compact footer's keys showed through the palette key's margin) and "╯e" (the view below
    showed beside the entry detail's box)."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=size) as pilot:
        for keys in ([], ["l"], ["enter"]):  # the dashboard, the timeline, an entry's detail
            await at_rest(pilot, app, keys)
            if keys == ["enter"]:
                await until(pilot, lambda: type(app.screen).__name__ == "EntryDetailScreen", what="the detail")
            lines = screen_text(app).splitlines()
            assert not [line for line in lines if line[-1].isalnum()], (keys, screen_text(app))
            # nor beside a box's right corners: what is below a box shows there
            assert not [line for line in lines if re.search(r"[╮╯]\S", line)], (keys, screen_text(app))


async def test_the_compact_header_keeps_its_counts(tmp_path: Path) -> None:
    """At 60 columns the header was cut after "· 4" (the source's label came first)."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await at_rest(pilot, app)
        assert "4 sessions, 4 live · 6 tools" in screen_text(app).splitlines()[0]


def test_the_docs_show_every_form_of_the_overflow_mark() -> None:
    """The README showed `‹ +N` and `+N ›`; with tabs out of sight on both sides the app shows `‹L R›`."""
    forms = [
        overflow_marker(0, 7).replace("7", "N"),
        overflow_marker(7, 0).replace("7", "N"),
        overflow_marker(5, 7).replace("5", "L").replace("7", "R"),
    ]
    for doc in ("README.md", "docs/terminal.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert all(f"`{form}`" in text for form in forms), (doc, forms)


async def test_a_screenshot_leaves_the_notifications_out(tmp_path: Path) -> None:
    """ctrl+s wrote the toasts on screen into the picture, over the sparklines."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await at_rest(pilot, app)
        app.notify("a toast on screen", timeout=30)  # not a wait: how long the toast shows
        await until(pilot, lambda: "a toast on screen" in screen_text(app), what="the toast shown")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: list(tmp_path.glob("*.svg")), what="the screenshot written")
        [svg] = tmp_path.glob("*.svg")
        drawn = re.sub(r"&#160;", " ", svg.read_text(encoding="utf-8"))
        assert "toast" not in drawn and "6 tools" in drawn
        await until(pilot, lambda: "a toast on screen" in screen_text(app), what="the toast shown again")


async def test_ctrl_c_quits_from_the_command_palette(tmp_path: Path) -> None:
    """Its search box took ctrl+c (copy): nothing happened, where every other screen quits."""
    app = frozen_demo_app(30.0, export_dir=tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await at_rest(pilot, app)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: type(app.screen).__name__ == "CommandPalette", what="the palette")
        await pilot.press("t", "i", "ctrl+c")
        await until(pilot, lambda: not app.is_running, what="quit")


@pytest.fixture
def tmux_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A tmux server of the test's own, named in $TMUX as a session inside it would see it."""
    socket = tmp_path / "tmux.sock"
    subprocess.run(["tmux", "-S", str(socket), "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24"], check=True, timeout=LIVENESS_S)
    monkeypatch.setenv("TMUX", f"{socket},0,0")
    try:
        yield socket
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], check=False, timeout=LIVENESS_S)


async def test_c_under_tmux_puts_the_tag_in_its_buffer(tmp_path: Path, tmux_server: Path) -> None:
    """It said "copied" under tmux, where OSC 52 reaches nothing without `set-clipboard on`."""
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await pilot.press("c")
        # tmux itself may take seconds on a loaded machine (tui/app.py waits up to 15 s for it)
        await until(pilot, lambda: "tmux's paste buffer" in screen_text(app), timeout=LIVENESS_S, what="the toast")
        assert app.relay is not None
        buffer = subprocess.run(["tmux", "-S", str(tmux_server), "show-buffer"], capture_output=True, text=True, timeout=LIVENESS_S).stdout
        assert buffer == app.relay.snippet.script_tag


async def test_c_under_a_tmux_it_cannot_reach_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMUX", f"{tmp_path / 'no-server.sock'},0,0")
    app = live_app(tmp_path)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await pilot.press("c")
        await until(pilot, lambda: "set-clipboard on" in screen_text(app), what="the toast")
        assert "copied" not in screen_text(app)
