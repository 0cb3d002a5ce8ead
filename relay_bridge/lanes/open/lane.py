"""`wmcp-top open URL`: Chromium on a page with the agent injected before any page script, its frames reaching the
relay over a binding (relay_bridge.lanes.open.pipe). Headless here; the dashboard form is wired by the front end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from relay_bridge.core.inert import inert_str
from relay_bridge.lanes.chromium import BrowserError, has_display, init_script, launch_playwright

if TYPE_CHECKING:
    import asyncio

    from relay_bridge.core.store import Store


@dataclass
class OpenHandle:
    """What `open_browser` returns: the page, and close() that ends the browser (idempotent)."""

    playwright: Any
    browser: Any
    context: Any
    page: Any
    closed: Any = None  # asyncio.Event set when the user closed the browser or page
    pipes: Any = None  # relay_bridge.lanes.open.pipe.OpenPipes: the agent's relay sockets, held here in Python

    async def close(self) -> None:
        if self.pipes is not None:
            await self.pipes.close()
        try:
            if self.browser.is_connected():
                await self.browser.close()
        except Exception:
            pass
        try:
            await self.playwright.stop()
        except Exception:
            pass
        if self.closed is not None:
            self.closed.set()


async def open_browser(
    url: str, relay: Any, headless: bool | None = None, *, browser: str | None = None, before_goto: Any = None, error_policy: str = "message"
) -> OpenHandle:
    """Launch Chromium with WebMCP on and the page agent injected before any page script (add_init_script),
    so no registration is missed; navigate to `url`. `relay` is a started relay_bridge.relay.server.Relay. The agent
    holds no token: its frames reach the relay through a binding whose other end is here (relay_bridge.lanes.open.pipe),
    so a page that patches WebSocket, fetch or postMessage finds nothing to read.
    Headed when a display exists unless `headless` says otherwise. `before_goto(page)` (a coroutine function)
    runs once the page exists, before it loads `url` (the DevTools lane of --check-lanes attaches there).
    `error_policy` (`message`, `name`, `none`): what the agent keeps of a thrown error, as a page's own
    `__WMCP_CONFIG__.errorPolicy` would say (a configuration the page sets itself still wins)."""
    import asyncio

    from relay_bridge.lanes.open.pipe import OpenPipes
    from relay_bridge.relay.assets import open_script

    script = open_script()
    if script is None:
        raise BrowserError("the page agent is not built: run `node page_agent/build.mjs`")
    if headless is None:
        headless = not has_display()
    pw, b = await launch_playwright(browser=browser, headless=headless)
    closed = asyncio.Event()
    try:
        context = await b.new_context()
        pipes = OpenPipes(relay.snippet.ws_url)
        await pipes.install(context, config_prefix(error_policy) + init_script(script))
        page = await context.new_page()
        handle = OpenHandle(pw, b, context, page, closed, pipes)
        b.on("disconnected", lambda *_: closed.set())
        page.on("close", lambda *_: closed.set())
        if before_goto is not None:
            await before_goto(page)
        await page.goto(url, wait_until="commit")
    except Exception as exc:
        await b.close()
        await pw.stop()
        if isinstance(exc, BrowserError):
            raise
        raise BrowserError(f"cannot open {url}: {str(exc).splitlines()[0][:200]}") from None
    return handle


def config_prefix(error_policy: str) -> str:
    """The agent's configuration ahead of it in the init script: only what differs from its defaults."""
    import json

    if error_policy == "message":
        return ""
    return f"window.__WMCP_CONFIG__ = Object.assign({{errorPolicy: {json.dumps(error_policy)}}}, window.__WMCP_CONFIG__ || {{}});\n"


# -- `wmcp-top open URL` headless (the dashboard form is wired by the front end) -------------------------------


def add_arguments(parser: Any) -> None:
    from relay_bridge.cli import add_relay_options

    parser.add_argument("url", help="the page to open")
    parser.add_argument("--headless", action="store_true", help="no window (the default when there is no display)")
    parser.add_argument("--browser", metavar="PATH", help="Chromium to use (default: $WMCP_CHROMIUM, then PATH)")
    parser.add_argument("--report-on-exit", metavar="DIR", help="on exit write DIR/<session>.json and DIR/capture.json")
    parser.add_argument(
        "--error-policy",
        choices=("message", "name", "none"),
        default="message",
        help="what the agent keeps of a thrown error: its message (200 chars, the default), its name, or nothing",
    )
    parser.add_argument(
        "--check-lanes",
        action="store_true",
        help="also watch the page over the DevTools Protocol (WebMCP domain) and, on exit, print every call "
        "where that lane and the page agent differ (missing on one side, other bytes, other outcome); "
        "exit 1 when any differs. A string result holding JSON text is labelled 'not comparable' by bytes, not a "
        "difference (the DevTools lane receives it parsed). No dashboard: one line per call as each lane records it",
    )
    add_relay_options(parser)


COMMAND = "open"


def add_parser(subparsers: Any) -> Any:
    parser = subparsers.add_parser("open", help="open a page in Chromium with WebMCP on and the agent injected")
    add_arguments(parser)
    return parser


