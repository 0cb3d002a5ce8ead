"""`open --check-lanes`: the DevTools Protocol lane watching the page `open` drives, and at the end the calls where
it and the page agent differ (judged by relay_bridge.lanes.lanecheck)."""

from __future__ import annotations

from typing import Any

from relay_bridge.core.inert import inert_str
from relay_bridge.core.store import Store
from relay_bridge.lanes.cdp.lane import CdpLane
from relay_bridge.lanes.chromium import BrowserError
from relay_bridge.lanes.lanecheck import blind_paths, compare, differing, outcome_of, store_calls, summary


class LaneCheck:
    """`open --check-lanes`: the DevTools Protocol lane on the page `open` drives, in a store of its own, and at
    the end the calls where it and the page agent differ (relay_bridge.lanes.lanecheck)."""

    CDP_SESSION = "page"
    EVENTS = ("WebMCP.toolsAdded", "WebMCP.toolsRemoved", "WebMCP.toolInvoked", "WebMCP.toolResponded", "Page.frameNavigated", "Page.frameDetached")

    def __init__(self, agent_store: Any) -> None:
        self.agent_store = agent_store
        self.store = Store(buffer=agent_store.buffer)
        self.lane = CdpLane(
            self.store,
            on_call=lambda c: print(f"call cdp {inert_str(c.tool, 128)} {c.status} {c.resultBytes} B handed to the DevTools client", flush=True),
        )
        agent_store.observers.append(self)

    # a store observer (relay_bridge.core.store.StoreObserver) for the agent's side
    def on_span(self, session: Any, span: Any) -> None:
        if not str(session.agent).startswith("cdp/"):
            print(f"call agent {inert_str(span.tool, 128)} {outcome_of(span)} {span.resultBytes} B", flush=True)

    def on_tool(self, session: Any, record: Any, change: str, at: float) -> None:
        pass

    async def attach(self, page: Any) -> None:
        self.lane.open_document(self.CDP_SESSION, page.url)
        cdp = await page.context.new_cdp_session(page)
        for method in self.EVENTS:
            cdp.on(method, lambda params, m=method: self.lane.handle(m, params, self.CDP_SESSION))
        await cdp.send("Page.enable")
        try:
            await cdp.send("WebMCP.enable")
        except Exception as exc:  # the browser lacks DevToolsWebMCPSupport
            raise BrowserError(f"the DevTools lane is unavailable: {str(exc).splitlines()[0][:200]}") from None

    def report(self) -> int:
        for doc in list(self.lane.docs):
            self.lane.close_document(doc, "watch ended")
        agent = store_calls(self.agent_store.sessions.values(), cdp=False)
        cdp = store_calls(self.store.sessions.values(), cdp=True)
        differences = compare(agent, cdp)
        blind = blind_paths(self.agent_store.sessions.values())
        for d in differences:
            print(f"{'differs' if d.kind != 'reserialised' else 'not comparable'}: {d.line()}", flush=True)
        for path in blind:
            print(f"neither lane sees: {inert_str(path, 400)}", flush=True)
        print(summary(agent, cdp, differences, blind), flush=True)
        return 1 if differing(differences) or blind else 0
