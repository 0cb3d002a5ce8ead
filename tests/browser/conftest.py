"""End-to-end fixtures: Debian's Chromium through Playwright, a tiny page server, and helpers that wait on
conditions (never on sleeps). The relay itself is `relay_server` from tests/conftest.py."""

from __future__ import annotations

import html
import http.server
import json
import os
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from tests.liveness import LIVENESS_S
from tests.relay_thread import agent_tag

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "tests" / "fixtures" / "pages"
POLYFILL = ROOT / "page_agent" / "node_modules" / "@mcp-b" / "webmcp-polyfill" / "dist" / "index.iife.js"
AGENT_RAW = ROOT / "page_agent" / "dist" / "agent.js"

# The token's probe (issue 46, item 4), for every route: a tool that throws, called through the object the page
# registered and through the browser's executeTool. Every error passes the agent's wrapper, so its stack names the
# agent's script URL. Then everything a page (or an error tracker in it) can read back: resource timing, every
# script element, the current script.
THROW_AND_LOOK = """async () => {
  const mc = document.modelContext
  const tool = { name: 'thrower', description: 'throws', execute: () => { throw new Error('tool failed') } }
  await mc.registerTool(tool)
  const stacks = []
  try { await tool.execute({}) } catch (e) { stacks.push(String(e && e.stack)) }
  const listed = (await mc.getTools()).find((t) => t.name === 'thrower')
  try { await mc.executeTool(listed, {}) } catch (e) { stacks.push(String(e && e.stack)) }
  return {
    stacks,
    resources: performance.getEntriesByType('resource').map((e) => e.name),
    scripts: [...document.scripts].map((s) => s.outerHTML),
    current: document.currentScript && document.currentScript.outerHTML,
    html: document.documentElement.outerHTML,
  }
}"""


BASE_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WEBMCP_ARGS = ["--enable-features=WebMCPTesting", "--enable-experimental-web-platform-features"]


def chromium_path() -> str:
    """The whole browser, as users run it: for what only it has (extensions) and for the figures a full benchmark run
    judges."""
    path = os.environ.get("WMCP_CHROMIUM", "/usr/bin/chromium")
    if not Path(path).is_file():
        pytest.fail(f"Chromium not found at {path}: apt-get install -y chromium (or set WMCP_CHROMIUM)", pytrace=False)
    return path


