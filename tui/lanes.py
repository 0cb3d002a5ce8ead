"""The browser lanes in the dashboard: `wmcp-top attach --cdp URL` and `wmcp-top open URL`.

Each is a feed (a coroutine run by the app on its own loop, next to its relay, cancelled when the app quits):

- `cdp_feed(url)`: relay_bridge.lanes.cdp.attach(url, app.store, stop_event=...) until the app quits or the browser
  goes away. A DevTools endpoint that cannot be reached is a UsageError: one line, exit code 2. CDP sessions
  land in the same store as page-agent sessions (their agent is `cdp/...`, their tabs are marked `cdp`).
- `open_feed(url, headless, browser)`: relay_bridge.lanes.open.lane.open_browser(url, app.relay, ...). The user closing
  the browser (handle.closed) quits the app cleanly; quitting the app closes the browser (the feed is cancelled
  and its `finally` closes it before the relay stops).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from relay_bridge.core.protocol import ErrorPolicy
from relay_bridge.errors import UsageError

if TYPE_CHECKING:
    from tui.app import WmcpTopApp


def cdp_feed(url: str, error_policy: ErrorPolicy = "message"):
    async def feed(app: WmcpTopApp) -> None:
        from relay_bridge.lanes.cdp import CDPError, attach

        stop = asyncio.Event()
        log = app.relay.session_log if app.relay is not None else None
        ready = asyncio.Event()
        app.lane_state = "connecting"
        task = asyncio.ensure_future(
            attach(url, app.store, stop_event=stop, ready=ready, error_policy=error_policy, on_frame=log.frame if log is not None else None)
        )

        async def announce() -> None:
            await ready.wait()
            app.lane_state = "connected: every page target has WebMCP enabled; tabs opened later are watched too"
            app.notify("attached over the DevTools Protocol: open or use a page with WebMCP tools", title="attach", timeout=5)

        announcer = asyncio.ensure_future(announce())
        try:
            lane = await asyncio.shield(task)
        except CDPError as exc:
            raise UsageError(str(exc)) from None
        except asyncio.CancelledError:
            stop.set()  # the app is quitting: let attach close its DevTools connection
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 5)
            raise
        finally:
            announcer.cancel()
        if lane.no_domain:
            app.lane_state = "the browser refused WebMCP.enable"
            app.notify(
                "the browser refused WebMCP.enable: restart it with --enable-features=WebMCPTesting,DevToolsWebMCPSupport",
                severity="error",
                timeout=15,
            )
        else:
            app.lane_state = "the browser closed the DevTools connection (the sessions stay here to read and export)"
            app.notify("the browser closed the DevTools connection", severity="warning", timeout=10)

    return feed


def open_feed(url: str, headless: bool | None = None, browser: str | None = None, error_policy: str = "message"):
    async def feed(app: WmcpTopApp) -> None:
        from relay_bridge.lanes.chromium import BrowserError
        from relay_bridge.lanes.open.lane import open_browser

        if app.relay is None:  # pragma: no cover - run_app always gives `open` a relay
            raise UsageError("open needs the relay")
        app.lane_state = f"starting Chromium for {url}"
        try:
            handle: Any = await open_browser(url, app.relay, headless, browser=browser, error_policy=error_policy)
        except BrowserError as exc:
            raise UsageError(str(exc)) from None
        app.open_handle = handle
        app.lane_state = f"{url} open in Chromium, agent injected (closing the browser quits)"
        try:
            await handle.closed.wait()
        finally:
            await handle.close()  # idempotent; on quit (cancelled) this ends the browser before the relay stops
            app.open_handle = None
        app.lane_state = "the browser was closed"
        app.exit(return_code=0)

    return feed
