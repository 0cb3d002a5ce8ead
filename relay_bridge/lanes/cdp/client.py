"""A small Chrome DevTools Protocol client: one WebSocket to the browser endpoint, flat sessions.

`await CDPClient.connect(url)` accepts `http://host:port` (resolved through `/json/version`) or a
`ws://…/devtools/browser/…` URL. `send()` awaits the command's result; events go to `on_event(method, params,
session_id)`. Messages are parsed and handed over one at a time: the lane measures and drops what it must not keep.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

log = logging.getLogger("wmcp_top.cdp")

START_HINT = (
    "start Chrome or Chromium with --remote-debugging-port=9222 "
    "--enable-features=WebMCPTesting,DevToolsWebMCPSupport and its own --user-data-dir, "
    "then run: wmcp-top attach --cdp http://127.0.0.1:9222"
)

# For the status view of a CDP session or of `attach` waiting for a browser: one sentence and the steps.
STATUS_HELP = (
    "attach --cdp watches a browser through its DevTools port; nothing is injected in the page.",
    "start it with: chromium --remote-debugging-port=9222 --user-data-dir=/tmp/wmcp-cdp "
    "--enable-features=WebMCPTesting,DevToolsWebMCPSupport --enable-experimental-web-platform-features",
    "(recent Chrome ignores the debugging port on the default profile: give it its own --user-data-dir)",
    "then: wmcp-top attach --cdp http://127.0.0.1:9222 (tabs opened later are watched too)",
)


class CDPError(Exception):
    """A command answered with an error, or the endpoint is unreachable."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


def _version_url(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme not in ("http", "https"):
        raise CDPError(f"not a DevTools endpoint: {url} (use http://host:port or ws://…/devtools/browser/…)")
    return f"{parts.scheme}://{parts.netloc}/json/version"


def resolve_endpoint(url: str, timeout: float = 5.0) -> tuple[str, dict[str, Any]]:
    """(browser WebSocket URL, /json/version document). Blocking: call it in a thread."""
    if url.startswith(("ws://", "wss://")):
        return url, {}
    version_url = _version_url(url)
    try:
        with urllib.request.urlopen(version_url, timeout=timeout) as resp:
            doc = json.loads(resp.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CDPError(f"cannot reach a DevTools endpoint at {url} ({reason}); {START_HINT}") from None
    ws = doc.get("webSocketDebuggerUrl") if isinstance(doc, dict) else None
    if not isinstance(ws, str):
        raise CDPError(f"{version_url} names no webSocketDebuggerUrl; {START_HINT}")
    return ws, doc


class CDPClient:
    def __init__(self, ws: ClientConnection, version: dict[str, Any]) -> None:
        self.ws = ws
        self.version = version
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.on_event: Callable[[str, dict[str, Any], str | None], Any] | None = None
        self._reader: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()

    @classmethod
    async def connect(cls, url: str) -> CDPClient:
        ws_url, version = await asyncio.to_thread(resolve_endpoint, url)
        try:
            ws = await connect(ws_url, max_size=None, compression=None, open_timeout=10, ping_interval=None)
        except (TimeoutError, OSError, Exception) as exc:  # websockets raises several kinds
            raise CDPError(f"cannot open the DevTools WebSocket {ws_url} ({exc}); {START_HINT}") from None
        client = cls(ws, version)
        client._reader = asyncio.get_running_loop().create_task(client._read())
        return client

    async def send(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None, timeout: float = 15.0) -> Any:
        msg_id = next(self._ids)
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            await self.ws.send(json.dumps(message))
            return await asyncio.wait_for(future, timeout)
        except ConnectionClosed:
            raise CDPError("the browser closed the DevTools connection") from None
        finally:
            self._pending.pop(msg_id, None)

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                del raw  # the text may carry tool bodies: nothing keeps it past the handler below
                if not isinstance(message, dict):
                    continue
                if "id" in message:
                    future = self._pending.get(message["id"])
                    if future is not None and not future.done():
                        err = message.get("error")
                        if err:
                            future.set_exception(CDPError(str(err.get("message", "error"))[:300], err.get("code")))
                        else:
                            future.set_result(message.get("result", {}))
                    continue
                method = message.get("method")
                if isinstance(method, str) and self.on_event is not None:
                    try:
                        result = self.on_event(method, message.get("params") or {}, message.get("sessionId"))
                        if asyncio.iscoroutine(result):  # never awaited here: it may send and wait for a reply
                            asyncio.get_running_loop().create_task(result)
                    except Exception:  # a handler bug must not end the watch
                        log.exception("CDP event handler failed for %s", method)
        except ConnectionClosed:
            pass
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(CDPError("the browser closed the DevTools connection"))

    async def close(self) -> None:
        await self.ws.close()
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (TimeoutError, asyncio.CancelledError):
                self._reader.cancel()
