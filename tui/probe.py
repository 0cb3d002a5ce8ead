"""Latency probes for the benchmark (enabled by the WMCP_TOP_PROBE=FILE environment variable).

Lines written, times from CLOCK_MONOTONIC (shared by every process on the machine):
  `f <t> <session> <acked>`  the session's table was painted showing every span up to seq `acked`;
  `k <t>`                     a sort key's effect was painted;
  `s <t> <ms> <cpu>`          a 50 ms timer came `ms` milliseconds late (written when over 20 ms); `cpu` is the
                              main thread's CPU time in that interval: the part of the hold that was this
                              process's own work, the rest being a busy machine not scheduling it.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path


class Probe:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = path.open("a", buffering=1 << 16, encoding="ascii")

    def painted(self, session: str, acked: int) -> None:
        self._fh.write(f"f {time.monotonic():.6f} {session} {acked}\n")

    def key_painted(self) -> None:
        self._fh.write(f"k {time.monotonic():.6f}\n")
        self._fh.flush()

    async def watch_loop(self, every: float = 0.05) -> None:
        """Until cancelled: note each time the loop could not run a short timer on time (a step held it). A 50 ms
        timer: a 10 ms one cost the measured process most of a point of CPU by itself."""
        while True:
            start, cpu = time.monotonic(), time.thread_time()
            await asyncio.sleep(every)
            late = time.monotonic() - start - every
            if late > 0.02:
                used = time.thread_time() - cpu
                self._fh.write(f"s {time.monotonic():.6f} {late * 1000:.1f} {used * 1000:.1f}\n")

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
