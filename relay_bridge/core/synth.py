"""Well-formed frames built from a few numbers: for the demo feed, the benchmarks and the tests.

Everything here is synthetic and deterministic; sizes are derived with the same rules as a real agent
(measure.call_size), so a synthetic span is indistinguishable on the wire from a measured one.
"""

from __future__ import annotations

from typing import Any

from relay_bridge.core.measure import call_size
from relay_bridge.core.protocol import PROTOCOL


def hello(
    session: str,
    origin: str = "http://127.0.0.1:8000",
    *,
    context: str = "top",
    visibility: str = "visible",
    title: str = "",
    path: str = "/",
    time_origin: float = 1_764_000_000_000.0,
    lost: int = 0,
    via: str | None = None,
    agent: str = "wmcp-top-agent/0.1.0",
    resume: str | None = None,
) -> dict[str, Any]:
    info: dict[str, Any] = {
        "id": session,
        "origin": origin,
        "path": path,
        "title": title,
        "userAgent": "synthetic",
        "context": context,
        "visibility": visibility,
        "attachedAt": time_origin,
        "timeOrigin": time_origin,
    }
    if via is not None:
        info["via"] = via
    frame = {
        "type": "hello",
        "protocol": PROTOCOL,
        "agent": agent,
        "session": info,
        "config": {"sample": 1, "buffer": 500, "errorPolicy": "message"},
        "lost": lost,
    }
    if resume is not None:
        frame["resume"] = resume
    return frame


def span(
    session: str,
    seq: int,
    tool: str,
    invoked_at: float,
    wall_ms: float,
    *,
    result_bytes: int = 100,
    input_bytes: int = 20,
    image_bytes: int = 0,
    gap: float | None = None,
    is_error: bool = False,
    error: str | None = None,
    blocking_ms: float = 0.0,
    synthetic: bool = True,
    overlapped: bool = False,
    content_types: dict[str, int] | None = None,
    depth: int = 0,
    parent: int | None = None,
) -> dict[str, Any]:
    size = call_size(input_bytes, result_bytes, image_bytes)
    return {
        "sessionId": session,
        "seq": seq,
        "tool": tool,
        "invokedAt": invoked_at,
        "settledAt": invoked_at + wall_ms,
        "wallMs": wall_ms,
        "blockingMs": blocking_ms,
        "inputBytes": size.inputBytes,
        "resultBytes": size.resultBytes,
        "contentTypes": content_types if content_types is not None else ({"text": 1, "image": 1} if image_bytes else {"text": 1}),
        "imageBytes": size.imageBytes,
        "estInputTokens": size.estInputTokens,
        "estTextTokens": size.estTextTokens,
        "estImageTokens": size.estImageTokens,
        "estTokens": size.estTokens,
        "isError": is_error,
        "error": error if is_error else None,
        "gapSincePrevCallMs": gap,
        "synthetic": synthetic,
        "serializable": True,
        "resultType": "object",
        "envelope": True,
        "substituted": False,
        "depth": depth,
        "parent": parent,
        "overlapped": overlapped,
    }


def tool(
    session: str,
    name: str,
    at: float,
    *,
    description: str = "",
    schema: dict[str, Any] | None = None,
    annotations: dict[str, Any] | None = None,
    kept: dict[str, Any] | None = None,
    change: str = "registered",
    rejected: str | None = None,
) -> dict[str, Any]:
    import json

    descriptor = {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}
    if annotations:
        descriptor["annotations"] = annotations
    frame: dict[str, Any] = {"type": "tool", "session": session, "change": change, "name": name, "at": at}
    if change == "registered":
        frame["schemaBytes"] = len(json.dumps(descriptor, separators=(",", ":"), ensure_ascii=False).encode())
        frame["descriptor"] = descriptor
        frame["annotationsSent"] = annotations or {}
        frame["annotationsKept"] = kept
        if rejected:
            frame["rejected"] = rejected
    return frame


def spans_frame(session: str, spans: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"type": "spans", "session": session, "spans": spans, **extra}


def start_frame(session: str, calls: list[tuple[int, str, float]]) -> dict[str, Any]:
    return {"type": "start", "session": session, "calls": [{"seq": s, "tool": t, "invokedAt": at, "depth": 0, "parent": None} for s, t, at in calls]}


def status(session: str, phase: str, message: str = "", hints: list[str] | None = None, coverage: str | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "status", "session": session, "phase": phase, "message": message, "hints": hints or []}
    if coverage:
        frame["coverage"] = coverage
    return frame


def event(session: str, at: float, kind: str, **detail: Any) -> dict[str, Any]:
    return {"type": "event", "session": session, "at": at, "kind": kind, "detail": detail}
