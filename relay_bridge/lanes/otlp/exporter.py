"""Ship span descriptions to an OTLP/HTTP collector from a bounded queue on a thread of its own.

The relay's loop only appends to a deque (O(1), never blocks). The thread batches, builds SDK ReadableSpans
(one Resource per page session), and calls the official OTLPSpanExporter. When the queue is full or the
collector refuses, spans are dropped and counted; `stats` says what happened for the status view.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from relay_bridge.core.protocol import Payload, Span
from relay_bridge.core.store import Session, ToolRecord
from relay_bridge.lanes.otlp.attributes import SpanSpec, base_resource, call_span, consent_span, install_span, tool_span

QUEUE_MAX = 4096
BATCH_MAX = 512
INTERVAL = 0.5
EXPORT_TIMEOUT = 3.0
PAYLOADS_MAX = 256  # captured payloads waiting for their span


class OtlpUnavailable(Exception):
    """The optional extra is not installed."""


class BadEndpoint(ValueError):
    """--otlp (or an OTEL_* variable) names something that is not an http(s) URL: said at start, not after."""


def traces_endpoint(url: str | None) -> str | None:
    """`--otlp URL`, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as is), else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces.
    A bare `http://host:port` given to --otlp gets the standard /v1/traces path. Raises BadEndpoint for what is
    not an http(s) URL with a host, naming where it came from."""
    if url:
        parts = urlsplit(url)
        return _checked("--otlp", url.rstrip("/") + "/v1/traces" if parts.path in ("", "/") else url)
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return _checked("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return _checked("OTEL_EXPORTER_OTLP_ENDPOINT", os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces")
    return None


def _checked(source: str, endpoint: str) -> str:
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadEndpoint(f"{source} {endpoint!r}: not an http(s) URL of a collector (e.g. http://127.0.0.1:4318)")
    return endpoint


class _LibraryLog(logging.Handler):
    """The OpenTelemetry library logs each failed batch and retry to stderr (Python's last-resort handler), which
    floods a headless relay's output and tears the dashboard. Its records are counted here instead; the first
    goes to the relay's log file, and the relay says the collector's state in one line of its own."""

    def __init__(self, stats: ExportStats) -> None:
        super().__init__(logging.WARNING)
        self.stats = stats

    def emit(self, record: logging.LogRecord) -> None:
        self.stats.library_messages += 1
        if self.stats.library_messages == 1:
            logging.getLogger("wmcp_top.otlp").warning("opentelemetry: %s (later messages only counted)", record.getMessage()[:500])


@dataclass
class ExportStats:
    endpoint: str
    state: str = "starting"  # starting | ok | unreachable
    queued: int = 0
    exported: int = 0
    dropped_queue_full: int = 0
    dropped_unreachable: int = 0
    batches_failed: int = 0
    last_error: str | None = None
    last_ok_at: float | None = None
    library_messages: int = 0  # warnings the OpenTelemetry library logged (kept off the terminal)

    @property
    def dropped(self) -> int:
        return self.dropped_queue_full + self.dropped_unreachable


class OtlpExport:
    """A StoreObserver: `store.observers.append(OtlpExport(url))`, then `start()`, `close()` on exit."""

    def __init__(
        self, endpoint: str, *, queue_max: int = QUEUE_MAX, interval: float = INTERVAL, timeout: float = EXPORT_TIMEOUT, service: str | None = None
    ) -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise OtlpUnavailable("--otlp needs the OpenTelemetry extra: pip install 'wmcp-top[otlp]'") from None
        self.stats = ExportStats(endpoint)
        self._library_log = _LibraryLog(self.stats)
        library = logging.getLogger("opentelemetry")
        library.addHandler(self._library_log)
        library.propagate = False
        # service.name and the user's resource attributes: --otlp-service, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES.
        self.base = base_resource(service)
        self._exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout)
        self._queue: deque[SpanSpec] = deque()
        self._queue_max = queue_max
        self._interval = interval
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wmcp-otlp", daemon=True)
        self._payloads: OrderedDict[tuple[str, int], Payload] = OrderedDict()

    # -- StoreObserver (on the relay's loop: enqueue only) ----------------------------------------------

    def on_span(self, session: Session, span: Span) -> None:
        payload = self._payloads.pop((session.id, span.seq), None)
        self._put(call_span(session, span, payload, self.base))

    def on_tool(self, session: Session, record: ToolRecord, change: str, at: float) -> None:
        self._put(tool_span(session, record, change, at, self.base))

    def on_session(self, session: Session) -> None:
        self._put(install_span(session, session.info.attachedAt or time.time() * 1000, self.base))

    def on_event(self, session: Session, kind: str, detail: dict[str, Any], at: float) -> None:
        if kind == "consent" and (spec := consent_span(session, detail, at, self.base)) is not None:
            self._put(spec)

    def on_payload(self, frame: Payload) -> None:
        """Opt-in captured text, held (bounded) until its span arrives; it goes nowhere else."""
        if frame.promptSession is not None:
            return  # Prompt API text is for the terminal's detail pane (--show-payloads), not a tool call's span
        self._payloads[(frame.session, frame.seq)] = frame
        while len(self._payloads) > PAYLOADS_MAX:
            self._payloads.popitem(last=False)

    def _put(self, spec: SpanSpec) -> None:
        if len(self._queue) >= self._queue_max:
            self.stats.dropped_queue_full += 1
            return
        self._queue.append(spec)
        self.stats.queued = len(self._queue)
        if len(self._queue) >= BATCH_MAX:
            self._wake.set()

    # -- the export thread ------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def close(self, flush: bool = True) -> None:
        """Stop the thread; with `flush`, what is queued is sent first (bounded by the export timeout)."""
        if not flush:
            self.stats.dropped_unreachable += len(self._queue)
            self._queue.clear()
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(EXPORT_TIMEOUT * 2 if flush else 0.5)
        self._exporter.shutdown()
        if self._thread.is_alive():
            self._thread.join(0.5)  # an export still retrying stops at shutdown, and says so in the library's log
        # What the library logs after this (a retry's "Shutdown in progress") goes nowhere: without a handler of
        # its own, Python's last-resort handler would print it on the terminal.
        library = logging.getLogger("opentelemetry")
        library.removeHandler(self._library_log)
        if not any(isinstance(h, logging.NullHandler) for h in library.handlers):
            library.addHandler(logging.NullHandler())

    def _run(self) -> None:
        while True:
            self._wake.wait(self._interval)
            self._wake.clear()
            while self._queue:
                batch = [self._queue.popleft() for _ in range(min(BATCH_MAX, len(self._queue)))]
                self.stats.queued = len(self._queue)
                self._export(batch)
            if self._stop.is_set():
                return

    def _export(self, batch: list[SpanSpec]) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self._exporter.export([_readable(spec) for spec in batch])
        except Exception as exc:  # an exporter bug must not kill the thread
            result = None
            self.stats.last_error = f"{type(exc).__name__}: {exc}"[:200]
        if result == SpanExportResult.SUCCESS:
            self.stats.exported += len(batch)
            self.stats.state = "ok"
            self.stats.last_ok_at = time.time()
        else:
            self.stats.dropped_unreachable += len(batch)
            self.stats.batches_failed += 1
            self.stats.state = "unreachable"
            self.stats.last_error = self.stats.last_error or "the collector did not accept the batch"


_resources: dict[tuple[tuple[str, Any], ...], Any] = {}


def _readable(spec: SpanSpec) -> Any:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    key = tuple(sorted(spec.resource.items()))
    resource = _resources.get(key)
    if resource is None:
        resource = _resources[key] = Resource.create(spec.resource)
        if len(_resources) > 256:
            _resources.clear()
    attrs = dict(spec.attributes)
    status = Status(StatusCode.UNSET)
    if spec.error_type is not None:
        attrs["error.type"] = spec.error_type
        status = Status(StatusCode.ERROR, spec.error_message or spec.error_type)
    ctx = SpanContext(spec.trace_id, spec.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    parent = SpanContext(spec.trace_id, spec.parent_id, is_remote=False) if spec.parent_id else None
    return ReadableSpan(
        name=spec.name,
        context=ctx,
        parent=parent,
        resource=resource,
        attributes=attrs,
        kind=SpanKind.INTERNAL,
        status=status,
        start_time=spec.start_ns,
        end_time=spec.end_ns,
        instrumentation_scope=InstrumentationScope("wmcp-top", _version()),
    )


def _version() -> str:
    from relay_bridge import __version__

    return __version__
