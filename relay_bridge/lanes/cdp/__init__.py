"""The DevTools Protocol lane: `wmcp-top attach --cdp URL` watches WebMCP calls with nothing in the page."""

from relay_bridge.lanes.cdp.client import START_HINT, STATUS_HELP, CDPClient, CDPError
from relay_bridge.lanes.cdp.lane import CallRecord, CdpLane, attach

__all__ = ["START_HINT", "STATUS_HELP", "CDPClient", "CDPError", "CallRecord", "CdpLane", "attach"]
