"""The extension lane in the dashboard: sessions whose hello comes through the wmcp-top browser extension (its
service worker stamps the agent name) are marked in their tab and in the status view; before any arrives, the
status view says why the extension may be silent (not paired, relay down, site access) and gives the pairing link."""

from __future__ import annotations

from pathlib import Path

from relay_bridge.relay.extension import STATUS_HELP, extension_origins
from tui.screens.status import StatusScreen

from .helpers import SID, SID2, has_tab, live_app, open_page, screen_text, spans, tab_text, until


async def test_extension_sessions_are_marked_and_the_status_view_troubleshoots(tmp_path: Path) -> None:
    app = live_app(tmp_path)
    async with app.run_test(size=(160, 60)) as pilot:
        await until(pilot, lambda: app.relay is not None and app.relay.port, what="relay")
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), what="status")
        await until(pilot, lambda: "Browser extension" in screen_text(app), what="the extension section")
        text = screen_text(app)
        assert "no session through the extension yet" in text
        for line in STATUS_HELP:
            assert line[:50] in text, line
        assert f"pair.html#relay=ws%3A%2F%2F127.0.0.1%3A{app.relay.port}%2Frelay&t=" in text
        await pilot.press("escape")

        ext = await open_page(app, SID, agent="wmcp-top-extension/0.1.0", ws_origin=min(extension_origins()))  # the extension's own socket
        tag = await open_page(app, SID2, origin="https://other.example")
        await ext.send(spans(SID, "search", 0, 2))
        await until(pilot, lambda: has_tab(app, SID) and has_tab(app, SID2), what="both tabs")
        assert tab_text(app, SID).startswith("ext ")
        assert not tab_text(app, SID2).startswith("ext ")
        await pilot.press("d")
        await until(pilot, lambda: "1 session through the extension" in screen_text(app), what="the count")
        text = screen_text(app)
        assert "(through the wmcp-top browser extension)" in text and "no session through the extension yet" not in text
        await ext.close()
        await tag.close()
