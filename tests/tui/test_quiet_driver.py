"""The dashboard's input thread (tui/quiet_driver.py) on a real pseudo-terminal: a key typed there is told to the
app from that thread (`input_arrived`, so the relay holds page frames) before the key event is handed to the
loop, where it waits its turn."""

from __future__ import annotations

import asyncio
import os
import pty
import signal
import threading
import tty
from typing import Any

from textual import events

from tests.liveness import LIVENESS_S
from tui.quiet_driver import QuietLinuxDriver


class Heard:
    """Just what the driver's thread touches of an app."""

    def __init__(self, done: asyncio.Event, loop: asyncio.AbstractEventLoop) -> None:
        self.order: list[str] = []
        self._done, self._loop = done, loop

    def input_arrived(self) -> None:
        self.order.append("arrived")

    async def _post_message(self, message: Any) -> None:
        self.order.append(type(message).__name__)
        if isinstance(message, events.Key):
            self._done.set()


async def test_a_key_is_told_to_the_app_from_the_input_thread_before_it_reaches_the_loop() -> None:
    done = asyncio.Event()
    app = Heard(done, asyncio.get_running_loop())
    handlers = signal.getsignal(signal.SIGTSTP), signal.getsignal(signal.SIGCONT)
    driver = QuietLinuxDriver(app)  # the thread needs only what Heard has (Textual types the app loosely)
    signal.signal(signal.SIGTSTP, handlers[0])  # the driver's suspend handlers are not this test process's
    signal.signal(signal.SIGCONT, handlers[1])
    master, slave = pty.openpty()
    tty.setraw(slave)  # as the driver sets its terminal: a key is readable without a newline
    driver.fileno = slave
    driver.exit_event.open()
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    thread.start()
    try:
        os.write(master, b"s")
        await asyncio.wait_for(done.wait(), LIVENESS_S)
        assert app.order == ["arrived", "Key"]
    finally:
        driver.exit_event.set()
        thread.join(10)
        driver.exit_event.close()
        os.close(master)
        os.close(slave)
    assert not thread.is_alive()
