"""The DevTools Protocol lane beside a Playwright page, as the tests' referee (relay_bridge.lanes.lanecheck).

Attach before the page loads: the lane opens a session per document from Page.frameNavigated, as `attach --cdp`
does, and lands its spans in a store of its own."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page

from relay_bridge.core.store import Store
from relay_bridge.lanes import lanecheck
from relay_bridge.lanes.cdp.lane import CdpLane

EVENTS = ("WebMCP.toolsAdded", "WebMCP.toolsRemoved", "WebMCP.toolInvoked", "WebMCP.toolResponded", "Page.frameNavigated", "Page.frameDetached")
CDP_SESSION = "referee"


class CdpReferee:
    def __init__(self, page: Page) -> None:
        self.store = Store()
        self.lane = CdpLane(self.store, browser=page.context.browser.version if page.context.browser else "")
        self.lane.open_document(CDP_SESSION, page.url)
        self.cdp = page.context.new_cdp_session(page)
        for method in EVENTS:
            self.cdp.on(method, self._handler(method))
        self.cdp.send("Page.enable")
        self.cdp.send("WebMCP.enable")

    def _handler(self, method: str) -> Any:
        return lambda params: self.lane.handle(method, params, CDP_SESSION)

    def calls(self) -> list[lanecheck.LaneCall]:
        return lanecheck.store_calls(self.store.sessions.values(), cdp=True)

    def inflight(self) -> int:
        return sum(len(doc.open) for doc in self.lane.docs.values())


def agent_calls(snapshot: dict[str, Any], sids: list[str]) -> list[lanecheck.LaneCall]:
    """The page agent's calls of these sessions, from a relay snapshot (tests/relay_thread.py)."""
    import msgspec

    from relay_bridge.core import protocol as p

    pairs: list[tuple[float, p.Span]] = []
    for sid in sids:
        session = snapshot["sessions"][sid]
        origin = float(session["info"]["timeOrigin"])
        pairs.extend((origin, msgspec.convert(span, p.Span)) for span in session["spans"])
    return lanecheck.lane_calls(pairs)
