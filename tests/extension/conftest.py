"""Real Chromium with the wmcp-top extension loaded (Playwright's persistent context, Debian's Chromium), paired
with a real relay through the extension's own pairing page, and a fixture site of our own: pages with strict
Content-Security-Policies, cross-origin frames (127.0.0.1 vs localhost), srcdoc frames, window.open."""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, Playwright, sync_playwright

from relay_bridge.relay.extension import extension_dir, extension_id, pairing_url
from tests.browser.conftest import BASE_ARGS, WEBMCP_ARGS, chromium_path
from tests.lanes.helpers import CANARY
from tests.liveness import LIVENESS_S

EXT = extension_dir()
NONCE = "r4nd0mn0nce"

# Tools registered by the page's FIRST inline script: the agent must already be there.
TOOLS_JS = """
window.calls = 0;
const mc = document.modelContext;
const reg = (name, fn) => mc.registerTool({ name, description: name + " tool", inputSchema: { type: "object", properties: { q: { type: "string" } } }, execute: fn });
window.registered = Promise.all([
  reg("echo_%(tag)s", async (input) => { window.calls++; return { content: [{ type: "text", text: "echo " + input.q }] }; }),
  reg("text_%(tag)s", async (input) => { window.calls++; return "text " + input.q + " \u00e9\u00e9"; }),
]).then(() => true);
"""

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>%(title)s</title>
<script nonce="%(nonce)s">%(tools)s</script></head><body>%(body)s
<script nonce="%(nonce)s">window.firstSawAgent = window.firstSawAgent;</script></body></html>"""


def page_html(tag: str, body: str = "", title: str | None = None) -> str:
    tools = TOOLS_JS % {"tag": tag}
    # Record, in the first inline script, whether the agent was already attached.
    tools = "window.firstSawAgent = !!(window.__webmcpPerf && window.__webmcpPerf.active);\n" + tools
    return PAGE % {"title": title or tag, "nonce": NONCE, "tools": tools, "body": body}


CSP_STRICT = f"default-src 'none'; script-src 'nonce-{NONCE}'"

# An about:blank frame made by the page, whose tools the page registers in the frame's own document.
BLANK_FRAME = f"""<script nonce="{NONCE}">{{
const f = document.createElement("iframe"); f.id = "blank"; document.body.append(f);
const w = f.contentWindow;
w.firstSawAgent = !!(w.__webmcpPerf && w.__webmcpPerf.active);
const reg = (name, fn) => w.document.modelContext.registerTool({{ name, description: name + " tool", inputSchema: {{ type: "object", properties: {{ q: {{ type: "string" }} }} }}, execute: fn }});
w.registered = Promise.all([
  reg("echo_blank", async (input) => ({{ content: [{{ type: "text", text: "echo " + input.q }}] }})),
  reg("text_blank", async (input) => "text " + input.q),
]).then(() => true);
}}</script>"""


def routes(port: int) -> dict[str, tuple[str, dict[str, str]]]:
    child = f"http://localhost:{port}/child.html"
    srcdoc = page_html("srcdoc").replace('"', "&quot;")
    return {
        "/csp.html": (page_html("csp"), {"Content-Security-Policy": CSP_STRICT}),
        "/frames.html": (
            page_html("top", f'<iframe id="child" allow="tools" src="{child}"></iframe><iframe id="doc" srcdoc="{srcdoc}"></iframe>' + BLANK_FRAME),
            {"Content-Security-Policy": f"default-src 'none'; script-src 'nonce-{NONCE}'; frame-src {child}"},
        ),
        "/child.html": (page_html("child"), {"Content-Security-Policy": CSP_STRICT}),
        "/plain.html": (page_html("plain"), {}),
        "/opener.html": (page_html("opener"), {}),
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        found = routes(int(self.server.server_address[1])).get(path)  # type: ignore[index]  # an AF_INET server: (host, port)
        if found is None:
            self.send_error(404)
            return
        body, headers = found
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class Site:
    def __init__(self) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def ext_site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


@pytest.fixture(scope="module")
def ext_id() -> str:
    assert EXT is not None, "the extension is not built: node page_agent/build.mjs"
    return extension_id(json.loads((EXT / "manifest.json").read_text()))


@pytest.fixture
def ext_browser(tmp_path: Path, ext_id: str) -> Iterator[BrowserContext]:
    """A fresh profile with the unpacked extension loaded (headless), its service worker up."""
    with sync_playwright() as p:
        ctx = launch(p, tmp_path / "profile")
        try:
            yield ctx
        finally:
            ctx.close()


def launch(p: Playwright, profile: Path) -> BrowserContext:
    ctx = p.chromium.launch_persistent_context(
        str(profile),
        executable_path=chromium_path(),
        headless=True,
        args=BASE_ARGS + WEBMCP_ARGS + [f"--disable-extensions-except={EXT}", f"--load-extension={EXT}"],
    )
    if not ctx.service_workers:
        ctx.wait_for_event("serviceworker", timeout=LIVENESS_S * 1000)
    # The worker registers the main-world agent on its first start; pages opened before that have none.
    until(
        lambda: ctx.service_workers[-1].evaluate("chrome.scripting.getRegisteredContentScripts().then((s) => s.length)"),
        "the agent's content script is registered",
    )
    return ctx


def pair(ctx: BrowserContext, ext_id: str, port: int, token: str) -> None:
    """Open the pairing link once, as a user would."""
    page = ctx.new_page()
    page.goto(pairing_url(ext_id, port, token))
    page.wait_for_selector("html[data-paired='1']", state="attached")
    assert "#" not in page.url, "the pairing page wipes the token from the address bar"
    page.close()


# Each step has a deadline that names it: a step that never settles fails the test saying which (one full run
# once hung here for 15 minutes with nothing to say where). The deadline is the liveness bound (`ms`): at 20 s, a
# background tab's getTools() outlasted it once in a loaded pass.
RUN = """async ({ names, q, ms }) => {
  const within = (p, what) => Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error(`${what} did not settle in ${ms / 1000} s at ${location.href}`)), ms))])
  await within(window.registered, "the page's registerTool")
  const mc = document.modelContext
  const listed = await within(mc.getTools(), "getTools()")
  const out = []
  for (const name of names) {
    const t = listed.find((x) => x.name === name)
    out.push({ name, input: JSON.stringify({ q }), text: await within(mc.executeTool(t, { q }), `executeTool(${name})`) })
  }
  return out
}"""


BACKGROUND_RUN = (
    """({ names, q, ms, rounds, gapMs, holdAt }) => {
  window.backgroundRun = (async () => {
    const out = []
    for (let i = 0; i < rounds; i++) {
      if (i === holdAt) await new Promise((r) => { window.releaseBackground = r })
      out.push(...(await ("""
    + RUN
    + """)({ names, q, ms })))
      await new Promise((r) => setTimeout(r, gapMs))
    }
    return out
  })()
  return true
}"""
)


def start_background_calls(target: Any, tag: str, rounds: int, gap_ms: int = 20, q: str = CANARY, hold_at: int = -1) -> None:
    """Start `rounds` rounds of calls in the page without waiting for them; collect with `background_calls`.
    With `hold_at`, the run holds before that round until `window.releaseBackground()` is called."""
    target.evaluate(
        BACKGROUND_RUN,
        {"names": [f"echo_{tag}", f"text_{tag}"], "q": q, "ms": LIVENESS_S * 1000, "rounds": rounds, "gapMs": gap_ms, "holdAt": hold_at},
    )


def background_calls(target: Any) -> list[dict[str, Any]]:
    return target.evaluate("window.backgroundRun")


def run_tools(target: Any, tag: str, q: str = CANARY) -> list[dict[str, Any]]:
    """Call the page's two tools through the browser's own executeTool; returns what the browser delivered."""
    return target.evaluate(RUN, {"names": [f"echo_{tag}", f"text_{tag}"], "q": q, "ms": LIVENESS_S * 1000})


def until(fn: Callable[[], Any], what: str, timeout: float = LIVENESS_S) -> Any:
    """Poll `fn` until it returns something truthy; fail saying `what` and the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true in {timeout}s: {what} (last: {value!r})")
        time.sleep(0.02)


def wait_js(target: Any, expression: str, timeout: float = LIVENESS_S) -> Any:
    """Poll `expression` in the page until truthy. (wait_for_function evaluates a string, which a page whose
    CSP forbids eval refuses; evaluate goes through the DevTools Protocol, outside the page's CSP.)"""
    return until(lambda: target.evaluate(expression), expression, timeout)


TAB_VIEW = """async (url) => {
  const [tab] = await chrome.tabs.query({ url })
  if (!tab) return null
  return { badge: await chrome.action.getBadgeText({ tabId: tab.id }), title: await chrome.action.getTitle({ tabId: tab.id }), tabId: tab.id }
}"""


def badge(ctx: BrowserContext, url: str) -> dict[str, Any] | None:
    """The toolbar badge text and tooltip of the tab showing `url`, read in the extension's service worker."""
    return ctx.service_workers[-1].evaluate(TAB_VIEW, url)


def sid(target: Any) -> str:
    return wait_js(target, "window.__webmcpPerf && window.__webmcpPerf.active && window.__webmcpPerf.sessionId")


def open_page(ctx: BrowserContext, url: str) -> Page:
    page = ctx.new_page()
    page.goto(url)
    return page
