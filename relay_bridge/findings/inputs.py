"""What the rules read: one session's numbers, facts and tool descriptors, as plain values.

The facts are the page's (branch diag's `Facts`, one per span, every part optional): this module names only the
attributes the rules read, as Protocols, so the engine reads any object of that shape and imports no wire code.
`facts_of(session)` is the one accessor (`session.facts`, a mapping seq -> Facts); `from_session` turns a store
session into a `SessionInput` without I/O, so the dashboard, `wmcp-top diagnose` and the tests run the same rules.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from relay_bridge.core import budget
from relay_bridge.core.breakdown import breakdown
from relay_bridge.core.canonical import canonical_bytes, canonical_from_text
from relay_bridge.core.limits import LIMITS
from relay_bridge.core.similarity import words


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
    def inputBytes(self) -> int: ...
    @property
    def resultBytes(self) -> int: ...
    @property
    def imageBytes(self) -> int: ...
    @property
    def isError(self) -> bool: ...
    @property
    def gapSincePrevCallMs(self) -> float | None: ...
    @property
    def blockingMs(self) -> float: ...


class Weights(msgspec.Struct, frozen=True, gc=False):
    """What a descriptor weighs, measured once per distinct descriptor text (footprint's measures). Small on
    purpose: a digest, not the canonical text, so the content cache holds every live session's tools cheaply.
    Untracked by the cycle collector (it holds no container): under a flood the cache holds 60,000 of them, which
    a tracked class doubled what every full collection walks (70 ms pauses of the dashboard's loop)."""

    fingerprint: bytes  # BLAKE2b-128 of the canonical definition (relay_bridge.core.canonical): what duplicates compare
    size: int  # canonical bytes
    description_bytes: int  # UTF-8 bytes of the tool's own description
    enum_bytes: int  # footprint's breakdown part `enums`


def weigh(descriptor: dict[str, Any], enums_in: bool = True, raw: bytes | None = None) -> Weights | None:
    """`enums_in` False: the text has no enum or const member, so footprint's breakdown (most of the cost) is
    skipped and the enum part is 0. `raw`: the text the descriptor was parsed from (canonical at C speed)."""
    try:
        canon = canonical_from_text(raw, descriptor) if raw is not None else canonical_bytes(descriptor)
        enums = breakdown(descriptor, len(canon))["enums"] if enums_in else 0
    except (TypeError, ValueError, RecursionError):  # not a definition footprint can measure
        return None
    desc = descriptor.get("description")
    size = len(desc.encode("utf-8", "surrogatepass")) if isinstance(desc, str) else 0
    return Weights(hashlib.blake2b(canon, digest_size=16).digest(), len(canon), size, enums)


MISSING: Any = object()  # what ContentCache.lookup returns for a key it does not hold


class ContentCache:
    """Values worked out once per distinct content, keyed by a digest of it (never by session or name: the same
    definition in 64 sessions is measured once), least recently used leaving first past `entries`. Safe to share
    between the loop and a worker thread; `known` and `put` let a caller fill it with values worked out
    elsewhere (the findings view's worker process)."""

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self._items: OrderedDict[bytes, Any] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(raw: bytes) -> bytes:
        return hashlib.blake2b(raw, digest_size=16).digest()

    def lookup(self, key: bytes) -> Any:
        """The value held for `key`, or `MISSING`."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return MISSING

    def known(self, key: bytes) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: bytes, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)

    def get(self, raw: bytes, make: Any) -> Any:
        return self.get_by(self.key(raw), raw, make)

    def get_by(self, key: bytes, arg: Any, make: Any) -> Any:
        """The value for `key`, made from `arg` when none is held (outside the lock: two threads may both make one
        new value, never a wrong one)."""
        value = self.lookup(key)
        if value is MISSING:
            value = make(arg)
            self.put(key, value)
        return value


# Every tool record every live session may hold (budget.MAX_TOOLS x the relay's 64 live sessions): a refresh of
# the findings view never measures a descriptor it measured before. An entry is a Weights (about 250 bytes).
WEIGHTS = ContentCache(budget.MAX_TOOLS * 64)
# Word sets, only for the tools that enter the similarity scan (at most LIMITS.tools an analysis).
WORDS = ContentCache(2 * LIMITS.tools)


# The text parsed last and its value. A new definition's weights and its review read the same text one after the
# other (security.hits, definitions.review), and parsing it twice was a tenth of their cost. Keyed by the text
# object itself (the store's bytes, shared, never copied); one slot, replaced whole, so a thread racing another
# only parses again. Every reader of the value (weights, breakdown, lint, words) leaves it as it is.
_last_parsed: tuple[bytes | None, dict[str, Any] | None] = (None, None)


def parse_descriptor(raw: bytes) -> dict[str, Any] | None:
    global _last_parsed
    last = _last_parsed
    if last[0] is raw:
        return last[1]
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        value = None
    parsed = value if isinstance(value, dict) else None
    _last_parsed = (raw, parsed)
    return parsed


def weigh_raw(raw: bytes) -> Weights | None:
    """A descriptor text's weights (None: not a definition footprint can measure)."""
    value = parse_descriptor(raw)
    # The agent writes descriptors with JSON.stringify, which never escapes a letter: a text without the two keys
    # spelled plainly holds neither (a page that escapes them only hides its own schema.enums finding).
    return weigh(value, b'"enum"' in raw or b'"const"' in raw, raw) if value is not None else None


def _words_raw(raw: bytes) -> frozenset[str]:
    value = parse_descriptor(raw)
    desc = value.get("description") if value is not None else None
    return words(desc) if isinstance(desc, str) else frozenset()


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
    weights: Weights | None = None  # of the descriptor; None: measured when a rule needs it
    raw: bytes | None = None  # the descriptor's text as the store keeps it (shared, not copied; parsed on demand)
    drift: tuple[Any, ...] = ()  # relay_bridge.core.lint.redefinition.Change: changed since first registered

    def weight(self) -> Weights | None:
        if self.weights is not None:
            return self.weights
        if self.raw is not None:
            result: Weights | None = WEIGHTS.get(self.raw, weigh_raw)
            return result
        return weigh(self.descriptor) if self.descriptor is not None else None

    def words(self) -> frozenset[str]:
        """The description's words (relay_bridge.core.similarity.words)."""
        if self.raw is not None:
            result: frozenset[str] = WORDS.get(self.raw, _words_raw)
            return result
        desc = self.descriptor.get("description") if self.descriptor is not None else None
        return words(desc) if isinstance(desc, str) else frozenset()

    def parsed(self) -> dict[str, Any] | None:
        """The descriptor as JSON (parsed now from the store's text when it came from a session)."""
        if self.descriptor is not None:
            return self.descriptor
        return parse_descriptor(self.raw) if self.raw is not None else None


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
    """Changes whenever anything the rules read of `session` changes, in O(1): every tool row's change (a call,
    a registration, a withdrawal, a new descriptor) moves `stats.version`; the descriptors' count and bytes are
    the store's own sums. A view diagnoses again only when it moves."""
    stats = session.stats
    return (session.id, stats.version, stats.epoch, stats.totals.calls, len(facts_of(session)), len(session.tools), session.descriptor_bytes)


def tools_signature(session: Any) -> tuple[Any, ...]:
    """What the cross-tool analysis reads of a session: its origin and registered tools (O(tools): taken only
    for a session whose `signature` moved)."""
    return (session.id, session.info.origin, tuple((r.name, r.registered, len(r.descriptor or b"")) for r in session.tools.values()))


def from_session(session: Any) -> SessionInput:
    """A relay_bridge.core.store.Session (typed loosely: the store is not imported) as the rules' input."""
    stats = session.stats
    counted = session.counted_only()
    tools = []
    for name, row in stats.tools.items():
        rec = session.tools.get(name)
        raw = rec.descriptor or None if rec is not None else None
        drift = rec.drift if rec is not None else ()
        tools.append(
            ToolInput(name, row.calls, row.errors, row.schemaBytes, row.registered, row.internal, counted.get(name, 0), raw=raw, drift=drift)
        )
    # The ring's own spans, in arrival order (no rule depends on the order); calls from the terminal are no part of
    # the agent's run.
    spans = tuple(s for s in stats.ring.values() if s.invokedBy != "terminal")
    t = stats.totals
    return SessionInput(session.id, session.info.origin, tuple(tools), spans, dict(facts_of(session)), t.wallMs, t.hostGapMs, t.blockingMs, t.calls)
