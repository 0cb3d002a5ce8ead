"""What the rules read: one session's numbers, facts and tool descriptors, as plain values.

The facts are the page's (branch diag's `Facts`, one per span, every part optional): this module names only the
attributes the rules read, as Protocols, so the engine reads any object of that shape and imports no wire code.
`facts_of(session)` is the one accessor (`session.facts`, a mapping seq -> Facts); `from_session` turns a store
session into a `SessionInput` without I/O, so the dashboard, `wmcp-top diagnose` and the tests run the same rules.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from relay_bridge.core.breakdown import breakdown
from relay_bridge.core.canonical import canonical_bytes


class ImageFacts(Protocol):
    mime: str
    width: int
    height: int
    bytes: int  # decoded bytes
    jpeg_bytes: int  # re-encoded as JPEG at quality 0.8, same pixels
    fit_bytes: int  # JPEG q0.8 scaled so the longer side is at most 1568 px
    fit_width: int
    fit_height: int


class BloatFacts(Protocol):
    text_bytes: int
    whitespace_bytes: int
    repeated_key_bytes: int
    repeated_key_rows: int
    base64_bytes: int
    base64_runs: int
    truncated: bool | None


class SchemaFacts(Protocol):
    violations: int
    constraint: str | None  # the JSON Schema keyword broken (e.g. "minimum"), when the page names one
    path: str | None  # a JSON pointer into the tool's inputSchema


class RepeatFacts(Protocol):
    of: int  # seq of the earlier identical call


class RefusedFacts(Protocol):
    by: str  # "browser": the host's form validation refused the input


class Facts(Protocol):
    # read-only: the engine never writes a fact, so any object with these parts (the store's structs, a test's
    # dataclasses) is one
    @property
    def image(self) -> ImageFacts | None: ...
    @property
    def bloat(self) -> BloatFacts | None: ...
    @property
    def schema(self) -> SchemaFacts | None: ...
    @property
    def repeat(self) -> RepeatFacts | None: ...
    @property
    def refused(self) -> RefusedFacts | None: ...


def facts_of(session: Any) -> Mapping[int, Facts]:
    """The session's facts by span seq (an empty mapping where a store keeps none)."""
    facts = getattr(session, "facts", None)
    return facts if facts is not None else {}


class SpanInput(Protocol):
    """What the rules read of a span: relay_bridge.core.protocol.Span's own fields (the store's spans are read as they
    are, with no copy)."""

    @property
    def seq(self) -> int: ...
    @property
    def tool(self) -> str: ...
    @property
    def wallMs(self) -> float: ...
    @property
    def estTokens(self) -> int: ...
    @property
    def estInputTokens(self) -> int: ...
    @property
    def imageBytes(self) -> int: ...
    @property
    def isError(self) -> bool: ...
    @property
    def gapSincePrevCallMs(self) -> float | None: ...
    @property
    def blockingMs(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Weights:
    """What a descriptor weighs, measured once per distinct descriptor (footprint's measures)."""

    canonical: bytes  # the canonical definition (relay_bridge.core.canonical): what duplicates compare
    description_bytes: int  # UTF-8 bytes of the tool's own description
    enum_bytes: int  # footprint's breakdown part `enums`


def weigh(descriptor: dict[str, Any]) -> Weights | None:
    try:
        canon = canonical_bytes(descriptor)
        enums = breakdown(descriptor, len(canon))["enums"]
    except (TypeError, ValueError, RecursionError):  # not a definition footprint can measure
        return None
    desc = descriptor.get("description")
    return Weights(canon, len(desc.encode("utf-8", "surrogatepass")) if isinstance(desc, str) else 0, enums)


# A Struct, not a frozen dataclass: a view diagnoses a 16,384-tool session once a second, and a frozen
# dataclass's __init__ (a setattr a field) took 50 ms of the loop for its rows; this takes 4.
class ToolInput(msgspec.Struct, frozen=True, gc=False):
    name: str
    calls: int  # every measured call since attach (the ring may hold fewer spans)
    errors: int
    schema_bytes: int
    registered: bool
    internal: bool = False
    counted: int = 0  # calls the page counted but could not measure (toolactivated before its agent): still used
    descriptor: dict[str, Any] | None = None  # name, title, description, inputSchema, annotations (not a body)
    weights: Weights | None = None  # of the descriptor; None: measured from `descriptor` when a rule needs it

    def weight(self) -> Weights | None:
        if self.weights is not None:
            return self.weights
        return weigh(self.descriptor) if self.descriptor is not None else None


@dataclass(frozen=True, slots=True)
class SessionInput:
    id: str
    origin: str
    tools: tuple[ToolInput, ...]
    spans: tuple[SpanInput, ...]  # the ring buffer
    facts: Mapping[int, Facts] = field(default_factory=dict)
    wall_ms: float = 0.0  # totals over every measured call (stats.Totals)
    host_gap_ms: float = 0.0
    blocking_ms: float = 0.0
    calls: int = 0


def signature(session: Any) -> tuple[Any, ...]:
    """Changes whenever anything the rules read of `session` changes: cheap (O(tools)), no JSON work. A view
    diagnoses again only when it moves."""
    stats = session.stats
    tools = tuple((r.name, r.registered, len(r.descriptor or b"")) for r in session.tools.values())
    return (session.id, stats.version, stats.epoch, stats.totals.calls, len(facts_of(session)), tools)


def _descriptor(raw: bytes | None) -> tuple[dict[str, Any] | None, Weights | None]:
    return _parsed(raw) if raw else (None, None)


@functools.lru_cache(maxsize=1024)
def _parsed(raw: bytes) -> tuple[dict[str, Any] | None, Weights | None]:
    """A descriptor's JSON and weights, worked out once per distinct text (a live view diagnoses again on every
    change; the rules never change what they read)."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None, None
    return (value, weigh(value)) if isinstance(value, dict) else (None, None)


def from_session(session: Any) -> SessionInput:
    """A relay_bridge.core.store.Session (typed loosely: the store is not imported) as the rules' input."""
    stats = session.stats
    counted = session.counted_only()
    tools = []
    for name, row in stats.tools.items():
        rec = session.tools.get(name)
        descriptor, weights = _descriptor(rec.descriptor) if rec is not None else (None, None)
        tools.append(ToolInput(name, row.calls, row.errors, row.schemaBytes, row.registered, row.internal, counted.get(name, 0), descriptor, weights))
    # The ring's own spans, in arrival order (no rule depends on the order); calls from the terminal are no part of
    # the agent's run.
    spans = tuple(s for s in stats.ring.values() if s.invokedBy != "terminal")
    t = stats.totals
    return SessionInput(session.id, session.info.origin, tuple(tools), spans, facts_of(session), t.wallMs, t.hostGapMs, t.blockingMs, t.calls)
