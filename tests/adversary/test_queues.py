"""Frames a socket's queue holds while the relay is busy (server.MAX_QUEUED_FRAMES). 64 sessions, each on its own
socket, send valid 500-span batches padded with JSON whitespace to 1 MiB, as fast as the relay reads them: the
relay's loop cannot keep up, every socket's queue fills, and what the queues hold is the relay's memory. With
websockets' default of 16 frames a socket, the relay grew past 1.1 GB in 27 s (2026-12-01); with 1, it peaked
near 345 MB, each frame in hand held as text and again as bytes; read as bytes (server._messages), 257 to 277 MB:
within the relay's 300 MB target (README, "Memory caps").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from websockets.asyncio.client import ClientConnection

from relay_bridge.core import synth
from tests.lines import Lines
from tests.liveness import LIVENESS_S, connect

ROOT = Path(__file__).resolve().parents[2]
SOCKETS = 64  # the relay's session limit: one session a socket
FRAME = 1 << 20  # the protocol's largest frame
SECONDS = 12.0
PEAK_MB = 300  # the relay's memory target


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise OSError("no VmRSS")


async def flood(url: str, n: int, ready: asyncio.Barrier, sent: list[int]) -> None:
    sid = f"{0xF1000000 + n:08x}"
    ws = await connect(url, compression=None, max_size=None, open_timeout=LIVENESS_S)
    try:
        await ws.send(json.dumps(synth.hello(sid)))
        await ws.recv()
        reader = asyncio.create_task(drain(ws))
        # Every session is open before any floods: this loop, busy building frames, must not hold a hello back past
        # the relay's hello deadline.
        await ready.wait()
        stop = time.monotonic() + SECONDS
        seq = 0
        with contextlib.suppress(Exception):  # the relay may close a socket it finds unreadable: the test counts RSS
            while time.monotonic() < stop:
                body = json.dumps(synth.spans_frame(sid, [synth.span(sid, seq + k, f"t{k % 4}", float(seq + k), 1.0) for k in range(500)]))
                await ws.send(body + " " * (FRAME - 64 - len(body)))  # JSON whitespace: valid, and a full frame
                seq += 500
                sent[0] += 1
        reader.cancel()
    finally:
        # The relay may have dropped the socket mid-frame; closing it then can fail inside asyncio's transport (seen
        # under load: the transport's loop already gone). The test judges the relay's memory, not this close.
        with contextlib.suppress(Exception):
            await ws.close()


async def drain(ws: ClientConnection) -> None:
    with contextlib.suppress(Exception):
        async for _ in ws:
            pass


async def test_full_frames_from_every_session_leave_the_relay_s_memory_bounded(tmp_path: Path) -> None:
    env = dict(os.environ, WMCP_TOP_HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "relay", "--port", "0", "--no-log"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    peak = 0.0
    done = threading.Event()

    def sample() -> None:  # a measurement, not a wait
        nonlocal peak
        while not done.is_set():
            with contextlib.suppress(OSError):
                peak = max(peak, rss_mb(proc.pid))
            done.wait(0.05)

    try:
        port = int(Lines(proc.stdout).until(lambda line: "listening on" in line).rsplit(":", 1)[1])
        token = (tmp_path / "config" / "token").read_text().strip()
        idle = rss_mb(proc.pid)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        sent = [0]
        url = f"ws://127.0.0.1:{port}/relay?t={token}"
        ready = asyncio.Barrier(SOCKETS)
        await asyncio.gather(*(flood(url, n, ready, sent) for n in range(SOCKETS)))
        done.set()
        sampler.join(5)
        print(f"\n{SOCKETS} sockets of 1 MiB frames for {SECONDS:g} s: {sent[0]} frames sent; relay RSS idle {idle:.0f} MB, peak {peak:.0f} MB")
        assert proc.poll() is None, "the relay died"
        assert sent[0] > 4 * SOCKETS, f"only {sent[0]} frames went in: the flood never filled the queues"
        assert peak <= PEAK_MB, f"relay RSS peaked at {peak:.0f} MB (idle {idle:.0f}; target {PEAK_MB})"
    finally:
        done.set()
        proc.terminate()
        proc.wait(LIVENESS_S)
