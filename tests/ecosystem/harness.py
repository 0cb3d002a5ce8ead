"""Pages built from the real WebMCP ecosystem packages (tests/ecosystem/package.json, esbuild), served on
127.0.0.1, and the callers that drive them: the MCP SDK's Client over @mcp-b/transports, the host's own
executeTool, Playwright's page.webmcp and the page itself. `python -m tests.ecosystem.harness` prints the
issue-30 table (calls recorded by the agent of calls made) for every page x loading order x host."""

from __future__ import annotations

import html
import http.server
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Frame, Page, sync_playwright

from tests.liveness import LIVENESS_S
from tests.relay_thread import agent_tag

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
AGENT = ROOT / "page_agent" / "dist" / "agent.js"
BASE_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Playwright's page.webmcp asks for the WebMCP feature by name; the testing flag gives executeTool.
WEBMCP_ARGS = ["--enable-features=WebMCPTesting,WebMCP", "--enable-experimental-web-platform-features"]

# What each page loads, in page order; "agent" marks where the tag goes for each loading order.
STACKS: dict[str, list[str]] = {
    "global": ["global", "page-tools"],
    "react-global": ["global", "react-hooks"],
    "usewebmcp": ["polyfill", "react-usewebmcp"],
    "polyfill": ["polyfill", "page-tools"],
    # @mcp-b/webmcp-ts-sdk's BrowserMcpServer over a transport of its own, mirroring onto the registry
    "ts-sdk": ["polyfill", "ts-sdk"],
    # react-webmcp's hooks with an outputSchema on `stats`
    "react-output": ["global", "react-output"],
}
ORDERS = ("head", "after-polyfill", "after-tools", "document-start")
TOOLS = ("echo", "boom", "stats")
INPUTS: dict[str, dict[str, Any]] = {"echo": {"text": "hi"}, "boom": {}, "stats": {"n": 40}}


def build(out: Path) -> Path:
    """Bundle the page scripts (tests/ecosystem/build.mjs) into `out`; fails loudly without `npm ci`."""
    if not (HERE / "node_modules" / "esbuild").is_dir():
        raise RuntimeError("tests/ecosystem/node_modules is missing: npm ci --prefix tests/ecosystem")
    subprocess.run(["node", str(HERE / "build.mjs"), str(out)], check=True)
    return out


def page_html(stack: str, order: str, config: dict[str, Any] | None = None, agent_src: str = "/_agent.js") -> str:
    """The page's HTML: the stack's scripts with the agent tag placed for `order` ("document-start" has none)."""
    scripts = list(STACKS[stack])
    if order == "none":  # the control: no agent at all
        scripts = list(STACKS[stack])
    elif order == "head":
        scripts.insert(0, "agent")
    elif order == "after-polyfill":
        scripts.insert(1, "agent")
    elif order == "after-tools":
        scripts.append("agent")
    tags = [f"<script>window.__WMCP_CONFIG__ = {json.dumps(config or {})}</script>"]
    for s in scripts:
        if s == "agent" and order == "after-tools" and agent_src == "/_agent.js":
            # React mounts (and registers) in a task of its own after its bundle ran: an agent the parser still
            # has to fetch can lose that race on a loaded machine. Inline, it runs right after the bundle, which
            # is what the order means (a page's tag after its app script, served from cache).
            tags.append("<script>" + AGENT.read_text(encoding="utf-8").replace("</script", "<\\/script") + "</script>")
        elif s == "agent":
            tags.append(agent_tag(agent_src))
        else:
            tags.append(f'<script src="/b/{s}.js"></script>')
    tags.append('<script src="/b/client.js"></script>')
    return "<!doctype html><meta charset=utf-8><title>eco</title>" + "".join(tags) + "<body>"


