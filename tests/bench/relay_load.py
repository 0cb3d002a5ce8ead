"""Load generator and the baseline server for the relay benchmark, run as separate processes so the server
under test has a core to itself.

  python -m tests.bench.relay_load serve-plain          # prints the port; echoes a fixed ack, decodes nothing
  python -m tests.bench.relay_load load URL --clients 8 --batch 50 --seconds 5   # prints one JSON result
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

from relay_bridge.core import synth

WINDOW = 4  # frames in flight per client, like an agent flushing while acks come back


async def serve_plain() -> None:
    async def handler(ws) -> None:
        await ws.send('{"type":"welcome"}')
        async for _ in ws:
            await ws.send('{"type":"ack"}')

    async with serve(handler, "127.0.0.1", 0, compression=None, max_size=1 << 20) as server:
        print(next(iter(server.sockets)).getsockname()[1], flush=True)
        await asyncio.Future()


async def one_client(url: str, index: int, batch: int, seconds: float, latencies: list[float]) -> int:
    # A session belongs to the socket that created it: each round (a process of its own) uses ids of its own.
    sid = f"{os.getpid() % 256:02x}{index:06x}"
    frames_acked = 0
    async with connect(url, compression=None, max_size=None) as ws:
        await ws.recv()  # welcome
        await ws.send(json.dumps(synth.hello(sid)))
        await ws.recv()
        # Pre-encode frames: the client's own JSON work is not what is measured.
        frames = [
            json.dumps(
                synth.spans_frame(sid, [synth.span(sid, s, f"tool{s % 7}", s * 2.0, 1.0 + s % 5, gap=0.5) for s in range(i * batch, (i + 1) * batch)])
            )
            for i in range(400)
        ]
        sent_at: list[float] = []
        seq_frame = 0
        stop = time.perf_counter() + seconds

        acked = asyncio.Event()  # set by every ack: the window may have room again

        async def sender() -> None:
            nonlocal seq_frame
            while time.perf_counter() < stop:
                while len(sent_at) - frames_acked >= WINDOW:
                    acked.clear()
                    if len(sent_at) - frames_acked >= WINDOW:
                        await asyncio.wait_for(acked.wait(), 30)
                if time.perf_counter() >= stop:
                    return
                frame = frames[seq_frame % len(frames)]
                if seq_frame >= len(frames):  # keep seqs unique so the relay stores every span
                    base = seq_frame * batch
                    frame = json.dumps(
                        synth.spans_frame(sid, [synth.span(sid, s, f"tool{s % 7}", s * 2.0, 1.0, gap=0.5) for s in range(base, base + batch)])
                    )
                sent_at.append(time.perf_counter())
                await ws.send(frame)
                seq_frame += 1

        caught_up = asyncio.Event()  # set whenever every frame sent so far is acked

        async def receiver() -> None:
            nonlocal frames_acked
            while True:
                await ws.recv()
                latencies.append(time.perf_counter() - sent_at[frames_acked])
                frames_acked += 1
                acked.set()
                if frames_acked == len(sent_at):
                    caught_up.set()

        rx = asyncio.create_task(receiver())
        await sender()
        # The sender has stopped: wait for the acks still owed, then stop listening (never on a recv that
        # no ack will answer).
        while frames_acked < len(sent_at):
            caught_up.clear()
            if frames_acked < len(sent_at):
                await asyncio.wait_for(caught_up.wait(), 30)
        rx.cancel()
    return frames_acked


async def load(url: str, clients: int, batch: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    start = time.perf_counter()
    counts = await asyncio.gather(*(one_client(url, i, batch, seconds, latencies) for i in range(clients)))
    elapsed = time.perf_counter() - start
    latencies.sort()
    frames = sum(counts)
    return {
        "frames": frames,
        "spans": frames * batch,
        "seconds": elapsed,
        "frames_per_s": frames / elapsed,
        "spans_per_s": frames * batch / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000 if latencies else 0.0,
        "p95_ms": latencies[max(0, int(len(latencies) * 0.95) - 1)] * 1000 if latencies else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("serve-plain")
    ld = sub.add_parser("load")
    ld.add_argument("url")
    ld.add_argument("--clients", type=int, default=8)
    ld.add_argument("--batch", type=int, default=50)
    ld.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    if args.cmd == "serve-plain":
        asyncio.run(serve_plain())
    else:
        print(json.dumps(asyncio.run(load(args.url, args.clients, args.batch, args.seconds))))


if __name__ == "__main__":
    main()
