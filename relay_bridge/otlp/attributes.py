"""Plain descriptions of the OpenTelemetry spans wmcp-top exports: one per call, one per registration change.

Names and attributes follow the GenAI semantic conventions where they exist (`execute_tool {tool}`,
`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`, `error.type`), MCP's size attributes, and
`webmcp.*` for what the browser did (autotel-webmcp's vocabulary). Sizes only: no input or result text, ever —
except the opt-in payload capture, which arrives on its own frame and is attached here only, never stored.
IDs are derived from the session id and seq, so a re-export is idempotent and nested calls find their parent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..protocol import Span
from ..store import Session, ToolRecord

Attrs = dict[str, Any]


@dataclass(slots=True)
class SpanSpec:
    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ns: int
    end_ns: int
    attributes: Attrs
    resource: Attrs
    error_type: str | None = None
    error_message: str | None = None
    events: list[tuple[str, int, Attrs]] = field(default_factory=list)


def _id(text: str, size: int) -> int:
    value = int.from_bytes(hashlib.sha256(text.encode()).digest()[:size], "big")
    return value or 1  # all-zero ids are invalid in OpenTelemetry


def trace_id(session_id: str) -> int:
    return _id(f"wmcp-top/trace/{session_id}", 16)


def span_id(session_id: str, seq: int | str) -> int:
    return _id(f"wmcp-top/span/{session_id}#{seq}", 8)


def _ns(epoch_ms: float) -> int:
    return int(round(epoch_ms * 1_000_000))


def resource(session: Session) -> Attrs:
    info = session.info
    attrs: Attrs = {
        "service.name": "webmcp-page",
        "webmcp.page.origin": info.origin,
        "webmcp.page.path": info.path,
        "webmcp.session.id": info.id,
        "webmcp.session.context": info.context,
        "webmcp.agent": session.agent,
    }
    if info.userAgent:
        attrs["user_agent.original"] = info.userAgent
    if info.via:
        attrs["webmcp.session.via"] = info.via
    return attrs


def annotation_facts(record: ToolRecord | None) -> Attrs:
    if record is None:
        return {}
    attrs: Attrs = {}
    sent = sorted((record.annotationsSent or {}).keys())
    if sent:
        attrs["webmcp.annotations.sent"] = sent
    if record.annotationsKept is not None:
        attrs["webmcp.annotations.dropped"] = sorted(set(sent) - set(record.annotationsKept))
    if record.descriptor:
        try:
            descriptor = json.loads(record.descriptor)
        except ValueError:
            descriptor = {}
        title = descriptor.get("title") if isinstance(descriptor, dict) else None
        if isinstance(title, str) and title:
            attrs["webmcp.tool.title"] = title
            attrs["webmcp.tool.label_mismatch"] = title != record.name
        attrs["webmcp.tool.descriptor"] = hashlib.sha256(record.descriptor).hexdigest()[:16]
    if record.redefined:
        attrs["webmcp.tool.redefined"] = True
    return attrs


def call_span(session: Session, span: Span, payload: tuple[str | None, str | None] | None = None) -> SpanSpec:
    sid = session.id
    record = session.tools.get(span.tool)
    attrs: Attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": span.tool,
        "gen_ai.tool.call.id": f"{sid}#{span.seq}",
        "webmcp.tool.name": span.tool,
        "webmcp.execute.seq": span.seq,
        "mcp.tool.arguments.size": span.inputBytes,
        "mcp.tool.result.size": span.resultBytes,
        "webmcp.wall_ms": span.wallMs,
        "webmcp.blocking_ms": span.blockingMs,
        "webmcp.tokens.estimated": span.estTokens,
        "webmcp.result.image.size": span.imageBytes,
        "webmcp.synthetic": span.synthetic,
        "webmcp.result.serializable": span.serializable,
    }
    if span.gapSincePrevCallMs is not None:
        attrs["webmcp.host_gap_ms"] = span.gapSincePrevCallMs
    for name, key in (("resultType", "webmcp.result.type"), ("envelope", "webmcp.result.envelope"), ("substituted", "webmcp.result.substituted"), ("depth", "webmcp.execute.depth")):
        value = getattr(span, name)
        if value is not None:
            attrs[key] = value
    if span.consent is not None:
        attrs["webmcp.consent.granted"] = span.consent == "granted"
        attrs["webmcp.consent.mismatch"] = bool(span.consentMismatch)
    if span.refusal is not None:
        attrs["webmcp.result.refused"] = True
        attrs["webmcp.result.refusal"] = span.refusal
    parent = None
    if span.parent is not None:
        parent = span_id(sid, span.parent)
        parent_span = session.stats.ring.get(span.parent)
        if parent_span is not None:
            attrs["webmcp.execute.parent"] = parent_span.tool
    attrs.update(annotation_facts(record))
    if payload is not None:
        arguments, result = payload
        if arguments is not None:
            attrs["gen_ai.tool.call.arguments"] = arguments
        if result is not None:
            attrs["gen_ai.tool.call.result"] = result
    error_type = None
    if span.isError:
        error_type = span.errorType or ("tool_error" if span.resultType != "error" else "Error")
        attrs["webmcp.result.error"] = True
    start = session.epoch(span.invokedAt)
    return SpanSpec(
        name=f"execute_tool {span.tool}",
        trace_id=trace_id(sid),
        span_id=span_id(sid, span.seq),
        parent_id=parent,
        start_ns=_ns(start),
        end_ns=_ns(start + span.wallMs),
        attributes=attrs,
        resource=resource(session),
        error_type=error_type,
        error_message=span.error,
    )


def tool_span(session: Session, record: ToolRecord, change: str, at: float) -> SpanSpec:
    """A registration, withdrawal or refused registration, as a zero-length span of its own."""
    attrs: Attrs = {
        "webmcp.tool.name": record.name,
        "gen_ai.tool.name": record.name,
        "webmcp.tool.change": change,
        "webmcp.tool.schema.size": record.schemaBytes,
        "webmcp.tool.internal": record.internal,
    }
    attrs.update(annotation_facts(record))
    if record.rejected:
        attrs["webmcp.tool.rejected"] = record.rejected
    when = _ns(session.epoch(at))
    kind = "register_tool" if change == "registered" else "unregister_tool"
    return SpanSpec(
        name=f"{kind} {record.name}",
        trace_id=trace_id(session.id),
        span_id=span_id(session.id, f"{change}:{record.name}:{at}"),
        parent_id=None,
        start_ns=when,
        end_ns=when,
        attributes=attrs,
        resource=resource(session),
        error_type="registration_rejected" if record.rejected else None,
        error_message=record.rejected,
    )
