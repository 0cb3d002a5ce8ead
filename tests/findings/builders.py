"""The contract's facts as plain Python objects, built on the test side (branch diag owns the real structs:
relay_bridge.core.protocol's `Facts` with the same snake_case attributes), and vector JSON -> the engine's input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from relay_bridge.findings.inputs import SessionInput, ToolInput


@dataclass
class ImageFacts:
    mime: str
    width: int
    height: int
    bytes: int
    jpeg_bytes: int
    fit_bytes: int
    fit_width: int
    fit_height: int


@dataclass
class BloatFacts:
    text_bytes: int
    whitespace_bytes: int = 0
    repeated_key_bytes: int = 0
    repeated_key_rows: int = 0
    base64_bytes: int = 0
    base64_runs: int = 0
    truncated: bool | None = None


@dataclass
class SchemaFacts:
    violations: int
    constraint: str | None = None
    path: str | None = None


@dataclass
class RepeatFacts:
    of: int


@dataclass
class RefusedFacts:
    by: str


@dataclass
class Facts:
    image: ImageFacts | None = None
    bloat: BloatFacts | None = None
    schema: SchemaFacts | None = None
    repeat: RepeatFacts | None = None
    refused: RefusedFacts | None = None


PARTS = {"image": ImageFacts, "bloat": BloatFacts, "schema": SchemaFacts, "repeat": RepeatFacts, "refused": RefusedFacts}


def facts(doc: dict[str, Any]) -> Facts:
    return Facts(**{k: PARTS[k](**v) for k, v in doc.items() if v is not None})


@dataclass
class Span:
    """The fields of a wire span the rules read (relay_bridge.findings.inputs.SpanInput)."""

    seq: int
    tool: str
    wallMs: float = 10.0
    estTokens: int = 0
    estInputTokens: int = 0
    imageBytes: int = 0
    isError: bool = False
    gapSincePrevCallMs: float | None = None
    blockingMs: float = 0.0
    inputBytes: int = 0
    resultBytes: int = 0


def session_input(doc: dict[str, Any]) -> SessionInput:
    """A vector's session (tests/vectors/README.md, `findings/`) as the engine's input."""
    tools = tuple(
        ToolInput(
            t["name"],
            t.get("calls", 0),
            t.get("errors", 0),
            t.get("schemaBytes", 0),
            t.get("registered", True),
            t.get("internal", False),
            t.get("counted", 0),
            t.get("descriptor"),
        )
        for t in doc.get("tools", [])
    )
    spans = tuple(
        Span(
            s["seq"],
            s["tool"],
            s.get("wallMs", 10.0),
            s.get("estTokens", 0),
            s.get("estInputTokens", 0),
            s.get("imageBytes", 0),
            s.get("isError", False),
            s.get("gapMs"),
            s.get("blockingMs", 0.0),
            # bytes the span carried: a vector that gives only tokens carries the bytes those tokens take
            s.get("inputBytes", 4 * s.get("estInputTokens", 0)),
            s.get("resultBytes", 4 * (s.get("estTokens", 0) - s.get("estInputTokens", 0))),
        )
        for s in doc.get("spans", [])
    )
    wall = doc.get("wallMs", sum(s.wallMs for s in spans))
    gaps = doc.get("hostGapMs", sum(s.gapSincePrevCallMs or 0.0 for s in spans))
    blocking = doc.get("blockingMs", sum(s.blockingMs for s in spans))
    return SessionInput(
        doc["id"],
        doc.get("origin", "https://example.test"),
        tools,
        spans,
        {int(k): facts(v) for k, v in doc.get("facts", {}).items()},
        wall,
        gaps,
        blocking,
        doc.get("calls", len(spans)),
    )


def snake(doc: dict[str, Any]) -> dict[str, Any]:
    """A facts frame's camelCase part names (the wire) as the contract's snake_case attributes."""
    return {"".join("_" + c.lower() if c.isupper() else c for c in k): v for k, v in doc.items()}


def demo_facts(seconds: float) -> dict[str, dict[int, Facts]]:
    """The facts the demo's pages send in its first `seconds` (with the `facts` frame on the wire), by session and
    seq. Facts use no random numbers, so the rest of the feed is the same with or without them."""
    from relay_bridge.lanes import demo

    saved = demo.FACTS_ON_WIRE
    demo.FACTS_ON_WIRE = True
    try:
        frames = [f for _, f in demo.frames_until(seconds) if f["type"] == "facts"]
    finally:
        demo.FACTS_ON_WIRE = saved
    out: dict[str, dict[int, Facts]] = {}
    for f in frames:
        out.setdefault(f["session"], {})[f["seq"]] = facts({k: snake(v) for k, v in f["facts"].items()})
    return out


def attach(session: Any, by_seq: dict[int, Facts]) -> None:
    """Put facts built here where the store keeps a session's (`session.facts`): the engine reads both kinds
    through relay_bridge.findings.inputs' protocols, so these stand in for relay_bridge.core.protocol.Facts."""
    session.facts = by_seq


def with_demo_facts(store: Any, seconds: float) -> Any:
    """`store` (tui.feed.demo_store) with the demo's facts attached where the store keeps them (`session.facts`)."""
    for sid, by_seq in demo_facts(seconds).items():
        if sid in store.sessions:
            attach(store.sessions[sid], by_seq)
    return store
