"""Frames for tests that feed a store directly: built as a page would send them, decoded by the relay's own decoder."""

from __future__ import annotations

import json
from typing import Any

from relay_bridge.core import protocol as p


def frame(obj: dict[str, Any]) -> p.AgentFrame:
    """`obj` through JSON and `protocol.decode`; a test's own frame that the protocol refuses fails the test here."""
    decoded = p.decode(json.dumps(obj))
    assert not isinstance(decoded, p.Rejection), decoded
    return decoded
