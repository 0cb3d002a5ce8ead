"""Finding and starting Chromium with WebMCP switched on, for `open`, `bench` and the CDP lane's tests.

Which browser: `--browser PATH`, then `$WMCP_CHROMIUM`, then the usual names on PATH. None found is one line
that names `apt-get install chromium`. Playwright is imported only by the functions that launch through it,
so `relay_bridge` itself imports without it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .inert import inert_str

if TYPE_CHECKING:
    import asyncio

    from .store import Store

# WebMCP in a page and over the DevTools Protocol; the rest keeps a closed network quiet and root happy.
WEBMCP_FEATURES = "WebMCPTesting,DevToolsWebMCPSupport"
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    f"--enable-features={WEBMCP_FEATURES}",
    "--enable-experimental-web-platform-features",
)
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
INSTALL_HINT = "no Chromium found: apt-get install -y chromium (or pass --browser PATH / set WMCP_CHROMIUM)"


class BrowserError(Exception):
    """Chromium is missing or would not start; one line for the user."""


def find_chromium(explicit: str | None = None) -> str:
    for candidate in (explicit, os.environ.get("WMCP_CHROMIUM")):
        if candidate:
            path = shutil.which(candidate) or (candidate if os.access(candidate, os.X_OK) else None)
            if path is None:
                raise BrowserError(f"browser not found or not executable: {candidate}; apt-get install -y chromium")
            return path
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    for path in ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "/snap/bin/chromium"):
        if os.access(path, os.X_OK):
            return path
    raise BrowserError(INSTALL_HINT)


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def chromium_major(user_agent_or_product: str) -> str:
    """`Chrome/156.0.8078.108` or a user agent -> `156` (empty when absent)."""
    marker = "Chrome/"
    i = user_agent_or_product.find(marker)
    if i < 0:
        return ""
    return user_agent_or_product[i + len(marker) :].split(".", 1)[0]


@dataclass
class DebugBrowser:
    """A Chromium started with `--remote-debugging-port=0`; `endpoint` is read from its DevToolsActivePort."""

    process: subprocess.Popen[bytes]
    user_data_dir: Path
    port: int
    ws_path: str
    _tmp: Any = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        # Chromium's helpers (renderers, crashpad) outlive the browser process for a moment and keep writing
        # into the profile: end the whole process group before removing it.
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self._tmp is not None:
            _remove_profile(self._tmp)
            self._tmp = None


def _remove_profile(tmp: tempfile.TemporaryDirectory[str]) -> None:
    """A helper killed a moment ago may still have a file open: retry a few times, then leave the rest."""
    for _ in range(20):
        try:
            tmp.cleanup()
            return
        except OSError:
            time.sleep(0.05)
    shutil.rmtree(tmp.name, ignore_errors=True)


def read_devtools_active_port(user_data_dir: Path) -> tuple[int, str] | None:
    """Chromium writes `PORT\\n/devtools/browser/ID` when its DevTools server listens."""
    try:
        text = (user_data_dir / "DevToolsActivePort").read_text()
    except OSError:
        return None
    lines = text.split("\n")
    if len(lines) < 2 or not lines[0].strip().isdigit() or not lines[1].strip():
        return None
    return int(lines[0]), lines[1].strip()


def launch_debug_browser(
    url: str = "about:blank", *, browser: str | None = None, headless: bool = True, timeout: float = 30.0, extra: tuple[str, ...] = ()
) -> DebugBrowser:
    """Start Chromium with WebMCP on and `--remote-debugging-port=0`; return once DevToolsActivePort names the port.

    Chromium writes that file only after it listens, so reading it is the synchronisation (polled, since a
    file appearing has no portable notification)."""
    path = find_chromium(browser)
    tmp = tempfile.TemporaryDirectory(prefix="wmcp-chromium-")
    udd = Path(tmp.name)
    args = [path, "--remote-debugging-port=0", f"--user-data-dir={udd}", "--no-first-run", "--no-default-browser-check", *CHROMIUM_FLAGS, *extra]
    if headless:
        args.append("--headless=new")
    args.append(url)
    proc = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )  # its own process group, ended whole by close()
    deadline = time.monotonic() + timeout
    while True:
        found = read_devtools_active_port(udd)
        if found:
            return DebugBrowser(proc, udd, found[0], found[1], tmp)
        if proc.poll() is not None:
            tmp.cleanup()
            raise BrowserError(f"Chromium exited with code {proc.returncode} before its DevTools port was up")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(5)
            tmp.cleanup()
            raise BrowserError("Chromium did not write DevToolsActivePort in time")
        time.sleep(0.02)


# -- Playwright launches (open, bench) --------------------------------------------------------------------------


async def launch_playwright(*, browser: str | None = None, headless: bool = True) -> tuple[Any, Any]:
    """(playwright, browser) for the system Chromium with WebMCP on; never downloads a browser."""
    path = find_chromium(browser)
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        raise BrowserError(
            "Playwright for Python is needed: pip install 'wmcp-top[browser]' (it uses your Chromium; nothing is downloaded)"
        ) from None
    pw = await async_playwright().start()
    try:
        b = await pw.chromium.launch(executable_path=path, headless=headless, args=list(CHROMIUM_FLAGS))
    except Exception as exc:
        await pw.stop()
        raise BrowserError(f"Chromium would not start: {str(exc).splitlines()[0][:200]}") from None
    return pw, b


@dataclass
class OpenHandle:
    """What `open_browser` returns: the page, and close() that ends the browser (idempotent)."""

    playwright: Any
    browser: Any
    context: Any
    page: Any
    closed: Any = None  # asyncio.Event set when the user closed the browser or page
    pipes: Any = None  # relay_bridge.openpipe.OpenPipes: the agent's relay sockets, held here in Python

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


def init_script(agent: bytes) -> str:
    """The agent as an init script. Playwright runs init scripts in a new tab's first document too, the empty
    about:blank before the navigation: attached there it recorded a session of its own (`null … ended`), which
    replay then opened on. The guard skips that top-level about:blank and nothing else (the agent's text is one
    expression statement, so a block around it changes nothing)."""
    guard = 'if (!(window === window.top && location.href === "about:blank")) {\n'
    return guard + agent.decode("utf-8") + "\n}\n"


async def open_browser(url: str, relay: Any, headless: bool | None = None, *, browser: str | None = None, before_goto: Any = None) -> OpenHandle:
    """Launch Chromium with WebMCP on and the page agent injected before any page script (add_init_script),
    so no registration is missed; navigate to `url`. `relay` is a started relay_bridge.server.Relay. The agent
    holds no token: its frames reach the relay through a binding whose other end is here (relay_bridge.openpipe),
    so a page that patches WebSocket, fetch or postMessage finds nothing to read.
    Headed when a display exists unless `headless` says otherwise. `before_goto(page)` (a coroutine function)
    runs once the page exists, before it loads `url` (the DevTools lane of --check-lanes attaches there)."""
    import asyncio

    from .assets import open_script
    from .openpipe import OpenPipes

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
        await pipes.install(context, init_script(script))
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


# -- `wmcp-top open URL` headless (the dashboard form is wired by the front end) -------------------------------


def add_arguments(parser: Any) -> None:
    from .cli import add_relay_options

    parser.add_argument("url", help="the page to open")
    parser.add_argument("--headless", action="store_true", help="no window (the default when there is no display)")
    parser.add_argument("--browser", metavar="PATH", help="Chromium to use (default: $WMCP_CHROMIUM, then PATH)")
    parser.add_argument("--report-on-exit", metavar="DIR", help="on exit write DIR/<session>.json and DIR/capture.json")
    parser.add_argument(
        "--check-lanes",
        action="store_true",
        help="also watch the page over the DevTools Protocol (WebMCP domain) and, on exit, print every call "
        "where that lane and the page agent differ (missing on one side, other bytes, other outcome); "
        "exit 1 when any differs. No dashboard: one line per call as each lane records it",
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

    from . import cli as core
    from .store import Store

    store = Store(buffer=args.buffer)
    # Listening before the browser starts: a page whose agent says hello while Chromium is still launching (a
    # loaded machine) wakes the loop below like any later one.
    changed = asyncio.Event()
    store.wake = changed.set
    relay = await core.start_relay(core.relay_config(args), store)
    handle = None
    check = LaneCheck(store) if getattr(args, "check_lanes", False) else None
    if check is not None:  # the check reads every session's spans as they come (relay_bridge.watching)
        relay.watching.show_every("check-lanes")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # before the launch: a Ctrl-C while Chromium starts stops too
        loop.add_signal_handler(sig, stop.set)
    loop.set_exception_handler(lambda lp, context: _quiet_after_stop(lp, context, stop))
    try:
        try:
            handle = await open_browser(
                args.url, relay, True if args.headless else None, browser=args.browser, before_goto=check.attach if check is not None else None
            )
        except BrowserError as exc:
            raise core.UsageError(str(exc)) from None
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


def _quiet_after_stop(loop: Any, context: dict[str, Any], stop: Any) -> None:
    """Ctrl-C reaches the whole process group, Playwright's driver too: it exits, and the futures of its
    pipe fail ("Connection closed while reading from the driver") with nobody left to read them. Once we are
    stopping, that is the expected end, not an error to print (asyncio's "Future exception was never retrieved")."""
    exc = context.get("exception")
    if stop.is_set() and exc is not None and ("Connection closed" in str(exc) or type(exc).__module__.startswith("playwright")):
        return
    loop.default_exception_handler(context)


class LaneCheck:
    """`open --check-lanes`: the DevTools Protocol lane on the page `open` drives, in a store of its own, and at
    the end the calls where it and the page agent differ (relay_bridge.lanecheck)."""

    CDP_SESSION = "page"
    EVENTS = ("WebMCP.toolsAdded", "WebMCP.toolsRemoved", "WebMCP.toolInvoked", "WebMCP.toolResponded", "Page.frameNavigated", "Page.frameDetached")

    def __init__(self, agent_store: Any) -> None:
        from .cdp.lane import CdpLane
        from .store import Store

        self.agent_store = agent_store
        self.store = Store(buffer=agent_store.buffer)
        self.lane = CdpLane(self.store, on_call=lambda c: print(f"call cdp {inert_str(c.tool, 128)} {c.status} {c.resultBytes} B", flush=True))
        agent_store.observers.append(self)

    # a store observer (relay_bridge.store.StoreObserver) for the agent's side
    def on_span(self, session: Any, span: Any) -> None:
        if not str(session.agent).startswith("cdp/"):
            from .lanecheck import outcome_of

            print(f"call agent {inert_str(span.tool, 128)} {outcome_of(span)} {span.resultBytes} B", flush=True)

    def on_tool(self, session: Any, record: Any, change: str, at: float) -> None:
        pass

    async def attach(self, page: Any) -> None:
        self.lane.open_document(self.CDP_SESSION, page.url)
        cdp = await page.context.new_cdp_session(page)
        for method in self.EVENTS:
            cdp.on(method, lambda params, m=method: self.lane.handle(m, params, self.CDP_SESSION))
        await cdp.send("Page.enable")
        try:
            await cdp.send("WebMCP.enable")
        except Exception as exc:  # the browser lacks DevToolsWebMCPSupport
            raise BrowserError(f"the DevTools lane is unavailable: {str(exc).splitlines()[0][:200]}") from None

    def report(self) -> int:
        from . import lanecheck
        from .inert import inert_str

        for doc in list(self.lane.docs):
            self.lane.close_document(doc, "watch ended")
        agent = lanecheck.store_calls(self.agent_store.sessions.values(), cdp=False)
        cdp = lanecheck.store_calls(self.store.sessions.values(), cdp=True)
        differences = lanecheck.compare(agent, cdp)
        blind = lanecheck.blind_paths(self.agent_store.sessions.values())
        for d in differences:
            print(f"differs: {d.line()}", flush=True)
        for path in blind:
            print(f"neither lane sees: {inert_str(path, 400)}", flush=True)
        print(lanecheck.summary(agent, cdp, differences, blind), flush=True)
        return 1 if differences or blind else 0


def run(args: Any) -> int:
    import asyncio

    from . import cli as core

    try:
        return asyncio.run(_open_main(args))
    except core.UsageError as exc:
        return core.fail(str(exc))
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
