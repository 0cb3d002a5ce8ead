"""Benchmark: what the `open` lane's token-free channel (a Playwright binding to Python, docs/security.md) costs a
page against the socket it replaced (the agent's own WebSocket with the token in its URL): the ack round trip
(call settled -> the relay's ack back in the page), p50/p95 over sequential calls, same page, same relay, both in
headless Chromium through Playwright. Only correctness is asserted (every call acked); the times are printed.

  pytest tests/bench/test_open_channel_cost.py -m bench -s
"""

from __future__ import annotations

from typing import Any

import pytest

from relay_bridge.lanes.chromium import launch_playwright
from relay_bridge.lanes.open.lane import open_browser
from relay_bridge.relay.assets import agent_script
from relay_bridge.relay.server import Relay, RelayConfig
from tests.bench.test_extension_overhead import ACK_RTT, RTT_CALLS
from tests.lanes.helpers import SiteServer

pytestmark = [pytest.mark.bench, pytest.mark.browser]
TOKEN = "0123456789abcdef0123456789abcdef"


async def _rtt(page: Any) -> dict[str, float]:
    await page.wait_for_function("window.__webmcpPerf && window.__webmcpPerf.relay && window.__webmcpPerf.relay().state === 'open'")
    return await page.evaluate(ACK_RTT, {"n": RTT_CALLS})


async def test_open_binding_ack_round_trip_beside_the_socket_it_replaced(chromium: str, site: SiteServer) -> None:
    relay = Relay(RelayConfig(port=0, token=TOKEN))
    await relay.start()
    try:
        handle = await open_browser(site.url, relay, True, browser=chromium)
        try:
            binding = await _rtt(handle.page)
        finally:
            await handle.close()
        pw, browser = await launch_playwright(browser=chromium, headless=True)
        try:
            context = await browser.new_context()
            script = agent_script("/agent.js", relay.snippet.ws_url)
            assert script is not None
            await context.add_init_script(script=script.decode("utf-8"))
            page = await context.new_page()
            await page.goto(site.url)
            socket = await _rtt(page)
        finally:
            await browser.close()
            await pw.stop()
    finally:
        await relay.stop()
    print(
        f"\nopen lane ack round trip over {RTT_CALLS} calls: binding p50 {binding['p50']:.1f} ms p95 {binding['p95']:.1f} ms; "
        f"token-in-page WebSocket (control) p50 {socket['p50']:.1f} ms p95 {socket['p95']:.1f} ms"
    )
    assert binding["p50"] > 0 and socket["p50"] > 0
