"""A child process on a real pseudo-terminal of its own, as a user's shell runs it: the pty is its controlling
terminal and its process group is the terminal's foreground group, so `ctrl_c()` (the byte ^C written to the
terminal) delivers SIGINT to it and to everything it started in that group (Playwright's driver, Chromium), which
is what a user's Ctrl-C does. Output is read on a thread; waits are on conditions, never fixed sleeps."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][A-Za-z0-9]|[=>78])")


def _take_terminal() -> None:
    """In the child, after setsid: make the pty on fd 0 the controlling terminal (its group the foreground)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyChild:
    def __init__(self, argv: Sequence[str], *, env: dict[str, str], cwd: Path, columns: int = 100, rows: int = 30) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, bytes([rows, 0, columns, 0, 0, 0, 0, 0]))
        self.master = master
        self.proc = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_take_terminal,  # the only way to give a child a controlling terminal
        )
        os.close(slave)
        self._raw = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: every writer of the terminal has gone
                return
            if not chunk:
                return
            with self._lock:
                self._raw.extend(chunk)

    @property
    def text(self) -> str:
        """Everything the terminal showed so far, escapes removed, line ends as \\n."""
        with self._lock:
            raw = bytes(self._raw)
        return ANSI.sub("", raw.decode("utf-8", "replace")).replace("\r\n", "\n")

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.proc.poll() is not None:
                raise AssertionError(f"{what}: the program ended first (exit {self.proc.returncode}); it showed:\n{self.text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} not met in {timeout:g} s; the terminal showed:\n{self.text}")
            time.sleep(0.005)  # polling the child's state, not standing in for it

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def finish(self, timeout: float = 60.0) -> int:
        """The exit code once the program ended (killing its group if it does not within `timeout`), the
        terminal's output read to its end."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
            raise AssertionError(f"no exit within {timeout:g} s of Ctrl-C; the terminal showed:\n{self.text}") from None
        self._reader.join(10)
        os.close(self.master)
        return code

    def descendants(self) -> list[str]:
        """The command lines of every process started under the child (from /proc), for start-up markers."""
        children: dict[int, list[int]] = {}
        lines: dict[int, str] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                lines[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
        out, todo = [], list(children.get(self.proc.pid, []))
        while todo:
            pid = todo.pop()
            out.append(lines.get(pid, ""))
            todo.extend(children.get(pid, []))
        return out

    def maps(self, needle: str) -> bool:
        """Whether the child has mapped a file whose path holds `needle` (a module's shared library: its imports
        have reached that module)."""
        try:
            return needle in Path(f"/proc/{self.proc.pid}/maps").read_text()
        except OSError:
            return False
