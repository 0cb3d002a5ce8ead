"""Coalesce the store's change notices: subscribers hear at most once per interval, never once per span.

Bursts of frames mark sessions dirty; one timer on the event loop drains the dirty set and calls each
listener with the ids that changed (the toolong approach to bursts of messages). The flush is on the leading
edge: after a quiet spell the first change goes out on the next loop turn, and a busy stream is cut to at most
one flush per interval. A viewer that just began to show a session (a tab switch: its agent sends what it holds
at once) hurries that session for a moment: its first few changes go out when they come, not at the interval's
end. A few, not all: a page flooding the relay then still gets no more than the interval's rate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

from relay_bridge.core.store import Store

Listener = Callable[[set[str], bool], None]


class Coalescer:
    def __init__(self, store: Store, interval: float = 0.25) -> None:
        self.store = store
        self.interval = interval
        self.listeners: list[Listener] = []
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_flush = float("-inf")
        self._hurried: frozenset[str] = frozenset()  # sessions whose next changes go out at once (hurry)
        self._hurry_until = float("-inf")
        self._hurry_left = 0
        store.wake = self._wake

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def _wake(self) -> None:
        if self._handle is not None:
            if not (self._hurry_left and isinstance(self._handle, asyncio.TimerHandle) and self._hurried_changed()):
                return
            self._handle.cancel()  # a hurried session changed: what waits goes now, with it
            self._handle = None
        try:
            loop = self._loop or asyncio.get_running_loop()
        except RuntimeError:
            return  # not on a loop (replay into a bare store): nobody to tell
        self._loop = loop
        wait = self._last_flush + self.interval - time.monotonic()
        if wait > 0 and self._hurry_left and self._hurried_changed():
            self._hurry_left -= 1  # spent only where it saves a wait
            wait = 0.0
        self._handle = loop.call_later(wait, self.flush) if wait > 0 else loop.call_soon(self.flush)

    def hurry(self, sessions: Iterable[str], seconds: float, flushes: int) -> None:
        """For the next `seconds`, the first `flushes` flushes that carry a change of `sessions` go out on the next
        loop turn (one that waits now, too)."""
        self._hurried = frozenset(sessions)
        self._hurry_until = time.monotonic() + seconds
        self._hurry_left = flushes
        if self._handle is not None:
            self._wake()

    def _hurried_changed(self) -> bool:
        return time.monotonic() < self._hurry_until and not self._hurried.isdisjoint(self.store.changed)

    def would_flush_at_once(self) -> bool:
        """Nothing pending and the interval since the last flush has passed: the next change goes out on the
        next loop turn."""
        return self._handle is None and time.monotonic() - self._last_flush >= self.interval

    def flush(self) -> None:
        self._handle = None
        self._last_flush = time.monotonic()
        dirty, relay = self.store.drain_changes()
        if not dirty and not relay:
            return
        for listener in list(self.listeners):
            listener(dirty, relay)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self.store.wake = None
