"""The privacy promise covers the diagnosis facts: a canary in a tool's input, in result strings, in an image's
pixels and its mimeType text, and inside a base64 run reaches none of the places the product writes or shows,
while the facts about those very calls do reach the relay (so the check is not vacuous)."""

from __future__ import annotations

import pickle
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.async_api import async_playwright

from relay_bridge.relay.server import RelayConfig
from tests.browser.conftest import BASE_ARGS, WEBMCP_ARGS, PageServer, headless_path
from tui.app import WmcpTopApp

pytestmark = pytest.mark.browser

CANARY = "CANARY-facts-5d1b"
ALNUM = "CANARYfacts5d1b"  # the form it takes inside a base64 run
TOKEN = "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1"
CALLS = [
    ("snapshot", {}),
    ("list_items", {}),
    ("get_attachment", {}),
    ("search", {"q": CANARY, "limit": 500}),
    ("search", {"q": CANARY, "limit": 500}),
    ("pick_size", {"n": 50}),
]
CALL = """async (calls) => {
  const mc = document.modelContext
  const tools = await mc.getTools()
  const out = []
  for (const [name, input] of calls) {
    try { out.push(await mc.executeTool(tools.find((t) => t.name === name), input)) } catch (e) { out.push(String(e.message)) }
  }
  return out
}"""


async def test_the_canary_is_in_no_fact_frame_log_export_or_screen(tmp_path: Path) -> None:
    pages = PageServer()
    app = WmcpTopApp(relay_config=RelayConfig(port=0, token=TOKEN, log_dir=tmp_path / "logs"), export_dir=tmp_path / "exports")
    screens: dict[str, str] = {}
    try:
        async with app.run_test(size=(160, 50)) as pilot, async_playwright() as pw:
            await pilot.pause()
            relay = app.relay
            assert relay is not None
            browser = await pw.chromium.launch(executable_path=headless_path(), args=BASE_ARGS + WEBMCP_ARGS)
            page = await browser.new_page()
            agent = f"http://127.0.0.1:{relay.port}/agent.js?t={TOKEN}"
            await page.goto(f"http://127.0.0.1:{pages.port}/facts.html?" + urlencode({"agent": agent, "canary": CANARY}))
            await page.evaluate("window.registered")
            got = await page.evaluate(CALL, [list(c) for c in CALLS])
            # The canary really went through the tools: in the rows, the attachment and the image's mimeType.
            assert CANARY in got[1] and CANARY in got[2] and CANARY in got[0] and ALNUM in got[2]
            sid = await page.evaluate("__webmcpPerf.sessionId")
            deadline = time.monotonic() + 20
            while not (sid in relay.store.sessions and len(relay.store.sessions[sid].facts) >= len(CALLS)):
                assert time.monotonic() < deadline, "the facts never reached the app's relay"
                await pilot.pause(0.05)
            facts = relay.store.sessions[sid].facts
            assert facts[0].image is not None and facts[0].image.mime == "image/png", "the format is read from the bytes"
            assert facts[2].bloat is not None and facts[2].bloat.base64_bytes == 4000
            assert facts[3].schema is not None and facts[3].schema.violations == 1
            assert facts[4].repeat is not None and facts[5].refused is not None
            while "list_items" not in app.export_screenshot():
                assert time.monotonic() < deadline, "the table never showed the tools"
                await pilot.pause(0.02)
            screens["main"] = app.export_screenshot()
            for key, name in [("l", "timeline"), ("escape", None), ("i", "inspector"), ("escape", None), ("d", "status"), ("escape", None)]:
                await pilot.press(key)
                await pilot.pause()
                if name:
                    screens[name] = app.export_screenshot()
            for key in ("e", "E", "t", "ctrl+s"):
                await pilot.press(key)
            deadline = time.monotonic() + 10
            while len(list((tmp_path / "exports").glob("*"))) < 4:
                assert time.monotonic() < deadline, "the keyboard exports were not all written"
                await pilot.pause(0.05)
            socket_log = await page.evaluate("window.__socketLog")
            store_bytes = pickle.dumps(dict(relay.store.sessions.items()))
            relay.session_log.flush()
            await browser.close()
    finally:
        pages.close()

    # facts leave in a frame of their own or, when ready before their spans leave (a loaded machine), on the spans frame
    assert any('"type":"facts"' in frame or '"facts":[' in frame for frame in socket_log), "facts were on the socket"
    exports = sorted((tmp_path / "exports").iterdir())
    places = {"socket": "\n".join(socket_log), "store": store_bytes.decode("latin-1")}
    places.update({f"screen:{name}": text for name, text in screens.items()})
    places.update({f"export:{p.name}": p.read_text(encoding="utf-8") for p in exports})
    logs = {f"log:{p.name}": p.read_text(encoding="utf-8") for p in (tmp_path / "logs").glob("*.jsonl")}
    assert any('"type":"facts"' in text or '"facts":[' in text for text in logs.values()), "the facts were logged"
    assert any("diagnosisFacts" in text and "jpegBytes" in text for name, text in places.items() if name.startswith("export:")), "and exported"
    places.update(logs)
    for where, text in places.items():
        assert CANARY not in text, f"the canary leaked into {where}"
        assert ALNUM not in text, f"the canary's base64 form leaked into {where}"
