"""What `wmcp-top snippet` prints, pasted as a user pastes it, in Chromium's native host: the script tag in a
page's <head>, the DevTools-console import() line, and the bookmarklet each bring an agent that reaches the relay
and measures a call. The page's `relay: false` (webmcp-profiler's: no BroadcastChannel) keeps the socket; only
`uplink: false` switches the socket off (issue 14)."""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import THROW_AND_LOOK, has_spans, session_of, wait_phase
from tests.liveness import LIVENESS_S
from tests.relay_thread import TOKEN

pytestmark = pytest.mark.browser

REGISTER_AND_CALL = """async (name) => {
  const mc = document.modelContext
  await mc.registerTool({ name, description: 'a tool registered after the paste', execute: () => ({ ok: name }) })
  const tool = (await mc.getTools()).find((t) => t.name === name)
  return await mc.executeTool(tool, {})
}"""


def snippet_lines(home: Path, port: int) -> dict[str, str]:
    """`wmcp-top snippet` as a user runs it, against the relay's token kept in the config dir."""
    (home / "config").mkdir(parents=True, exist_ok=True)
    token_file = home / "config" / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    env = dict(os.environ, WMCP_TOP_HOME=str(home))
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "snippet", "--port", str(port)], env=env, capture_output=True, text=True, timeout=LIVENESS_S
    )
    assert out.returncode == 0, out.stderr
    lines = dict(re.findall(r"^\s+(script tag|DevTools console|bookmarklet):\s+(.+)$", out.stdout, re.M))
    assert set(lines) == {"script tag", "DevTools console", "bookmarklet"}, out.stdout
    for line in lines.values():  # each hands the token over, and none of its URLs names it
        assert TOKEN in line and not [u for u in re.findall(r"(?:https?|wss?)://[^'\"\s]+", line) if TOKEN in u], line
    return lines


