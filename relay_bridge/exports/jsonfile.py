"""The bytes of an export file: JSON indented by one space, UTF-8, as `json.dump(doc, indent=1, ensure_ascii=False)`
wrote it, made by msgspec's C encoder a piece at a time.

Python's indented writer is its pure-Python encoder: 2.2 s of CPU and ten million writes for the capture of 64
sessions of 1,024 tools (59 MB), where msgspec encodes and indents it in 0.12 s. The document is walked two levels
deep (the capture's sessions, a report's spans) and each member below is encoded whole, so what is held at once is
one member's bytes; an iterator where a list goes is written as that list, so a capture's sessions can be built
one at a time as they are written (relay_bridge.exports.capture.build_capture `lazy`).

The same JSON value as before, and the same bytes except numbers: msgspec writes `1e16` where Python wrote
`1e+16`, and a NaN or infinity as `null` where Python wrote `NaN` (which no JSON parser reads).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

STREAMED = 2  # containers this deep or shallower are written a member at a time; deeper ones whole
_encode = msgspec.json.Encoder().encode


def _whole(value: Any, depth: int) -> bytes:
    text = msgspec.json.format(_encode(value), indent=1)
    # JSON text has no raw line break inside a string: every one is between tokens, and each line moves right
    return text.replace(b"\n", b"\n" + b" " * depth) if depth else text


def _members(pairs: Iterator[tuple[bytes, Any]], depth: int, open_: bytes, close: bytes) -> Iterator[bytes]:
    yield open_
    inside = b"\n" + b" " * (depth + 1)
    empty = True
    for head, value in pairs:
        yield (inside if empty else b"," + inside) + head
        empty = False
        yield from _chunks(value, depth + 1)
    yield close if empty else b"\n" + b" " * depth + close


def _chunks(value: Any, depth: int) -> Iterator[bytes]:
    if isinstance(value, Iterator) or (depth < STREAMED and isinstance(value, list | tuple)):
        yield from _members(((b"", v) for v in value), depth, b"[", b"]")
    elif depth < STREAMED and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        yield from _members(((_encode(k) + b": ", v) for k, v in value.items()), depth, b"{", b"}")
    else:
        yield _whole(value, depth)


def indented(doc: Any) -> Iterator[bytes]:
    """The file's bytes, in pieces of at most one member below the top two levels."""
    return _chunks(doc, 0)
