"""Where `wmcp-top mcp` reads the store: the wmcp-top already on the port (its read-only view, over HTTP), or a
relay it runs itself when none answers there. The I/O edge: what the answers mean is relay_bridge.mcp.results."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any, Protocol

import msgspec

from relay_bridge.exports.capture import build_capture
from relay_bridge.mcp.results import ToolFailure
from relay_bridge.relay.server import Relay
from relay_bridge.relay.view import MAX_WAIT

PROBE_SECONDS = 2.0
# Straight to the loopback port: an HTTP proxy from the environment would see the token, or refuse.
_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Source(Protocol):
    port: int

    async def capture(self) -> dict[str, Any]: ...

    async def calls(self, after: int | None, wait: float) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class OwnRelay:
    """The relay this process runs (no wmcp-top was listening): the store is read in place, as the view would serve it."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.port = relay.port

    async def capture(self) -> dict[str, Any]:
        # Through JSON, as the view sends it: an answer is the same document whichever relay holds the pages.
        doc: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(build_capture(self.relay.store)))
        return doc

    async def calls(self, after: int | None, wait: float) -> dict[str, Any]:
        view = self.relay.view
        if after is None:
            return {"cursor": view.journal.cursor, "calls": [], "missed": 0}
        answer: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(await view.wait_calls(after, wait)))
        return answer

    async def close(self) -> None:
        await self.relay.stop()


class Attached:
    """The wmcp-top listening on `port` in another process, read through its view (relay_bridge.relay.view)."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self._token = token

    def _get(self, path: str, timeout: float) -> Any:
        url = f"http://127.0.0.1:{self.port}{path}{'&' if '?' in path else '?'}t={self._token}"
        try:
            with _LOOPBACK.open(url, timeout=timeout) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 403:
                raise ToolFailure(f"the wmcp-top on port {self.port} refused the token in this user's config directory") from None
            raise ToolFailure(f"the wmcp-top on port {self.port} answered {exc.code}: is it older than this wmcp-top mcp?") from None
        except (OSError, ValueError):
            raise ToolFailure(f"the wmcp-top on port {self.port} is gone; restart `wmcp-top mcp` (it then runs the relay itself)") from None

    async def capture(self) -> dict[str, Any]:
        doc: dict[str, Any] = await asyncio.to_thread(self._get, "/view/capture", 30.0)
        return doc

    async def calls(self, after: int | None, wait: float) -> dict[str, Any]:
        if after is None:
            doc: dict[str, Any] = await asyncio.to_thread(self._get, "/view/calls", 10.0)
            return doc
        wait = min(wait, MAX_WAIT)
        doc = await asyncio.to_thread(self._get, f"/view/calls?after={after}&wait={wait:g}", wait + 10.0)
        return doc

    async def close(self) -> None:
        """Nothing held between requests."""


def probe(port: int) -> bool | None:
    """True: a wmcp-top answers on the port; None: nothing listens; False: something else does."""
    try:
        with _LOOPBACK.open(f"http://127.0.0.1:{port}/healthz", timeout=PROBE_SECONDS) as answer:
            doc = json.loads(answer.read())
    except urllib.error.HTTPError:
        return False
    except ConnectionRefusedError:
        return None
    except urllib.error.URLError as exc:
        return None if isinstance(exc.reason, ConnectionRefusedError) else False
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("ok") is True and "version" in doc
