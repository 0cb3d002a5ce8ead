"""Input first: while a key pressed at the terminal waits for its answer on screen, the relay starts no new page
frame (nor the next slice of a big one) in the process that draws it.

The dashboard and the relay share one event loop. Under a flood every hop of a key's way to the screen (the
input event, the binding, the action, the repaint) waited behind the pages' frames queued before it, one slice
each: a key took 200-280 ms to repaint with the loop otherwise keeping up (docs/limits.md). Held frames are not
lost: they wait in the socket (the agent's own buffer and acks are unchanged), for at most `HOLD_MAX` a press.
"""

from __future__ import annotations

import asyncio
import time

HOLD_MAX = 0.2  # seconds a press holds frames when nothing says it was answered (a key bound to no action)


class FrameHold:
    """`hold()` from any thread (the terminal's input thread), `release()` and `wait()` on the loop."""

    def __init__(self) -> None:
        self._until = 0.0  # time.monotonic() until which frames wait; a float store is atomic across threads
        self._waiters: list[asyncio.Future[None]] = []

    @property
    def held(self) -> bool:
        return self._until > time.monotonic()

    def hold(self, seconds: float = HOLD_MAX) -> None:
        self._until = max(self._until, time.monotonic() + seconds)

    def release(self) -> None:
        """The answer is on screen: frames go on at once."""
        self._until = 0.0
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self) -> None:
        """Returns at once when nothing is held (no suspension: a frame costs one clock read), else at the
        release or when the hold runs out."""
        while (left := self._until - time.monotonic()) > 0:
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            timer = loop.call_later(left, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
