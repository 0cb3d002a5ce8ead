"""Schema weight: what tool definitions cost (`wmcp-top footprint`), from files, a capture, or a live store.

The analysis is pure (inputs -> canonical bytes, pairs, breakdown, lint -> a JSON-ready report); `files` is the
only module that reads or writes files; `cli` is the command. See README.md in this folder.
"""

from __future__ import annotations

from relay_bridge.core.canonical import canonical_bytes, canonical_json
from relay_bridge.core.limits import LIMITS, Limits
from relay_bridge.lanes.footprint.analyze import FORMAT, analyze_catalog, rough_tokens
from relay_bridge.lanes.footprint.errors import FootprintError
from relay_bridge.lanes.footprint.html import render_html
from relay_bridge.lanes.footprint.inputs import Server, parse_document, parse_json, validate_catalog
from relay_bridge.lanes.footprint.live import analyze_sessions, catalog_from_store, servers_from_capture
from relay_bridge.lanes.footprint.text import summary_lines

__all__ = [
    "FORMAT",
    "LIMITS",
    "FootprintError",
    "Limits",
    "Server",
    "analyze_catalog",
    "analyze_sessions",
    "canonical_bytes",
    "canonical_json",
    "catalog_from_store",
    "parse_document",
    "parse_json",
    "render_html",
    "rough_tokens",
    "servers_from_capture",
    "summary_lines",
    "validate_catalog",
]
