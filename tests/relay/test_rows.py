"""Span rows: a spans frame may carry its spans as rows (protocol.SpanRow: Span's values in its field order, without
sessionId, the optional tail left out), which decode to exactly the Spans the objects decode to; the welcome says
the relay reads them. page_agent/test/rows.test.mjs holds the agent's side; test_frames_mirror.py the field order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from relay_bridge.core import protocol as p
from relay_bridge.core import synth

SID = "0a1b2c3d"
VECTORS = sorted((Path(__file__).parent.parent / "vectors" / "aggregate").glob("*.json"))
REQUIRED = [f.name for f in msgspec.structs.fields(p.SpanRow) if f.required]


def row_of(span: dict[str, Any]) -> list[Any]:
    """A span as the agent's spanRow writes it: every field in order, the null tail after the required ones cut."""
    row = [span.get(name) for name in p.SPAN_ROW_FIELDS]
    while len(row) > len(REQUIRED) and row[-1] is None:
        row.pop()
    return row


def decoded(frame: dict[str, Any]) -> p.Spans:
    out = p.decode(json.dumps(frame))
    assert isinstance(out, p.Spans), out
    return out


def vector_spans() -> list[dict[str, Any]]:
    spans = []
    for path in VECTORS:
        for step in json.loads(path.read_text())["steps"]:
            if step["op"] == "span":
                spans.append({**step["span"], "sessionId": SID})
    return spans


def test_a_row_decodes_to_the_span_its_object_decodes_to() -> None:
    spans = vector_spans()
    assert len(spans) > 50 and {k for s in spans for k in s} - {"sessionId"} > set(REQUIRED), "the vectors use the optional fields too"
    for i in range(0, len(spans), p.MAX_SPANS_PER_FRAME):
        chunk = spans[i : i + p.MAX_SPANS_PER_FRAME]
        as_objects = decoded({"type": "spans", "session": SID, "spans": chunk, "floor": 3, "lost": 1})
        as_rows = decoded({"type": "spans", "session": SID, "rows": [row_of(s) for s in chunk], "floor": 3, "lost": 1})
        assert as_rows == as_objects
        assert as_rows.rows is None, "the rows became spans"


def test_a_row_is_about_a_third_of_the_object() -> None:
    span = synth.span(SID, 7, "search_products", 1234.5678, 12.25, gap=3.5)
    assert len(json.dumps(row_of(span))) * 2 < len(json.dumps(span))


def test_a_row_under_the_frame_s_session_only() -> None:
    # A row has no sessionId of its own: it cannot name another session, whatever it holds.
    span = synth.span(SID, 0, "t", 1.0, 2.0)
    frame = decoded({"type": "spans", "session": "ffffffff", "rows": [row_of(span)]})
    assert [s.sessionId for s in frame.spans] == ["ffffffff"]


@pytest.mark.parametrize(
    ("rows", "spans", "why"),
    [
        ([[0, "t"]], None, "shorter than the required fields"),
        ([row_of(synth.span(SID, 0, "t", 1.0, 2.0)) + [None] * 13 + ["x"]], None, "longer than SpanRow"),
        ([["0", *row_of(synth.span(SID, 0, "t", 1.0, 2.0))[1:]]], None, "a seq that is not a number"),
        ([row_of(synth.span(SID, 0, "t" * 129, 1.0, 2.0))], None, "a tool name over the limit"),
        ([row_of(synth.span(SID, 0, "t", -1.0, 2.0))], None, "a negative clock"),
        ([row_of(synth.span(SID, 0, "t", 1.0, 2.0))] * (p.MAX_SPANS_PER_FRAME + 1), None, "more rows than a frame may carry"),
        ([row_of(synth.span(SID, 0, "t", 1.0, 2.0))], [synth.span(SID, 1, "t", 1.0, 2.0)], "rows and spans together"),
        ({"0": 1}, None, "rows that are not a list"),
    ],
)
def test_a_bad_row_refuses_the_frame(rows: Any, spans: list[dict[str, Any]] | None, why: str) -> None:
    frame: dict[str, Any] = {"type": "spans", "session": SID, "rows": rows}
    if spans is not None:
        frame["spans"] = spans
    out = p.decode(json.dumps(frame))
    assert isinstance(out, p.Rejection), why
    assert out.code in (p.Code.INVALID, p.Code.LIMIT), (why, out)


def test_the_welcome_says_the_relay_reads_rows() -> None:
    assert json.loads(msgspec.json.encode(p.Welcome(p.PROTOCOL, "wmcp-top/test")))["rows"] is True


def test_bloat_facts_without_their_zero_figures() -> None:
    short = p.decode(json.dumps({"type": "facts", "session": SID, "seq": 3, "facts": {"bloat": {"textBytes": 5, "base64Bytes": 4, "base64Runs": 1}}}))
    long = p.decode(
        json.dumps(
            {
                "type": "facts",
                "session": SID,
                "seq": 3,
                "facts": {
                    "bloat": {"textBytes": 5, "whitespaceBytes": 0, "repeatedKeyBytes": 0, "repeatedKeyRows": 0, "base64Bytes": 4, "base64Runs": 1}
                },
            }
        )
    )
    assert isinstance(short, p.FactsFrame) and short == long
    assert isinstance(p.decode(json.dumps({"type": "facts", "session": SID, "seq": 3, "facts": {"bloat": {"base64Bytes": 4}}})), p.Rejection), (
        "textBytes stays required"
    )
