"""The flood of issue 48: four origins (a page and three iframes of its own domains) x 16 sessions, each registering
the same 1,024 tool names with slightly different definitions, every byte inside the per-origin shares.

Shared by the adversary test (what load cannot flip) and the benchmark (times beside a control)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from relay_bridge.core import synth
from relay_bridge.core.store import Store
from tests.frames import frame

ORIGINS = ("https://shop.example", "https://cdn-a.example", "https://cdn-b.example", "https://cdn-c.example")
SESSIONS_PER_ORIGIN = 16
TOOLS = 1024
WORDS = ["search", "the", "catalog", "for", "items", "that", "match", "the", "query", "and", "return", "their", "names", "prices", "and", "stock"]


def flood_sid(origin: int, n: int) -> str:
    return f"{0xF1000000 + origin * 256 + n:08x}"


def definition(origin: int, n: int, i: int) -> tuple[str, dict[str, Any]]:
    """Tool i of session n of origin `origin`: one word of its description and one bound differ per session."""
    words = [*WORDS, f"v{origin}x{n}", f"t{i}"]
    schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 64 + n}, "limit": {"type": "integer", "minimum": origin}}}
    return " ".join(words), schema


def flood_frames(origins: int = len(ORIGINS), sessions: int = SESSIONS_PER_ORIGIN, tools: int = TOOLS) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(connection, origin, frame): one socket a session, as a page and its iframes open them."""
    conn = 0
    for o in range(origins):
        for n in range(sessions):
            conn += 1
            sid = flood_sid(o, n)
            yield conn, ORIGINS[o], synth.hello(sid, ORIGINS[o], context="top" if o == 0 else "iframe")
            for i in range(tools):
                description, schema = definition(o, n, i)
                yield conn, ORIGINS[o], synth.tool(sid, f"tool_{i:04d}", 1.0 + i, description=description, schema=schema)


def flood_into(store: Store, first_conn: int = 1000, **size: int) -> None:
    """Apply the flood to a store (connections from `first_conn`, clear of a live relay's own)."""
    seen: set[int] = set()
    for conn, origin, f in flood_frames(**size):
        if conn not in seen:
            seen.add(conn)
            store.connect(first_conn + conn, origin)
        store.apply(first_conn + conn, frame(f))


def flood_store(**size: int) -> Store:
    store = Store()
    flood_into(store, **size)
    return store