def _say(line: str) -> None:
    print(line, flush=True)


async def announce_sessions(store: Store, changed: asyncio.Event, *done: asyncio.Event, say: Callable[[str], None] = _say) -> None:
    """Say one line per new session of `store` until any of the `done` events is set; `changed` is set by the
    store's wake hook. Sessions are read before each wait, not only after a wake: a page whose hello came in
    before the hook was listening (Chromium launching on a loaded machine) and that has been quiet since is
    announced too."""
    import asyncio

    known: set[str] = set()
    waiters = {asyncio.ensure_future(event.wait()) for event in done}
    try:
        while True:
            changed.clear()
            for session in list(store.sessions.values()):
                if session.id not in known:
                    known.add(session.id)
                    # Page text (origin, path, agent name): inert, so a page's CR/LF never starts a line of its own.
                    where = inert_str(session.info.origin + session.info.path, 200)
                    say(f"{session.id} {where}: new session ({inert_str(session.agent, 80)}, {session.info.context})")
            if any(event.is_set() for event in done):
                return
            change = asyncio.ensure_future(changed.wait())
            await asyncio.wait(waiters | {change}, return_when=asyncio.FIRST_COMPLETED)
            change.cancel()
    finally:
        for waiter in waiters:
            waiter.cancel()


async def _open_main(args: Any) -> int:
    import asyncio
    import signal
    from pathlib import Path as _Path

    from relay_bridge import cli as core
    from relay_bridge import errors
    from relay_bridge.core.store import Store

    store = Store(buffer=args.buffer)
    # Listening before the browser starts: a page whose agent says hello while Chromium is still launching (a
    # loaded machine) wakes the loop below like any later one.
    changed = asyncio.Event()
    store.wake = changed.set
    relay = await core.start_relay(core.relay_config(args), store)
    handle = None
    from relay_bridge.lanes.open.check import LaneCheck

    check = LaneCheck(store) if getattr(args, "check_lanes", False) else None
    if check is not None:  # the check reads every session's spans as they come (relay_bridge.core.watching)
        relay.watching.show_every("check-lanes")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before the launch: a Ctrl-C while Chromium starts stops too
        loop.add_signal_handler(sig, stop.set)
    loop.set_exception_handler(lambda lp, context: quiet_after_stop(lp, context, stop))
    try:
        try:
            handle = await open_browser(
                args.url,
                relay,
                True if args.headless else None,
                browser=args.browser,
                before_goto=check.attach if check is not None else None,
                error_policy=args.error_policy,
            )
        except Exception as exc:
            if await interrupted(stop):
                print("wmcp-top open: interrupted while Chromium was starting", flush=True)
                return 130
            if isinstance(exc, BrowserError):
                raise errors.UsageError(str(exc)) from None
            raise
        if stop.is_set():  # Ctrl-C before the driver started: it launched unharmed, and is closed below
            print("wmcp-top open: interrupted while Chromium was starting", flush=True)
            return 130
        print(
            f"wmcp-top open: {args.url} in Chromium, agent injected; relay on http://127.0.0.1:{relay.port}"
            + ("; DevTools lane watching too (--check-lanes)" if check is not None else ""),
            flush=True,
        )
        await announce_sessions(store, changed, stop, handle.closed)
        print("wmcp-top open: " + ("browser closed" if handle.closed.is_set() and not stop.is_set() else "stopping"), flush=True)
    finally:
        if handle is not None:
            await handle.close()
        store.wake = None
        await relay.stop()
        if args.report_on_exit:
            for path in core.write_reports(store, _Path(args.report_on_exit)):
                print(f"wrote {path}", flush=True)
    return check.report() if check is not None else 0


async def interrupted(stop: Any) -> bool:
    """Whether a failure while Chromium starts is a Ctrl-C's doing. The terminal sends SIGINT to the whole process
    group: Playwright's driver and Chromium end too, and the launch fails ("Connection closed while reading from the
    driver", "Target page, context or browser has been closed"), which is no fault of the URL or the browser. The
    signal reached this process no later than the failure it caused; one turn of the loop runs its handler."""
    import asyncio

    await asyncio.sleep(0)
    return bool(stop.is_set())


def quiet_after_stop(loop: Any, context: dict[str, Any], stop: Any) -> None:
    """Ctrl-C reaches the whole process group, Playwright's driver too: it exits, and the futures of its
    pipe fail ("Connection closed while reading from the driver") with nobody left to read them. Once we are
    stopping, that is the expected end, not an error to print (asyncio's "Future exception was never retrieved")."""
    exc = context.get("exception")
    if stop.is_set() and exc is not None and ("Connection closed" in str(exc) or type(exc).__module__.startswith("playwright")):
        return
    loop.default_exception_handler(context)


def run(args: Any) -> int:
    import asyncio

    from relay_bridge import errors

    try:
        return asyncio.run(_open_main(args))
    except errors.UsageError as exc:
        return errors.fail(str(exc))
    except KeyboardInterrupt:
        return 130


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="wmcp-top open", description="Open a page in Chromium with WebMCP on and the page agent injected.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    import sys

    sys.exit(main())
