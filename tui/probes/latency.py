"""Latency probes for the benchmark (enabled by the WMCP_TOP_PROBE=FILE environment variable).

Lines written, times from CLOCK_MONOTONIC (shared by every process on the machine):
  `f <t> <session> <acked>`  the session's table was painted showing every span up to seq `acked`;
  `k <t>`                     a sort key's effect was painted;
  `s <t> <ms> <cpu>`          one turn of the event loop held it for `ms` milliseconds (written when over 20 ms);
                              `cpu` is the main thread's CPU time in that turn: the part of the hold that was
                              this process's own work, the rest being a busy machine not scheduling it.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

HOLD_NOTED = 0.02  # seconds: shorter turns are not written


class Probe:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = path.open("a", buffering=1 << 16, encoding="ascii")
        self._flushed = float("-inf")

    def painted(self, session: str, acked: int) -> None:
        now = time.monotonic()
        self._fh.write(f"f {now:.6f} {session} {acked}\n")
        if now - self._flushed >= 1.0:  # the benchmark waits for a first paint before it measures
            self._fh.flush()
            self._flushed = now

    def key_painted(self) -> None:
        self._fh.write(f"k {time.monotonic():.6f}\n")
        self._fh.flush()

    def watch_loop(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Note every turn of `loop` that held it over 20 ms, timed around its selector's `select()` (a turn runs
        from one return of select() to the next call). No timer of its own: the 50 ms timer this replaced woke
        the measured process 20 times a second, and on the benchmark VM every wake-up costs CPU.
        False when the loop has no selector to time (uvloop): no holds are noted then."""
        selector = getattr(loop, "_selector", None)
        if selector is None:
            return False
        real = selector.select
        turn = [time.monotonic(), time.thread_time()]  # when the current turn began
        fh = self._fh
        write = fh.write

        def select(timeout: float | None = None) -> list[Any]:
            held = time.monotonic() - turn[0]
            if held > HOLD_NOTED and not fh.closed:  # the loop turns on after close() while the app shuts down
                write(f"s {time.monotonic():.6f} {held * 1000:.1f} {(time.thread_time() - turn[1]) * 1000:.1f}\n")
            events = real(timeout)
            turn[0], turn[1] = time.monotonic(), time.thread_time()
            return events

        selector.select = select  # an instance attribute: the loop calls self._selector.select(timeout)
        return True

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
