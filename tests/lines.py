"""A child process's output, line by line, waited on with a timeout: never a read that could hang a test."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import IO

from tests.liveness import LIVENESS_S


class Lines:
    """Reads `stream` on a thread of its own until its end; `until` waits for a matching line."""

    def __init__(self, stream: IO[str]) -> None:
        self.q: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.q.put(line)

    def until(self, predicate: Callable[[str], bool], timeout: float = LIVENESS_S) -> str:
        """The first line from here on that `predicate` accepts. None within `timeout` of the last line: an
        AssertionError naming the lines seen so far."""
        while True:
            try:
                line = self.q.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no line wanted within {timeout:g} s; the last lines seen: {self.seen[-5:]}") from None
            self.seen.append(line)
            if predicate(line):
                return line

    def rest(self, timeout: float = LIVENESS_S) -> str:
        """Everything not yet taken, once the stream has ended (the child exited) or `timeout` passed."""
        self.thread.join(timeout)
        out = []
        while not self.q.empty():
            out.append(self.q.get_nowait())
        self.seen.extend(out)
        return "".join(out)
