"""The flood of issue 48 over real sockets, as a page and three iframes of its own domains send it: one socket a
session, each with its origin's Origin header, registering the same 1,024 tool names with slightly different
definitions (tests/findings/flood.py), paced inside the relay's rate caps so every frame is stored. Runs as its
own process at nice 19 (what is measured is the relay's answer, not this process's share of a core).

  python -m tests.bench.findings_load URL SESSIONS_PER_ORIGIN READY_FILE

Writes READY_FILE once every frame is sent and answered to a ping, then holds its sockets until SIGTERM; prints
what it sent and the errors it got as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.findings.flood import flood_frames  # noqa: E402  (the repository is put on sys.path above)

PER_SOCKET_PER_SECOND = 200  # 15 sockets an origin: 3,000 frames/s, under the origin's 8,000


async def drain(ws: ClientConnection, codes: Counter[str]) -> None:
    try:
        async for message in ws:
            reply = json.loads(message)
            codes[reply.get("code") or reply["type"]] += 1
    except ConnectionClosed:
        codes["closed"] += 1


async def session(url: str, origin: str, frames: list[str], codes: Counter[str], sent: Counter[str]) -> ClientConnection:
    ws = await connect(url, origin=origin, compression=None, max_size=None)  # type: ignore[arg-type]  # websockets types `origin` as its Origin NewType; a str is what it sends
    asyncio.get_running_loop().create_task(drain(ws, codes))
    for i, text in enumerate(frames):
        await ws.send(text)
        sent["frames"] += 1
        if i % 20 == 19:
            await asyncio.sleep(20 / PER_SOCKET_PER_SECOND)
    await (await ws.ping())
    return ws


async def run(url: str, sessions: int, ready: Path) -> dict[str, object]:
    by_conn: dict[int, tuple[str, list[str]]] = {}
    for conn, origin, frame in flood_frames(sessions=sessions):
        by_conn.setdefault(conn, (origin, []))[1].append(json.dumps(frame))
    codes: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    sockets = await asyncio.gather(*(session(url, origin, frames, codes, sent) for origin, frames in by_conn.values()))
    ready.write_text("1")
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    for ws in sockets:
        await ws.close()
    return {"sockets": len(sockets), "sent": dict(sent), "replies": dict(codes)}


def main() -> None:
    os.nice(19)
    url, sessions, ready = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    print(json.dumps(asyncio.run(run(url, sessions, ready))))


if __name__ == "__main__":
    main()
