"""The session store: what every connected page has told the relay, validated, deduplicated and counted.

Pure state: `apply(conn, frame)` takes one decoded frame and returns the frames to send back; the server and
the replayer are the only callers, so a live run and a replayed log go through the same code. Subscribers
are not called here: the store marks sessions dirty and a `Coalescer` (relay_bridge.relay.notify) hands them out
at most a few times a second.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hmac
import secrets
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import msgspec

from relay_bridge.core import budget as b
from relay_bridge.core import identity
from relay_bridge.core import protocol as p
from relay_bridge.core.lint import redefinition
from relay_bridge.core.measure import CONTENT_TYPES
from relay_bridge.core.received import Received
from relay_bridge.core.stats import SessionStats

RelayState = Literal["live", "disconnected", "ended"]


class Clock(Protocol):
    """Where the store reads the time: epoch seconds and a monotonic clock. Tests and screenshots pass a
    frozen one; a live relay uses the system's."""

    def time(self) -> float: ...

    def monotonic(self) -> float: ...


class SystemClock:
    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


class HeldClock:
    """A clock whose `time` is one reading of another, for one step (Store.held_time)."""

    __slots__ = ("clock", "t")

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.t = clock.time()

    def time(self) -> float:
        return self.t

    def monotonic(self) -> float:
        return self.clock.monotonic()


class StoreObserver(Protocol):
    def on_span(self, session: Session, span: p.Span) -> None: ...

    def on_tool(self, session: Session, record: ToolRecord, change: str, at: float) -> None: ...

    # Optional (looked up with getattr): a session's first hello, and every accepted event frame.
    # def on_session(self, session: Session) -> None
    # def on_event(self, session: Session, kind: str, detail: dict[str, Any], at: float) -> None


MAX_REFUSED_ORIGINS = 16  # origins counted apart in token_refusals; the rest are counted together


@dataclass(slots=True)
class InFlight:
    seq: int
    tool: str
    invokedAt: float
    depth: int
    parent: int | None
    seen_at: float  # relay clock (time.monotonic) when `start` arrived
    cancelled_at: float | None = None
    waiting: bool = False  # a filled form waiting for the user's submit: not tool time
    # Page-clock ms when its session ended (bye) or lost its socket with the call still open: the call ends
    # there, marked, instead of running on. A re-sent `start` after a reconnect opens it again.
    ended_at: float | None = None
    terminal: bool = False  # started from wmcp-top (the inspector's `x`), not by the page's agent


# Untracked by the cycle collector, as TimelineEntry below (it refers to nothing that refers back): a flood of
# tools (issue 48: 60 sessions x 1,024) left 60,000 of them for every full collection to walk, 80-200 ms pauses of
# the dashboard's loop each time a view was opened (docs/limits.md, "The findings under a flood").
class ToolRecord(msgspec.Struct, gc=False):
    name: str
    schemaBytes: int
    registeredAt: float
    unregisteredAt: float | None = None
    descriptor: bytes | None = None
    annotationsSent: dict[str, Any] | None = None
    annotationsKept: dict[str, Any] | None = None
    internal: bool = False
    rejected: str | None = None
    fingerprint: str | None = None
    redefined: bool = False  # registered again under the same name with a different descriptor or handler
    kind: str = "imperative"  # or "form": a declarative tool
    form: p.FormFacts | None = None
    redefining: bool = False  # this registration is the one that changed it (the previous one differed)
    # The rug pull (relay_bridge.core.lint.redefinition): field digests of the first registration of this name in
    # the session, carried from record to record, and what differs from them now.
    first: redefinition.Digest | None = None
    drift: tuple[redefinition.Change, ...] = ()

    @property
    def registered(self) -> bool:
        return self.unregisteredAt is None and self.rejected is None


# Untracked by the cycle collector (gc=False; it refers to nothing that refers back): a session keeps thousands,
# and under a flood they were the largest kind of object a full collection walked (docs/limits.md).
class TimelineEntry(msgspec.Struct, gc=False):
    at: float  # page clock (performance.now()) when known, else relative to timeOrigin from the relay clock
    kind: str
    detail: dict[str, Any]
    size: int = 0  # estimated bytes (budget.detail_bytes)


@dataclass(slots=True)
class PromptCall:
    seq: int
    kind: str  # prompt | stream
    at: float
    totalMs: float | None
    firstChunkMs: float | None
    chunks: int | None
    charsIn: int | None
    charsOut: int | None
    error: str | None


@dataclass(slots=True)
class PromptSession:
    """One `LanguageModel` session in the page: its prompts' timings and sizes, never their text."""

    id: str
    created_at: float
    destroyed_at: float | None = None
    calls: deque[PromptCall] = field(default_factory=lambda: deque(maxlen=b.PROMPTS_PER_SESSION))


# Timeline categories for filtering (issue 8's tools, calls, prompts, system).
CATEGORY = {
    "register": "tools",
    "unregister": "tools",
    "rejected": "tools",
    "context-clear": "tools",
    "context-provide": "tools",
    "redefined": "tools",
    "rug-pull": "tools",
    "wrap-failed": "tools",
    "start": "calls",
    "waiting": "calls",
    "submitted": "calls",
    "settle": "calls",
    "error": "calls",
    "toolcancel": "calls",
    "toolactivated": "calls",
    "consent": "calls",
    "prompt-create": "prompts",
    "prompt": "prompts",
    "prompt-stream": "prompts",
    "prompt-destroy": "prompts",
}


def category(kind: str) -> str:
    return CATEGORY.get(kind, "system")


@dataclass(slots=True)
class SessionCounters:
    frames: int = 0
    spans: int = 0
    duplicates: int = 0
    rejected: int = 0
    late_updates: int = 0
    facts: int = 0  # diagnosis facts stored (one per seq)
    facts_duplicates: int = 0  # facts for a seq already held: not stored again
    limited: int = 0  # frames or spans refused by a memory cap (relay_bridge.core.budget)


