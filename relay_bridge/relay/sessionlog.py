"""The session log: every accepted frame appended as one JSON line, for crash recovery and `replay`.

Lines: `{"t": epoch_ms, "c": conn, "f": frame}` for a frame, `{"t":…, "c":…, "open": true, "o"?: origin}` and
`"close": true` for connections, and `{"t":…, "c":…, "rej": code, "n": count, "s"?: session, "x"?: 1, "lim"?: cap}` for
refused frames (counted over a flush; `s` when the refusal counted against that session, `x` when the socket
named a session it does not own, `lim` for a memory cap), so a replay rebuilds the refusal counts too.

Faults (README, "Files"): a buffered line is written within 100 ms, or at once when FLUSH_BYTES are waiting,
and only in whole lines (a failed write is cut back to the last whole line and retried later); a write error
is said once (`error`, read by the status view and `wmcp-top relay`). Nothing accepted is dropped: the server
asks `admit` before it accepts a frame, and a frame that would take the bytes accepted but not yet written past
`max_buffer`, or its origin's share of them (`origin_buffer`), is refused (`log_full`, never acked: the agent
keeps it and sends it again), so a page outpacing a flush, or a disk refusing, costs refusals, not lines (docs/
limits.md). Only the small lines the relay writes on its own (a connection, refusal counts) may pass the bound;
past `max_buffer` twice over the oldest of those go, counted in `dropped` and said. A part is rotated as soon as the next line would take it past `rotate_bytes`.

Bounds (README, "Files"): other runs are pruned to `keep_files` / `keep_bytes`. The current run is bounded by
`run_bytes` on its own: a page holding the token can send valid frames at the relay's rate caps (~44 MB/s of
log), so when a new part would take the run past it, the oldest parts after the first are deleted: the first
holds the hellos and tools of the sessions that were there from the start, the newest hold what just happened.
What was deleted is counted (`capped_parts`, `capped_lines`, `capped_bytes`, `capped`) and logged once, and
the gap in the parts' numbers marks it in the log itself (a replay says which parts are missing).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import Counter, deque
from collections.abc import Callable
from pathlib import Path

import msgspec

FLUSH_SECONDS = 0.1  # the promise is 250 ms; half of that leaves room for a busy loop
ROTATE_BYTES = 16 * 1000 * 1000
KEEP_FILES = 20
KEEP_BYTES = 200 * 1000 * 1000
# The current run's own bound on disk. 1 GiB is five times what all older runs may keep together, so a real
# run is not cut short, yet a flood at the relay's rate caps reaches it in ~25 s: from there the run's disk use
# stops growing (first part + newest parts), so a page can cost the disk this plus `keep_bytes`, never 150 GB/hour.
# Strict: a line is at most one frame (1 MiB) < `rotate_bytes`, so no part is ever larger than `rotate_bytes`.
RUN_BYTES = 1024 * 1024 * 1024
MAX_BUFFER_BYTES = 8 * 1024 * 1024  # accepted but not yet written, all origins together (`admit`)
ORIGIN_BUFFER_BYTES = 4 * 1024 * 1024  # of those, one origin's share: another origin's frames still get in
# A healthy disk is written as soon as this much waits, not only every FLUSH_SECONDS: a page sending faster
# than one flush window holds never reaches the bounds above (each write of this much takes about a millisecond).
FLUSH_BYTES = 1024 * 1024

_enc = msgspec.json.Encoder()
log = logging.getLogger("wmcp_top.sessionlog")


class SessionLog:
    def __init__(
        self,
        directory: Path,
        *,
        rotate_bytes: int = ROTATE_BYTES,
        keep_files: int = KEEP_FILES,
        keep_bytes: int = KEEP_BYTES,
        max_buffer: int = MAX_BUFFER_BYTES,
        run_bytes: int = RUN_BYTES,
        origin_buffer: int = ORIGIN_BUFFER_BYTES,
        flush_bytes: int = FLUSH_BYTES,
    ) -> None:
        self.directory = directory
        self.rotate_bytes = rotate_bytes
        self.keep_files = keep_files
        self.keep_bytes = keep_bytes
        # Never less than the first part plus the one being written: those two are never deleted.
        self.run_bytes = max(run_bytes, 2 * rotate_bytes)
        self.max_buffer = max_buffer
        self.origin_buffer = origin_buffer
        self.flush_bytes = flush_bytes
        self._buf: deque[tuple[str | None, bytes]] = deque()  # (origin key, line), oldest first
        self._buffered = 0
        self._unwritten: Counter[str] = Counter()  # buffered bytes of each origin key's frames
        self.refused = 0  # frames refused by `admit` (the store counts them too, as `rejected:log_full`)
        self._refusals: Counter[tuple[int, str, str | None, bool, str | None]] = Counter()
        self._fd: int | None = None
        self._size = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        # The flush timer is armed by the first line buffered after a flush: an idle relay has no timer waking it.
        self._timer: asyncio.TimerHandle | None = None
        self._part = 0
        self._lines = 0  # lines written to the current part
        self._first: Path | None = None  # this run's first part: kept whatever the cap
        self._closed_parts: deque[tuple[Path, int, int]] = deque()  # later finished parts, oldest first: path, bytes, lines
        self._closed_bytes = 0
        self.capped_parts = 0  # parts of this run deleted by `run_bytes`
        self.capped_lines = 0  # the lines they held
        self.capped_bytes = 0
        self.path: Path | None = None  # the part being written; None until the first line
        self.error: str | None = None  # the write error while logging is failing; None when it works
        self.dropped = 0  # relay-made lines (connections, refusal counts) dropped past twice `max_buffer`
        self.errors = 0  # write errors seen (each episode said once)
        self.on_health: Callable[[], None] | None = None  # told when writing fails or works again
        self._closed = False
        directory.mkdir(parents=True, exist_ok=True)
        self._stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
        # The first part is made with the first line to write: a run no page ever reached leaves no empty file.

    def _open(self) -> None:
        path = self.directory / f"session-{self._stamp}-{self._part + 1:03d}.jsonl"
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._part += 1
        self.path = path
        self._size = os.fstat(self._fd).st_size
        self._lines = 0
        if self._first is None:
            self._first = path
        self._prune()
        self._cap_run()

    def _cap_run(self) -> None:
        """Delete the oldest parts after the first until the run, with a full part being written, fits `run_bytes`."""
        first = self._first_bytes()
        while self._closed_parts and first + self._closed_bytes + self.rotate_bytes > self.run_bytes:
            path, size, lines = self._closed_parts.popleft()
            self._closed_bytes -= size
            path.unlink(missing_ok=True)  # a part deleted by hand is still counted as dropped: it is gone either way
            if self.capped_parts == 0:
                log.warning("session log: this run reached its %d-byte cap; deleting its oldest parts after the first", self.run_bytes)
            self.capped_parts += 1
            self.capped_lines += lines
            self.capped_bytes += size

    def _first_bytes(self) -> int:
        if self._first is None or self._first == self.path:
            return 0  # the first part is the one being written: counted as the part being written
        try:
            return self._first.stat().st_size
        except OSError:
            return 0

    @property
    def capped(self) -> str | None:
        """One line for a status view while the run's cap has dropped lines; None while nothing was."""
        if not self.capped_parts:
            return None
        return (
            f"run capped at {self.run_bytes} bytes: {self.capped_lines} lines in {self.capped_parts} oldest parts "
            f"({self.capped_bytes} bytes) deleted; the first part and the newest kept"
        )

    def _prune(self) -> None:
        """Keep the newest files within the limits; never a part of the run being written. A name that cannot be
        looked at (a dangling symlink, a file deleted meanwhile) is not ours and no write error: passed over."""
        mine = f"session-{self._stamp}-"
        found: list[tuple[float, int, Path]] = []
        for f in self.directory.glob("session-*.jsonl"):
            if f.name.startswith(mine):
                continue
            try:
                st = f.stat()
            except OSError:
                continue
            found.append((st.st_mtime, st.st_size, f))
        found.sort(key=lambda item: item[0], reverse=True)
        total = 0
        kept = 0
        for _, size, f in found:
            total += size
            kept += 1
            if kept > self.keep_files or total > self.keep_bytes:
                f.unlink(missing_ok=True)

    # -- what is logged -----------------------------------------------------------------------------------

    def admit(self, key: str, size: int) -> bool:
        """May a frame of `size` bytes from origin `key` be accepted? Its line must fit the bounds on what waits
        unwritten (see the module's docstring); asked before the store applies it, so what is refused is neither
        stored nor acked, and a replay rebuilds exactly what the live relay kept."""
        size += 64  # the line's envelope
        if self._buffered + size <= self.max_buffer and self._unwritten[key] + size <= self.origin_buffer:
            return True
        self.refused += 1
        return False

    def _append(self, line: bytes, key: str | None = None) -> None:
        self._push(line, key)
        if self._buffered >= self.flush_bytes and self.error is None and self._loop is not None:
            self.flush()  # a page outpacing the flush window: written now, not held (see FLUSH_BYTES)
        self._arm()

    def _push(self, line: bytes, key: str | None = None) -> None:
        self._buf.append((key, line))
        self._buffered += len(line)
        if key is not None:
            self._unwritten[key] += len(line)
        # Frames are bounded by `admit`; only relay-made lines get here past it, and they are few and small.
        while self._buffered > 2 * self.max_buffer and len(self._buf) > 1:
            gone_key, gone = self._buf.popleft()
            self._taken(gone_key, gone)
            self.dropped += 1

    def _taken(self, key: str | None, line: bytes) -> None:
        self._buffered -= len(line)
        if key is not None:
            self._unwritten[key] -= len(line)
            if self._unwritten[key] <= 0:
                del self._unwritten[key]

    def frame(self, conn: int, raw: bytes, frame: msgspec.Struct | None = None, key: str | None = None, t: float | None = None) -> None:
        """Append one accepted frame (of origin `key`, admitted by `admit`). `raw` is the validated text;
        re-encoded only if it spans lines. `t` (epoch seconds): the time the store applied it at, when known."""
        body = raw if b"\n" not in raw and b"\r" not in raw else _enc.encode(frame)
        self._append(b'{"t":%.3f,"c":%d,"f":' % ((time.time() if t is None else t) * 1000, conn) + body + b"}\n", key)

    def connection(self, conn: int, opened: bool, origin: str | None = None, t: float | None = None) -> None:
        """A socket opened (with its handshake's Origin, so a replay keeps the same shares) or closed, at `t`
        (epoch seconds) when the store stamped it."""
        self._emit_refusals()  # counted before the socket's close, in order
        at = (time.time() if t is None else t) * 1000
        line = b'{"t":%.3f,"c":%d,"%s":true' % (at, conn, b"open" if opened else b"close")
        self._append(line + (b',"o":' + _enc.encode(origin) if origin is not None else b"") + b"}\n")

    def squat(self, conn: int, session: str) -> None:
        """The squatter on `conn` lost its copy of `session` to the owner (written before the owner's hello)."""
        self._emit_refusals()
        self._append(b'{"t":%.3f,"c":%d,"squat":' % (time.time() * 1000, conn) + _enc.encode(session) + b"}\n")

    def refusal(self, conn: int, code: str, session: str | None, not_owner: bool, cap: str | None, n: int = 1) -> None:
        """Count a refused frame; written as one line per kind at the next flush."""
        self._refusals[(conn, code, session, not_owner, cap)] += n
        self._arm()

    def _emit_refusals(self) -> None:
        if not self._refusals:
            return
        t = time.time() * 1000
        for (conn, code, session, not_owner, cap), n in self._refusals.items():
            rec: dict[str, object] = {"t": round(t, 3), "c": conn, "rej": code, "n": n}
            if session is not None:
                rec["s"] = session
            if not_owner:
                rec["x"] = 1
            if cap is not None:
                rec["lim"] = cap
            self._push(_enc.encode(rec) + b"\n")
        self._refusals.clear()

    # -- writing ------------------------------------------------------------------------------------------

    def flush(self) -> None:
        """Write what is buffered, whole lines only, rotating at the promised size. Never raises."""
        if self._closed:
            return
        self._emit_refusals()
        if not self._buf:
            return
        try:
            if self._fd is None:
                self._open()
            while self._buf:
                if self._size and self._size + len(self._buf[0][1]) > self.rotate_bytes:
                    self._rotate()  # the next line would take this part past its size: a new part first
                chunk, size = self._chunk()
                self._write(chunk)
                self._lines += size
                for _ in range(size):
                    self._taken(*self._buf.popleft())
        except OSError as exc:
            if self.error is None:
                self.errors += 1
                log.error(
                    "session log: cannot write %s: %s (holding up to %d bytes unwritten; frames past that are refused, not acked)",
                    self.path,
                    exc.strerror,
                    self.max_buffer,
                )
            fresh = self.error is None
            self.error = f"{exc.strerror or exc} ({self.path})"
            if fresh and self.on_health is not None:
                self.on_health()
            return
        if self.error is not None:
            log.warning("session log: writing again after an error (%d lines dropped meanwhile)", self.dropped)
            self.error = None
            if self.on_health is not None:
                self.on_health()

    def _chunk(self) -> tuple[bytes, int]:
        """The longest run of buffered lines that fits in the current part (at least one line)."""
        room = self.rotate_bytes - self._size
        lines: list[bytes] = []
        total = 0
        for _, line in self._buf:
            if lines and total + len(line) > room:
                break
            lines.append(line)
            total += len(line)
        return b"".join(lines), len(lines)

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        start = self._size
        view = memoryview(data)
        try:
            while view:
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError:
            # Cut a torn line back off, so the file holds whole lines only; the lines stay buffered.
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                pass
            raise
        self._size = start + len(data)

    def _rotate(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if self.path is not None and self.path != self._first:
                self._closed_parts.append((self.path, self._size, self._lines))
                self._closed_bytes += self._size
        self._open()

    def _arm(self) -> None:
        if self._timer is None and self._loop is not None and not self._closed:
            self._timer = self._loop.call_later(FLUSH_SECONDS, self._flush_due)

    def _flush_due(self) -> None:
        self._timer = None
        self.flush()
        if self._buf or self._refusals:  # the disk refused: try again a moment later
            self._arm()

    def start(self) -> None:
        """Write on the running loop from now on (until then, and without a loop, only `flush()` writes)."""
        self._loop = asyncio.get_running_loop()
        if self._buf or self._refusals:
            self._arm()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()
        self._closed = True
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
