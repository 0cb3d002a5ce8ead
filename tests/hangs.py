"""Where a hung async test waits. pytest-timeout fails a test stuck past its timeout with every thread's stack, and
an async test's thread shows only its event loop's `select`: not the `await` it is stuck on. So shortly before the
timeout, every task of every running loop prints its stack (the chain of awaits) to stderr, which the failure's
report shows under "Captured stderr call". A test that ends in time prints nothing."""

from __future__ import annotations

import asyncio
import gc
import inspect
import sys
import threading
import traceback
from collections.abc import Iterator
from types import FrameType

import pytest

SHOWN_AT = 0.85  # of the test's timeout


@pytest.fixture(autouse=True)
def tasks_shown_before_a_timeout(request: pytest.FixtureRequest) -> Iterator[None]:
    timeout = _timeout(request)
    if timeout <= 0 or not inspect.iscoroutinefunction(getattr(request.node, "function", None)):
        yield
        return
    timer = threading.Timer(timeout * SHOWN_AT, show_tasks)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _timeout(request: pytest.FixtureRequest) -> float:
    marker = request.node.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    try:
        return float(request.config.getini("timeout") or 0)
    except (ValueError, KeyError):
        return 0.0


def show_tasks() -> None:
    """From the timer's thread: each running loop prints its own tasks, in its own thread."""
    for loop in [o for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop)]:
        if loop.is_running() and not loop.is_closed():
            loop.call_soon_threadsafe(_print_tasks, loop)


def _print_tasks(loop: asyncio.AbstractEventLoop) -> None:
    tasks = asyncio.all_tasks(loop)
    print(f"\n-- the test is near its timeout; {len(tasks)} asyncio task(s) and where each waits --", file=sys.stderr)
    for task in tasks:
        print(f"task {task.get_name()}:", file=sys.stderr)
        frames = awaits(task.get_coro())
        print("".join(traceback.format_list(traceback.StackSummary.extract((f, f.f_lineno) for f in frames))), end="", file=sys.stderr)


def awaits(coro: object) -> list[FrameType]:
    """The chain of awaits a suspended coroutine is in, outermost first (Task.print_stack shows only the outermost:
    a suspended coroutine's frame has no f_back)."""
    frames: list[FrameType] = []
    while (frame := getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None) or getattr(coro, "ag_frame", None)) is not None:
        frames.append(frame)
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None) or getattr(coro, "ag_await", None)
    return frames