@dataclass
class Session:
    info: p.SessionInfo
    agent: str
    config: p.AgentConfig
    stats: SessionStats
    conn: int | None
    state: RelayState = "live"
    lost: int = 0
    received: Received = field(default_factory=Received)  # which seqs are stored (any settle order)
    floor: int = 0
    # Ordered dicts where the oldest entry leaves at a cap: a dict's first key is found by scanning past every
    # entry deleted before it (2.4 µs at 4,096 entries, against 0.4 for popitem(last=False)).
    inflight: OrderedDict[int, InFlight] = field(default_factory=OrderedDict)
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    timeline: deque[TimelineEntry] = field(default_factory=deque)
    # Estimated bytes this session holds in its variable-size parts (budget.py); the store sums them.
    footprint: int = 0
    timeline_bytes: int = 0
    descriptor_bytes: int = 0
    status: p.Status | None = None
    ledger: p.Ledger | None = None
    ledger_rev: int = -1
    counters: SessionCounters = field(default_factory=SessionCounters)
    hellos: int = 0
    created: float = 0.0  # epoch seconds, from the store's clock
    last_seen: float = 0.0  # the store clock's monotonic seconds
    bye_reason: str | None = None
    prompts: dict[str, PromptSession] = field(default_factory=dict)
    navigated_from: str | None = None  # the session whose form call navigated to this document
    navigated_to: str | None = None
    # Handed to the owning socket in the ack of its hello; a later socket re-claims the session only with it.
    resume: str = ""
    # Diagnosis facts per seq (docs/diagnosis-facts.md), a window of budget.FACTS_MAX entries (the oldest leaves).
    facts: OrderedDict[int, p.Facts] = field(default_factory=OrderedDict)
    # The share (budget.ORIGIN_BUDGET_BYTES, p.MAX_SESSIONS_PER_ORIGIN) this session's footprint counts against
    # while it is held (live, on a socket); None while it holds none (ended or disconnected).
    share: str | None = None

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def phase(self) -> str:
        """The page's phase while live; the relay's own word once the page is gone."""
        if self.state == "disconnected":
            return "disconnected"
        if self.state == "ended":
            return "detached" if self.status is not None and self.status.phase == "detached" else "disconnected"
        return self.status.phase if self.status is not None else "live"

    @property
    def coverage(self) -> str:
        """`incomplete` whenever anything is known missing; otherwise the page's word, or what the spans say."""
        if self.lost or self.counters.rejected or self.counters.limited or (self.status is not None and self.status.coverage == "incomplete"):
            return "incomplete"
        if self.stats.totals.calls or self.inflight:
            return "running"
        return "none-observed"

    def coverage_reasons(self) -> list[str]:
        reasons: list[str] = []
        if self.lost:
            reasons.append(f"{self.lost} spans were evicted in the page before they could be sent")
        if self.counters.rejected:
            reasons.append(f"{self.counters.rejected} frames of this session were rejected by the relay")
        if self.counters.limited:
            reasons.append(f"{self.counters.limited} frames or spans were over the relay's memory caps")
        if self.status is not None:
            reasons.extend(self.status.reasons)
        return reasons

    @property
    def acked(self) -> int:
        """Highest seq below which every span is stored (or the agent's floor said none will come)."""
        return self.received.acked

    def is_contiguous_stored(self, seq: int) -> bool:
        return self.received.has(seq)

    def ack(self, resume: bool = False) -> p.Ack:
        """What the relay holds of this session; the hello's ack also hands the owner its resume secret."""
        above = [list(r) for r in self.received.above()] or None
        return p.Ack(self.id, self.received.acked, resume=self.resume if resume else None, above=above)

    def spans(self) -> list[p.Span]:
        return list(self.stats.ring.values())

    def counted_only(self) -> dict[str, int]:
        """Tools whose calls the page could count but not measure (registered before its agent loaded, seen
        through `toolactivated`): name -> calls counted. From the page's latest ledger."""
        if self.ledger is None:
            return {}
        return {name: t.counted for name, t in self.ledger.tools.items() if not t.measured or t.counted}

    def epoch(self, page_ms: float) -> float:
        return self.info.timeOrigin + page_ms

    def snapshot(self) -> Session:
        """This session as it is now, kept so by later frames (a paused screen shows one moment). Everything the
        store changes in place is copied; what it only replaces (spans, status, ledger, entries) is shared."""
        return dataclasses.replace(
            self,
            info=msgspec.structs.replace(self.info),
            stats=self.stats.snapshot(),
            received=copy.deepcopy(self.received),  # small: at most MAX_RANGES holes
            inflight=OrderedDict((seq, dataclasses.replace(call)) for seq, call in self.inflight.items()),
            tools={name: msgspec.structs.replace(rec) for name, rec in self.tools.items()},
            timeline=deque(self.timeline, maxlen=self.timeline.maxlen),
            counters=dataclasses.replace(self.counters),
            prompts={k: dataclasses.replace(ps, calls=deque(ps.calls, maxlen=ps.calls.maxlen)) for k, ps in self.prompts.items()},
            facts=OrderedDict(self.facts),
        )

    def timeline_view(self, categories: set[str] | None = None) -> list[TimelineEntry]:
        """Entries in page-clock order (stable for ties), optionally only some categories."""
        entries = [e for e in self.timeline if categories is None or category(e.kind) in categories]
        return sorted(entries, key=lambda e: e.at)


