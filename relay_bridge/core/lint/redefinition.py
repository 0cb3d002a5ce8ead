"""The rug pull: a tool whose definition changes after it was first registered in the session.

The store keeps, per tool name, a digest of each field of the first registration (`digest`: size and hash of
each field's canonical JSON, never the text) and compares every later registration with it (`changes`). A field
is a top-level member of the descriptor: description, title, inputSchema, annotations, outputSchema; every
other member but the name is folded into one field, `other`, so a digest has a fixed size whatever a page sends. Fields are compared as canonical JSON (keys sorted), so the same definition written in another key order
is no change.
"""

from __future__ import annotations

import hashlib
import struct

import msgspec

FIELDS = ("description", "title", "inputSchema", "annotations", "outputSchema")
# Every slot a digest has, in name order: the fields, `other` (the rest but the name), and `descriptor` (a
# definition that is not a JSON object, whole).
SLOTS = tuple(sorted((*FIELDS, "other", "descriptor")))
_SLOT = struct.Struct(">iQ")  # canonical bytes (-1: absent), 64-bit hash
# One bytes object of len(SLOTS) slots (84 bytes): a session keeps one a tool, so it is packed.
Digest = bytes


class Change(msgspec.Struct, frozen=True, gc=False):
    field: str
    before: int  # canonical bytes at first registration; -1: absent then
    after: int  # canonical bytes now; -1: absent now


def _slot(text: bytes) -> tuple[int, int]:
    return len(text), int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def digest(descriptor: bytes | None) -> Digest:
    """Each field's size and hash. A descriptor that is not a JSON object counts as one field, `descriptor`."""
    found: dict[str, tuple[int, int]] = {}
    if descriptor:
        try:
            value = msgspec.json.decode(descriptor)
        except (msgspec.DecodeError, RecursionError):
            value = None
        if not isinstance(value, dict):
            found["descriptor"] = _slot(descriptor)
        else:
            for key in FIELDS:
                if key in value:
                    found[key] = _slot(msgspec.json.encode(value[key], order="sorted"))
            rest = {k: v for k, v in value.items() if k != "name" and k not in FIELDS}
            if rest:
                found["other"] = _slot(msgspec.json.encode(rest, order="sorted"))
    return b"".join(_SLOT.pack(*found.get(name, (-1, 0))) for name in SLOTS)


def fields(d: Digest) -> list[str]:
    """The fields a digest holds."""
    return [name for name, (size, _) in zip(SLOTS, _SLOT.iter_unpack(d), strict=True) if size >= 0]


def changes(first: Digest, now: Digest) -> tuple[Change, ...]:
    """The fields that differ, in name order, with their sizes before and after."""
    pairs = zip(SLOTS, _SLOT.iter_unpack(first), _SLOT.iter_unpack(now), strict=True)
    return tuple(Change(name, a[0], b[0]) for name, a, b in pairs if a != b)


def said(found: tuple[Change, ...]) -> str:
    """The changes in one line, our words and sizes only: `description 40 B -> 2310 B, annotations 20 B -> absent`."""
    return ", ".join(f"{c.field} {_size(c.before)} -> {_size(c.after)}" for c in found)


def _size(n: int) -> str:
    return "absent" if n < 0 else f"{n} B"
