"""How often a process wakes from sleep, read from /proc: for tests that hold an idle process to sleeping.

Each voluntary context switch of a thread is one sleep it went into and woke from. On the VM the benchmarks
run on, every wake-up costs CPU whatever the process then does (README, "The dashboard under load")."""

from __future__ import annotations

import time
from pathlib import Path


def wakes(pid: int) -> int:
    """Voluntary context switches of every thread of `pid` so far."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        status = (task / "status").read_text()
        total += int(status.split("voluntary_ctxt_switches:")[1].split()[0])
    return total


def idle_wakes(pid: int, seconds: float = 3.0, settle_within: float = 15.0) -> int:
    """Wake-ups of `pid` over `seconds` once it has settled (a second with at most one wake-up: start-up work
    such as a terminal answering queries is over). Fails if it never settles."""
    deadline, windows = time.monotonic() + settle_within, []
    while True:
        before = wakes(pid)
        time.sleep(1.0)  # a measured window, not a stand-in for a condition
        windows.append(wakes(pid) - before)
        if windows[-1] <= 1:
            break
        assert time.monotonic() < deadline, f"process {pid} never settled: wake-ups a second {windows}"
    before = wakes(pid)
    time.sleep(seconds)
    return wakes(pid) - before
