"""The rug pull: a tool whose definition changes after it was first registered in the session.

The store keeps, per tool name, a digest of each field of the first registration (`digest`: size and hash of
each field's canonical JSON, never the text) and compares every later registration with it (`changes`). A field
is a top-level member of the descriptor: description, title, inputSchema, annotations, outputSchema; every
other member but the name is folded into one field, `other`, so a digest has at most six entries whatever a page
sends. Fields are compared as canonical JSON (keys sorted), so the same definition written in another key order
is no change.
"""

from __future__ import annotations

import hashlib

import msgspec

# field -> (canonical JSON bytes, 64-bit hash); a field that is absent is not in the mapping.
Digest = dict[str, tuple[int, bytes]]
FIELDS = ("description", "title", "inputSchema", "annotations", "outputSchema")


class Change(msgspec.Struct, frozen=True, gc=False):
    field: str
    before: int  # canonical bytes at first registration; -1: absent then
    after: int  # canonical bytes now; -1: absent now


def digest(descriptor: bytes | None) -> Digest:
    """Each field's size and hash. A descriptor that is not a JSON object counts as one field, `descriptor`."""
    if not descriptor:
        return {}
    try:
        value = msgspec.json.decode(descriptor)
    except (msgspec.DecodeError, RecursionError):
        value = None
    if not isinstance(value, dict):
        return {"descriptor": (len(descriptor), hashlib.blake2b(descriptor, digest_size=8).digest())}
    out: Digest = {}
    for key in FIELDS:
        if key in value:
            text = msgspec.json.encode(value[key], order="sorted")
            out[key] = (len(text), hashlib.blake2b(text, digest_size=8).digest())
    rest = {k: v for k, v in value.items() if k != "name" and k not in FIELDS}
    if rest:
        text = msgspec.json.encode(rest, order="sorted")
        out["other"] = (len(text), hashlib.blake2b(text, digest_size=8).digest())
    return out


def changes(first: Digest, now: Digest) -> tuple[Change, ...]:
    """The fields that differ, in name order, with their sizes before and after."""
    out = []
    for key in sorted(first.keys() | now.keys()):
        a, b = first.get(key), now.get(key)
        if a != b:
            out.append(Change(key, a[0] if a else -1, b[0] if b else -1))
    return tuple(out)


def said(found: tuple[Change, ...]) -> str:
    """The changes in one line, our words and sizes only: `description 40 B -> 2310 B, annotations 20 B -> absent`."""
    return ", ".join(f"{c.field} {_size(c.before)} -> {_size(c.after)}" for c in found)


def _size(n: int) -> str:
    return "absent" if n < 0 else f"{n} B"
