"""The session log: every accepted frame appended as one JSON line, for crash recovery and `replay`.

Lines: `{"t": epoch_ms, "c": conn, "f": frame}` for a frame, `{"t":…, "c":…, "open": true}` and `"close": true`
for connections. Written from a buffer at least every 250 ms (a crash loses at most that), rotated at
`rotate_bytes`, and pruned to the newest `keep_files` files and `keep_bytes` in total.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import msgspec

FLUSH_SECONDS = 0.1  # the promise is 250 ms; half of that leaves room for a busy loop
ROTATE_BYTES = 16 * 1000 * 1000
KEEP_FILES = 20
KEEP_BYTES = 200 * 1000 * 1000

_enc = msgspec.json.Encoder()


class SessionLog:
    def __init__(self, directory: Path, *, rotate_bytes: int = ROTATE_BYTES, keep_files: int = KEEP_FILES, keep_bytes: int = KEEP_BYTES) -> None:
        self.directory = directory
        self.rotate_bytes = rotate_bytes
        self.keep_files = keep_files
        self.keep_bytes = keep_bytes
        self._buf: list[bytes] = []
        self._fd: int | None = None
        self._size = 0
        self._task: asyncio.Task[None] | None = None
        self._part = 0
        self._closed = False
        self.path: Path | None = None  # the part being written; None until the first line
        directory.mkdir(parents=True, exist_ok=True)
        self._stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
        # The first part is made with the first line to write: a run no page ever reached leaves no empty file.

    def _open(self) -> None:
        self._part += 1
        self.path = self.directory / f"session-{self._stamp}-{self._part:03d}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._size = 0
        self._prune()

    def _prune(self) -> None:
        files = sorted(self.directory.glob("session-*.jsonl"), key=lambda f: f.stat().st_mtime, reverse=True)
        total = 0
        for i, f in enumerate(files):
            size = f.stat().st_size
            total += size
            if f != self.path and (i >= self.keep_files or total > self.keep_bytes):
                f.unlink(missing_ok=True)

    def frame(self, conn: int, raw: bytes, frame: msgspec.Struct | None = None) -> None:
        """Append one accepted frame. `raw` is the validated text; re-encoded only if it spans lines."""
        body = raw if b"\n" not in raw and b"\r" not in raw else _enc.encode(frame)
        self._buf.append(b'{"t":%.3f,"c":%d,"f":' % (time.time() * 1000, conn) + body + b"}\n")

    def connection(self, conn: int, opened: bool) -> None:
        self._buf.append(b'{"t":%.3f,"c":%d,"%s":true}\n' % (time.time() * 1000, conn, b"open" if opened else b"close"))

    def flush(self) -> None:
        if not self._buf:
            return
        if self._fd is None:
            if self._closed:
                return
            self._open()
            assert self._fd is not None
        data = b"".join(self._buf)
        self._buf.clear()
        os.write(self._fd, data)
        self._size += len(data)
        if self._size >= self.rotate_bytes:
            os.close(self._fd)
            self._fd = None  # the next part is made with its first line

    async def run(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            self.flush()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self.flush()
        self._closed = True
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
