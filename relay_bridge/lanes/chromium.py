"""Finding and starting Chromium with WebMCP switched on, for `open`, `bench` and the CDP lane's tests.

The lanes that drive a browser start it here; nothing here knows a lane.

Which browser: `--browser PATH`, then `$WMCP_CHROMIUM`, then the usual names on PATH. None found is one line
that names `apt-get install chromium`. Playwright is imported only by the functions that launch through it,
so `relay_bridge` itself imports without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    before = asyncio.all_tasks()
    try:
        pw = await async_playwright().start()
    except Exception:
        # The driver died while starting (a Ctrl-C reaches it too): its reader task still reaps the process and
        # closes the pipes' transport; left to the loop's end, that transport is collected after the loop closed
        # and prints "Exception ignored ... Event loop is closed".
        left = asyncio.all_tasks() - before - {asyncio.current_task()}
        if left:
            await asyncio.wait(left, timeout=5)
        raise
    try:
        b = await pw.chromium.launch(executable_path=path, headless=headless, args=list(CHROMIUM_FLAGS))
    except Exception as exc:
        await pw.stop()
        raise BrowserError(f"Chromium would not start: {str(exc).splitlines()[0][:200]}") from None
    return pw, b


def init_script(agent: bytes) -> str:
    """The agent as an init script. Playwright runs init scripts in a new tab's first document too, the empty
    about:blank before the navigation: attached there it recorded a session of its own (`null … ended`), which
    replay then opened on. The guard skips that top-level about:blank and nothing else (the agent's text is one
    expression statement, so a block around it changes nothing)."""
    guard = 'if (!(window === window.top && location.href === "about:blank")) {\n'
    return guard + agent.decode("utf-8") + "\n}\n"
