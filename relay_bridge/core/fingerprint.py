"""The descriptor fingerprint autotel-webmcp (001) puts on `webmcp.tool.descriptor`, computed the same way here
and in the page agent (`page_agent/src/page/hooks.js`, held together by `tests/vectors/fingerprint.json`).

FNV-1a (32 bits, over UTF-16 code units) of the JSON text, as JavaScript writes it, of
`[name, title or "", description as a string or "", inputSchema or null, annotations or null, handler or null]`.
The agent computes it from the tool object (the handler's source only under `fingerprintHandler`) and sends it on
the `tool` frame; this side computes it from a descriptor when an agent did not (a CDP lane, an older agent).
"""

from __future__ import annotations

import json
from typing import Any

from relay_bridge.core.jsjson import stringify

_OFFSET = 0x811C9DC5
_PRIME = 0x01000193


def fnv1a32(text: str) -> str:
    """8 hex digits; UTF-16 units as JavaScript's charCodeAt reads them."""
    data = text.encode("utf-16-le", "surrogatepass")
    h = _OFFSET
    for i in range(0, len(data), 2):
        h = ((h ^ (data[i] | data[i + 1] << 8)) * _PRIME) & 0xFFFFFFFF
    return f"{h:08x}"


def _described(value: Any) -> str:
    """JavaScript's String(value) for what a descriptor's description can be after JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return stringify(value)
    return "[object Object]" if isinstance(value, dict) else ",".join("" if v is None else _described(v) for v in value)


def descriptor_fingerprint(descriptor: dict[str, Any], handler: str | None = None) -> str:
    title = descriptor.get("title")
    canonical = [
        str(descriptor.get("name", "")),
        title if isinstance(title, str) else "",
        _described(descriptor.get("description")),
        descriptor.get("inputSchema"),
        descriptor.get("annotations"),
        handler,
    ]
    return fnv1a32(stringify(canonical))


def fingerprint_of_json(descriptor: bytes | str | None) -> str | None:
    """The fingerprint of a descriptor as it came over the wire (JSON text), or None when it is not one."""
    if not descriptor:
        return None
    try:
        value = json.loads(descriptor)
    except ValueError:
        return None
    return descriptor_fingerprint(value) if isinstance(value, dict) else None