def headless_path() -> str:
    """What the suites' pages run in: Debian's chromium-headless-shell, the same Chromium build (Blink, V8, the
    native WebMCP host) without the browser's windows and UI, as Playwright itself runs headless tests. It costs
    about half the CPU per page (tests/browser, four workers: 57 CPU-s on chromium, 32 on the shell), and the
    suites are bound by CPU. tests/browser/test_builds.py holds the two to one version and one behaviour."""
    path = os.environ.get("WMCP_HEADLESS_SHELL", "/usr/bin/chromium-headless-shell")
    if not Path(path).is_file():
        pytest.fail(
            f"chromium-headless-shell not found at {path}: apt-get install -y chromium-headless-shell (or set WMCP_HEADLESS_SHELL)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium with its native WebMCP host (document.modelContext), one per module."""
    b = playwright.chromium.launch(executable_path=headless_path(), args=BASE_ARGS + WEBMCP_ARGS)
    yield b
    b.close()


@pytest.fixture(scope="module")
def plain_browser(playwright: Playwright) -> Iterator[Browser]:
    """Chromium without WebMCP: the polyfill and the legacy host install their own registry."""
    b = playwright.chromium.launch(executable_path=headless_path(), args=BASE_ARGS)
    yield b
    b.close()


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves tests/fixtures/pages; .html files are templates: {{AGENT_SRC}} (its tag, relay_thread.agent_tag), {{CONFIG}},
    {{QUERY}}."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(PAGES), **kwargs)

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/_polyfill.js":
            return self._send(POLYFILL.read_bytes(), "text/javascript; charset=utf-8")
        if url.path == "/_agent_raw.js":  # the built file as is: no relay address baked in
            return self._send(AGENT_RAW.read_bytes(), "text/javascript; charset=utf-8")
        if url.path.endswith(".html"):
            file = PAGES / url.path.lstrip("/")
            if not file.is_file():
                return self.send_error(404)
            query = urllib.parse.parse_qs(url.query)
            agent = query.get("agent", [""])[0]
            config = json.dumps(json.loads(query.get("config", ["{}"])[0]))
            text = file.read_text(encoding="utf-8")
            text = text.replace('<script src="{{AGENT_SRC}}"></script>', agent_tag(agent))
            text = text.replace("{{CONFIG}}", config.replace("</", "<\\/"))
            text = text.replace("{{QUERY}}", html.escape(url.query, quote=True))
            return self._send(text.encode("utf-8"), "text/html; charset=utf-8")
        return super().do_GET()

    def _send(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


class PageServer:
    def __init__(self) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="pages", daemon=True)
        self.thread.start()

    def url(self, page: str, relay: Any = None, config: dict[str, Any] | None = None, **params: str) -> str:
        """A page on this server that loads the agent from `relay`'s /agent.js (token included)."""
        query: dict[str, str] = dict(params)
        if relay is not None:
            query["agent"] = relay.http_url("/agent.js")
        if config:
            query["config"] = json.dumps(config)
        qs = urllib.parse.urlencode(query)
        return f"http://127.0.0.1:{self.port}/{page}" + (f"?{qs}" if qs else "")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    server = PageServer()
    yield server
    server.close()


@pytest.fixture(scope="session")
def polyfill_file() -> Path:
    if not POLYFILL.is_file():
        pytest.fail(f"{POLYFILL} is missing: run `npm ci --prefix page_agent` (pinned @mcp-b/webmcp-polyfill)", pytrace=False)
    return POLYFILL


def open_page(browser: Browser, url: str, init_script: str | None = None, before: Callable[[Page], None] | None = None) -> tuple[Page, list[str]]:
    """A fresh context and page; page errors are collected (the agent must never throw into the page). `before`
    sees the page before it loads (to listen to its sockets, say)."""
    context = browser.new_context()
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if before is not None:
        before(page)
    page.goto(url)
    # The relay's /agent.js is the agent's eager part: the rest arrives off the page's critical path, asked for at
    # once by the first use of the console API, and the API answers in full from then on (issue 47).
    page.wait_for_function("() => !window.__webmcpPerf || __webmcpPerf.status().phase !== 'loading'")
    return page, errors


def wait_phase(page: Page, phase: str, timeout: float = LIVENESS_S * 1000) -> None:
    page.wait_for_function("(p) => window.__webmcpPerf && __webmcpPerf.status().phase === p", arg=phase, timeout=timeout)


def session_of(snapshot: dict[str, Any], sid: str) -> dict[str, Any] | None:
    return snapshot["sessions"].get(sid)


def spans_of(snapshot: dict[str, Any], sid: str) -> list[dict[str, Any]]:
    s = session_of(snapshot, sid)
    return s["spans"] if s else []


def session_where(sid: str, predicate: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], bool]:
    """A wait_for condition on one session that holds only once the session has reached the relay."""

    def check(snapshot: dict[str, Any]) -> bool:
        session = session_of(snapshot, sid)
        return session is not None and bool(predicate(session))

    return check


def has_spans(sid: str, n: int) -> Callable[[dict[str, Any]], bool]:
    return lambda snap: len(spans_of(snap, sid)) >= n


RUN_ALL = """async ({ names, input, stringInput }) => {
  // Call each tool the way the browser's agent does: through the host's executeTool.
  const mc = document.modelContext
  const listed = await mc.getTools()
  const out = {}
  for (const name of names) {
    const t = listed.find((x) => x.name === name)
    try {
      const text = await mc.executeTool(t, stringInput ? JSON.stringify(input) : input)
      out[name] = { ok: true, text }
    } catch (e) {
      out[name] = { ok: false, error: e.name }
    }
  }
  return out
}"""
