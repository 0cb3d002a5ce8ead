"""The DevTools Protocol lane: `wmcp-top attach --cdp URL` watches WebMCP calls with nothing in the page."""

from .client import START_HINT, STATUS_HELP, CDPClient, CDPError
from .lane import CallRecord, CdpLane, attach

__all__ = ["START_HINT", "STATUS_HELP", "CDPClient", "CDPError", "CallRecord", "CdpLane", "attach"]
