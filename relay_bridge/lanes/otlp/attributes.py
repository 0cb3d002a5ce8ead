"""Plain descriptions of the OpenTelemetry spans wmcp-top exports: one per call, registration, withdrawal,
installation (a page session's first hello) and recorded consent.

Names and attributes are autotel-webmcp's (001: `execute_tool {tool}`, `webmcp.tool.register`,
`webmcp.tool.withdraw`, `webmcp.install`, `webmcp.consent`, and its `webmcp.*` vocabulary, down to the comma
strings of annotation keys), so dashboards and queries built on 001 read wmcp-top's spans too; the GenAI
semantic conventions where they exist (`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.type`,
`gen_ai.tool.description`, `error.type`) and MCP's size attributes. This project's extra facts (wall and
blocking time, host gap, tokens, schema size, …) stay under `webmcp.*`. `gen_ai.tool.call.id` is left for a
model's tool-call id, which a page never sees: the call's own id is `webmcp.call.id` (`session#seq`).
Sizes only: no input or result text, ever, except the opt-in payload capture, which arrives on its own frame
and is attached here only, never stored. IDs are derived from the session id and seq, so a re-export is
idempotent and nested calls find their parent.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from relay_bridge.core.fingerprint import fingerprint_of_json
from relay_bridge.core.protocol import Payload, Span
from relay_bridge.core.store import Session, ToolRecord

Attrs = dict[str, Any]

DEFAULT_SERVICE = "webmcp-page"
PAYLOAD_MAX = 2048  # autotel-webmcp's default cut for captured text; the page's maxPayloadLength decides first
DESCRIPTION_MAX = 2048


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
    return round(epoch_ms * 1_000_000)


def cut(text: str, limit: int = PAYLOAD_MAX) -> str:
    """001's cut: the head, then `...[N chars]` with the full length (UTF-16 units, as JavaScript counts)."""
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    if units <= limit:
        return text
    head = text.encode("utf-16-le", "surrogatepass")[: limit * 2].decode("utf-16-le", "ignore")
    return f"{head}...[{units} chars]"


def _js_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def parse_resource_attributes(text: str | None) -> Attrs:
    """OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs separated by commas, values percent-decoded; bad pairs skipped."""
    attrs: Attrs = {}
    for item in (text or "").split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if sep and key:
            attrs[unquote(key)] = unquote(value.strip())
    return attrs


def base_resource(service: str | None = None, environ: dict[str, str] | None = None) -> Attrs:
    """What the user says about the service: OTEL_RESOURCE_ATTRIBUTES, then `service.name` from `--otlp-service`,
    else OTEL_SERVICE_NAME, else the `service.name` in OTEL_RESOURCE_ATTRIBUTES, else `webmcp-page`."""
    env = os.environ if environ is None else environ
    attrs = parse_resource_attributes(env.get("OTEL_RESOURCE_ATTRIBUTES"))
    attrs["service.name"] = service or env.get("OTEL_SERVICE_NAME") or attrs.get("service.name") or DEFAULT_SERVICE
    return attrs


def resource(session: Session, base: Attrs | None = None) -> Attrs:
    """The user's resource attributes plus the page session's own (which name the page, so they win)."""
    info = session.info
    attrs: Attrs = dict(base) if base is not None else {"service.name": DEFAULT_SERVICE}
    attrs.update(
        {
            "webmcp.page.origin": info.origin,
            "webmcp.page.path": info.path,
            "webmcp.session.id": info.id,
            "webmcp.session.context": info.context,
            "webmcp.agent": session.agent,
        }
    )
    if info.userAgent:
        attrs["user_agent.original"] = info.userAgent
    if info.via:
        attrs["webmcp.session.via"] = info.via
    return attrs


@lru_cache(maxsize=256)
def _parsed(descriptor: bytes) -> dict[str, Any]:
    """A descriptor's JSON, parsed once per distinct descriptor (every call span of a tool reads it; never mutated)."""
    try:
        value = json.loads(descriptor)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _descriptor(record: ToolRecord | None) -> dict[str, Any]:
    return _parsed(record.descriptor) if record is not None and record.descriptor else {}


