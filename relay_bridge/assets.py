"""The page agent's built scripts, found in the wheel (relay_bridge/_agent) or the source tree (page_agent/dist).

The relay bakes its address and token into the one placeholder each file carries.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from .protocol import PROTOCOL

PLACEHOLDER = b"/*@WMCP_RELAY@*/null"
FILES = {"/agent.js": "agent.js", "/agent.mjs": "agent.mjs"}


def _candidates() -> list[Path]:
    here = Path(__file__).resolve().parent
    return [here / "_agent", here.parent / "page_agent" / "dist"]


@lru_cache(maxsize=4)
def _read(name: str) -> bytes | None:
    for folder in _candidates():
        path = folder / name
        if path.is_file():
            return path.read_bytes()
    return None


def agent_script(path: str, ws_url: str) -> bytes | None:
    """The script for `path` with the relay address baked in, or None when the agent is not built."""
    name = FILES.get(path)
    if name is None:
        return None
    body = _read(name)
    if body is None or PLACEHOLDER not in body:
        return None
    config = json.dumps({"url": ws_url, "protocol": PROTOCOL}, separators=(",", ":")).encode()
    return body.replace(PLACEHOLDER, config, 1)
