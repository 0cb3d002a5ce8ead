"""The page agent's built script, found in the wheel (relay_bridge/_agent) or the source tree (page_agent/dist).

One file is built (`agent.js`, a classic script). The relay bakes its uplink address (WebSocket URL and token) into
the file's one placeholder, and serves the same text as an ES module at /agent.mjs: the `/*@WMCP_MODULE@*/` marker before the
IIFE becomes a binding for its result, and the names on the `//@WMCP_EXPORTS@` line are exported from it.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

PLACEHOLDER = b"/*@WMCP_UPLINK@*/null"
MODULE_MARKER = b"/*@WMCP_MODULE@*/"
EXPORTS_RE = re.compile(rb"^//@WMCP_EXPORTS@ ([A-Za-z0-9_$,]+)$", re.M)
PATHS = ("/agent.js", "/agent.mjs")


def _candidates() -> list[Path]:
    package = Path(__file__).resolve().parents[1]  # relay_bridge/
    return [package / "_agent", package.parent / "page_agent" / "dist"]


@lru_cache(maxsize=2)
def _read(name: str) -> bytes | None:
    for folder in _candidates():
        path = folder / name
        if path.is_file():
            return path.read_bytes()
    return None


def as_module(classic: bytes) -> bytes | None:
    """The classic script as an ES module exporting the agent's API; None when the markers are missing."""
    exports = EXPORTS_RE.search(classic)
    if MODULE_MARKER not in classic or exports is None:
        return None
    names = exports.group(1).decode().split(",")
    body = classic.replace(MODULE_MARKER, b"const __wmcpTopAgent = ", 1)
    tail = f"export const {{ {', '.join(names)} }} = __wmcpTopAgent;\nexport default __wmcpTopAgent;\n"
    return body + tail.encode()


def open_script() -> bytes | None:
    """The `open` lane's agent (dist/open.js): no address and no token in it; None when the agent is not built."""
    return _read("open.js")


def agent_script(path: str, ws_url: str) -> bytes | None:
    """The script for `path` with the relay address baked in, or None when the agent is not built."""
    if path not in PATHS:
        return None
    body = _read("agent.js")
    if body is None or PLACEHOLDER not in body:
        return None
    body = body.replace(PLACEHOLDER, json.dumps(ws_url).encode(), 1)
    return as_module(body) if path == "/agent.mjs" else body
