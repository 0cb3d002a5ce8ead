"""Benchmark: the running app under load. 8 sessions x 125 spans/s into `wmcp-top` over real sockets.

`wmcp-top` runs as its own process on a real pseudo-terminal (120x36), relay and UI on one event loop, with
latency probes on (WMCP_TOP_PROBE, tui/probe.py). A load process plays 8 page agents, each on its own
WebSocket, sending a `spans` frame of 12-13 spans every 100 ms. Meanwhile this test presses `s` (sort) once a
second. Figures:

- app CPU share: the app process's user+system time over the load window, as a share of one core;
- RSS: the app's peak resident set (VmHWM);
- frame-to-screen p95: from a frame of the visible session leaving the load process to the first repaint
  that shows its spans (the app stamps after the refresh; both use CLOCK_MONOTONIC);
- key-to-repaint p95: from writing `s` to the terminal to the repaint showing the new sort order.

Targets: <= 40 % of one core, <= 150 MB, <= 300 ms, <= 100 ms.

  pytest tests/bench/test_tui_load.py -m bench -s      (WMCP_BENCH_SECONDS sets the load length, default 60)
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import math
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
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("WMCP_BENCH_SECONDS", "60"))
SESSIONS = 8
SPANS_PER_S = 125
TICK = 0.1
TOKEN = "00112233445566778899aabbccddeeff"
TARGETS = {"cpu": 0.40, "rss_mb": 150.0, "frame_p95_ms": 300.0, "key_p95_ms": 100.0}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)] if ordered else float("nan")


# -- the load process -----------------------------------------------------------------------------------------

async def _load(url: str, seconds: float, out: Path) -> None:
    from websockets.asyncio.client import connect

    sys.path.insert(0, str(ROOT))
    from relay_bridge import synth

    sids = [f"{0xbe000000 + i:08x}" for i in range(SESSIONS)]
    tools = ["search", "get_item", "list_items", "render", "update", "summarize"]
    sent: list[tuple[str, int, float]] = []
    sockets = []
    for i, sid in enumerate(sids):
        ws = await connect(url, max_size=1 << 20, compression=None)
        await ws.recv()  # welcome
        await ws.send(json.dumps(synth.hello(sid, f"https://site{i}.example")))
        await ws.recv()  # ack: the session exists (the first one becomes the visible tab)
        for j, name in enumerate(tools):
            await ws.send(json.dumps(synth.tool(sid, name, 1.0 + j, description=f"{name} things")))
        sockets.append(ws)

    async def drain(ws) -> None:
        try:
            async for _ in ws:
                pass
        except Exception:  # noqa: BLE001
            return

    readers = [asyncio.create_task(drain(ws)) for ws in sockets]
    seqs = [0] * SESSIONS
    start = time.monotonic()
    owed = [0.0] * SESSIONS
    tick = 0
    while time.monotonic() - start < seconds:
        tick += 1
        for i, (sid, ws) in enumerate(zip(sids, sockets)):
            owed[i] += SPANS_PER_S * TICK
            n = int(owed[i])
            owed[i] -= n
            spans = []
            for _ in range(n):
                seq = seqs[i]
                seqs[i] += 1
                at = 100.0 + seq * 8.0
                spans.append(synth.span(sid, seq, tools[seq % len(tools)], at, 1.0 + (seq * 7919 % 200) / 10,
                                        result_bytes=200 + seq % 5000, gap=2.0 if seq else None))
            await ws.send(json.dumps(synth.spans_frame(sid, spans), separators=(",", ":")))
            sent.append((sid, seqs[i] - 1, time.monotonic()))
        next_at = start + tick * TICK
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    elapsed = time.monotonic() - start
    await asyncio.sleep(0.5)
    for task in readers:
        task.cancel()
    for ws in sockets:
        await ws.close()
    out.write_text(json.dumps({"sent": sent, "spans": sum(seqs), "seconds": elapsed, "visible": sids[0]}))


# -- the app on a pty -----------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _status_kb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return float(line.split()[1])
    return float("nan")


@pytest.mark.bench
def test_app_under_load(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "token").write_text(TOKEN + "\n")
    probe = tmp_path / "probe.txt"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR",)}
    env.update(WMCP_TOP_HOME=str(home), WMCP_TOP_PROBE=str(probe), TERM="xterm-256color", PYTHONUNBUFFERED="1")

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    app = subprocess.Popen([sys.executable, "-m", "tui.cli", "--port", str(port)], cwd=ROOT, env=env,
                           stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    output = bytearray()
    stop = threading.Event()

    def reader() -> None:  # a terminal that keeps up: read everything the app draws
        while not stop.is_set():
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            output.extend(chunk[-4096:])

    threading.Thread(target=reader, daemon=True).start()
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or app.poll() is not None:
                    raise AssertionError(f"the app did not start: {bytes(output[-2000:])!r}")
                time.sleep(0.1)
        result = tmp_path / "load.json"
        load = subprocess.Popen([sys.executable, __file__, "load", f"ws://127.0.0.1:{port}/relay?t={TOKEN}", str(SECONDS), str(result)], cwd=ROOT)
        time.sleep(min(2.0, SECONDS / 4))  # warm-up: sessions attach, tabs are built
        cpu0, wall0 = _cpu_seconds(app.pid), time.monotonic()
        keys: list[float] = []
        while load.poll() is None and time.monotonic() - wall0 < SECONDS - 0.5:
            keys.append(time.monotonic())
            os.write(master, b"s")
            time.sleep(1.0)
        cpu1, wall1 = _cpu_seconds(app.pid), time.monotonic()
        rss_mb = _status_kb(app.pid, "VmHWM") / 1024
        assert load.wait(SECONDS + 60) == 0
        os.write(master, b"q")
        assert app.wait(20) == 0
    finally:
        stop.set()
        if app.poll() is None:
            app.kill()
            app.wait(10)
        os.close(master)

    data = json.loads(result.read_text())
    frames, keys_painted = [], []
    for line in probe.read_text().splitlines():
        parts = line.split()
        if parts[0] == "f":
            frames.append((float(parts[1]), parts[2], int(parts[3])))
        elif parts[0] == "k":
            keys_painted.append(float(parts[1]))
    visible = data["visible"]
    painted = sorted((t, acked) for t, sid, acked in frames if sid == visible)
    latencies = []
    i = 0
    for sid, seq, t_sent in data["sent"]:
        if sid != visible:
            continue
        while i < len(painted) and (painted[i][1] < seq or painted[i][0] < t_sent):
            i += 1
        if i == len(painted):
            break
        latencies.append((painted[i][0] - t_sent) * 1000)
    key_lat = []
    j = 0
    for t in keys:
        while j < len(keys_painted) and keys_painted[j] < t:
            j += 1
        if j < len(keys_painted):
            key_lat.append((keys_painted[j] - t) * 1000)
            j += 1
    figures = {
        "cpu": (cpu1 - cpu0) / (wall1 - wall0),
        "rss_mb": rss_mb,
        "frame_p95_ms": p95(latencies),
        "key_p95_ms": p95(key_lat),
    }
    rate = data["spans"] / data["seconds"]
    print()
    print(f"wmcp-top under load: {SESSIONS} sessions, {rate:,.0f} spans/s for {data['seconds']:.0f} s over real sockets, 120x36 pty")
    print(f"  app CPU            {figures['cpu'] * 100:5.1f} % of one core   (target <= {TARGETS['cpu'] * 100:.0f} %)")
    print(f"  app RSS (peak)     {figures['rss_mb']:5.1f} MB              (target <= {TARGETS['rss_mb']:.0f} MB)")
    print(f"  frame-to-screen    p95 {figures['frame_p95_ms']:5.0f} ms, p50 {sorted(latencies)[len(latencies) // 2] if latencies else float('nan'):.0f} ms over {len(latencies)} frames   (target <= {TARGETS['frame_p95_ms']:.0f} ms)")
    print(f"  key-to-repaint     p95 {figures['key_p95_ms']:5.0f} ms over {len(key_lat)} presses of `s`   (target <= {TARGETS['key_p95_ms']:.0f} ms)")
    assert len(latencies) >= 5 and key_lat, "too few probes to judge"
    # A full pass (>= 30 s) is held to the targets. A short CI pass has few samples (a 3 s run presses `s`
    # twice), so its latencies get 1.5x headroom against noise; CPU and memory are held to the targets always.
    slack = 1.0 if SECONDS >= 30 else 1.5
    for name, limit in TARGETS.items():
        allowed = limit * (slack if name.endswith("_ms") else 1.0)
        assert figures[name] <= allowed, f"{name} = {figures[name]:.3f} over {allowed} (target {limit})"


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "load":
    asyncio.run(_load(sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])))