_computed_fingerprint = lru_cache(maxsize=256)(fingerprint_of_json)


def fingerprint(record: ToolRecord | None) -> str | None:
    """001's descriptor fingerprint: the agent's own (with the handler under fingerprintHandler), else computed
    from the descriptor (once per distinct descriptor)."""
    if record is None:
        return None
    return record.fingerprint or _computed_fingerprint(record.descriptor)


def tool_facts(record: ToolRecord | None) -> Attrs:
    """Facts about the tool as registered, on every span that names it."""
    if record is None:
        return {}
    attrs: Attrs = {"gen_ai.tool.type": "function"}
    descriptor = _descriptor(record)
    description = descriptor.get("description")
    if isinstance(description, str) and description:
        attrs["gen_ai.tool.description"] = cut(description, DESCRIPTION_MAX)
    title = descriptor.get("title")
    if isinstance(title, str) and title:
        attrs["webmcp.tool.title"] = title
    # 001: always a boolean; true when a non-empty title differs from the name the agent calls.
    attrs["webmcp.tool.label_mismatch"] = isinstance(title, str) and bool(title) and title != record.name
    sent = list((record.annotationsSent or {}).keys())
    if sent:
        attrs["webmcp.annotations.sent"] = ",".join(sent)  # 001's comma string, keys in the order sent
    if record.annotationsKept is not None:
        dropped = [k for k in sent if k not in record.annotationsKept]
        if dropped:
            attrs["webmcp.annotations.dropped"] = ",".join(dropped)
    fp = fingerprint(record)
    if fp:
        attrs["webmcp.tool.descriptor"] = fp
    return attrs


def call_span(session: Session, span: Span, payload: Payload | None = None, base: Attrs | None = None) -> SpanSpec:
    sid = session.id
    record = session.tools.get(span.tool)
    attrs: Attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": span.tool,
        "webmcp.tool.name": span.tool,
        "webmcp.installation.id": sid,
        "webmcp.call.id": f"{sid}#{span.seq}",
        "webmcp.execute.seq": span.seq + 1,  # 001 counts calls from 1; the wire's seq counts from 0
        "mcp.tool.arguments.size": span.inputBytes,
        "mcp.tool.result.size": span.resultBytes,
        "webmcp.result.bytes": span.resultBytes,
        "webmcp.wall_ms": span.wallMs,
        "webmcp.blocking_ms": span.blockingMs,
        "webmcp.tokens.estimated": span.estTokens,
        "webmcp.result.image.size": span.imageBytes,
        "webmcp.synthetic": span.synthetic,
        "webmcp.result.serializable": span.serializable,
    }
    if span.gapSincePrevCallMs is not None:
        attrs["webmcp.host_gap_ms"] = span.gapSincePrevCallMs
    for name, key in (
        ("resultType", "webmcp.result.type"),
        ("envelope", "webmcp.result.envelope"),
        ("substituted", "webmcp.result.substituted"),
        ("depth", "webmcp.execute.depth"),
    ):
        value = getattr(span, name)
        if value is not None:
            attrs[key] = value
    if span.consent is not None:  # this project's extra: the consent recorded before this call, on the call
        attrs["webmcp.call.consent.granted"] = span.consent == "granted"
        attrs["webmcp.call.consent.label_unrelated"] = bool(span.consentMismatch)
    if span.refusal is not None:
        attrs["webmcp.result.refused"] = True
        attrs["webmcp.result.refusal"] = span.refusal
    parent = None
    if span.parent is not None:
        parent = span_id(sid, span.parent)
        parent_span = session.stats.ring.get(span.parent)
        if parent_span is not None:
            attrs["webmcp.execute.parent"] = parent_span.tool
    attrs.update(tool_facts(record))
    if payload is not None:  # opt-in capture, already cut by the page at its maxPayloadLength (001's form)
        if payload.arguments is not None:
            attrs["gen_ai.tool.call.arguments"] = attrs["webmcp.input"] = payload.arguments
        if payload.result is not None:
            attrs["gen_ai.tool.call.result"] = attrs["webmcp.result"] = payload.result
        if span.isError and payload.error is not None:
            attrs["webmcp.error.message"] = payload.error
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
        resource=resource(session, base),
        error_type=error_type,
        # span.error is already what the page's errorPolicy lets out (message, name or nothing).
        error_message=span.error,
    )


