"""A Ctrl-C while the dashboard starts (tui/starting.py): noted, never raised into Textual's start, and the app
ends once its first screen is up, with the shell's code for a Ctrl-C. The real terminal's case is
tests/lanes/test_interrupt.py."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tui import starting

from .helpers import live_app, until


def test_a_ctrl_c_held_is_noted_not_raised_and_released_once() -> None:
    before = signal.getsignal(signal.SIGINT)
    try:
        starting.hold()
        os.kill(os.getpid(), signal.SIGINT)  # raised here, it would fail the test with KeyboardInterrupt
        assert starting.release() is True
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "Python's usual handling again"
        assert starting.release() is False, "told once"
    finally:
        signal.signal(signal.SIGINT, before)


async def test_the_app_started_through_a_ctrl_c_ends_with_130_once_its_screen_is_up(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGINT)
    app = live_app(tmp_path)
    try:
        starting.hold()
        os.kill(os.getpid(), signal.SIGINT)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: not app.is_running or app.return_code is not None, what="the app's end")
        assert app.return_code == 130  # and its screen mounted whole: run_test raises what a handler raised
    finally:
        signal.signal(signal.SIGINT, before)
