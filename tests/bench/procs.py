"""Processes for the benchmarks: `wmcp-top` (dashboard on a real pseudo-terminal) or `wmcp-top relay` (headless),
and what /proc says about CPU, memory and the machine's load."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import socket
import struct
import subprocess
import sys
import termios
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "00112233445566778899aabbccddeeff"
# How long a start (a relay, a flood, a page and its agent) may take before it is called broken rather than slow:
# the check often runs on a loaded machine, where a flood of 64 sessions took over 30 s to be ready (load 23).
LIVENESS_S = 180.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_seconds(pid: int) -> dict[int, float]:
    """CPU seconds of each live thread of one process, by thread id, to the nanosecond (schedstat)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = int((task / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return out


def run_seconds(pid: int) -> float:
    """CPU seconds of every live thread of one process, to the nanosecond (schedstat; /proc/PID/stat counts
    in 10 ms ticks, too coarse for a few points of a core over ten seconds)."""
    return sum(thread_seconds(pid).values())


def run_slices(pid: int) -> int:
    """How many times the threads of one process were put on a CPU (schedstat): each one a wake-up, roughly."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[2])
        except (OSError, ValueError, IndexError):
            continue
    return total


def status_kb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return float(line.split()[1])
    return float("nan")


def machine() -> tuple[int, int]:
    """(busy jiffies, total jiffies) of the whole machine, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def cores_busy(before: tuple[int, int], after: tuple[int, int]) -> float:
    """How many cores the whole machine kept busy between two `machine()` readings (all processes)."""
    return (after[0] - before[0]) / max(1, after[1] - before[1]) * (os.cpu_count() or 1)


def descendants(root: int) -> list[int]:
    """Every process below `root`, from /proc (children first found by their parent id)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == pid]
        found.extend(kids)
        frontier.extend(kids)
    return found


def tree_cpu(pids: list[int]) -> dict[int, float]:
    out = {}
    for pid in pids:
        try:
            out[pid] = cpu_seconds(pid)
        except OSError:
            continue
    return out


def healthz_sessions(port: int) -> int:
    """Live sessions the relay at `port` holds (its /healthz)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
        return int(json.loads(response.read())["sessions"])


def healthz_ms(port: int) -> float:
    t0 = time.monotonic()
    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
    return (time.monotonic() - t0) * 1000


@dataclass
class Wmcp:
    proc: subprocess.Popen[bytes]
    port: int
    master: int
    headless: bool
    output: bytearray = field(default_factory=bytearray)

    def key(self, data: bytes) -> None:
        os.write(self.master, data)

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/relay?t={TOKEN}"

    @property
    def agent_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/agent.js?t={TOKEN}"


@contextmanager
def wmcp(run_dir: Path, *, headless: bool, probe: Path | None = None, size: tuple[int, int] = (160, 45)) -> Iterator[Wmcp]:
    """`wmcp-top` on a pseudo-terminal of `size` (columns, lines) that reads everything drawn, or `wmcp-top relay`
    when `headless`; its own home (token), no session log. Stops it (q or SIGINT) on the way out."""
    home = run_dir / "home"
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "token").write_text(TOKEN + "\n")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "WMCP_TOP_PROBE")}
    env.update(WMCP_TOP_HOME=str(home), TERM="xterm-256color", PYTHONUNBUFFERED="1")
    if probe is not None:
        env["WMCP_TOP_PROBE"] = str(probe)
    cmd = [sys.executable, "-m", "tui.cli", *(["relay"] if headless else []), "--port", str(port), "--no-log"]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    handle = Wmcp(proc, port, master, headless)
    stop = threading.Event()

    def reader() -> None:  # a terminal that keeps up: read everything drawn
        while not stop.is_set():
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            handle.output.extend(chunk[-4096:])
            del handle.output[:-8192]

    threading.Thread(target=reader, daemon=True).start()
    try:
        deadline = time.monotonic() + LIVENESS_S
        while True:
            try:
                healthz_ms(port)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError(f"{cmd} did not start: {bytes(handle.output[-2000:])!r}") from None
                time.sleep(0.1)
        yield handle
        if headless:
            proc.send_signal(2)
        else:
            os.write(master, b"q")
        assert proc.wait(30) == 0, bytes(handle.output[-2000:])
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(master)
