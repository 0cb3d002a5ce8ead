"""The `open` lane's channel: the page's agent reaches the relay through a Playwright binding, never a socket of
its own, so the relay's token never enters the page (docs/security.md, "The open lane").

`wmcp-top open` injects `dist/open.js` (no address, no token) and exposes the binding `__wmcpTopOpen` on the
browser context. Each `connect` from a frame dials the relay here, in Python, over a real WebSocket whose
`Origin` header is the frame's origin as the browser reports it (so the relay checks every hello of it as it
checks a page's own socket); `send` queues a frame for it (kept in order), `recv` long-polls the relay's frames,
`close` ends it. A page's script may call the binding too: it gets a relay socket of its own origin, as its own
script tag would, within the caps below. A frame's next document closes its previous document's sockets, as a
browser closes a page's WebSockets when it leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import WebSocketException
from websockets.typing import Origin

OPEN_BINDING = "__wmcpTopOpen"  # page_agent/src/transport/binding.js
MAX_PER_FRAME = 16  # sockets one document may hold (the bridge's and the extension's own cap per frame)
MAX_PIPES = 256
MAX_FRAME_CHARS = 1 << 20  # the relay's frame cap; bigger is dropped here
MAX_INBOX = 10_000  # relay frames not yet fetched by the page: past this the page is not reading; closed
POLL_SECONDS = 15.0  # a recv with nothing to say answers after this (the page polls again)


def frame_origin(frame: Any) -> str:
    """The origin of a Playwright frame's document: its URL's, or for about:blank / about:srcdoc its parent's
    (the document inherits it); "null" for what has none."""
    while frame is not None:
        url = str(getattr(frame, "url", "") or "")
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname:
            port = f":{parts.port}" if parts.port is not None else ""
            host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
            return f"{parts.scheme}://{host}{port}"
        if parts.scheme != "about":
            return "null"
        frame = getattr(frame, "parent_frame", None)
    return "null"


@dataclass(eq=False)
class _Pipe:
    id: int
    frame: Any
    doc: str
    ws: ClientConnection
    inbox: deque[str] = field(default_factory=deque)
    out: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    closed: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class OpenPipes:
    """Every relay socket the `open` lane holds for the pages of one browser context."""

    def __init__(self, ws_url: str) -> None:
        self.ws_url = ws_url
        self._ids = itertools.count(1)
        self.pipes: dict[int, _Pipe] = {}
        self.refused = 0  # connects over a cap, and calls naming no socket of the calling frame

    async def install(self, context: Any, script: str) -> None:
        """Expose the binding, then inject the agent (`script`, dist/open.js) into every frame of `context`
        before any page script: the binding exists by the time the agent reads it."""
        await context.expose_binding(OPEN_BINDING, self.call)
        await context.add_init_script(script=script)
        context.on("page", self._watch)
        for page in context.pages:
            self._watch(page)

    def _watch(self, page: Any) -> None:
        page.on("framedetached", lambda frame: self._close_frame(frame, None))
        page.on("close", self._close_page)

    def _close_page(self, page: Any) -> None:
        for pipe in [p for p in self.pipes.values() if getattr(p.frame, "page", None) is page]:
            self._close(pipe)

    async def call(self, source: dict[str, Any], msg: Any) -> Any:
        """The binding: one call from a frame's agent (or any script of that frame)."""
        frame = source.get("frame")
        if not isinstance(msg, dict) or frame is None:
            return None
        kind = msg.get("t")
        if kind == "connect":
            return await self._connect(frame, str(msg.get("doc", ""))[:32])
        pid = msg.get("id")
        pipe = self.pipes.get(pid) if isinstance(pid, int) else None
        if pipe is None or pipe.frame is not frame:
            self.refused += 1  # another frame's socket, or none: nothing happens
            return None
        if kind == "send":
            text = msg.get("d")
            if isinstance(text, str) and len(text) <= MAX_FRAME_CHARS and not pipe.closed:
                pipe.out.put_nowait(text)  # before any await: binding calls run in the order the page made them
            return None
        if kind == "recv":
            return await self._recv(pipe)
        if kind == "close":
            self._close(pipe)
        return None

    async def _connect(self, frame: Any, doc: str) -> int | None:
        # The frame's next document: its previous document's sockets end, as a browser's would.
        self._close_frame(frame, doc)
        if len(self.pipes) >= MAX_PIPES or sum(p.frame is frame for p in self.pipes.values()) >= MAX_PER_FRAME:
            self.refused += 1
            return None
        try:
            ws = await connect(self.ws_url, origin=Origin(frame_origin(frame)), max_size=MAX_FRAME_CHARS * 4, compression=None)
        except (OSError, WebSocketException, TimeoutError):
            return None
        pipe = _Pipe(next(self._ids), frame, doc, ws)
        self.pipes[pipe.id] = pipe
        pipe.tasks = [asyncio.ensure_future(self._read(pipe)), asyncio.ensure_future(self._write(pipe))]
        return pipe.id

    async def _read(self, pipe: _Pipe) -> None:
        with contextlib.suppress(WebSocketException, OSError):
            async for message in pipe.ws:
                pipe.inbox.append(message if isinstance(message, str) else message.decode("utf-8", "replace"))
                pipe.wake.set()
                if len(pipe.inbox) > MAX_INBOX:
                    break
        self._close(pipe, unread=len(pipe.inbox) <= MAX_INBOX)

    async def _write(self, pipe: _Pipe) -> None:
        """Frames in the order the page sent them; what was queued before a close (a `bye`) still leaves."""
        with contextlib.suppress(WebSocketException, OSError):
            while (text := await pipe.out.get()) is not None:
                await pipe.ws.send(text)
        self._close(pipe)
        with contextlib.suppress(WebSocketException, OSError):
            await pipe.ws.close()

    async def _recv(self, pipe: _Pipe) -> dict[str, Any]:
        if not pipe.inbox and not pipe.closed:
            pipe.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(pipe.wake.wait(), POLL_SECONDS)
        frames = list(pipe.inbox)
        pipe.inbox.clear()
        if pipe.closed:
            self.pipes.pop(pipe.id, None)  # its last frames are read: the socket is gone for the page too
        return {"m": frames, "closed": pipe.closed}

    def _close_frame(self, frame: Any, keep_doc: str | None) -> None:
        for pipe in [p for p in self.pipes.values() if p.frame is frame and p.doc != keep_doc]:
            self._close(pipe)

    def _close(self, pipe: _Pipe, unread: bool = False) -> None:
        """The socket ends. `unread`: the relay closed it, and the frames it sent last (an error saying why) wait
        for the page's next recv, which ends the pipe; any other end drops the pipe now."""
        if not pipe.closed:
            pipe.closed = True
            pipe.wake.set()
            pipe.out.put_nowait(None)
        if not (unread and pipe.inbox):
            self.pipes.pop(pipe.id, None)

    async def close(self) -> None:
        pipes = list(self.pipes.values())
        for pipe in pipes:
            self._close(pipe)
        tasks = [t for pipe in pipes for t in pipe.tasks]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
