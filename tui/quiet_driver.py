"""Textual's Linux driver with an input thread that sleeps until there is something to read.

Textual's own input thread wakes ten times a second to check whether it should stop and whether a lone
escape has waited long enough to be a key. Each wake-up costs CPU even when it does nothing (on the two-core
VM the benchmarks run on, about 0.4 % of a core, as much as the rest of an idle dashboard). This one waits
for the terminal, the parser's own deadline (a pending escape sequence) or a byte on a wake pipe that the exit
event writes; an idle dashboard then has no thread waking it.

Textual is pinned exactly (pyproject.toml); `tests/tui/test_quiet_driver.py` drives this thread through a
real pseudo-terminal, and `tests/terminal.py` drives the whole app through tmux with it.
"""

from __future__ import annotations

import os
import selectors
import threading
import time
from codecs import getincrementaldecoder
from typing import Any

from textual import events
from textual._xterm_parser import XTermParser  # private: allowed here only (tests/test_boundaries.py)
from textual.drivers.linux_driver import LinuxDriver


class WakingEvent(threading.Event):
    """An Event that also writes a byte to its pipe when set, so a thread blocked in select() sees it at once.
    The pipe lives from `open()` to `close()` (one application mode); set() outside it is a plain Event."""

    def __init__(self) -> None:
        super().__init__()
        self.read_fd: int | None = None
        self._write_fd: int | None = None

    def open(self) -> None:
        if self.read_fd is None:
            self.read_fd, self._write_fd = os.pipe()
            os.set_blocking(self._write_fd, False)  # a full pipe already holds a wake-up

    def set(self) -> None:
        super().set()
        if self._write_fd is not None:
            try:
                os.write(self._write_fd, b"x")
            except BlockingIOError:
                pass

    def close(self) -> None:
        fds, self.read_fd, self._write_fd = (self.read_fd, self._write_fd), None, None
        for fd in fds:
            if fd is not None:
                os.close(fd)


class QuietLinuxDriver(LinuxDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_event: WakingEvent = WakingEvent()

    def start_application_mode(self) -> None:
        self.exit_event.open()  # before Textual starts the input thread
        super().start_application_mode()

    def stop_application_mode(self) -> None:
        super().stop_application_mode()  # sets the exit event and joins the input thread
        self.exit_event.close()

    def run_input_thread(self) -> None:
        """Read the terminal and hand its events to the app until the exit event is set."""
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        fileno, wake = self.fileno, self.exit_event.read_fd
        assert wake is not None, "start_application_mode opens the wake pipe"
        selector = selectors.DefaultSelector()
        selector.register(fileno, selectors.EVENT_READ)
        selector.register(wake, selectors.EVENT_READ)

        def deadline() -> float | None:
            # A lone escape (or a sequence cut short) becomes a key once the parser's timeout passes (its clock
            # is time.monotonic off Windows, and this driver is not used on Windows).
            due = parser._timeout_time
            return None if due is None else max(0.0, due - time.monotonic())

        # The app hears of a key or click here, in this thread, before the event waits its turn on the loop: the
        # relay it runs holds page frames until the answer is painted (relay_bridge/relay/hold.py).
        arrived = getattr(self._app, "input_arrived", None)

        def hand_over(event: Any) -> None:
            if arrived is not None and isinstance(event, (events.Key, events.MouseDown)):
                arrived()
            self.process_message(event)

        def feed(text: str) -> None:
            for event in parser.feed(text):
                hand_over(event)

        try:
            reading = True
            while not self.exit_event.is_set():
                for key, _ in selector.select(deadline()):
                    if key.fd == wake:
                        os.read(wake, 512)  # drained; the loop's condition says whether to stop
                        continue
                    text = decode(os.read(fileno, 4096))
                    if text:
                        feed(text)
                    elif reading:  # end of input (a closed pipe): stop selecting on it, or this loop would spin
                        selector.unregister(fileno)
                        reading = False
                for event in parser.tick():
                    hand_over(event)
            if reading:  # what was typed right before the exit still reaches the app, as with Textual's thread
                selector.unregister(wake)
                for _ in selector.select(0):
                    feed(decode(os.read(fileno, 4096), final=True))
        finally:
            selector.close()
            try:
                for _ in parser.feed(""):
                    pass
            except Exception:  # EOFError or the parser's ParseError: input cut mid-sequence at exit
                pass


__all__ = ["QuietLinuxDriver", "WakingEvent"]
