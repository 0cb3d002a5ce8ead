"""Helpers for the browser-lane tests: a quiet static server for the fixture site, a DevTools driver, store waits."""

from __future__ import annotations

import asyncio
import functools
import http.server
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from relay_bridge.core.store import Store
from relay_bridge.lanes.cdp.client import CDPClient, CDPError
from tests.liveness import LIVENESS_S

SITE = Path(__file__).resolve().parent / "site"
CANARY = "CANARY-7f3e9b21-do-not-keep"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript; charset=utf-8",
        ".mjs": "text/javascript; charset=utf-8",
        ".html": "text/html; charset=utf-8",
    }

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass


class SiteServer:
    """A quiet static server for `directory` (the fixture site unless told) on a port the OS chooses."""

    def __init__(self, directory: Path = SITE) -> None:
        handler = functools.partial(_Quiet, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.base}/index.html"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


async def wait_store(store: Store, predicate: Callable[[Store], bool], timeout: float = LIVENESS_S) -> None:
    """Wait until `predicate(store)` holds, woken by the store's own change hook (no fixed sleeps)."""
    changed = asyncio.Event()
    previous = store.wake
    store.wake = changed.set
    try:
        async with asyncio.timeout(timeout):
            while not predicate(store):
                changed.clear()
                await changed.wait()
    finally:
        store.wake = previous


class PageDriver:
    """A second DevTools connection that plays the agent: evaluates executeTool in a page target."""

    def __init__(self, client: CDPClient, session: str) -> None:
        self.client = client
        self.session = session
        self.target = ""  # the page target's id, once open() attached to one

    @classmethod
    async def open(cls, endpoint: str, url: str | None = None) -> PageDriver:
        client = await CDPClient.connect(endpoint)
        if url is not None:
            target = (await client.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        else:
            infos = (await client.send("Target.getTargets"))["targetInfos"]
            target = next(t["targetId"] for t in infos if t["type"] == "page")
        session = (await client.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
        driver = cls(client, session)
        driver.target = target
        if url is not None:
            await driver.navigate(url)
        return driver

    async def navigate(self, url: str) -> None:
        # Page.navigate answers once the new document has committed
        result = await self.client.send("Page.navigate", {"url": url}, self.session, timeout=LIVENESS_S)
        assert not result.get("errorText"), result

    async def evaluate(self, expression: str) -> Any:
        for _ in range(50):  # a context replaced by a committing navigation: run again in the new one
            try:
                return await self._evaluate(expression)
            except CDPError as exc:
                if "context was destroyed" not in str(exc) and "Cannot find context" not in str(exc):
                    raise
        raise AssertionError("the page kept navigating")

    async def _evaluate(self, expression: str) -> Any:
        result = await self.client.send(
            "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, self.session, timeout=LIVENESS_S
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"page threw: {result['exceptionDetails'].get('text')} {result['result'].get('description', '')[:300]}")
        return result["result"].get("value")

    async def wait_ready(self) -> list[str]:
        # document may still be loading: wait for the fixture's promise (page-side sync, not a sleep)
        return await self.evaluate(
            "new Promise(r => { const go = () => window.__fixtureReady ? window.__fixtureReady.then(() => r(window.__fixture.registered)) : setTimeout(go, 5); go(); })"
        )

    async def call_all(self, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """Run the calls one after another through document.modelContext.executeTool; return what the agent got."""
        script = """(async (calls) => {
          const mc = document.modelContext;
          const tools = await mc.getTools();
          const out = [];
          for (const [name, input] of calls) {
            const tool = tools.find(t => t.name === name);
            const inputJson = JSON.stringify(input);
            try {
              const value = await mc.executeTool(tool, input);
              out.push({name, ok: true, value, inputBytes: new TextEncoder().encode(inputJson).length});
            } catch (e) {
              out.push({name, ok: false, error: e.name, inputBytes: new TextEncoder().encode(inputJson).length});
            }
          }
          return out;
        })(%s)""" % json.dumps(calls)
        return await self.evaluate(script)

    async def close(self) -> None:
        try:
            await self.client.send("Target.closeTarget", {"targetId": self.target})
        except Exception:
            pass
        await self.client.close()