class _Pasted(http.server.BaseHTTPRequestHandler):
    """Serves one page whose <head> holds what the test pasted (from a real loopback socket: a page Playwright
    fulfils itself has no address space, and Chromium's Local Network Access then refuses the relay's script)."""

    pages: dict[str, bytes] = {}
    extra_headers: dict[str, dict[str, str]] = {}  # by path (not `headers`: the request's own)

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        body = self.pages.get(self.path)
        if body is None:
            return self.send_error(404)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in self.extra_headers.get(self.path, {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def paste_server() -> Iterator[http.server.ThreadingHTTPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pasted)
    thread = threading.Thread(target=server.serve_forever, name="pasted", daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def blank_page(
    browser: Any, server: http.server.ThreadingHTTPServer, head: str = "", headers: dict[str, str] | None = None
) -> tuple[Page, list[str], str]:
    path = f"/pasted-{len(_Pasted.pages)}.html"
    _Pasted.pages[path] = f"<!doctype html><html><head><meta charset='utf-8'><title>pasted</title>{head}</head><body>page</body></html>".encode()
    _Pasted.extra_headers[path] = headers or {}
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    page.goto(url)
    return page, errors, url


def measured(relay_server: Any, page: Page, name: str) -> dict[str, Any]:
    """Register a tool after the agent arrived, call it through the browser, and return the relay's session."""
    assert page.evaluate(REGISTER_AND_CALL, name) == json.dumps({"ok": name}, separators=(",", ":"))
    sid = page.evaluate("__webmcpPerf.sessionId")
    snap = relay_server.wait_for(has_spans(sid, 1))
    session = session_of(snap, sid)
    assert session["spans"][0]["tool"] == name
    assert session["agent"].startswith("wmcp-top-agent/")
    return session


@pytest.mark.parametrize("config", [None, {"relay": False}])
def test_the_pasted_script_tag_reaches_the_relay_and_relay_false_only_drops_the_channel(
    browser, paste_server, relay_server, tmp_path, config
) -> None:
    tag = snippet_lines(tmp_path, relay_server.port)["script tag"]
    head = (f"<script>window.__WMCP_CONFIG__ = {json.dumps(config)}</script>" if config else "") + tag
    page, errors, _ = blank_page(browser, paste_server, head)
    wait_phase(page, "host-found")
    measured(relay_server, page, "tagged")
    # The token was taken from the tag (with no element in the agent's hands: shared/token.js) and emptied there.
    assert page.evaluate("[...document.querySelectorAll('script[data-wmcp]')].map((s) => s.getAttribute('data-wmcp'))") == [""]
    channel = page.evaluate("__webmcpPerf.channel()")
    assert (channel is None) == (config is not None), "relay: false means no BroadcastChannel, and only that"
    assert errors == []
    page.context.close()


def test_uplink_false_keeps_the_pasted_agent_off_the_socket(browser, paste_server, relay_server, tmp_path) -> None:
    tag = snippet_lines(tmp_path, relay_server.port)["script tag"]
    page, errors, _ = blank_page(browser, paste_server, "<script>window.__WMCP_CONFIG__ = {uplink: false}</script>" + tag)
    wait_phase(page, "host-found")
    assert page.evaluate(REGISTER_AND_CALL, "quiet") == json.dumps({"ok": "quiet"}, separators=(",", ":"))
    page.wait_for_function("__webmcpPerf.spans().length === 1")
    # A second page with the same tag and no config is the control: once its span is stored, the first page's
    # session (had it dialled) would have said hello long before.
    control, _, _ = blank_page(browser, paste_server, tag)
    wait_phase(control, "host-found")
    measured(relay_server, control, "control")
    quiet_sid = page.evaluate("__webmcpPerf.sessionId")
    assert session_of(relay_server.snapshot(), quiet_sid) is None
    assert page.evaluate("__webmcpPerf.channel()") is not None, "uplink: false leaves the channel on"
    assert errors == []
    page.context.close()
    control.context.close()


def test_the_console_import_line_runs_as_pasted(browser, paste_server, relay_server, tmp_path) -> None:
    line = snippet_lines(tmp_path, relay_server.port)["DevTools console"]
    page, errors, _ = blank_page(browser, paste_server)
    page.evaluate(f"async () => {{ await {line} }}")  # what DevTools runs: the line, awaited at top level
    wait_phase(page, "host-found")
    measured(relay_server, page, "imported")
    assert errors == []
    page.context.close()


def test_the_bookmarklet_runs_as_a_javascript_url(browser, paste_server, relay_server, tmp_path) -> None:
    bookmarklet = snippet_lines(tmp_path, relay_server.port)["bookmarklet"]
    assert bookmarklet.startswith("javascript:")
    page, errors, url = blank_page(browser, paste_server)
    page.evaluate("(href) => { location.href = href }", bookmarklet)  # a bookmark's click: a javascript: URL
    page.wait_for_function("window.__webmcpPerf && __webmcpPerf.active")
    assert page.url == url, "the bookmarklet evaluates to nothing, so the page stays"
    wait_phase(page, "host-found")
    measured(relay_server, page, "bookmarked")
    assert errors == []
    page.context.close()


# A page that uses SharedArrayBuffer or a 5 µs clock is cross-origin isolated: it embeds a cross-origin script only
# when the response allows it (CORP, or CORS for a module). The relay's /agent.js says both.
ISOLATED = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}


@pytest.mark.parametrize("line", ["script tag", "DevTools console"])
def test_the_snippet_works_in_a_cross_origin_isolated_page(browser, paste_server, relay_server, tmp_path, line) -> None:
    pasted = snippet_lines(tmp_path, relay_server.port)[line]
    page, errors, _ = blank_page(browser, paste_server, pasted if line == "script tag" else "", ISOLATED)
    assert page.evaluate("crossOriginIsolated"), "the page is isolated (COOP + COEP require-corp)"
    if line == "DevTools console":
        page.evaluate(f"async () => {{ await {pasted} }}")
    wait_phase(page, "host-found")
    measured(relay_server, page, "isolated")
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("line", ["script tag", "DevTools console", "bookmarklet"])
def test_the_token_is_in_no_stack_resource_script_or_console_line(browser, paste_server, relay_server, tmp_path, line) -> None:
    """Issue 46, item 4: the token never leaves the relay's socket and the page's first script."""
    pasted = snippet_lines(tmp_path, relay_server.port)[line]
    console: list[str] = []
    page, errors, _ = blank_page(browser, paste_server, pasted if line == "script tag" else "")
    page.on("console", lambda m: console.append(f"{m.text} @ {m.location.get('url', '')}"))
    if line == "DevTools console":
        page.evaluate(f"async () => {{ await {pasted} }}")
    elif line == "bookmarklet":
        page.evaluate("(href) => { location.href = href }", pasted)
    page.wait_for_function("window.__webmcpPerf && __webmcpPerf.active")
    wait_phase(page, "host-found")
    seen = page.evaluate(THROW_AND_LOOK)
    sid = page.evaluate("__webmcpPerf.sessionId")
    relay_server.wait_for(has_spans(sid, 2))  # the agent reached the relay: it had the token
    assert any("/agent." in s for s in seen["stacks"]), f"the wrapper is on the error's stack: {seen['stacks']}"
    everything = [*seen["stacks"], *seen["resources"], *seen["scripts"], seen["current"] or "", seen["html"], *console]
    assert any("/agent.js?v=" in r or "/agent.mjs?v=" in r for r in seen["resources"]), seen["resources"]
    assert not [s for s in everything if TOKEN in s]
    assert errors == []
    page.context.close()


def test_a_refused_socket_logs_no_token_in_the_console(browser, paste_server, relay_server, tmp_path) -> None:
    """Chromium logs a WebSocket that failed to connect with its URL: with a wrong token in the tag, the relay
    refuses the socket and that console line appears, without the token (it rides as a subprotocol)."""
    wrong = "f" * 32
    tag = snippet_lines(tmp_path, relay_server.port)["script tag"].replace(TOKEN, wrong)
    console: list[str] = []
    context = browser.new_context()
    page = context.new_page()
    page.on("console", lambda m: console.append(m.text))
    _Pasted.pages["/refused.html"] = f"<!doctype html><html><head>{tag}</head><body>refused</body></html>".encode()
    page.goto(f"http://127.0.0.1:{paste_server.server_address[1]}/refused.html")
    page.wait_for_function("window.__webmcpPerf && __webmcpPerf.relay().disconnects >= 1")
    failed = [line for line in console if "WebSocket connection to" in line]
    assert failed and all(f"ws://127.0.0.1:{relay_server.port}/relay" in line for line in failed), console
    assert not [line for line in console if wrong in line or TOKEN in line]
    context.close()
