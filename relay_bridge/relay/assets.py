"""The page agent's built scripts, found in the wheel (relay_bridge/_agent) or the source tree (page_agent/dist).

The relay serves three. /agent.js is the agent's eager part (`agent-eager.js`: the registry hooks, the wrapper
and the early buffer, what a page evaluates before its own scripts); it fetches /agent-rest.js (`agent-rest.js`:
everything else) beside its own URL, off the page's critical path, pinned by the rest's content hash (`?v=`, baked
in by the build). /agent.mjs is the whole agent (`agent.js`, both parts in one file) as an ES module: the
`/*@WMCP_MODULE@*/` marker before the IIFE becomes a binding for its result, and the names on the
`//@WMCP_EXPORTS@` line are exported from it. The relay bakes its uplink address (the WebSocket URL, which names
no secret: the token reaches the agent from the tag's data- attribute or start(token), relay_bridge.relay.snippet)
into the eager part's one placeholder; the rest is served as built. Each served form has a content hash (`?v=`
in the pasted lines and the eager part's request), so a browser may keep it for good, and a gzip copy made once.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PLACEHOLDER = b"/*@WMCP_UPLINK@*/null"
MODULE_MARKER = b"/*@WMCP_MODULE@*/"
EXPORTS_RE = re.compile(rb"^//@WMCP_EXPORTS@ ([A-Za-z0-9_$,]+)$", re.M)
PATHS = ("/agent.js", "/agent.mjs", "/agent-rest.js")
# Which built file each path serves.
FILES = {"/agent.js": "agent-eager.js", "/agent.mjs": "agent.js", "/agent-rest.js": "agent-rest.js"}


@dataclass(frozen=True, slots=True)
class Script:
    """One served form of the agent: its bytes, their gzip and a content hash (8 hex of SHA-256: it tells builds apart, it guards nothing)."""

    body: bytes
    gzipped: bytes
    digest: str


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
    """The script for `path` with the relay's WebSocket address baked in (the rest has none), or None when the
    agent is not built. `ws_url` names no secret: it is in the page's source for anyone to read."""
    if path not in PATHS:
        return None
    body = _read(FILES[path])
    if body is None:
        return None
    if path == "/agent-rest.js":
        return body
    if PLACEHOLDER not in body:
        return None
    body = body.replace(PLACEHOLDER, json.dumps(ws_url).encode(), 1)
    return as_module(body) if path == "/agent.mjs" else body


@lru_cache(maxsize=8)
def served(path: str, ws_url: str) -> Script | None:
    """`agent_script` with its gzip (level 9, made once a relay) and content hash; None when not built."""
    body = agent_script(path, ws_url)
    if body is None:
        return None
    return Script(body, gzip.compress(body, 9, mtime=0), hashlib.sha256(body).hexdigest()[:8])