def tool_span(session: Session, record: ToolRecord, change: str, at: float, base: Attrs | None = None) -> SpanSpec:
    """A registration (`webmcp.tool.register`, also a refused one) or a withdrawal (`webmcp.tool.withdraw`)."""
    attrs: Attrs = {
        "webmcp.tool.name": record.name,
        "gen_ai.tool.name": record.name,
        "webmcp.installation.id": session.id,
        "webmcp.tool.change": change,
        "webmcp.tool.schema.size": record.schemaBytes,
        "webmcp.tool.internal": record.internal,
    }
    if change == "registered":
        descriptor = _descriptor(record)
        description = descriptor.get("description")
        attrs["webmcp.tool.description.length"] = _js_length(
            description if isinstance(description, str) else "" if description is None else str(description)
        )
        attrs["webmcp.tool.has_input_schema"] = "inputSchema" in descriptor
        attrs.update(tool_facts(record))
        if record.redefining:
            attrs["webmcp.tool.redefined"] = True  # only on the registration that redefined (001)
    error_message = None
    if record.rejected:
        attrs["webmcp.tool.rejected"] = True
        if session.config.errorPolicy == "message":
            error_message = record.rejected
    when = _ns(session.epoch(at))
    kind = "webmcp.tool.register" if change == "registered" else "webmcp.tool.withdraw"
    return SpanSpec(
        name=kind,
        trace_id=trace_id(session.id),
        span_id=span_id(session.id, f"{change}:{record.name}:{at}"),
        parent_id=None,
        start_ns=when,
        end_ns=when,
        attributes=attrs,
        resource=resource(session, base),
        error_type="registration_rejected" if record.rejected else None,
        error_message=error_message,
    )


def install_span(session: Session, at_epoch_ms: float, base: Attrs | None = None) -> SpanSpec:
    """`webmcp.install`: the agent is in the page (a session's first hello), so a trace with no registrations
    says "installed, nothing registered" rather than nothing at all."""
    when = _ns(at_epoch_ms)
    return SpanSpec(
        name="webmcp.install",
        trace_id=trace_id(session.id),
        span_id=span_id(session.id, "install"),
        parent_id=None,
        start_ns=when,
        end_ns=when,
        attributes={"webmcp.installation.id": session.id, "webmcp.agent": session.agent, "webmcp.session.context": session.info.context},
        resource=resource(session, base),
    )


def consent_span(session: Session, detail: dict[str, Any], at: float, base: Attrs | None = None) -> SpanSpec | None:
    """`webmcp.consent`, when the page records the consent dialogue (recordConsent), not on the next call.
    `webmcp.consent.mismatch` is 001's string comparison (shown != resolved); this project's word-aware check
    ("the label does not name this tool, its title or description") is `webmcp.consent.label_unrelated`."""
    shown, resolved = detail.get("shown"), detail.get("resolved")
    if not isinstance(resolved, str) or not isinstance(shown, str):
        return None
    attrs: Attrs = {
        "webmcp.installation.id": session.id,
        "webmcp.consent.shown": shown,
        "webmcp.consent.resolved": resolved,
        "gen_ai.tool.name": resolved,
        "webmcp.consent.granted": bool(detail.get("granted")),
        "webmcp.consent.mismatch": shown != resolved,
        "webmcp.consent.label_unrelated": bool(detail.get("mismatch")),
    }
    fp = fingerprint(session.tools.get(resolved))
    if fp:
        attrs["webmcp.tool.descriptor"] = fp
    when = _ns(session.epoch(at))
    return SpanSpec(
        name="webmcp.consent",
        trace_id=trace_id(session.id),
        span_id=span_id(session.id, f"consent:{resolved}:{at}"),
        parent_id=None,
        start_ns=when,
        end_ns=when,
        attributes=attrs,
        resource=resource(session, base),
    )