class Store:
    """Every session the relay knows, and the relay's own counters."""

    def __init__(self, buffer: int = 500, max_sessions: int = p.MAX_LIVE_SESSIONS, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.buffer = buffer
        self.max_sessions = max_sessions
        self.sessions: dict[str, Session] = {}
        self.counters: Counter[str] = Counter()  # frames, spans, duplicates, lost, rejected:<code>, ...
        self.connections: dict[int, set[str]] = {}
        # Sessions a connection relays (from the page's BroadcastChannel) that another socket owns: the owner's
        # copy wins; the relayed copy is acked with its own seqs (nothing about the owner's) and ignored.
        self.shadowed: dict[int, dict[str, int]] = {}
        # Frames a connection sent for sessions it does not own: counted against it, never against the session.
        self.refused_by_conn: Counter[int] = Counter()
        self.origins: dict[int, str] = {}
        # What each socket is by its handshake's Origin header (relay_bridge.core.identity): only the extension's own
        # sockets may carry its agent name. `extension_origins` is set by the relay from the built extension.
        self.kinds: dict[int, identity.SocketKind] = {}
        self.extension_origins: frozenset[str] = frozenset()
        # Resume secrets are derived from this key (identity.issue_secret); the relay sets its persisted one, so
        # a secret outlives a restart. A bare store (tests, replay) has one of its own.
        self.resume_key: bytes = secrets.token_bytes(identity.KEY_BYTES)
        # Whose share a socket's live sessions count against (see budget.ORIGIN_BUDGET_BYTES): its Origin header;
        # None (the extension, which speaks for many origins) for the origin each of its hellos names.
        self.share_keys: dict[int, str | None] = {}
        self.share_bytes: Counter[str] = Counter()  # footprint of the live sessions of each share
        self.conn_bytes: Counter[int] = Counter()  # footprint of each socket's live sessions
        # Estimated bytes of every session's variable-size parts (budget.RELAY_BUDGET_BYTES bounds it).
        self.footprint = 0
        # Told of every refusal (the session log writes them, so a replay rebuilds the counts).
        self.on_refusal: Callable[[int, str, str | None, bool, str | None, int], None] | None = None
        # A squatter's copy of a session dropped for its owner (conn of the squatter, session id): the session log
        # writes it down, so a replay drops the same copy (the log holds no secret to judge the claim by).
        self.on_squat: Callable[[int, str], None] | None = None
        # A replayed log holds only frames the live relay accepted, ownership already checked; its hellos carry
        # no secret (the log never stores one), so replay turns the check off.
        self.check_resume = True
        self._dirty: set[str] = set()
        self._relay_dirty = False
        self.wake: Callable[[], None] | None = None  # set by the Coalescer; called on every change
        # Per-item observers (the OpenTelemetry lane): called for each stored span and each tool change.
        # They must only enqueue; anything slow belongs on their own thread.
        self.observers: list[StoreObserver] = []
        # Pages refused for a wrong or missing token, by origin (as the request named it, capped): after
        # `snippet --rotate-token` a page with the old tag would otherwise leave the screen "waiting", unexplained.
        self.token_refusals: dict[str, int] = {}

    def refuse_token(self, origin: str | None) -> None:
        self.counters["refused:token"] += 1
        key = (origin or "a page that named no origin")[:120]
        if key not in self.token_refusals and len(self.token_refusals) >= MAX_REFUSED_ORIGINS - 1:
            key = "other origins"  # a page cannot grow this without bound by inventing origins
        self.token_refusals[key] = self.token_refusals.get(key, 0) + 1
        self._touch()

    # -- change tracking ----------------------------------------------------------------------------------

    def _touch(self, session_id: str | None = None) -> None:
        if session_id is None:
            self._relay_dirty = True
        else:
            self._dirty.add(session_id)
        if self.wake is not None:
            self.wake()

    @property
    def changed(self) -> AbstractSet[str]:
        """The sessions changed since the last drain_changes() (read only)."""
        return self._dirty

    def drain_changes(self) -> tuple[set[str], bool]:
        """Session ids changed since the last call, and whether relay-wide state changed."""
        dirty, relay = self._dirty, self._relay_dirty
        self._dirty, self._relay_dirty = set(), False
        return dirty, relay

    # -- connections --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def held_time(self) -> Iterator[float]:
        """One step (a frame applied, a socket opened or closed) at one reading of the clock, yielded (epoch
        seconds) for the session log's line: the replay then stamps what this step stamped at the same time. Two
        reads apart could lie a preempted process's time slice apart (60 ms seen on a loaded machine)."""
        clock = self.clock
        held = HeldClock(clock)
        self.clock = held
        try:
            yield held.t
        finally:
            self.clock = clock

    def connect(self, conn: int, origin: str | None = None, *, in_process: bool = False) -> None:
        """A socket opened. `origin` is its handshake's Origin header (a browser sets it, a page cannot): every
        hello on such a socket must claim that origin, whatever its scheme, unless it is the wmcp-top extension's
        own (which speaks for the pages it was given, stamping their origin from the browser). None (no header: a
        local tool, a replay) checks nothing. `in_process`: a lane of the relay's own (the DevTools lane), no socket."""
        self.connections[conn] = set()
        kind: identity.SocketKind = "in-process" if in_process else identity.socket_kind(origin, self.extension_origins)
        self.kinds[conn] = kind
        if kind == "web" and origin is not None:
            self.origins[conn] = origin
        # No Origin header (a local tool): nothing tells its hellos' origins apart, so the socket is its own share.
        self.share_keys[conn] = f"socket {conn}" if origin is None else origin if conn in self.origins else None
        self.counters["connections"] += 1
        self._touch()

    def disconnect(self, conn: int) -> None:
        self.shadowed.pop(conn, None)
        self.refused_by_conn.pop(conn, None)
        self.origins.pop(conn, None)
        self.kinds.pop(conn, None)
        for sid in self.connections.pop(conn, set()):
            session = self.sessions.get(sid)
            if session is not None and session.conn == conn and session.state == "live":
                self._release(session)
                session.state = "disconnected"
                session.conn = None
                self._end_calls(session)
                self._timeline(session, "disconnected", {})
                self._touch(sid)
        self.share_keys.pop(conn, None)
        self.conn_bytes.pop(conn, None)
        self._touch()

    def owns(self, conn: int | None, session_id: str | None) -> bool:
        """Whether `conn` owns the session (conn None: the relay itself, e.g. a frame over the size limit)."""
        session = self.sessions.get(session_id) if session_id else None
        return session is not None and (conn is None or session.conn == conn)

    def reject(self, conn: int | None, rejection: p.Rejection, session_id: str | None = None, cap: str | None = None, n: int = 1) -> p.ErrorFrame:
        """Count a refused frame (by code, relay-wide) and say why, naming the session the frame named.
        It counts against the session (and so makes its coverage `incomplete`) only when `conn` owns that
        session: a socket cannot spoil another's numbers by sending bad frames in its name. `cap` names the
        memory cap that refused it (budget.py); `n` counts several refused items (spans of one batch)."""
        session = self.sessions.get(session_id) if session_id else None
        owned = session is not None and self.owns(conn, session_id)
        not_owner = session is not None and not owned and conn is not None
        self.count_refusal(conn, rejection.code, session_id if owned else None, not_owner, cap, n)
        return p.ErrorFrame(rejection.code, rejection.message, False, session_id)

    def count_refusal(self, conn: int | None, code: str, session_id: str | None, not_owner: bool, cap: str | None, n: int = 1) -> None:
        """The counting half of `reject`, also what a replayed log's refusal lines go through."""
        self.counters["rejected"] += n
        self.counters[f"rejected:{code}"] += n
        if cap is not None:
            self.counters[f"limit:{cap}"] += n
        session = self.sessions.get(session_id) if session_id else None
        if session is not None:
            session.counters.rejected += n
            if cap is not None:
                session.counters.limited += n
            self._touch(session.id)
        if not_owner:
            self.counters["refused:not_owner"] += n
            if conn is not None:
                self.refused_by_conn[conn] += n
        if self.on_refusal is not None and conn is not None:
            self.on_refusal(conn, code, session_id, not_owner, cap, n)
        self._touch()

    def touch_relay(self) -> None:
        """Something relay-wide changed outside the store (the session log's health): views redraw."""
        self._touch()

    def _limit(self, conn: int | None, session: Session, what: str, message: str) -> p.ErrorFrame:
        """A memory cap refused (part of) a frame of `session`'s owner: counted by cap and shown as coverage."""
        return self.reject(conn, p.Rejection(p.Code.LIMIT, message), session.id, cap=what)

    def _grow(self, session: Session, delta: int) -> None:
        session.footprint += delta
        self.footprint += delta
        if session.share is not None and session.conn is not None:
            self.share_bytes[session.share] += delta
            self.conn_bytes[session.conn] += delta

    def _share_of(self, conn: int, session: Session) -> str:
        key = self.share_keys.get(conn, f"socket {conn}")
        return key if key is not None else session.info.origin

    def _hold(self, session: Session) -> None:
        """The session is live on `session.conn`: its footprint counts against that socket's and origin's shares."""
        if session.share is None and session.conn is not None:
            session.share = self._share_of(session.conn, session)
            self.share_bytes[session.share] += session.footprint
            self.conn_bytes[session.conn] += session.footprint

    def _release(self, session: Session) -> None:
        """The session ends or loses its socket: what it holds is given back to its shares (still in the total)."""
        if session.share is not None and session.conn is not None:
            self.share_bytes[session.share] -= session.footprint
            if self.share_bytes[session.share] <= 0:
                del self.share_bytes[session.share]
            self.conn_bytes[session.conn] -= session.footprint
        session.share = None

    def _over(self, session: Session, delta: int) -> str | None:
        """Which budget `delta` more estimated bytes of `session` would break (None: room). The relay's total
        first makes room by evicting the oldest sessions no one holds (ended, disconnected)."""
        if delta <= 0:
            return None
        total = b.RELAY_BUDGET_BYTES
        if session.share is not None and session.conn is not None:
            held = self.share_bytes[session.share] + delta
            if held > b.ORIGIN_BUDGET_BYTES:
                return "origin_share"
            if self.conn_bytes[session.conn] + delta > b.SOCKET_BUDGET_BYTES:
                return "socket_share"
            if held <= b.ORIGIN_RESERVE_BYTES:
                total += b.RESERVE_POOL_BYTES  # within its reserve: however full the total is (see budget.py)
        while self.footprint + delta > total:
            if not self._evict_one(keep=session):
                return "budget"
        return None

    # -- frames -------------------------------------------------------------------------------------------

    def apply(self, conn: int, frame: p.AgentFrame, more: bool = False) -> list[msgspec.Struct]:
        """Apply one validated frame from connection `conn`; return the replies. `more`: this is a further slice
        of a `spans` frame already counted (the server applies big batches in slices, see server.APPLY_SLICE)."""
        self.counters["frames"] += 0 if more else 1
        if isinstance(frame, p.Hello):
            return self._hello(conn, frame)
        session = self.sessions.get(frame.session)
        shadow = self.shadowed.get(conn, {})
        if frame.session in shadow and session is not None and session.conn is None and session.info.context == "relayed":
            # The tab that forwarded this relayed session left; this socket forwards the same channel: it carries on.
            self._claim(conn, session)
        elif frame.session in shadow:
            self.counters["shadowed_frames"] += 1
            if not isinstance(frame, p.Spans) or not frame.spans:
                return []
            # Echo the relayer's own highest seq: its copy is not needed, and the owner's ack stays private.
            shadow[frame.session] = max(shadow[frame.session], max(s.seq for s in frame.spans))
            return [p.Ack(frame.session, shadow[frame.session])]
        if session is None or session.conn != conn:
            return [self.reject(conn, p.Rejection(p.Code.UNKNOWN_SESSION, "send hello for this session on this socket first"), frame.session)]
        session.counters.frames += 0 if more else 1
        session.last_seen = self.clock.monotonic()
        replies = _HANDLERS[type(frame)](self, conn, session, frame)
        self._touch(session.id)
        return replies

    def _hello(self, conn: int, hello: p.Hello) -> list[msgspec.Struct]:
        """Create or re-claim a session. Ownership (README, "Session ownership"): a session belongs to the socket
        whose hello created it; that socket gets a resume secret in the ack. Another socket may take it over
        only after the owner closed and only by presenting the secret; otherwise `session_taken`. A relayed
        copy of a session someone else owns is shadowed: acked with its own seqs, learning nothing."""
        sid = hello.session.id
        if hello.protocol != p.PROTOCOL:
            return [self.reject(conn, p.Rejection(p.Code.PROTOCOL_VERSION, f"this relay speaks {p.PROTOCOL}"), sid)]
        origin = self.origins.get(conn)
        if origin is not None and hello.session.origin != origin:
            return [
                self.reject(
                    conn, p.Rejection(p.Code.FORBIDDEN_ORIGIN, "the hello's origin is not the origin of the page that opened this socket"), sid
                )
            ]
        lane = identity.reserved_agent(hello.agent)
        # A replayed log (check_resume off) holds accepted hellos only; its connections carry no Origin.
        if lane is not None and self.check_resume and lane != self.kinds.get(conn):
            # The lane mark on screen (`ext`, `cdp`) is the relay's word: a page's script cannot claim it.
            return [self.reject(conn, p.Rejection(p.Code.FORBIDDEN_ORIGIN, f"that agent name marks the {lane} lane, which this socket is not"), sid)]
        via = self.sessions.get(hello.session.via) if hello.session.via else None
        if via is not None and identity.reserved_agent(via.agent) is not None and via.conn != conn:
            return [
                self.reject(
                    conn,
                    p.Rejection(p.Code.FORBIDDEN_ORIGIN, "a relayed session names, as its forwarder, a session of a lane this socket is not"),
                    sid,
                )
            ]
        owned = self.connections.setdefault(conn, set())
        session = self.sessions.get(sid)
        if sid not in owned and len(owned) >= p.MAX_SESSIONS_PER_CONNECTION:
            return [self.reject(conn, p.Rejection(p.Code.SESSION_LIMIT, f"at most {p.MAX_SESSIONS_PER_CONNECTION} sessions a connection"), sid)]
        if session is not None and session.conn != conn and self._older_owner(session, hello):
            # After a restart another socket said hello first with this id: the hello proving the older secret is
            # the session's owner. The squatter's copy is dropped (never shown under the owner's id or title).
            self._drop_squat(session)
            session = None
        if sid not in owned and (session is None or session.share is None):
            key = self.share_keys.get(conn, f"socket {conn}") or hello.session.origin
            if sum(1 for s in self.sessions.values() if s.share == key) >= p.MAX_SESSIONS_PER_ORIGIN:
                # One origin's share of the session table: a flood of hellos leaves every other origin its seats.
                return [
                    self.reject(
                        conn,
                        p.Rejection(p.Code.SESSION_LIMIT, f"at most {p.MAX_SESSIONS_PER_ORIGIN} live sessions an origin"),
                        sid,
                        cap="origin_sessions",
                    )
                ]
        if session is not None and session.conn != conn and not self._may_claim(session, hello):
            if hello.session.context == "relayed":
                self.shadowed.setdefault(conn, {}).setdefault(sid, -1)
                self.counters["shadowed_sessions"] += 1
                return [p.Ack(sid, self.shadowed[conn][sid])]
            return [
                self.reject(
                    conn,
                    p.Rejection(p.Code.SESSION_TAKEN, "another socket owns this session; a reconnect presents the resume secret from its ack"),
                    sid,
                )
            ]
        if session is None:
            if len(self.sessions) >= self.max_sessions and not self._evict_one():
                return [self.reject(conn, p.Rejection(p.Code.SESSION_LIMIT, f"at most {self.max_sessions} live sessions"), sid)]
            now = self.clock.time()
            # A hello proving an id the relay does not know (it restarted) keeps its secret: the owner stays provable.
            proven = self.check_resume and identity.verify_secret(self.resume_key, sid, hello.resume) is not None
            secret = hello.resume if proven and hello.resume is not None else identity.issue_secret(self.resume_key, sid, int(now * 1000))
            session = Session(
                hello.session,
                hello.agent,
                hello.config,
                SessionStats(self.buffer),
                conn,
                created=now,
                last_seen=self.clock.monotonic(),
                resume=secret,
            )
            self.sessions[sid] = session
            self._hold(session)
            self.counters["sessions"] += 1
            self._timeline(session, "attach", {"context": hello.session.context})
            for observer in self.observers:
                on_session = getattr(observer, "on_session", None)
                if on_session is not None:
                    on_session(session)
        else:
            # A reconnect (or a reload keeping its id) by the owner: same session, resume after the last ack.
            self._claim(conn, session)
            session.info = hello.session
            session.agent = hello.agent
            session.config = hello.config
            self._timeline(session, "reconnect", {})
        session.hellos += 1
        self._set_lost(session, hello.lost)
        owned.add(sid)
        session.counters.frames += 1
        self._touch(sid)
        self._touch()
        return [session.ack(resume=True)]

    def _may_claim(self, session: Session, hello: p.Hello) -> bool:
        """Another socket's hello for an existing session: only once its owner is gone, and only with the secret.
        A session the relay knows only as relayed (heard on a BroadcastChannel, where any same-origin script
        can post) protects nothing: its page's own uplink takes it over, and once its forwarder left any hello
        carries it on."""
        relayed = session.info.context == "relayed"
        if session.conn is not None:
            return relayed and hello.session.context != "relayed"
        if not self.check_resume or relayed:
            return True
        return hello.resume is not None and hmac.compare_digest(hello.resume, session.resume)

    def _older_owner(self, session: Session, hello: p.Hello) -> bool:
        """Whether the hello proves an older claim to the id than the session now holding it (a squat after a
        restart: the squatter's secret was stamped when it said hello, the owner's before)."""
        if not self.check_resume or session.info.context == "relayed":
            return False
        theirs = identity.verify_secret(self.resume_key, session.id, hello.resume)
        held = identity.verify_secret(self.resume_key, session.id, session.resume)
        return theirs is not None and held is not None and theirs < held

    def drop_squat(self, session_id: str) -> None:
        """A replayed log's squat line: the live relay dropped this copy of the session for its owner."""
        session = self.sessions.get(session_id)
        if session is not None:
            self._drop_squat(session)

    def _drop_squat(self, session: Session) -> None:
        if self.on_squat is not None and session.conn is not None:
            self.on_squat(session.conn, session.id)
        del self.sessions[session.id]
        self.footprint -= session.footprint
        if session.conn is not None:
            self.connections.get(session.conn, set()).discard(session.id)
            self.refused_by_conn[session.conn] += 1  # counted against the squatting socket (closed at the cap)
        self.counters["refused:squat"] += 1
        self._touch()

    def _claim(self, conn: int, session: Session) -> None:
        """`conn` owns the session from now on; a previous owner still connected only shadows it."""
        old = session.conn
        if old is not None and old != conn:
            self.connections.get(old, set()).discard(session.id)
            self.shadowed.setdefault(old, {})[session.id] = -1
        self.shadowed.get(conn, {}).pop(session.id, None)
        self.connections.setdefault(conn, set()).add(session.id)
        self._release(session)
        session.conn = conn
        session.state = "live"
        self._hold(session)

    def _set_lost(self, session: Session, lost: int) -> None:
        if lost > session.lost:
            self.counters["lost"] += lost - session.lost
            session.lost = lost

    def _evict_one(self, keep: Session | None = None) -> bool:
        """Drop the oldest ended or disconnected session (never `keep`) to make room; False when there is none."""
        for sid, session in self.sessions.items():  # dicts keep insertion order: oldest first
            if session.state != "live" and session is not keep:
                del self.sessions[sid]
                self.footprint -= session.footprint
                self.counters["evicted"] += 1
                self._touch()
                return True
        return False

    def _new_row_refused(self, session: Session, tool: str) -> str | None:
        """Which cap a tool name not seen before in this session would break, if any."""
        if tool in session.stats.tools:
            return None
        if len(session.stats.tools) >= b.MAX_TOOL_ROWS:
            return "tool_rows"
        return self._over(session, b.ROW_OVERHEAD + len(tool))

    # -- one handler per frame kind (apply dispatches through _HANDLERS) --------------------------------------

    def _update(self, conn: int, session: Session, frame: p.Update) -> list[msgspec.Struct]:
        if session.stats.update_blocking(frame.seq, frame.blockingMs):
            self.counters["updates"] += 1
        else:
            session.counters.late_updates += 1
        return []

    def _status(self, conn: int, session: Session, frame: p.Status) -> list[msgspec.Struct]:
        session.status = frame
        self._timeline(session, "phase", {"phase": frame.phase})
        return []

    def _event(self, conn: int, session: Session, frame: p.Event) -> list[msgspec.Struct]:
        if frame.kind == "reset":
            session.stats.reset()
            session.inflight.clear()
            self._grow(session, -b.FACTS_BYTES * len(session.facts))
            session.facts.clear()
        if frame.kind == "toolcancel":
            seq = frame.detail.get("seq")
            call = session.inflight.get(seq) if isinstance(seq, int) else None
            if call is not None:
                call.cancelled_at = self.clock.monotonic()
        if frame.kind == "navigated-from":
            self._navigated_from(session, frame)
        if frame.kind == "visibility" and isinstance(frame.detail.get("state"), str):
            session.info.visibility = str(frame.detail["state"])[:16]
        self._timeline(session, frame.kind, dict(frame.detail), frame.at)
        for observer in self.observers:
            on_event = getattr(observer, "on_event", None)
            if on_event is not None:
                on_event(session, frame.kind, frame.detail, frame.at)
        return []

    def _unstored(self, conn: int, session: Session, frame: p.Payload | p.Result) -> list[msgspec.Struct]:
        return []  # never stored: the server hands these to the OpenTelemetry lane / the waiting dialog

    def _bye(self, conn: int, session: Session, frame: p.Bye) -> list[msgspec.Struct]:
        self._release(session)
        session.state = "ended"
        session.bye_reason = frame.reason
        session.conn = None
        self._end_calls(session)
        self.connections.get(conn, set()).discard(session.id)
        self._timeline(session, "bye", {"reason": frame.reason})
        return []

    def _spans(self, conn: int, session: Session, frame: p.Spans) -> list[msgspec.Struct]:
        if frame.lost is not None:
            self._set_lost(session, frame.lost)
        stored = 0
        refused: str | None = None
        refused_n = 0
        abandoned = session.received.abandoned
        replies: list[msgspec.Struct] = []
        for span in frame.spans:
            if span.sessionId != session.id:
                replies.append(self.reject(None, p.Rejection(p.Code.INVALID, "span belongs to another session"), session.id))
                continue
            cap = self._new_row_refused(session, span.tool) if not session.is_contiguous_stored(span.seq) else None
            if cap is not None:
                # Refused, and so never acked: the agent keeps it and sends it again after a backoff (a share
                # frees up as other sessions end); what it cannot keep that long it counts as lost.
                refused = refused or cap
                refused_n += 1
                continue
            if not session.received.add(span.seq):
                session.counters.duplicates += 1
                self.counters["duplicates"] += 1
                continue
            if span.tool not in session.stats.tools:
                self._grow(session, b.ROW_OVERHEAD + len(span.tool))
            if not _KNOWN_TYPES.issuperset(span.contentTypes):
                span.contentTypes = _content_types(span.contentTypes)
            session.stats.add(span)
            session.inflight.pop(span.seq, None)
            stored += 1
            for observer in self.observers:
                observer.on_span(session, span)
            settle: dict[str, Any] = {"tool": span.tool, "seq": span.seq, "wallMs": span.wallMs, "resultBytes": span.resultBytes}
            size: int | None = _SETTLE_BYTES + len(span.tool)  # the common entry's size, without a walk of its dict
            if span.outcome is not None:
                settle["outcome"] = span.outcome
                size = None
            if span.waitedMs is not None:
                settle["waitedMs"] = span.waitedMs
                size = None
            if span.invokedBy:
                settle["invokedBy"] = span.invokedBy
                size = None
            self._timeline(session, "settle", settle, span.settledAt, size)
            if span.isError:
                self._timeline(session, "error", {"tool": span.tool, "seq": span.seq}, span.settledAt)
        if frame.floor is not None and frame.floor - 1 > session.acked:
            # The agent will send nothing below `floor` beyond this frame (no call below it is still running):
            # what it never sent is lost (counted by the agent). Applied after the frame's own spans.
            session.received.floor(frame.floor)
            session.floor = frame.floor
            for seq in [seq for seq in session.inflight if seq <= session.acked]:
                del session.inflight[seq]  # started, then evicted in the page before it could be sent
        if session.received.abandoned > abandoned:  # over MAX_RANGES holes: the lowest were given up
            self.counters["holes_abandoned"] += session.received.abandoned - abandoned
        session.counters.spans += stored
        self.counters["spans"] += stored
        if refused is not None:
            replies.append(
                self.reject(
                    conn,
                    p.Rejection(p.Code.LIMIT, f"spans of new tools over the cap ({refused}); not stored, not acked"),
                    session.id,
                    cap=refused,
                    n=refused_n,
                )
            )
        if frame.facts:
            replies.extend(self._store_facts(conn, session, frame.facts))
        replies.append(session.ack())
        return replies

    def _facts(self, conn: int, session: Session, frame: p.FactsFrame) -> list[msgspec.Struct]:
        return self._store_facts(conn, session, frame.entries())

    def _store_facts(self, conn: int, session: Session, items: list[p.FactsItem]) -> list[msgspec.Struct]:
        """Store each call's facts once. A window of FACTS_MAX entries (the oldest leaves); the relay budget refuses."""
        refused = 0
        for item in items:
            if item.seq in session.facts:
                session.counters.facts_duplicates += 1
                self.counters["facts_duplicates"] += 1
                continue
            if self._over(session, b.FACTS_BYTES) is not None:
                refused += 1
                continue
            session.facts[item.seq] = item.facts
            session.counters.facts += 1
            self.counters["facts"] += 1
            if len(session.facts) > b.FACTS_MAX:
                session.facts.popitem(last=False)  # the oldest entry (calls settle in near seq order)
                self.counters["facts_evicted"] += 1
            else:
                self._grow(session, b.FACTS_BYTES)  # a full window's entry replaces the oldest: no growth
        if refused:
            return [
                self.reject(conn, p.Rejection(p.Code.LIMIT, f"{refused} facts over the relay's memory budget"), session.id, cap="budget", n=refused)
            ]
        return []

    def _start(self, conn: int, session: Session, frame: p.Start) -> list[msgspec.Struct]:
        now = self.clock.monotonic()
        for call in frame.calls:
            if session.is_contiguous_stored(call.seq):
                continue  # its span is already here (a replayed start)
            known = session.inflight.get(call.seq)
            if known is not None and known.tool == call.tool:
                # The same call again: a form the user has now submitted (tool time starts here), or a replay.
                if known.waiting and not call.waiting:
                    self._timeline(session, "submitted", {"tool": call.tool, "seq": call.seq}, call.invokedAt)
                known.invokedAt, known.waiting, known.seen_at, known.ended_at = call.invokedAt, call.waiting, now, None
                continue
            session.inflight[call.seq] = InFlight(
                call.seq, call.tool, call.invokedAt, call.depth, call.parent, now, terminal=call.invokedBy == "terminal", waiting=call.waiting
            )
            detail: dict[str, Any] = {"tool": call.tool, "seq": call.seq}
            if call.invokedBy:
                detail["invokedBy"] = call.invokedBy
            self._timeline(session, "waiting" if call.waiting else "start", detail, call.invokedAt)
        # A page that never settles must not grow this without bound.
        while len(session.inflight) > session.stats.buffer:
            session.inflight.popitem(last=False)
        return []

    def _end_calls(self, session: Session) -> None:
        """Calls still open when the session ends (or loses its socket) end with it, at the page's time now."""
        now = self._page_now(session)
        for call in session.inflight.values():
            if call.ended_at is None:
                call.ended_at = max(now, call.invokedAt)

    def _page_now(self, session: Session) -> float:
        return max(0.0, self.clock.time() * 1000 - session.info.timeOrigin) if session.info.timeOrigin else 0.0

    def _prompt(self, conn: int, session: Session, frame: p.Prompt) -> list[msgspec.Struct]:
        ps = session.prompts.get(frame.promptSession)
        if ps is None:
            if len(session.prompts) >= b.PROMPT_SESSIONS_MAX:
                session.prompts.pop(next(iter(session.prompts)))
            ps = session.prompts[frame.promptSession] = PromptSession(frame.promptSession, frame.at)
        detail: dict[str, Any] = {"promptSession": frame.promptSession}
        if frame.kind == "destroy":
            ps.destroyed_at = frame.at
        elif frame.kind in ("prompt", "stream"):
            ps.calls.append(
                PromptCall(
                    frame.seq, frame.kind, frame.at, frame.totalMs, frame.firstChunkMs, frame.chunks, frame.charsIn, frame.charsOut, frame.error
                )
            )
            detail.update({"seq": frame.seq, "totalMs": frame.totalMs, "charsIn": frame.charsIn, "charsOut": frame.charsOut})
            if frame.kind == "stream":
                detail.update({"firstChunkMs": frame.firstChunkMs, "chunks": frame.chunks})
            if frame.error:
                detail["error"] = frame.error
        kind = {"create": "prompt-create", "prompt": "prompt", "stream": "prompt-stream", "destroy": "prompt-destroy"}[frame.kind]
        self._timeline(session, kind, detail, frame.at)
        return []

    def _ledger(self, conn: int, session: Session, frame: p.LedgerFrame) -> list[msgspec.Struct]:
        if frame.rev <= session.ledger_rev:
            return []
        session.ledger_rev = frame.rev
        session.ledger = frame.ledger
        session.stats.set_unsampled(frame.ledger.totals.unsampledCalls)
        return []

    def _tool(self, conn: int, session: Session, frame: p.ToolChange) -> list[msgspec.Struct]:
        if frame.change == "registered":
            refused = self._tool_refused(session, frame)
            if refused is not None:
                return [self._limit(conn, session, *refused)]
            record = ToolRecord(
                frame.name,
                frame.schemaBytes,
                frame.at,
                descriptor=bytes(frame.descriptor) or None,
                annotationsSent=frame.annotationsSent,
                annotationsKept=frame.annotationsKept,
                internal=frame.internal,
                rejected=frame.rejected,
                fingerprint=frame.fingerprint,
                kind=frame.kind or "imperative",
                form=frame.form,
            )
            previous = session.tools.get(frame.name)
            if previous is not None and frame.rejected is None and previous.rejected is None:
                record.redefining = previous.descriptor != record.descriptor or previous.fingerprint != record.fingerprint
                record.redefined = previous.redefined or record.redefining
            if frame.rejected is None or previous is None or not previous.registered:
                self._account_tool(session, previous, record)
                session.tools[frame.name] = record
            if frame.rejected is None:
                session.stats.register(frame.name, frame.schemaBytes, frame.internal)
                # A redefinition also gets the agent's own `redefined` event, saying what changed.
                self._timeline(session, "register", {"tool": frame.name, "schemaBytes": frame.schemaBytes}, frame.at)
                self._rug_pull(session, previous, record)
            else:
                self._timeline(session, "rejected", {"tool": frame.name, "reason": frame.rejected}, frame.at)
        else:
            found = session.tools.get(frame.name)
            if found is None:
                return []
            record = found
            record.unregisteredAt = frame.at
            session.stats.unregister(frame.name)
            self._timeline(session, "unregister", {"tool": frame.name}, frame.at)
        for observer in self.observers:
            observer.on_tool(session, record, frame.change, frame.at)
        return []

    def _rug_pull(self, session: Session, previous: ToolRecord | None, record: ToolRecord) -> None:
        """Compare a registration with the first of its name in the session; a change it brings is a timeline
        entry (once per distinct change: a re-registration of the same changed definition adds none)."""
        now = redefinition.digest(record.descriptor)
        if previous is None or previous.first is None or record.internal:
            record.first = now
            return
        record.first = previous.first
        drift = redefinition.changes(previous.first, now)
        if record.kind == "form":
            # A declarative tool's inputSchema is the browser's, generated from the form's controls as they are now:
            # it grows while the document is parsed and follows a form the page builds. Its description
            # (tooldescription) is the page's own text, and a change there still counts.
            drift = tuple(c for c in drift if c.field != "inputSchema")
        record.drift = drift
        if record.drift and record.drift != previous.drift:
            self._timeline(session, "rug-pull", {"tool": record.name, "changed": redefinition.said(record.drift)}, record.registeredAt)

    def _tool_refused(self, session: Session, frame: p.ToolChange) -> tuple[str, str] | None:
        """Which cap a registration would break: (counter name, message), or None."""
        previous = session.tools.get(frame.name)
        if previous is None and len(session.tools) >= b.MAX_TOOLS:
            return "tools", f"at most {b.MAX_TOOLS} tools a session"
        if previous is None and frame.name not in session.stats.tools and len(session.stats.tools) >= b.MAX_TOOL_ROWS:
            return "tool_rows", f"at most {b.MAX_TOOL_ROWS} tool names a session"
        old = len(previous.descriptor or b"") if previous is not None else 0
        new = len(frame.descriptor)
        if session.descriptor_bytes - old + new > b.MAX_DESCRIPTOR_BYTES:
            return "descriptor_bytes", f"at most {b.MAX_DESCRIPTOR_BYTES} descriptor bytes a session"
        grow = b.tool_bytes(frame.name, bytes(frame.descriptor), _annotations(frame)) - (_record_bytes(previous) if previous is not None else 0)
        cap = self._over(session, grow)
        if cap is not None:
            return cap, _SPENT[cap]
        return None

    def _account_tool(self, session: Session, previous: ToolRecord | None, record: ToolRecord) -> None:
        if previous is not None:
            session.descriptor_bytes -= len(previous.descriptor or b"")
            self._grow(session, -_record_bytes(previous))
        session.descriptor_bytes += len(record.descriptor or b"")
        self._grow(session, _record_bytes(record))

    def _navigated_from(self, session: Session, frame: p.Event) -> None:
        """The next document of a tab names the form call that navigated to it: link both timelines. The link
        writes into the previous session's timeline, so it must prove that session: the previous document left
        its resume secret in this tab's sessionStorage (same tab, same origin only). Linked once; the secret
        never reaches a timeline or the log (the server strips it)."""
        proof = frame.detail.pop("resume", None)
        previous = self.sessions.get(str(frame.detail.get("session")))
        if previous is None or previous is session or previous.navigated_to is not None:
            return
        if previous.info.origin != session.info.origin:
            return  # sessionStorage is per origin: a real link never crosses one
        if self.check_resume and not (isinstance(proof, str) and hmac.compare_digest(proof.encode(), previous.resume.encode())):
            self.counters["refused:link"] += 1
            return
        session.navigated_from = previous.id
        previous.navigated_to = session.id
        self._timeline(previous, "navigated-to", {"session": session.id, "seq": frame.detail.get("seq"), "tool": frame.detail.get("tool")})
        self._touch(previous.id)

    def _timeline(self, session: Session, kind: str, detail: dict[str, Any], at: float | None = None, size: int | None = None) -> None:
        """Append an entry; `size`, when the caller knows it, is what budget.detail_bytes would say plus `kind`."""
        if at is None:
            at = self._page_now(session)
        if size is None:
            size = b.detail_bytes(detail) + len(kind)
        # A window: the oldest entries leave to stay under the session's caps and the relay's budget. What they
        # free is counted once, with the new entry (each append to a full window frees one): the budget is asked
        # about the net growth.
        timeline = session.timeline
        freed = 0
        while timeline and (
            len(timeline) >= b.TIMELINE_MAX or session.timeline_bytes + size > b.TIMELINE_BYTES or self._over(session, size - freed) is not None
        ):
            gone = timeline.popleft()
            session.timeline_bytes -= gone.size
            freed += gone.size
        timeline.append(TimelineEntry(at, kind, detail, size))
        session.timeline_bytes += size
        self._grow(session, size - freed)

    # -- reads --------------------------------------------------------------------------------------------

    def live_sessions(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.state == "live"]

    def snapshot(self) -> StoreSnapshot:
        """Every session and the relay's counters as they are now (for a paused screen: one moment)."""
        return StoreSnapshot({sid: s.snapshot() for sid, s in self.sessions.items()}, Counter(self.counters))

    def counter_view(self) -> dict[str, int]:
        return dict(self.counters)


@dataclass(frozen=True)
class StoreSnapshot:
    """What the views read of a Store (`sessions`, `counters`), frozen at one moment."""

    sessions: dict[str, Session]
    counters: Counter[str]

    def live_sessions(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.state == "live"]

    def counter_view(self) -> dict[str, int]:
        return dict(self.counters)


_SPENT = {
    "budget": "the relay's memory budget is spent",
    "origin_share": "this origin's share of the relay's memory is spent",
    "socket_share": "this socket's share of its origin's memory is spent",
}


def _annotations(frame: p.ToolChange) -> int:
    return len(frame.annotationsSent or ()) + len(frame.annotationsKept or ())


def _record_bytes(record: ToolRecord) -> int:
    return b.tool_bytes(record.name, record.descriptor, len(record.annotationsSent or ()) + len(record.annotationsKept or ()))


_KNOWN_TYPES = frozenset(CONTENT_TYPES)
# A settle entry's estimated bytes but its tool name's (budget.detail_bytes of its four keys, numbers and all).
_SETTLE_BYTES = b.detail_bytes({"tool": "", "seq": 0, "wallMs": 0.0, "resultBytes": 0}) + len("settle")


def _content_types(types: dict[str, int]) -> dict[str, int]:
    """MCP's content types by name, any other key a page sent counted as `other` (keys never carry page text)."""
    out: dict[str, int] = {}
    for key, n in types.items():
        key = key if key in CONTENT_TYPES else "other"
        out[key] = out.get(key, 0) + n
    return out


# Store.apply's dispatch: each frame kind after `hello` to the one method that applies it.
_HANDLERS: dict[type, Callable[[Store, int, Session, Any], list[msgspec.Struct]]] = {
    p.Spans: Store._spans,
    p.Start: Store._start,
    p.Update: Store._update,
    p.LedgerFrame: Store._ledger,
    p.ToolChange: Store._tool,
    p.Status: Store._status,
    p.Event: Store._event,
    p.Prompt: Store._prompt,
    p.FactsFrame: Store._facts,
    p.Payload: Store._unstored,
    p.Result: Store._unstored,
    p.Bye: Store._bye,
}
