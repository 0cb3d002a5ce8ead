"""Latency probes for the benchmark (enabled by the WMCP_TOP_PROBE=FILE environment variable).

Lines written, times from CLOCK_MONOTONIC (shared by every process on the machine):
  `f <t> <session> <acked>`  the session's table was painted showing every span up to seq `acked`;
  `k <t>`                     a sort key's effect was painted.
"""

from __future__ import annotations

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

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
