"""Floods from one web origin (issue 31, item 2), as a hostile page holding the token does: its browser sets the
Origin header. Runs as its own process (at nice 19, so what is measured is the relay's answer, not this
process's share of a core), beside a well-behaved agent of another origin (tests/bench/hostile_load.py `good`).

  python -m tests.bench.fair_load URL KIND SECONDS READY_FILE

It floods for SECONDS at most; SIGTERM ends it sooner (the benchmark sends it once the agent beside it is done),
and either way it prints what it sent as one JSON line.

`ext-KIND` sends the same flood the way the wmcp-top extension carries a page's frames: a socket per page with
the extension's Origin header, every hello stamped with the page's origin and the extension's agent name (what
the service worker does to whatever the page sends, page_agent/src/worker/pipes.js).

Kinds:
  budget  one socket spends its share (64 KiB descriptors, then spans under ever new tool names), then leaves;
          again with new sessions
  hellos  4 sockets x 16 hellos held, and hellos again every 50 ms
  churn   128 sockets held open, and 4 loops connecting and closing as fast as they are answered
  rate    4 sockets sending small valid frames as fast as the relay reads them (reconnecting when closed)
  big     2 sockets sending valid 1 MiB frames (reconnecting when closed)
  log     4 sockets sending 500-span frames with 200-character errors: tens of MB a second of session log
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from relay_bridge.core import synth
from tests.bench.hostile_load import EXTENSION_AGENT, extension_header

ORIGIN = "http://flood.example"
KINDS = ("budget", "hellos", "churn", "rate", "big", "log")
# The floods a page can send through the extension (its worker caps a tab at 16 sessions and drops frames over
# 1 MiB, so the hellos flood there is one tab's share, and churn is the worker's, not the page's, to do).
EXT_KINDS = ("ext-budget", "ext-hellos", "ext-rate", "ext-log")


class Route:
    """How the flood reaches the relay: a web page's own socket (its browser sets Origin), or the extension's."""

    header = ORIGIN
    agent = "wmcp-top-agent/0.1.0"


def extension_route() -> None:
    Route.header = extension_header()
    Route.agent = EXTENSION_AGENT


def hello(sid: str) -> str:
    return json.dumps(synth.hello(sid, ORIGIN, agent=Route.agent))


PAD = "x" * (63 * 1024)


async def page(url: str) -> ClientConnection:
    ws = await connect(url, origin=Route.header, max_size=None, max_queue=None, compression=None)  # type: ignore[arg-type]  # websockets types `origin` as its Origin NewType; a str is what it sends
    await ws.recv()
    return ws


async def drain(ws: ClientConnection) -> None:
    try:
        async for _ in ws:
            pass
    except ConnectionClosed:
        pass


async def spender(url: str, stop: float, n: Counter[str]) -> None:
    generation = 0
    while time.monotonic() < stop:
        generation += 1
        try:
            ws = await page(url)
        except (InvalidStatus, OSError):
            n["refused"] += 1
            await asyncio.sleep(0.05)
            continue
        rx = asyncio.create_task(drain(ws))
        try:
            sids = [f"b{generation % 0xFFF:03x}{i:04x}" for i in range(4)]
            for sid in sids:
                await ws.send(hello(sid))
                for t in range(16):
                    await ws.send(json.dumps(synth.tool(sid, f"pad{t}", 1.0, description=PAD)))
                    n["frames"] += 1
                for base in range(0, 16_384, 500):
                    if time.monotonic() >= stop:
                        break
                    spans = [synth.span(sid, s, f"{sid}-{s:06d}-" + "y" * 100, s * 1.0, 1.0) for s in range(base, base + 500)]
                    await ws.send(json.dumps(synth.spans_frame(sid, spans)))
                    n["frames"] += 1
        except ConnectionClosed:
            n["closed"] += 1
        finally:
            rx.cancel()
            await ws.close()  # leaves: what it held must come back


async def hellos(url: str, stop: float, n: Counter[str]) -> None:
    sockets = []
    drains = []  # held: a task nobody references may be collected mid-run
    for c in range(4):
        ws = await page(url)
        sockets.append(ws)
        drains.append(asyncio.ensure_future(drain(ws)))
        for i in range(16):
            await ws.send(hello(f"4e{c:02x}{i:04x}"))
    while time.monotonic() < stop:
        for c, ws in enumerate(sockets):
            try:
                await ws.send(hello(f"4f{c:02x}{n['frames'] % 0xFFFF:04x}"))
                n["frames"] += 1
            except ConnectionClosed:
                # A socket that owns no session is closed after 10 s (the relay's idle rule): open another.
                n["closed"] += 1
                try:
                    sockets[c] = await page(url)
                    drains.append(asyncio.ensure_future(drain(sockets[c])))
                except (InvalidStatus, OSError):
                    n["refused"] += 1
        await asyncio.sleep(0.05)


async def churn(url: str, stop: float, n: Counter[str]) -> None:
    held = []
    for _ in range(128):
        try:
            held.append(await page(url))
        except (InvalidStatus, OSError):
            n["refused"] += 1

    async def loop() -> None:
        while time.monotonic() < stop:
            try:
                ws = await page(url)
                await ws.close()
                n["connects"] += 1
            except (InvalidStatus, OSError, ConnectionClosed):
                n["refused"] += 1
                await asyncio.sleep(0)

    await asyncio.gather(*(loop() for _ in range(4)))
    n["held"] = len(held)


async def sender(url: str, stop: float, n: Counter[str], sid: str, frame: bytes | str) -> None:
    while time.monotonic() < stop:
        try:
            ws = await page(url)
            rx = asyncio.create_task(drain(ws))
            await ws.send(hello(sid))
            while time.monotonic() < stop:
                await ws.send(frame)
                n["frames"] += 1
        except (ConnectionClosed, InvalidStatus, OSError):
            n["closed"] += 1
            await asyncio.sleep(0.01)
        else:
            rx.cancel()
            await ws.close()


async def run(url: str, kind: str, seconds: float, ready: Path) -> dict[str, Any]:
    n: Counter[str] = Counter()
    stop = time.monotonic() + seconds
    if kind == "budget":
        job: Any = spender(url, stop, n)
    elif kind == "hellos":
        job = hellos(url, stop, n)
    elif kind == "churn":
        job = churn(url, stop, n)
    elif kind == "rate":
        job = asyncio.gather(*(sender(url, stop, n, f"7a7e{i:04x}", json.dumps(synth.status(f"7a7e{i:04x}", "measuring"))) for i in range(4)))
    elif kind == "big":
        frames = []
        for i in range(2):
            status = json.dumps(synth.status(f"b19f{i:04x}", "measuring"))
            frames.append((status[:-1] + " " * ((1 << 20) - len(status)) + "}").encode())
        job = asyncio.gather(*(sender(url, stop, n, f"b19f{i:04x}", frames[i]) for i in range(2)))
    else:
        job = asyncio.gather(
            *(
                sender(
                    url,
                    stop,
                    n,
                    f"109f{i:04x}",
                    json.dumps(
                        synth.spans_frame(
                            f"109f{i:04x}", [synth.span(f"109f{i:04x}", s, "flood", s * 1.0, 1.0, error="e" * 200, is_error=True) for s in range(500)]
                        )
                    ),
                )
                for i in range(4)
            )
        )
    task = asyncio.ensure_future(job)
    while not task.done() and sum(n.values()) < 8:  # the flood is under way before the agent is timed
        await asyncio.sleep(0.01)
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    ready.write_text("1")
    try:
        await task
    except asyncio.CancelledError:
        pass  # told to stop: the agent beside it is done
    return dict(n)


if __name__ == "__main__":
    os.nice(19)
    url, kind, seconds, ready = sys.argv[1], sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])
    if kind.startswith("ext-"):
        extension_route()
        kind = kind.removeprefix("ext-")
    print(json.dumps(asyncio.run(run(url, kind, seconds, ready))))
