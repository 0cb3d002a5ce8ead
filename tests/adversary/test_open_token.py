"""`wmcp-top open` keeps its token out of the page's reach (issue 31, item 5): a hostile page that hooks every
channel a page script can hook (WebSocket, fetch, XHR, beacons, postMessage, MessagePort, BroadcastChannel,
JSON, Promise.then, event listeners) before the agent's first reconnect, then makes the agent reconnect, reads
no token anywhere; its forged hello through the binding is refused as another origin; its own session is whole."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from relay_bridge.lanes.open.lane import open_browser
from relay_bridge.relay.server import Relay, RelayConfig
from tests.browser.conftest import THROW_AND_LOOK
from tests.lanes.helpers import SiteServer, wait_store

pytestmark = pytest.mark.browser
TOKEN = "5ec7e75ec7e75ec7e75ec7e75ec7e7aa"

HOSTILE = """<!doctype html><html><head><meta charset="utf-8"><title>hostile</title><script>
(() => {
  const seen = (window.__stolen = [])
  const keep = (v) => { try { seen.push(typeof v === "string" ? v : JSON.stringify(v) || String(v)) } catch { seen.push(String(v)) } }
  const wrap = (obj, name) => {
    const orig = obj && obj[name]
    if (typeof orig !== "function") return
    obj[name] = function (...args) { try { keep(this && this.url); args.forEach(keep) } catch {} ; return orig.apply(this, args) }
  }
  const WS = window.WebSocket
  window.WebSocket = function (url, ...rest) { keep(url); return new WS(url, ...rest) }
  window.WebSocket.prototype = WS.prototype
  wrap(WS.prototype, "send")
  wrap(window, "fetch")
  wrap(XMLHttpRequest.prototype, "open")
  wrap(XMLHttpRequest.prototype, "send")
  wrap(navigator, "sendBeacon")
  wrap(window, "postMessage")
  wrap(MessagePort.prototype, "postMessage")
  wrap(BroadcastChannel.prototype, "postMessage")
  wrap(EventTarget.prototype, "addEventListener")
  const stringify = JSON.stringify
  JSON.stringify = function (...a) { const out = stringify.apply(JSON, a); if (typeof out === "string") seen.push(out); return out }
  const parse = JSON.parse
  JSON.parse = function (t, ...a) { keep(t); return parse.call(JSON, t, ...a) }
  const then = Promise.prototype.then
  Promise.prototype.then = function (ok, no) {
    return then.call(this, ok && ((v) => { keep(v); return ok(v) }), no)
  }
  addEventListener("message", (e) => keep(e.data), true)
  const mc = document.modelContext
  window.registered = mc.registerTool({ name: "lookup", description: "look up", inputSchema: { type: "object", properties: {} },
                                        execute: async () => ({ content: [{ type: "text", text: "found" }] }) })
})()
</script></head><body>hostile</body></html>"""

SCAN = """() => {
  const out = [...window.__stolen]
  for (const k of Object.getOwnPropertyNames(window)) { try { const v = window[k]; if (typeof v === "string") out.push(v) } catch {} }
  out.push(document.documentElement.outerHTML)
  for (const e of performance.getEntries()) out.push(e.name)
  try { out.push(JSON.stringify(window.__webmcpPerf.relay())) } catch {}
  for (const s of document.scripts) out.push(s.text)
  return out
}"""


async def test_a_page_hooking_every_channel_reads_no_token_and_cannot_forge_an_origin(chromium: str, tmp_path: Path) -> None:
    (tmp_path / "hostile.html").write_text(HOSTILE, encoding="utf-8")
    site = SiteServer(tmp_path)
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    handle = None
    try:
        handle = await open_browser(f"{site.base}/hostile.html", relay, True, browser=chromium)
        page = handle.page
        await wait_store(relay.store, lambda st: any("lookup" in s.tools for s in st.sessions.values()))
        [sid] = [s.id for s in relay.store.sessions.values()]
        await page.wait_for_function("window.__webmcpPerf.relay().acks >= 1")  # the agent holds its resume secret
        # The page's hooks are in place; the agent dials again (a relay restart) and says hello through them all.
        await relay.stop()
        relay = Relay(RelayConfig(port=relay.port, token=TOKEN), relay.store)
        await relay.start()
        await wait_store(relay.store, lambda st: st.sessions[sid].hellos >= 2 and st.sessions[sid].state == "live")
        got = await page.evaluate("""async () => {
            await window.registered
            const t = (await document.modelContext.getTools()).find((x) => x.name === "lookup")
            return [await document.modelContext.executeTool(t, {}), await document.modelContext.executeTool(t, {})]
        }""")
        assert len(got) == 2
        await wait_store(relay.store, lambda st: st.sessions[sid].stats.totals.calls == 2)

        # The binding is callable by any script of the page: a forged hello is another origin's, refused.
        forged = await page.evaluate("""async () => {
            const pipe = window.__wmcpTopOpen
            const id = await pipe({ t: "connect", doc: "forger" })
            const hello = { type: "hello", protocol: "wmcp-relay/1", agent: "wmcp-top-extension/0.1.0",
              session: { id: "ba4cba4c", origin: "https://bank.example", context: "top" } }
            await pipe({ t: "send", id, d: JSON.stringify(hello) })
            if (id === null) return ["connect refused"]
            const answers = []
            for (let i = 0; i < 5 && answers.length < 2; i++) {
                const got = await pipe({ t: "recv", id })
                answers.push(...got.m)
                if (got.closed) break  // the relay closed it: what it said last came with this recv
            }
            return answers
        }""")
        assert any('"forbidden_origin"' in a for a in forged), forged
        assert "ba4cba4c" not in relay.store.sessions

        stolen = await page.evaluate(SCAN)
        assert len(stolen) > 10, "the hooks saw the agent's traffic (frames, acks)"
        assert any('"hello"' in s for s in stolen), "the hooks did see the agent's own frames"
        assert not [s for s in stolen if TOKEN in s], "the token never enters the page"
        print(f"\nstrings the page's hooks and scans collected: {len(stolen)}; with the token: 0")
        assert handle.pipes is not None and TOKEN in handle.pipes.ws_url  # it is held in Python

        session = relay.store.sessions[sid]
        assert (session.info.origin, session.stats.totals.calls, session.coverage) == (site.base, 2, "running")
        assert [sp.tool for sp in session.spans()] == ["lookup", "lookup"]
    finally:
        if handle is not None:
            await handle.close()
        await relay.stop()
        site.close()
    await asyncio.sleep(0)


async def test_a_tool_throwing_through_the_open_lane_shows_no_token(chromium: str, tmp_path: Path) -> None:
    """Issue 46, item 4, the `open` lane's route: the agent is injected with no URL and no token; its errors' stacks,
    the page's resources and scripts and every console line hold none."""
    (tmp_path / "plain.html").write_text("<!doctype html><html><head><title>plain</title></head><body>plain</body></html>", encoding="utf-8")
    site = SiteServer(tmp_path)
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    handle = None
    try:
        handle = await open_browser(f"{site.base}/plain.html", relay, True, browser=chromium)
        page = handle.page
        console: list[str] = []
        page.on("console", lambda m: console.append(f"{m.text} @ {m.location.get('url', '')}"))
        # The lane returns once the page commits; the page's whole HTML is read once it is there (before the parser
        # had made it, `document.documentElement` was null once).
        await page.wait_for_load_state("load")
        seen = await page.evaluate(THROW_AND_LOOK)
        await wait_store(relay.store, lambda st: any(s.stats.totals.calls == 2 for s in st.sessions.values()))
        assert len(seen["stacks"]) == 2 and "tool failed" in seen["stacks"][0]  # through the wrapper (executeTool says less)
        everything = [*seen["stacks"], *seen["resources"], *seen["scripts"], seen["current"] or "", seen["html"], *console]
        assert not [s for s in everything if TOKEN in s]
    finally:
        if handle is not None:
            await handle.close()
        await relay.stop()
        site.close()
