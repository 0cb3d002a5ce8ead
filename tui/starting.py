"""Ctrl-C while the dashboard starts. Until the command runs, tui.__main__ ends the program at once on a Ctrl-C;
the headless commands then take it as KeyboardInterrupt (tui.cli.started). The dashboard's own start (Textual's
imports and its driver taking the terminal) would take it as a KeyboardInterrupt raised inside whatever ran: a
class half made, or a driver half started, printed a traceback. So from then until the app is mounted, when the
terminal is Textual's and Ctrl-C is a key, a Ctrl-C is only noted, and the app ends as it mounts."""

from __future__ import annotations

import signal
import threading
from typing import Any

_noted = threading.Event()


def _note(signum: int, frame: Any) -> None:
    _noted.set()


def hold() -> None:
    """From now until `release`, a Ctrl-C is noted, not raised."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _note)


def release() -> bool:
    """Python's usual handling again (a SIGINT sent to the running app); whether a Ctrl-C came meanwhile."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is _note:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    noted = _noted.is_set()
    _noted.clear()
    return noted
