"""Who a socket is, and which sessions it may speak for (docs/security.md). Pure functions, no I/O.

- **The socket's kind** comes from its handshake's `Origin` header, which the browser sets and a page cannot:
  the wmcp-top extension's own origin (`chrome-extension://ID`, the id fixed by its manifest key) is the
  extension; any other Origin is a page (or another extension) whose every hello must claim exactly that origin;
  no Origin at all is a local process holding the token (a test, `bench`, a script), trusted as the user's own.
- **Lane marks are the relay's, not the page's**: the extension's agent name (`ext` on screen) is accepted only
  on the extension's socket, and `cdp/` names only from the in-process DevTools lane (never from a socket).
- **Resume secrets** are derived from a relay key kept in the state directory, so a secret the relay handed out
  still proves ownership after a restart (the relay keeps no list of them, and the log never holds one):
  `secret = created_ms (12 hex) + HMAC-SHA256(key, "sid:created_ms") (first 20 hex)`. Two valid secrets for one id
  can only be the same session issued twice (same stamp) or an older owner against a newer claim: the older wins.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Literal

# "in-process": a lane of the relay's own (the DevTools lane feeds the store directly, no socket).
SocketKind = Literal["extension", "web", "local", "in-process"]

EXTENSION_AGENT_PREFIX = "wmcp-top-extension/"
CDP_AGENT_PREFIX = "cdp/"
_SECRET_RE = re.compile(r"^[0-9a-f]{32}\Z")
_STAMP_HEX = 12  # 48 bits of epoch ms: until the year 10889
KEY_BYTES = 32


def socket_kind(origin: str | None, extension_origins: frozenset[str]) -> SocketKind:
    """What the handshake's Origin header says the socket is."""
    if origin is None:
        return "local"
    return "extension" if origin in extension_origins else "web"


def reserved_agent(agent: str) -> SocketKind | None:
    """The kind of connection an agent string's lane mark needs (only the relay may grant it), if any."""
    if agent.startswith(EXTENSION_AGENT_PREFIX):
        return "extension"
    if agent.startswith(CDP_AGENT_PREFIX):
        return "in-process"
    return None


def issue_secret(key: bytes, session_id: str, created_ms: int) -> str:
    stamp = f"{max(0, created_ms) & ((1 << 48) - 1):012x}"
    return stamp + _mac(key, session_id, stamp)


def verify_secret(key: bytes, session_id: str, secret: str | None) -> int | None:
    """The creation stamp (epoch ms) a secret proves for `session_id`, or None when it proves nothing."""
    if secret is None or not _SECRET_RE.match(secret):
        return None
    stamp = secret[:_STAMP_HEX]
    if not hmac.compare_digest(secret[_STAMP_HEX:], _mac(key, session_id, stamp)):
        return None
    return int(stamp, 16)


def _mac(key: bytes, session_id: str, stamp: str) -> str:
    return hmac.new(key, f"{session_id}:{stamp}".encode(), hashlib.sha256).hexdigest()[: 32 - _STAMP_HEX]
