"""The relay: one loopback port, WebSocket for agents and plain HTTP for the agent script and health.

I/O only. Each frame is decoded once (protocol.decode), applied to the store (Store.apply), logged
(SessionLog) and answered; all policy about what a frame means lives in the store.
Handshake and library log lines go to the relay's log file, never to stdout (the terminal belongs to the UI).
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import ipaddress
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK
from websockets.frames import CloseCode
from websockets.http11 import Request, Response
from websockets.protocol import Event, State
from websockets.typing import Subprotocol

from relay_bridge import __version__
from relay_bridge.core import protocol as p
from relay_bridge.core.connection import Connection, session_hint
from relay_bridge.core.payloads import PayloadView
from relay_bridge.core.ratecap import Bucket, OriginShare, SocketGate, token_buckets
from relay_bridge.core.store import Store
from relay_bridge.core.watching import UNWATCHED_MS, Watching
from relay_bridge.relay.assets import PATHS, served
from relay_bridge.relay.auth import SUBPROTOCOL, TOKEN_PROTOCOL_PREFIX, token_matches
from relay_bridge.relay.extension import extension_origins
from relay_bridge.relay.hold import FrameHold
from relay_bridge.relay.sessionlog import SessionLog
from relay_bridge.relay.snippet import DEFAULT_PORT, LOOPBACK, Snippet
from relay_bridge.relay.view import View

log = logging.getLogger("wmcp_top.relay")
# Until a front end points these at a file (logsetup.configure), they go nowhere: never to the terminal.
_root_log = logging.getLogger("wmcp_top")
if not _root_log.handlers:
    _root_log.addHandler(logging.NullHandler())
_root_log.propagate = False


# Rate caps (relay_bridge.core.ratecap): per connection, and per token across all connections (one token serves
# the whole relay). Frames over them get a non-fatal `rate_limited` error and are not stored (nor acked, so a
# well-behaved agent re-sends them after backing off).
RATE_PER_SECOND = 2000.0
RATE_BURST = 4000.0
TOKEN_RATE_PER_SECOND = 8000.0
TOKEN_RATE_BURST = 8000.0
# Sockets open at once; more are refused at the handshake (503). Each buffers at most 16 frames (of up to 1 MiB)
# while the loop is busy.
MAX_CONNECTIONS = 128
# New WebSocket connections a second, per token (a handshake costs the loop more than a frame): a page that
# reconnects in a loop to dodge the per-socket caps is refused (503) past this. The burst lets every one of
# the 64 sessions' pages reconnect at once after a relay restart.
CONNECTS_PER_SECOND = 16.0
CONNECTS_BURST = 64.0
# Fair shares of those between web origins (the handshake's Origin header, which a page cannot choose): sockets
# open at once, and new connections, of one origin. Past them that origin is refused (503, `refused:origin_*`)
# while every other origin still gets in; the token-wide bucket above is for sockets without an Origin (local
# tools), so one origin's churn cannot spend another's handshakes. An origin's burst lets 16 of its tabs reconnect
# at once after a relay restart; the rest retry within seconds (the agent backs off to at most 5 s).
MAX_CONNECTIONS_PER_ORIGIN = 32
ORIGIN_CONNECTS_PER_SECOND = 4.0
ORIGIN_CONNECTS_BURST = 16.0
ORIGIN_CONNECT_BUCKETS = 1024  # origins whose connect bucket is remembered (the least recent is forgotten)
# Spans of one batch applied at a time before the loop is let go (see Relay._frame).
APPLY_SLICE = 50
# Frames websockets reads ahead for a socket whose handler is busy (its `max_queue`). Each may be 1 MiB: at
# websockets' 16, 64 sessions sending full frames faster than the loop applies them grew the relay past 1.1 GB
# (tests/adversary/test_queues.py); at 1, with frames read as bytes (_messages), 257 to 277 MB. An agent sends a
# batch per window and waits on nothing, so one frame read ahead costs it nothing (tests/bench/test_relay_memory.py).
MAX_QUEUED_FRAMES = 1
# A socket that owns no session this long after it opened (or after its last session said bye, or was taken
# over by a reconnect) is closed with 1008 and counted (`refused:no_session`): otherwise idle sockets, kept alive
# by keepalive pings their client answers, could hold every one of the MAX_CONNECTIONS slots. The agent says
# hello right after open; one whose hello is refused (64 live sessions) retries on the same socket with a backoff
# of at most 5 s, and once closed reconnects after 250 ms: one handshake per ~10 s, never a tight loop.
HELLO_DEADLINE = 10.0
# Bytes the relay may hold unsent for one connection before closing it (`refused:write_buffer`). websockets
# writes automatic pongs (and close frames) from data_received without backpressure, so a peer sending pings it
# never reads the pongs of grew the relay without limit. The relay's own sends wait for the buffer to drain
# (32 KiB high-water), so a well-behaved agent stays far below this; MAX_CONNECTIONS x this bounds the total.
MAX_WRITE_BUFFER = 1 << 20
# TCP connections still in their HTTP handshake (WebSocket upgrades and plain requests alike), each holding a file
# descriptor MAX_CONNECTIONS does not count: 3,000 connections that sent half a request held 2,964, past a usual
# `ulimit -n` of 1,024 (accept() then fails for everyone, and the session log cannot open its next part). Past the cap
# the relay aborts and counts (`refused:handshakes`) the ones it heard from least recently (made, or their whole
# request in), not the newcomer: a loopback handshake takes milliseconds, so those are the ones stalling, while
# refusing newcomers would let a few stalled sockets keep every agent out. 128, as many as the WebSocket slots: every
# agent may reconnect at once, and under a flood that reconnects as fast as it is closed a new connection outlives
# the next loop turn of 100 accepts, time for its request to be read (agents connecting 10 times a second through
# such a flood: at 64, 1 of 430 was cut off and the slowest took 1.1 s; at 128, none of 509, the slowest 0.25 s).
# Descriptors stay below MAX_CONNECTIONS + this + 100 made since the last trim + asyncio's accepts in flight (100 a
# loop turn, for up to 3 turns) + the relay's own: about 700.
MAX_PENDING_HANDSHAKES = 128
# Seconds a connection may take to finish its handshake (websockets' open_timeout). Kept at websockets' default: the
# cap, not this, bounds what stalled handshakes hold, and a browser stalled under load must still get in.
HANDSHAKE_DEADLINE = 10.0
# Seconds a peer has to answer the relay's close frame (websockets' close_timeout, its default) while the relay runs.
CLOSE_TIMEOUT = 10.0
# At stop, a peer that has not answered the close frame after this long is cut off: a page that never reads (its
# own socket paused, or the relay pausing it for its rate) held the exit for all of CLOSE_TIMEOUT.
STOP_GRACE = 1.0


@dataclass
class RelayConfig:
    host: str = LOOPBACK
    port: int = DEFAULT_PORT
    token: str = ""
    buffer: int = 500
    allow_origins: tuple[str, ...] = ()
    log_dir: Path | None = None  # session log; None = no log
    rate_per_second: float = RATE_PER_SECOND
    rate_burst: float = RATE_BURST
    token_rate_per_second: float = TOKEN_RATE_PER_SECOND
    token_rate_burst: float = TOKEN_RATE_BURST
    max_connections: int = MAX_CONNECTIONS
    hello_deadline: float = HELLO_DEADLINE  # seconds a socket may own no session (tests shorten it)
    max_write_buffer: int = MAX_WRITE_BUFFER  # bytes unsent to one socket before it is closed
    max_pending_handshakes: int = MAX_PENDING_HANDSHAKES  # connections kept in their handshake (see the constant)
    handshake_deadline: float = HANDSHAKE_DEADLINE  # seconds to finish the handshake (tests shorten it)
    otlp: str | None = None  # OTLP/HTTP traces endpoint (relay_bridge.lanes.otlp); None = no export
    otlp_interval: float = 0.5  # seconds between export batches
    otlp_service: str | None = None  # service.name (--otlp-service); else OTEL_SERVICE_NAME, else webmcp-page
    allow_invoke: bool = False  # let the terminal call a page's tool (`wmcp-top --allow-invoke`)
    show_payloads: bool = False  # hold opt-in payloads of the shown session for the call detail (--show-payloads)
    unwatched_ms: int = UNWATCHED_MS  # how often an agent nobody watches sends (relay_bridge.core.watching)
    # Resume secrets are derived from this key (relay_bridge.core.identity); the CLI keeps it in the state directory so
    # a secret outlives a restart. None: the store's own random key (lost with the process).
    resume_key: bytes | None = None
    # The Origin headers of the wmcp-top extension's sockets; None: the built extension's (relay_bridge.relay.extension).
    extension_origins: frozenset[str] | None = None


def _offered_token(query: str, request: Request) -> str | None:
    """The token a request presents: a page's agent offers it as a WebSocket subprotocol (relay_bridge.relay.auth),
    clients outside any page (the open lane, the extension's service worker) as `?t=`."""
    for header in request.headers.get_all("Sec-WebSocket-Protocol"):
        for offered in header.split(","):
            offered = offered.strip()
            if offered.startswith(TOKEN_PROTOCOL_PREFIX):
                return offered[len(TOKEN_PROTOCOL_PREFIX) :]
    return parse_qs(query).get("t", [None])[0]


def _select_subprotocol(connection: ServerConnection, offered: Sequence[Subprotocol]) -> Subprotocol | None:
    """Answer the agent's subprotocol when offered (a browser fails a handshake that offered some and got none);
    never the token's, which stays in the request."""
    return SUBPROTOCOL if SUBPROTOCOL in offered else None


def _accepts_gzip(accept: str) -> bool:
    for part in accept.split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def _request_origin(request: Request) -> str | None:
    """The page a request came from: its Origin header (WebSocket, module import), else its Referer's origin
    (a classic script tag sends no Origin). Only ever shown (made inert) and counted."""
    origins = request.headers.get_all("Origin")
    if len(origins) == 1 and origins[0] != "null":
        return origins[0]
    referers = request.headers.get_all("Referer")
    if len(referers) == 1:
        parts = urlsplit(referers[0])
        if parts.scheme and parts.netloc:
            return f"{parts.scheme}://{parts.netloc}"
    return None


def _is_loopback_host(value: str | None, port: int) -> bool:
    """The Host header must name a loopback address and our port (DNS-rebinding defence)."""
    if not value:
        return False
    host, _, port_text = value.rpartition(":")
    if not host or not port_text.isdigit() or int(port_text) != port:
        return False
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Handshakes:
    """The connections between accept() and the end of their handshake, least recently heard from first (made, or
    its whole request in): at most `cap` once the loop has read what they sent (see MAX_PENDING_HANDSHAKES)."""

    def __init__(self, cap: int, on_evict: Callable[[], None]) -> None:
        self.cap = cap
        self._on_evict = on_evict
        self._pending: dict[ServerConnection, None] = {}  # an ordered set, least recently heard from first
        self._trim: asyncio.TimerHandle | None = None
        self._stopping = False

    def __len__(self) -> int:
        return len(self._pending)

    def begin(self, connection: ServerConnection) -> None:
        if self._stopping:  # accepted just before the listening socket closed
            connection.transport.abort()
            return
        self._pending[connection] = None
        if len(self._pending) > self.cap and self._trim is None:
            # Trimmed after the loop's next reads, not now: asyncio reads a connection a loop turn after it is made,
            # so an agent's whole request may be waiting unread while a flood's newer connections arrive.
            self._trim = asyncio.get_running_loop().call_later(0, self._trim_now)

    def heard(self, connection: ServerConnection) -> None:
        """Its whole request is in: it goes to the back of the line (an agent's request comes at once, a staller's
        never, or late)."""
        if connection in self._pending:
            del self._pending[connection]
            self._pending[connection] = None

    def _trim_now(self) -> None:
        self._trim = None
        while len(self._pending) > self.cap:
            connection = next(iter(self._pending))
            del self._pending[connection]
            self._on_evict()
            connection.transport.abort()  # no HTTP answer: the peer is stalling, and its descriptor is the point

    def end(self, connection: ServerConnection) -> None:
        """Finished, failed, timed out, aborted or closed by the peer: whichever comes first (the rest are no-ops)."""
        self._pending.pop(connection, None)

    def abort_all(self) -> None:
        """The relay is stopping: stalled handshakes must not hold its exit until their deadline."""
        self._stopping = True
        if self._trim is not None:
            self._trim.cancel()
        for connection in list(self._pending):
            connection.transport.abort()
        self._pending.clear()


def _relay_connection(cap: int, on_overflow: Callable[[], None], handshakes: Handshakes) -> type[ServerConnection]:
    """A ServerConnection that counts itself in `handshakes` until its handshake ends, and fails itself when its
    transport holds more than `cap` unsent bytes. The write check sits where the unbounded writes happen:
    data_received is where websockets answers pings (and close frames)."""

    class RelayConnection(ServerConnection):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            handshakes.begin(self)

        def process_event(self, event: Event) -> None:
            if self.request is None:  # the first event is the whole request
                handshakes.heard(self)
            super().process_event(event)

        async def handshake(self, *args: Any, **kwargs: Any) -> None:
            try:
                await super().handshake(*args, **kwargs)
            finally:  # answered, failed, or cancelled at the handshake deadline
                handshakes.end(self)

        def connection_lost(self, exc: Exception | None) -> None:
            handshakes.end(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.get_write_buffer_size() > cap and not self.transport.is_closing():
                on_overflow()
                if self.protocol.state is State.OPEN:
                    self.protocol.fail(CloseCode.POLICY_VIOLATION, "not reading what the relay sends")
                # The peer reads nothing: a close frame would only queue behind the backlog. Drop it all now.
                self.transport.abort()

    return RelayConnection


class InvokeRefused(Exception):
    """Calling a tool from the terminal is off, or the session cannot take a command now."""


@dataclass(frozen=True, slots=True)
class InvokeResult:
    """What the page's agent answered. `text` is the tool's result: for the dialog only, never stored."""

    ok: bool
    text: str | None
    error: str | None
    result_bytes: int | None
    wall_ms: float | None


INVOKE_TIMEOUT = 30.0


class Relay:
    """Owns the listening socket. `await start()`, then `await stop()`; the store is usable throughout."""

    def __init__(self, config: RelayConfig, store: Store | None = None) -> None:
        self.config = config
        self.store = store or Store(buffer=config.buffer)
        if config.resume_key is not None:
            self.store.resume_key = config.resume_key
        if config.extension_origins is None:
            self.store.extension_origins = extension_origins()
        else:
            self.store.extension_origins = config.extension_origins
        self.session_log = SessionLog(config.log_dir) if config.log_dir is not None else None
        if self.session_log is not None:
            self.store.on_refusal = self.session_log.refusal
            self.store.on_squat = self.session_log.squat
            self.session_log.on_health = self.store.touch_relay
        self._server: Server | None = None
        self._conn_ids = itertools.count(1)
        self.port = config.port
        self._sockets: dict[int, ServerConnection] = {}
        self._stopping = asyncio.Event()  # set by stop(): ends every handler's pause (_pause)
        # Sockets owning no session, and the timer that closes each at its hello deadline (see HELLO_DEADLINE).
        self._idle: dict[int, asyncio.TimerHandle] = {}
        self._closing: set[asyncio.Task[None]] = set()  # the closes those timers started (held until done)
        self._token_buckets = token_buckets(config.token_rate_per_second, config.token_rate_burst, time.monotonic())
        self._connects = Bucket(CONNECTS_PER_SECOND, CONNECTS_BURST, time.monotonic())
        self._origin_connects: OrderedDict[str, Bucket] = OrderedDict()  # least recently used first (ORIGIN_CONNECT_BUCKETS)
        self._origin_shares: dict[str, OriginShare] = {}  # origins with a socket open: their rate and loop share
        self._share_keys: dict[int, str] = {}  # a socket's origin, or `socket N` (the session log's bound on it)
        self.handshakes = Handshakes(config.max_pending_handshakes, self._handshake_evicted)
        self._pending: dict[str, tuple[int, str, asyncio.Future[InvokeResult]]] = {}
        self._command_ids = itertools.count(1)
        # --show-payloads: the shown session's opt-in payloads, in memory only (relay_bridge.core.payloads)
        self.payloads: PayloadView | None = PayloadView() if config.show_payloads else None
        self.otlp: Any = None  # relay_bridge.lanes.otlp.exporter.OtlpExport while --otlp is on
        if config.otlp:
            from relay_bridge.lanes.otlp.exporter import OtlpExport  # the optional extra is imported only when asked for

            self.otlp = OtlpExport(config.otlp, interval=config.otlp_interval, service=config.otlp_service)
            self.store.observers.append(self.otlp)
        # Who shows which session (relay_bridge.core.watching): each agent is told with a `watch` frame.
        self.watching = Watching(config.unwatched_ms)
        self.watching.on_change = self._tell_watching
        # A viewer in this process holds page frames while a key waits for its answer (relay_bridge.relay.hold).
        self.frames = FrameHold()
        # conn -> session -> whether its agent was last told it is watched; only agents that follow watch frames
        self._told: dict[int, dict[str, bool]] = {}
        self._telling: set[asyncio.Task[None]] = set()
        if self.otlp is not None:  # the exporter reads every span of every session as it comes
            self.watching.show_every("otlp", max(int(config.otlp_interval * 1000), 50))
        # The read-only view local programs (`wmcp-top mcp`) read the store through (relay_bridge.relay.view).
        self.view = View(self.store, self.watching)

    # -- lifecycle ----------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._stopping = asyncio.Event()
        self._server = await serve(
            self._handle,
            self.config.host,
            self.config.port,
            process_request=self._process_request,
            select_subprotocol=_select_subprotocol,
            compression=None,
            max_size=p.MAX_FRAME_BYTES,
            max_queue=MAX_QUEUED_FRAMES,
            open_timeout=self.config.handshake_deadline,
            close_timeout=CLOSE_TIMEOUT,
            create_connection=_relay_connection(self.config.max_write_buffer, self._write_overflow, self.handshakes),
            server_header=f"wmcp-top/{__version__}",
            logger=logging.getLogger("wmcp_top.websockets"),
        )
        sock = next(iter(self._server.sockets))
        self.port = sock.getsockname()[1]
        if self.session_log is not None:
            self.session_log.start()
        if self.otlp is not None:
            self.otlp.start()
        log.info("relay listening on %s:%d", self.config.host, self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._stopping.set()
            self._server.close()
            self.handshakes.abort_all()
            try:
                await asyncio.wait_for(asyncio.shield(self._server.wait_closed()), STOP_GRACE)
            except TimeoutError:
                for ws in list(self._sockets.values()):
                    ws.transport.abort()
                await self._server.wait_closed()
            self._server = None
        if self.session_log is not None:
            self.session_log.close()
        if self.otlp is not None:
            # A collector that is down would hold the exit for its retries: flush only to a reachable one.
            await asyncio.to_thread(self.otlp.close, self.otlp.stats.state != "unreachable")
            self.store.observers.remove(self.otlp)
            self.otlp = None

    async def invoke(self, session_id: str, tool: str, arguments: dict[str, Any], timeout: float = INVOKE_TIMEOUT) -> InvokeResult:
        """Ask the session's agent to call `tool` through the browser's own executeTool. Only the terminal calls
        this; a page has no way to start a command."""
        if not self.config.allow_invoke:
            raise InvokeRefused("calling tools from the terminal is off: start wmcp-top with --allow-invoke")
        session = self.store.sessions.get(session_id)
        if session is None or session.state != "live" or session.conn not in self._sockets:
            raise InvokeRefused("that session is not connected")
        if session.info.context == "relayed":
            raise InvokeRefused("a relayed session has no socket of its own to take a command")
        command_id = f"c{next(self._command_ids)}"
        future: asyncio.Future[InvokeResult] = asyncio.get_running_loop().create_future()
        self._pending[command_id] = (session.conn, session_id, future)
        try:
            frame = p.Command(command_id, session_id, "invoke", {"tool": tool, "input": arguments})
            await self._sockets[session.conn].send(p.encode(frame), text=True)
            self.store.counters["commands"] += 1
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise InvokeRefused(f"no answer from the page in {timeout:.0f} s") from None
        except ConnectionClosed:
            raise InvokeRefused("the page disconnected") from None
        finally:
            self._pending.pop(command_id, None)

    def _tell_watching(self) -> None:
        """A viewer changed what it shows: tell every live session's agent whose state changed."""
        for sid, session in self.store.sessions.items():
            if session.state != "live" or session.conn not in self._sockets:
                continue
            frame = self._watch_news(session.conn, sid)
            if frame is not None:
                task = asyncio.get_running_loop().create_task(self._send_quietly(self._sockets[session.conn], p.encode(frame)))
                self._telling.add(task)
                task.add_done_callback(self._telling.discard)

    def _watch_news(self, conn: int, sid: str) -> p.Watch | None:
        """`sid`'s watch frame for `conn` when its agent follows them and was last told otherwise, else None."""
        told = self._told.get(conn)
        if told is None or sid not in told:
            return None
        frame = self.watching.frame(sid)
        if told[sid] == frame.watched:
            return None
        told[sid] = frame.watched
        return frame

    @staticmethod
    async def _send_quietly(ws: ServerConnection, data: bytes) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(data, text=True)

    def _take_result(self, conn: int, frame: p.Result) -> None:
        pending = self._pending.get(frame.id)
        if pending is None or pending[0] != conn or pending[1] != frame.session or pending[2].done():
            self.store.counters["results_unsolicited"] += 1  # a page cannot answer what was never asked
            return
        pending[2].set_result(InvokeResult(frame.ok, frame.text, frame.error, frame.resultBytes, frame.wallMs))

    @property
    def snippet(self) -> Snippet:
        return Snippet(self.config.host, self.port, self.config.token)

    # -- HTTP ---------------------------------------------------------------------------------------------

    def _respond(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8", extra: dict[str, str] | None = None) -> Response:
        headers = Headers()
        headers["Content-Type"] = content_type
        headers["Content-Length"] = str(len(body))
        headers["Cache-Control"] = "no-store"
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Connection"] = "close"
        for key, value in (extra or {}).items():
            if key in headers:  # a multi-dict: an extra replaces a default (the agent's Cache-Control), never adds one
                del headers[key]
            headers[key] = value
        return Response(status, http.HTTPStatus(status).phrase, headers, body)

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | Awaitable[Response] | None:
        hosts = request.headers.get_all("Host")
        if len(hosts) != 1 or not _is_loopback_host(hosts[0], self.port):
            self.store.counters["refused:host"] += 1
            return self._respond(403, b"forbidden: the Host header must name this loopback relay\n")
        url = urlsplit(request.path)
        if url.path == "/healthz":
            body = msgspec.json.encode({"ok": True, "version": __version__, "sessions": len(self.store.live_sessions())})
            return self._respond(200, body, "application/json")
        if url.path in PATHS:
            return self._agent_response(url.path, url.query, request)
        if not token_matches(self.config.token, _offered_token(url.query, request)):
            self.store.refuse_token(_request_origin(request))
            return self._respond(403, b"forbidden: missing or wrong token (run `wmcp-top snippet`)\n")
        if url.path.startswith("/view/"):
            return self.view.respond(url, request, self._respond)
        origins = request.headers.get_all("Origin")
        origin = origins[0] if len(origins) == 1 else None
        if url.path == "/relay":
            if len(self._sockets) >= self.config.max_connections:
                self.store.counters["refused:connections"] += 1
                return self._respond(503, b"too many connections\n")
            refused = self._connect_refused(origin)
            if refused is not None:
                self.store.counters[refused] += 1
                self.store.touch_relay()
                return self._respond(503, b"too many connections from this origin\n" if origin is not None else b"too many connections\n")
            if self.config.allow_origins and origin not in self.config.allow_origins:
                self.store.counters["refused:origin"] += 1
                return self._respond(403, b"forbidden: origin not allowed by --allow-origin\n")
            return None  # go on with the WebSocket handshake
        return self._respond(404, b"not found\n")

    def _agent_response(self, path: str, query: str, request: Request) -> Response:
        """The agent's script: no secret in it or its URL, so no token is asked. `?v=` naming the current content
        hash makes it immutable (the pasted lines say it); any other URL is revalidated by its ETag."""
        script = served(path, self.snippet.relay_address)
        if script is None:
            return self._respond(503, b"the page agent is not built: run `node page_agent/build.mjs`\n")
        etag = f'"{script.digest}"'
        fresh = parse_qs(query).get("v", [None])[0] == script.digest
        headers = {
            # Any page may load the script: module import needs CORS, and a page that is cross-origin isolated
            # (COEP require-corp) loads a plain <script src> only when the response says it may be embedded anywhere.
            "Access-Control-Allow-Origin": "*",
            "Cross-Origin-Resource-Policy": "cross-origin",
            "Cache-Control": "public, max-age=31536000, immutable" if fresh else "no-cache",
            "ETag": etag,
            "Vary": "Accept-Encoding",
        }
        if etag in request.headers.get("If-None-Match", ""):
            return self._respond(304, b"", "text/javascript; charset=utf-8", headers)
        body = script.body
        if _accepts_gzip(request.headers.get("Accept-Encoding", "")):
            body = script.gzipped
            headers["Content-Encoding"] = "gzip"
        return self._respond(200, body, "text/javascript; charset=utf-8", headers)

    def _connect_refused(self, origin: str | None) -> str | None:
        """The counter of the share a new connection from `origin` would break, or None (see MAX_CONNECTIONS_PER_ORIGIN)."""
        now = time.monotonic()
        if origin is None:
            return None if self._connects.take(now) else "refused:connections"
        share = self._origin_shares.get(origin)
        if share is not None and share.sockets >= MAX_CONNECTIONS_PER_ORIGIN:
            return "refused:origin_sockets"
        bucket = self._origin_connects.pop(origin, None) or Bucket(ORIGIN_CONNECTS_PER_SECOND, ORIGIN_CONNECTS_BURST, now)
        self._origin_connects[origin] = bucket  # to the back: the most recently used
        if len(self._origin_connects) > ORIGIN_CONNECT_BUCKETS:
            self._origin_connects.popitem(last=False)
        return None if bucket.take(now) else "refused:origin_connects"

    # -- WebSocket ---------------------------------------------------------------------------------------

    def _write_overflow(self) -> None:
        self.store.counters["refused:write_buffer"] += 1
        self.store.touch_relay()

    def _handshake_evicted(self) -> None:
        self.store.counters["refused:handshakes"] += 1
        self.store.touch_relay()

    def _watch_idle(self, conn: int) -> None:
        """Arm `conn`'s hello deadline while it owns no session; disarm it once it owns one."""
        if self.store.connections.get(conn):
            handle = self._idle.pop(conn, None)
            if handle is not None:
                handle.cancel()
        elif conn not in self._idle and conn in self._sockets:
            self._idle[conn] = asyncio.get_running_loop().call_later(self.config.hello_deadline, self._idle_close, conn)

    def _idle_close(self, conn: int) -> None:
        self._idle.pop(conn, None)
        ws = self._sockets.get(conn)
        if ws is None or self.store.connections.get(conn):
            return
        self.store.counters["refused:no_session"] += 1
        self.store.touch_relay()
        task = asyncio.ensure_future(ws.close(1008, f"no session: say hello within {self.config.hello_deadline:g} s"))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _frame(self, conn: int, raw: bytes) -> tuple[list[Any], bool, bool, float]:
        """One admitted frame: decode, apply, log. Returns (replies, accepted, unreadable, the loop's time)."""
        store = self.store
        started = time.perf_counter()
        replies, accepted, unreadable, frame = self._decoded(conn, raw)
        cost = time.perf_counter() - started
        if frame is None:
            return replies, accepted, unreadable, cost
        key = self._share_keys.get(conn, f"socket {conn}")
        if self.session_log is not None and not self.session_log.admit(key, len(raw)):
            # The log cannot take it yet (a page outpacing the disk, or a disk refusing): refused before the store,
            # so nothing is kept that the log does not hold, and never acked (the agent sends it again).
            message = "the session log is behind; not stored, not acked: send again after a backoff"
            return [store.reject(conn, p.Rejection(p.Code.LOG_FULL, message), session_hint(raw))], False, False, cost
        applied_at: float | None = None  # a sliced batch is applied across turns: logged at its end
        if isinstance(frame, p.Spans) and len(frame.spans) > APPLY_SLICE:
            # A big batch is applied in slices with the loop free in between: no socket holds the loop for a
            # whole 500-span batch while a well-behaved agent's ack waits. Only the last slice carries the
            # frame's floor, lost and facts (they apply after its spans) and answers with the ack.
            n = len(frame.spans)
            for i in range(0, n, APPLY_SLICE):
                last = i + APPLY_SLICE >= n
                part = p.Spans(
                    frame.session,
                    frame.spans[i : i + APPLY_SLICE],
                    frame.floor if last else None,
                    frame.lost if last else None,
                    frame.facts if last else None,
                )
                started = time.perf_counter()
                out = store.apply(conn, part, more=i > 0)
                cost += time.perf_counter() - started
                replies.extend(r for r in out if last or isinstance(r, p.ErrorFrame))
                if not last:
                    await asyncio.sleep(0)
                    await self.frames.wait()
        else:
            started = time.perf_counter()
            with store.held_time() as applied_at:
                replies = store.apply(conn, frame)
            cost += time.perf_counter() - started
        accepted = not all(isinstance(r, p.ErrorFrame) for r in replies) if replies else True
        if accepted and isinstance(frame, p.Hello) and frame.cadence:
            self._told.setdefault(conn, {})[frame.session.id] = True  # a hello starts watched (relay_bridge.core.watching)
        if accepted and self.session_log is not None:
            if isinstance(frame, p.Hello) and frame.resume is not None:
                # The secret stays between the relay and its owner: the log keeps the hello without it.
                frame = msgspec.structs.replace(frame, resume=None)
                raw = p.encode(frame)
            elif isinstance(frame, p.Event) and frame.kind == "navigated-from" and b'"resume"' in raw:
                raw = p.encode(frame)  # the store took the link's proof out of the detail: logged without it
            self.session_log.frame(conn, raw, frame, key, applied_at)
        return replies, accepted, False, cost

    def _decoded(self, conn: int, raw: bytes) -> tuple[list[Any], bool, bool, Any]:
        """Decode; frames that never reach the store are handled here. The frame to apply comes back last."""
        store = self.store
        frame = p.decode(raw)
        if isinstance(frame, p.Rejection):
            return [store.reject(conn, frame, session_hint(raw))], False, True, None
        if isinstance(frame, p.Result):
            self._take_result(conn, frame)  # to the waiting dialog only: not stored, not logged
            return [], True, False, None
        if isinstance(frame, p.Payload):
            # Opt-in captured text: to the OpenTelemetry lane and (--show-payloads) the shown session's
            # call detail, in memory only; never the store, the session log, an export or a capture.
            owned = store.owns(conn, frame.session)
            taken = False
            if owned and self.otlp is not None and frame.promptSession is None:
                self.otlp.on_payload(frame)
                taken = True
            if owned and self.payloads is not None:
                taken = self.payloads.add(frame) or taken
            if not taken:
                store.counters["payloads_dropped"] += 1
            return [], True, False, None
        return [], True, False, frame

    def _page_share(self, conn: int, replies: list[msgspec.Struct], key: str | None, share: OriginShare | None) -> tuple[str, OriginShare] | None:
        """The extension's socket said its first accepted hello: move it from the extension's share to its page
        origin's (`ext <origin>`), so one tab's flood spends its own origin's rate and loop share, not every tab's."""
        ack = next((r for r in replies if isinstance(r, p.Ack) and r.resume is not None), None)
        session = self.store.sessions.get(ack.session) if ack is not None else None
        if session is None:
            return None
        new_key = f"ext {session.info.origin}"
        if share is not None:
            share.sockets -= 1
            if share.sockets <= 0 and self._origin_shares.get(key or "") is share:
                del self._origin_shares[key or ""]
        moved = self._origin_shares.get(new_key)
        if moved is None:
            moved = self._origin_shares[new_key] = OriginShare(self.config.token_rate_per_second, self.config.token_rate_burst, time.monotonic())
        moved.sockets += 1
        self._share_keys[conn] = new_key
        return new_key, moved

    async def _handle(self, ws: ServerConnection) -> None:
        conn = next(self._conn_ids)
        store = self.store
        origins = ws.request.headers.get_all("Origin") if ws.request is not None else []
        origin = origins[0] if len(origins) == 1 else None
        with store.held_time() as opened_at:
            store.connect(conn, origin)
        share: OriginShare | None = None
        if origin is not None:
            share = self._origin_shares.get(origin)
            if share is None:
                share = self._origin_shares[origin] = OriginShare(self.config.token_rate_per_second, self.config.token_rate_burst, time.monotonic())
            share.sockets += 1
        self._share_keys[conn] = origin if origin is not None else f"socket {conn}"
        # The extension opens one socket per page, every one with the extension's Origin: its share is the page's
        # origin (stamped by the extension from the browser, checked by the store), found at the first hello.
        page_share = store.kinds.get(conn) == "extension"
        if self.session_log is not None:
            self.session_log.connection(conn, True, origin, opened_at)
        self._sockets[conn] = ws
        self._watch_idle(conn)
        gate = SocketGate(self._token_buckets, self.config.rate_per_second, self.config.rate_burst, time.monotonic(), share)
        policy = Connection(conn, store, gate)  # what to refuse, close and pause: decided there, carried out here
        closed = False

        async def reply(frame: msgspec.Struct) -> None:
            # After the peer closes, frames it sent before closing are still queued here: keep applying them
            # (a `bye` or a last batch must not be lost), just stop answering.
            nonlocal closed
            if closed or ws.state is not State.OPEN:
                # A send after the peer's close frame would wait for the TCP close (up to close_timeout).
                closed = True
                return
            try:
                await ws.send(p.encode(frame), text=True)  # UTF-8 JSON already: sent as a text frame, not decoded and encoded again
            except ConnectionClosed:
                closed = True

        try:
            await reply(p.Welcome(p.PROTOCOL, f"wmcp-top/{__version__}", payloads=self.otlp is not None or self.payloads is not None))
            async for message in _messages(ws):
                await self.frames.wait()
                # The caps come first and cost nothing per byte: a refused frame is neither decoded nor scanned.
                started = time.perf_counter()
                refusal = policy.receive(time.monotonic(), message)
                if refusal is not None:
                    for answer in refusal.replies:
                        await reply(answer)
                    if refusal.close is not None:
                        await ws.close(refusal.close.code, refusal.close.reason)
                        break
                    await self._pause(policy.refusal_pause(time.monotonic(), time.perf_counter() - started, len(message)))
                    continue
                # `cost`: the loop's time for this frame (its slices; sending the answers back is I/O)
                replies, accepted, unreadable, cost = await self._frame(conn, message)
                step = policy.applied(time.monotonic(), replies, accepted, unreadable, cost, len(message))
                if step.close is not None:
                    for answer in step.replies:
                        await reply(answer)
                    await ws.close(step.close.code, step.close.reason)
                    break
                # A hello or bye may have given this socket its first session or ended its last; an accepted
                # hello (its ack carries the secret) may have taken a session over from another socket.
                self._watch_idle(conn)
                if any(isinstance(r, p.Ack) and r.resume is not None for r in replies):
                    for other in list(self._sockets):
                        self._watch_idle(other)
                if page_share:
                    moved = self._page_share(conn, replies, origin, share)
                    if moved is not None:
                        origin, share = moved
                        gate.share(share)
                        page_share = False
                for answer in step.replies:
                    await reply(answer)
                    if isinstance(answer, p.Ack) and answer.resume is not None:  # a hello's: unwatched, say so
                        news = self._watch_news(conn, answer.session)
                        if news is not None:
                            await reply(news)
                if step.pause is not None:
                    await self._pause(step.pause)
        except ConnectionClosed as exc:
            if (exc.rcvd is not None and exc.rcvd.code == 1009) or (exc.sent is not None and exc.sent.code == 1009):
                store.reject(conn, p.Rejection(p.Code.LIMIT, f"frame over {p.MAX_FRAME_BYTES} bytes"))
        finally:
            self._sockets.pop(conn, None)
            self._told.pop(conn, None)
            self._share_keys.pop(conn, None)
            if share is not None:
                share.sockets -= 1
                if share.sockets <= 0 and self._origin_shares.get(origin or "") is share:
                    del self._origin_shares[origin or ""]
            idle = self._idle.pop(conn, None)
            if idle is not None:
                idle.cancel()
            for _command_id, (owner, _, future) in list(self._pending.items()):
                if owner == conn and not future.done():
                    future.set_exception(ConnectionClosed(None, None))
            with store.held_time() as closed_at:
                store.disconnect(conn)
            if self.session_log is not None:
                self.session_log.connection(conn, False, t=closed_at)

    async def _pause(self, seconds: float) -> None:
        """A socket's pause (its frames wait in the kernel meanwhile), cut short by stop(): a paused handler leaves
        the frame websockets read ahead unread, so the peer's answer to the close frame is never read either."""
        if seconds <= 0 or self._stopping.is_set():
            await asyncio.sleep(0)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)


async def _messages(ws: ServerConnection) -> AsyncIterator[bytes]:
    """Every message as websockets received it, text frames included: not decoded to str only to be encoded back
    (two more copies of a frame of up to 1 MiB, for every socket at once under a flood: tests/adversary/
    test_queues.py). msgspec checks the UTF-8 as it decodes (`bad_utf8`), as it does for binary frames."""
    with contextlib.suppress(ConnectionClosedOK):
        while True:
            yield await ws.recv(decode=False)