def frame_html(stack: str, order: str, frame_origin: str = "") -> str:
    """A parent that only holds the MCP client (and the agent first in <head>) around the tools in an iframe
    (served from `frame_origin` when given: a cross-origin frame)."""
    del stack
    agent = '<script src="/_agent.js"></script>' if order not in ("document-start", "none") else ""
    src = html.escape(frame_origin, quote=True) + "/page.html?{Q}"
    allow = ' allow="tools"' if frame_origin else ""  # WebMCP's permissions policy: another origin's frame asks for it
    return f'<!doctype html><meta charset=utf-8><title>parent</title>{agent}<script src="/b/client.js"></script><body><iframe id=frame{allow} src="{src}"></iframe>'


class Server:
    """Serves the built bundles under /b/, the agent at /_agent.js and the generated pages."""

    def __init__(self, bundles: Path) -> None:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                q = urllib.parse.parse_qs(url.query)
                stack, order = q.get("stack", ["global"])[0], q.get("order", ["head"])[0]
                config = json.loads(q.get("config", ["{}"])[0])
                if url.path == "/favicon.ico":  # no 404 in the console the tests read
                    return self.send(b"", "image/x-icon")
                if url.path == "/_agent.js":
                    return self.send(AGENT.read_bytes(), "text/javascript")
                if url.path.startswith("/b/"):
                    f = bundles / Path(url.path).name
                    return self.send(f.read_bytes(), "text/javascript") if f.is_file() else self.send_error(404)
                if url.path == "/page.html":
                    agent_src = q.get("agent", ["/_agent.js"])[0]
                    return self.send(page_html(stack, order, config, agent_src).encode(), "text/html; charset=utf-8")
                if url.path == "/parent.html":
                    # the frame's own query: everything but the parent's frame_origin
                    query = urllib.parse.urlencode([(k, v) for k, v in urllib.parse.parse_qsl(url.query) if k != "frame_origin"])
                    frame_origin = q.get("frame_origin", [""])[0]
                    if frame_origin and not frame_origin.startswith(("http://127.0.0.1:", "http://localhost:")):
                        return self.send_error(400)
                    return self.send(frame_html(stack, order, frame_origin).replace("{Q}", query).encode(), "text/html; charset=utf-8")
                return self.send_error(404)

            def send(self, body: bytes, ctype: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.bundles = bundles
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        del outer

    def url(self, path: str, stack: str, order: str, config: dict[str, Any] | None = None, agent: bool = True, agent_src: str | None = None) -> str:
        q = {"stack": stack, "order": order, "config": json.dumps(config or {})}
        if agent_src:
            q["agent"] = agent_src
        if agent:
            q["perf"] = "1"
        else:
            q["perf"] = "0"
        return f"http://127.0.0.1:{self.port}/{path}?{urllib.parse.urlencode(q)}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Opened:
    page: Page
    tools: Frame  # the frame that registers the tools (the page's main frame, or the iframe)
    console: list[str]
    errors: list[str]


class HostSilent(Exception):
    """The frame's native host never answered getTools() (Chromium 156, see open_stack)."""


def open_stack(
    browser: Browser,
    server: Server,
    stack: str,
    order: str,
    framed: bool = False,
    cross_origin: bool = False,
    agent: bool = True,
    agent_src: str | None = None,
    before: Callable[[Page], Any] | None = None,
    wait_agent: bool = True,
) -> Opened:
    """Load the page (in an iframe under a client-only parent when `framed`); waits for the tools to register and,
    unless `wait_agent` is false, for the agent to list them (asking its console API fetches the agent's rest).

    Chromium 156's native host in a freshly loaded frame now and then never answers getTools() again when the
    host was touched early in the load: of 240 loads of the framed page under load, 0 with nothing touching it,
    9 with a `toolcancel` listener added at document start (the agent no longer does: interceptor.js), 2 with a
    `toolactivated` one (the agent's, until its rest lists the host), 2 with the agent now. A page met that way is
    opened once more, in a new context, and said so; a second silent host fails the test."""
    args = (browser, server, stack, order, framed, cross_origin, agent, agent_src, before, wait_agent)
    try:
        return _open(*args)
    except HostSilent as silent:
        print(f"\n{silent}: opened again in a new context")
        return _open(*args)


def _open(
    browser: Browser,
    server: Server,
    stack: str,
    order: str,
    framed: bool,
    cross_origin: bool,
    agent: bool,
    agent_src: str | None,
    before: Callable[[Page], Any] | None,
    wait_agent: bool,
) -> Opened:
    ctx = browser.new_context()
    if order == "document-start" and agent:
        # What the extension's main-world content script and `wmcp-top open` do: the agent before any page script.
        ctx.add_init_script(AGENT.read_text(encoding="utf-8"))
    page = ctx.new_page()
    console: list[str] = []
    errors: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    if before is not None:
        before(page)
    url = server.url("parent.html" if framed else "page.html", stack, order, agent=agent, agent_src=agent_src)
    if cross_origin:
        # the parent on localhost, the frame on 127.0.0.1: two origins, both secure contexts
        url = (
            url.replace("http://127.0.0.1:", "http://localhost:", 1)
            + "&"
            + urllib.parse.urlencode({"frame_origin": f"http://127.0.0.1:{server.port}"})
        )
    page.goto(url)
    tools = page.main_frame
    if framed:
        if cross_origin:  # the parent cannot read the frame's document: ask the frame itself
            page.wait_for_function("() => document.getElementById('frame') !== null")
            tools = next(f for f in page.frames if f != page.main_frame)
            tools.wait_for_load_state("load")
        else:
            page.wait_for_function(
                "() => { const f = document.getElementById('frame'); return f && f.contentWindow.document.readyState === 'complete' }"
            )
            tools = next(f for f in page.frames if f != page.main_frame)
    if wait_true(tools, LISTED_OR_SILENT, HOST_SILENT_MS) == "silent":
        ctx.close()
        raise HostSilent(f"the native host of {tools.url} never answered getTools() in {HOST_SILENT_MS / 1000:.0f} s")
    if agent and wait_agent:
        # The page lists its tools before an agent loaded after them has found the registry (its next poll): a
        # call made in between is one no agent could see. Calls start once the agent says it has the tools.
        wait_true(tools, AGENT_HAS_TOOLS)
    return Opened(page, tools, console, errors)


# The page's own registry lists the three tools (its own frame's: Chromium lists same-origin frames' too).
LISTED = """async () => {
  const mc = document.modelContext
  if (!mc || typeof mc.getTools !== "function") return false
  const l = await mc.getTools()
  return ["echo", "boom", "stats"].every((n) => l.some((t) => t.name === n && (t.window === undefined || t.window === window)))
}"""
# The same, or "silent" when the host has not answered getTools() in HOST_SILENT_MS (it answers in milliseconds;
# see open_stack).
HOST_SILENT_MS = 15000
LISTED_OR_SILENT = """async (silentMs) => {
  const mc = document.modelContext
  if (!mc || typeof mc.getTools !== "function") return false
  const l = await Promise.race([mc.getTools(), new Promise((r) => setTimeout(() => r(null), silentMs))])
  if (l === null) return "silent"
  return ["echo", "boom", "stats"].every((n) => l.some((t) => t.name === n && (t.window === undefined || t.window === window)))
}"""


# Every one of the three: React's hooks register as their components mount, one render after another.
AGENT_HAS_TOOLS = """() => {
  const p = window.__webmcpPerf
  if (!p || !["tools-registered", "measuring"].includes(p.status().phase)) return false
  const l = p.ledger()
  return ["echo", "boom", "stats"].every((n) => (l.registeredTools || []).includes(n))
}"""


def wait_true(frame: Frame, predicate: str, arg: Any = None, timeout: float = LIVENESS_S) -> Any:
    """Evaluate an (async) predicate until it is truthy, with a deadline; returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        v = frame.evaluate(predicate, arg)
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout} s: {predicate[:120]}")
        frame.wait_for_timeout(25)


def mcp_calls(o: Opened, framed: bool = False) -> list[dict[str, Any]]:
    calls = [[n, INPUTS[n]] for n in TOOLS]
    return o.page.main_frame.evaluate("([c, f]) => mcpCalls(c, f)", [calls, framed])


EXECUTE = """async ([names, inputs, text]) => {
  // Chromium's executeTool takes the input object; the polyfill's (and a server over it) takes JSON text.
  const mc = document.modelContext
  const listed = await mc.getTools()
  const out = []
  for (const n of names) {
    const t = listed.find((x) => x.name === n && (x.window === undefined || x.window === window))
    try { out.push({ ok: true, text: await mc.executeTool(t, text ? JSON.stringify(inputs[n]) : inputs[n]) }) }
    catch (e) { out.push({ ok: false, text: String(e && e.name) + ": " + String(e && e.message) }) }
  }
  return out
}"""

PAGE_SELF = """async ([names, inputs]) => {
  const out = []
  for (const n of names) {
    const t = window.pageTools.find((x) => x.name === n)
    try { out.push({ ok: true, text: JSON.stringify(await t.execute(inputs[n])) }) }
    catch (e) { out.push({ ok: false, text: String(e && e.message) }) }
  }
  return out
}"""


def execute_calls(o: Opened, host: str) -> list[dict[str, Any]]:
    return o.tools.evaluate(EXECUTE, [list(TOOLS), INPUTS, host == "polyfill"])


def page_calls(o: Opened) -> list[dict[str, Any]]:
    return o.tools.evaluate(PAGE_SELF, [list(TOOLS), INPUTS])


def webmcp_calls(o: Opened) -> list[dict[str, Any]]:
    out = []
    for n in TOOLS:
        try:
            out.append({"ok": True, "text": json.dumps(o.tools.webmcp.call_tool(n, INPUTS[n]))})
        except Exception as exc:
            out.append({"ok": False, "text": str(exc)[:300]})
    return out


def spans(frame: Frame) -> list[dict[str, Any]]:
    return frame.evaluate("() => window.__webmcpPerf && __webmcpPerf.spans ? __webmcpPerf.spans() : []")


def status(frame: Frame) -> dict[str, Any]:
    return frame.evaluate("() => window.__webmcpPerf && __webmcpPerf.status ? __webmcpPerf.status() : null")


def ledger(frame: Frame) -> dict[str, Any]:
    return frame.evaluate("() => window.__webmcpPerf && __webmcpPerf.ledger ? __webmcpPerf.ledger() : null")


@contextmanager
def browsers() -> Iterator[dict[str, Browser]]:
    """Chromium with native WebMCP ("native") and without ("polyfill"), one of each."""
    with sync_playwright() as p:
        native = p.chromium.launch(executable_path="/usr/bin/chromium", args=BASE_ARGS + WEBMCP_ARGS)
        plain = p.chromium.launch(executable_path="/usr/bin/chromium", args=BASE_ARGS)
        try:
            yield {"native": native, "polyfill": plain}
        finally:
            native.close()
            plain.close()


def table() -> None:
    """Print, per page x host x order, the calls the agent recorded of the calls made (MCP, executeTool,
    page.webmcp on a native host, the page itself)."""
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(build(Path(tmp)))
        try:
            with browsers() as bs:
                for host, b in bs.items():
                    for stack, framed in (("global", False), ("global", True), ("react-global", False), ("usewebmcp", False)):
                        for order in ORDERS:
                            if framed and order in ("after-polyfill", "after-tools"):
                                continue
                            o = open_stack(b, server, stack, order, framed=framed)
                            made: dict[str, int] = {}
                            if stack != "usewebmcp":
                                made["mcp"] = len(mcp_calls(o, framed))
                            made["executeTool"] = len(execute_calls(o, host))
                            if host == "native":
                                made["webmcp"] = len(webmcp_calls(o))
                            if stack in ("global",):
                                made["page"] = len(page_calls(o))
                            total = sum(made.values())
                            o.tools.wait_for_timeout(300)
                            got = len(spans(o.tools))
                            st = status(o.tools) or {}
                            name = stack + (" in iframe" if framed else "")
                            print(f"{host:8} {name:18} {order:15} {got:3}/{total:<3} {made} coverage={st.get('coverage')} phase={st.get('phase')}")
                            sys.stdout.flush()
                            o.page.context.close()
        finally:
            server.close()


if __name__ == "__main__":
    table()
