"""The relay's secrets on disk: the token (32 hex, made on first run, kept mode 0600 so a pasted script tag keeps
working) and the resume key sessions prove ownership with (relay_bridge.core.identity)."""

from __future__ import annotations

import hmac
import os
import re
import secrets
from pathlib import Path

from websockets.typing import Subprotocol

from relay_bridge.core.identity import KEY_BYTES
from relay_bridge.relay.paths import config_dir

TOKEN_RE = re.compile(r"^[0-9a-f]{32}\Z")
# A page's agent presents the token as a WebSocket subprotocol, never in a URL (page_agent/src/shared/token.js):
# it offers SUBPROTOCOL, which the relay selects, and TOKEN_PROTOCOL_PREFIX + token, which it reads.
SUBPROTOCOL = Subprotocol("wmcp-top")
TOKEN_PROTOCOL_PREFIX = "wmcp-top.token."


def token_path() -> Path:
    return config_dir() / "token"


def load_token(rotate: bool = False, path: Path | None = None) -> str:
    path = path or token_path()
    if not rotate:
        try:
            text = path.read_text().strip()
            if TOKEN_RE.match(text):
                return text
        except FileNotFoundError:
            pass
    token = secrets.token_hex(16)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return token


def token_matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def load_key(path: Path) -> bytes:
    """The relay's resume key (32 random bytes, hex, mode 0600), made on first use and kept across restarts."""
    try:
        text = path.read_text().strip()
        if re.fullmatch(r"[0-9a-f]{64}", text):
            return bytes.fromhex(text)
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(KEY_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key.hex() + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return key
