"""Memory caps: every per-session structure the relay keeps has one, and the relay has a total budget.

Pure numbers and one estimator. Whatever sequence of valid frames arrives from however many sockets hold the
token, what the store keeps is bounded by these (README, "Limits"): past a cap the frame (or, in a batch, the
span) is refused with `limit`, counted relay-wide under `limit:<what>` and per session, and shown. Nothing is
ever stored first and trimmed later except the timeline, which is a window (oldest entries leave).

Estimated bytes are of the variable-size parts the store holds for a session (descriptors, timeline details,
tool rows, prompt steps); fixed-size parts (the span ring, calls in flight) are bounded by the buffer size.
The estimate is deliberately generous (Python's object overhead included), so the total budget bounds the
process's memory, not just the text.
"""

from __future__ import annotations

from typing import Any

MAX_TOOLS = 1024  # tool records (registered, withdrawn or rejected names) a session
MAX_DESCRIPTOR_BYTES = 1024 * 1024  # descriptor bytes kept a session (each descriptor <= 64 KiB on the wire)
# Distinct tool names with numbers (from spans, calls in flight, registrations). Large enough for the 10,000-tool
# session the dashboard must stay responsive with (issue 11 item 6); rows also count against the relay budget.
MAX_TOOL_ROWS = 16384
MAX_PENDING_SEQS = 4096  # seqs stored above a gap; beyond it the oldest gap is given up as lost
TIMELINE_MAX = 2000  # timeline entries a session (a window: the oldest leave)
TIMELINE_BYTES = 512 * 1024  # estimated bytes of a session's timeline (a window too)
PROMPT_SESSIONS_MAX = 16  # Prompt API sessions a page session (the oldest leaves)
PROMPTS_PER_SESSION = 100  # steps kept for each (the oldest leaves)
# Diagnosis facts (one entry per call) a session keeps: a window, the oldest entry leaving first, as in the
# span ring. An entry (its structs, at most a 256-character schema pointer) is estimated at FACTS_BYTES.
FACTS_MAX = 4096
FACTS_BYTES = 1600
RELAY_BUDGET_BYTES = 96 * 1024 * 1024  # estimated bytes across every session the relay keeps
# Fair shares of it (docs/limits.md). Every page holds the one token, so caps per token are caps for everyone:
# what the live sessions of one origin hold together, and of those what one socket's live sessions hold, is
# bounded on its own, so one origin's flood leaves every other origin its share. Ended and disconnected sessions
# count against no share (what a session held is given back when it ends); they stay, to be looked at, until the
# relay's total needs their room, then go oldest first. A socket with no Origin header (a local tool, which
# holds the token and is the user's own) is its own share.
# A quarter each: four origins at their share fill the total. So that a fifth (and up to eight) still gets in,
# an origin below ORIGIN_RESERVE_BYTES may grow past the total into a pool of RESERVE_POOL_BYTES kept for that:
# the hard bound is the total plus the pool.
ORIGIN_BUDGET_BYTES = 24 * 1024 * 1024
SOCKET_BUDGET_BYTES = 16 * 1024 * 1024
ORIGIN_RESERVE_BYTES = 2 * 1024 * 1024  # a page's tools, a full span ring and a timeline fit
RESERVE_POOL_BYTES = 16 * 1024 * 1024

ENTRY_OVERHEAD = 240  # a timeline entry: its slots object and its dict
ITEM_OVERHEAD = 110  # a key and a value in a dict: two objects and the table slot
TOOL_OVERHEAD = 900  # a tool record and its stats row
ROW_OVERHEAD = 300  # a stats row (tool name seen in spans only)


def detail_bytes(detail: dict[str, Any]) -> int:
    """Estimated bytes of a timeline entry with this detail."""
    size = ENTRY_OVERHEAD
    for key, value in detail.items():
        size += ITEM_OVERHEAD + len(key) + (len(value) if isinstance(value, str) else 8)
    return size


def tool_bytes(name: str, descriptor: bytes | None, annotations: int) -> int:
    """Estimated bytes of one tool record: its descriptor, its name, its annotation dicts."""
    return TOOL_OVERHEAD + len(name) + (len(descriptor) if descriptor else 0) + annotations * ITEM_OVERHEAD * 2
