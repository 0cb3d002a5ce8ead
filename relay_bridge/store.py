"""The session store: what every connected page has told the relay, validated, deduplicated and counted.

Pure state: `apply(conn, frame)` takes one decoded frame and returns the frames to send back; the server and
the replayer are the only callers, so a live run and a replayed log go through the same code. Subscribers
are not called here: the store marks sessions dirty and a `Coalescer` (relay_bridge.notify) hands them out
at most a few times a second.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol

import msgspec

from . import protocol as p
from .received import Received
from .stats import SessionStats

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


class StoreObserver(Protocol):
    def on_span(self, session: Session, span: p.Span) -> None: ...

    def on_tool(self, session: Session, record: ToolRecord, change: str, at: float) -> None: ...
TIMELINE_MAX = 2000
PROMPT_SESSIONS_MAX = 64
PROMPTS_PER_SESSION = 200


@dataclass(slots=True)
class InFlight:
    seq: int
    tool: str
    invokedAt: float
    depth: int
    parent: int | None
    seen_at: float  # relay clock (time.monotonic) when `start` arrived
    cancelled_at: float | None = None


@dataclass(slots=True)
class ToolRecord:
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

    @property
    def registered(self) -> bool:
        return self.unregisteredAt is None and self.rejected is None


@dataclass(slots=True)
class TimelineEntry:
    at: float  # page clock (performance.now()) when known, else relative to timeOrigin from the relay clock
    kind: str
    detail: dict[str, Any]


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
    calls: deque[PromptCall] = field(default_factory=lambda: deque(maxlen=PROMPTS_PER_SESSION))


# Timeline categories for filtering (issue 8's tools, calls, prompts, system).
CATEGORY = {
    "register": "tools", "unregister": "tools", "rejected": "tools", "context-clear": "tools", "context-provide": "tools",
    "redefined": "tools", "wrap-failed": "tools",
    "start": "calls", "settle": "calls", "error": "calls", "toolcancel": "calls", "toolactivated": "calls", "consent": "calls",
    "prompt-create": "prompts", "prompt": "prompts", "prompt-stream": "prompts", "prompt-destroy": "prompts",
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
    inflight: dict[int, InFlight] = field(default_factory=dict)
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    timeline: deque[TimelineEntry] = field(default_factory=lambda: deque(maxlen=TIMELINE_MAX))
    status: p.Status | None = None
    ledger: p.Ledger | None = None
    ledger_rev: int = -1
    counters: SessionCounters = field(default_factory=SessionCounters)
    hellos: int = 0
    created: float = 0.0  # epoch seconds, from the store's clock
    last_seen: float = 0.0  # the store clock's monotonic seconds
    bye_reason: str | None = None
    prompts: dict[str, PromptSession] = field(default_factory=dict)
    # Handed to the owning socket in the ack of its hello; a later socket re-claims the session only with it.
    resume: str = ""

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
        if self.lost or self.counters.rejected or (self.status is not None and self.status.coverage == "incomplete"):
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
        # A replayed log holds only frames the live relay accepted, ownership already checked; its hellos carry
        # no secret (the log never stores one), so replay turns the check off.
        self.check_resume = True
        self._dirty: set[str] = set()
        self._relay_dirty = False
        self.wake: Callable[[], None] | None = None  # set by the Coalescer; called on every change
        # Per-item observers (the OpenTelemetry lane): called for each stored span and each tool change.
        # They must only enqueue; anything slow belongs on their own thread.
        self.observers: list[StoreObserver] = []

    # -- change tracking ----------------------------------------------------------------------------------

    def _touch(self, session_id: str | None = None) -> None:
        if session_id is None:
            self._relay_dirty = True
        else:
            self._dirty.add(session_id)
        if self.wake is not None:
            self.wake()

    def drain_changes(self) -> tuple[set[str], bool]:
        """Session ids changed since the last call, and whether relay-wide state changed."""
        dirty, relay = self._dirty, self._relay_dirty
        self._dirty, self._relay_dirty = set(), False
        return dirty, relay

    # -- connections --------------------------------------------------------------------------------------

    def connect(self, conn: int) -> None:
        self.connections[conn] = set()
        self.counters["connections"] += 1
        self._touch()

    def disconnect(self, conn: int) -> None:
        self.shadowed.pop(conn, None)
        self.refused_by_conn.pop(conn, None)
        for sid in self.connections.pop(conn, set()):
            session = self.sessions.get(sid)
            if session is not None and session.conn == conn and session.state == "live":
                session.state = "disconnected"
                session.conn = None
                self._timeline(session, "disconnected", {})
                self._touch(sid)
        self._touch()

    def owns(self, conn: int | None, session_id: str | None) -> bool:
        """Whether `conn` owns the session (conn None: the relay itself, e.g. a frame over the size limit)."""
        session = self.sessions.get(session_id) if session_id else None
        return session is not None and (conn is None or session.conn == conn)

    def reject(self, conn: int | None, rejection: p.Rejection, session_id: str | None = None) -> p.ErrorFrame:
        """Count a refused frame (by code, relay-wide) and say why, naming the session the frame named.
        It counts against the session (and so makes its coverage `incomplete`) only when `conn` owns that
        session: a socket cannot spoil another's numbers by sending bad frames in its name."""
        self.counters["rejected"] += 1
        self.counters[f"rejected:{rejection.code}"] += 1
        session = self.sessions.get(session_id) if session_id else None
        if session is not None and self.owns(conn, session_id):
            session.counters.rejected += 1
            self._touch(session.id)
        elif session is not None and conn is not None:
            self.counters["refused:not_owner"] += 1
            self.refused_by_conn[conn] += 1
        self._touch()
        return p.ErrorFrame(rejection.code, rejection.message, False, session_id)

    # -- frames -------------------------------------------------------------------------------------------

    def apply(self, conn: int, frame: p.AgentFrame) -> list[msgspec.Struct]:
        """Apply one validated frame from connection `conn`; return the replies."""
        self.counters["frames"] += 1
        if isinstance(frame, p.Hello):
            return self._hello(conn, frame)
        session = self.sessions.get(frame.session)
        shadow = self.shadowed.get(conn, {})
        if frame.session in shadow:
            self.counters["shadowed_frames"] += 1
            if not isinstance(frame, p.Spans) or not frame.spans:
                return []
            # Echo the relayer's own highest seq: its copy is not needed, and the owner's ack stays private.
            shadow[frame.session] = max(shadow[frame.session], max(s.seq for s in frame.spans))
            return [p.Ack(frame.session, shadow[frame.session])]
        if session is None or session.conn != conn:
            return [self.reject(conn, p.Rejection(p.Code.UNKNOWN_SESSION, "send hello for this session on this socket first"), frame.session)]
        session.counters.frames += 1
        session.last_seen = self.clock.monotonic()
        replies: list[msgspec.Struct] = []
        match frame:
            case p.Spans():
                replies = self._spans(session, frame)
            case p.Start():
                self._start(session, frame)
            case p.Update():
                if session.stats.update_blocking(frame.seq, frame.blockingMs):
                    self.counters["updates"] += 1
                else:
                    session.counters.late_updates += 1
            case p.LedgerFrame():
                self._ledger(session, frame)
            case p.ToolChange():
                self._tool(session, frame)
            case p.Status():
                session.status = frame
                self._timeline(session, "phase", {"phase": frame.phase})
            case p.Event():
                if frame.kind == "reset":
                    session.stats.reset()
                    session.inflight.clear()
                if frame.kind == "toolcancel":
                    seq = frame.detail.get("seq")
                    call = session.inflight.get(seq) if isinstance(seq, int) else None
                    if call is not None:
                        call.cancelled_at = self.clock.monotonic()
                if frame.kind == "visibility" and isinstance(frame.detail.get("state"), str):
                    session.info.visibility = str(frame.detail["state"])[:16]
                self._timeline(session, frame.kind, dict(frame.detail), frame.at)
            case p.Prompt():
                self._prompt(session, frame)
            case p.Payload() | p.Result():
                pass  # never stored: the server hands these to the OpenTelemetry lane / the waiting dialog
            case p.Bye():
                session.state = "ended"
                session.bye_reason = frame.reason
                session.conn = None
                self.connections.get(conn, set()).discard(session.id)
                self._timeline(session, "bye", {"reason": frame.reason})
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
        owned = self.connections.setdefault(conn, set())
        session = self.sessions.get(sid)
        if sid not in owned and len(owned) >= p.MAX_SESSIONS_PER_CONNECTION:
            return [self.reject(conn, p.Rejection(p.Code.SESSION_LIMIT, f"at most {p.MAX_SESSIONS_PER_CONNECTION} sessions a connection"), sid)]
        if session is not None and session.conn != conn and not self._may_claim(session, hello):
            if hello.session.context == "relayed":
                self.shadowed.setdefault(conn, {}).setdefault(sid, -1)
                self.counters["shadowed_sessions"] += 1
                return [p.Ack(sid, self.shadowed[conn][sid])]
            return [self.reject(conn, p.Rejection(p.Code.SESSION_TAKEN, "another socket owns this session; a reconnect presents the resume secret from its ack"), sid)]
        self.shadowed.get(conn, {}).pop(sid, None)
        if session is None:
            if len(self.sessions) >= self.max_sessions and not self._evict_one():
                return [self.reject(conn, p.Rejection(p.Code.SESSION_LIMIT, f"at most {self.max_sessions} live sessions"), sid)]
            session = Session(hello.session, hello.agent, hello.config, SessionStats(self.buffer), conn,
                              created=self.clock.time(), last_seen=self.clock.monotonic(), resume=secrets.token_hex(16))
            self.sessions[sid] = session
            self.counters["sessions"] += 1
            self._timeline(session, "attach", {"context": hello.session.context})
        else:
            # A reconnect (or a reload keeping its id) by the owner: same session, resume after the last ack.
            session.info = hello.session
            session.agent = hello.agent
            session.config = hello.config
            session.conn = conn
            session.state = "live"
            self._timeline(session, "reconnect", {})
        session.hellos += 1
        self._set_lost(session, hello.lost)
        owned.add(sid)
        session.counters.frames += 1
        self._touch(sid)
        self._touch()
        return [session.ack(resume=True)]

    def _may_claim(self, session: Session, hello: p.Hello) -> bool:
        """Another socket's hello for an existing session: only once its owner is gone, and only with the secret."""
        if session.conn is not None:
            return False
        if not self.check_resume:
            return True
        return hello.resume is not None and hmac.compare_digest(hello.resume, session.resume)

    def _set_lost(self, session: Session, lost: int) -> None:
        if lost > session.lost:
            self.counters["lost"] += lost - session.lost
            session.lost = lost

    def _evict_one(self) -> bool:
        """Drop the oldest ended or disconnected session to make room; False when every session is live."""
        for sid, session in self.sessions.items():  # dicts keep insertion order: oldest first
            if session.state != "live":
                del self.sessions[sid]
                self.counters["evicted"] += 1
                self._touch()
                return True
        return False

    def _spans(self, session: Session, frame: p.Spans) -> list[msgspec.Struct]:
        if frame.lost is not None:
            self._set_lost(session, frame.lost)
        stored = 0
        abandoned = session.received.abandoned
        replies: list[msgspec.Struct] = []
        for span in frame.spans:
            if span.sessionId != session.id:
                replies.append(self.reject(None, p.Rejection(p.Code.INVALID, "span belongs to another session"), session.id))
                continue
            if not session.received.add(span.seq):
                session.counters.duplicates += 1
                self.counters["duplicates"] += 1
                continue
            session.stats.add(span)
            session.inflight.pop(span.seq, None)
            stored += 1
            for observer in self.observers:
                observer.on_span(session, span)
            self._timeline(session, "settle", {"tool": span.tool, "seq": span.seq, "wallMs": span.wallMs, "resultBytes": span.resultBytes}, span.settledAt)
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
        replies.append(session.ack())
        return replies

    def _start(self, session: Session, frame: p.Start) -> None:
        now = self.clock.monotonic()
        for call in frame.calls:
            if session.is_contiguous_stored(call.seq):
                continue  # its span is already here (a replayed start)
            session.inflight[call.seq] = InFlight(call.seq, call.tool, call.invokedAt, call.depth, call.parent, now)
            self._timeline(session, "start", {"tool": call.tool, "seq": call.seq}, call.invokedAt)
        # A page that never settles must not grow this without bound.
        while len(session.inflight) > session.stats.buffer:
            session.inflight.pop(next(iter(session.inflight)))

    def _prompt(self, session: Session, frame: p.Prompt) -> None:
        ps = session.prompts.get(frame.promptSession)
        if ps is None:
            if len(session.prompts) >= PROMPT_SESSIONS_MAX:
                session.prompts.pop(next(iter(session.prompts)))
            ps = session.prompts[frame.promptSession] = PromptSession(frame.promptSession, frame.at)
        detail: dict[str, Any] = {"promptSession": frame.promptSession}
        if frame.kind == "destroy":
            ps.destroyed_at = frame.at
        elif frame.kind in ("prompt", "stream"):
            ps.calls.append(PromptCall(frame.seq, frame.kind, frame.at, frame.totalMs, frame.firstChunkMs, frame.chunks, frame.charsIn, frame.charsOut, frame.error))
            detail.update({"seq": frame.seq, "totalMs": frame.totalMs, "charsIn": frame.charsIn, "charsOut": frame.charsOut})
            if frame.kind == "stream":
                detail.update({"firstChunkMs": frame.firstChunkMs, "chunks": frame.chunks})
            if frame.error:
                detail["error"] = frame.error
        kind = {"create": "prompt-create", "prompt": "prompt", "stream": "prompt-stream", "destroy": "prompt-destroy"}[frame.kind]
        self._timeline(session, kind, detail, frame.at)

    def _ledger(self, session: Session, frame: p.LedgerFrame) -> None:
        if frame.rev <= session.ledger_rev:
            return
        session.ledger_rev = frame.rev
        session.ledger = frame.ledger
        session.stats.set_unsampled(frame.ledger.totals.unsampledCalls)

    def _tool(self, session: Session, frame: p.ToolChange) -> None:
        if frame.change == "registered":
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
            )
            previous = session.tools.get(frame.name)
            if previous is not None and frame.rejected is None and previous.rejected is None:
                record.redefined = previous.redefined or previous.descriptor != record.descriptor or previous.fingerprint != record.fingerprint
            if frame.rejected is None or previous is None or not previous.registered:
                session.tools[frame.name] = record
            if frame.rejected is None:
                session.stats.register(frame.name, frame.schemaBytes, frame.internal)
                # A redefinition also gets the agent's own `redefined` event, saying what changed.
                self._timeline(session, "register", {"tool": frame.name, "schemaBytes": frame.schemaBytes}, frame.at)
            else:
                self._timeline(session, "rejected", {"tool": frame.name, "reason": frame.rejected}, frame.at)
        else:
            found = session.tools.get(frame.name)
            if found is None:
                return
            record = found
            record.unregisteredAt = frame.at
            session.stats.unregister(frame.name)
            self._timeline(session, "unregister", {"tool": frame.name}, frame.at)
        for observer in self.observers:
            observer.on_tool(session, record, frame.change, frame.at)

    def _timeline(self, session: Session, kind: str, detail: dict[str, Any], at: float | None = None) -> None:
        if at is None:
            at = max(0.0, self.clock.time() * 1000 - session.info.timeOrigin) if session.info.timeOrigin else 0.0
        session.timeline.append(TimelineEntry(at, kind, detail))

    # -- reads --------------------------------------------------------------------------------------------

    def live_sessions(self) -> list[Session]:
        return [s for s in self.sessions.values() if s.state == "live"]

    def counter_view(self) -> dict[str, int]:
        return dict(self.counters)
