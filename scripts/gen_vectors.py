"""Write tests/vectors/: the shared cases both implementations (Python and page_agent JS) must reproduce.

The inputs are written by hand below; the expected outputs are computed once by relay_bridge and then frozen in
the JSON files. tests/test_vectors.py checks Python against the files (and spot-checks a few by hand);
page_agent/test/vectors.test.mjs checks JavaScript against the same files. Re-run only when a definition
changes on purpose: `python scripts/gen_vectors.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import msgspec

from relay_bridge.core import synth
from relay_bridge.core.measure import call_size, result_facts
from relay_bridge.core.protocol import Span
from relay_bridge.core.stats import SessionStats
from relay_bridge.core.units import fmt_bytes, fmt_count, fmt_duration
from relay_bridge.exports.trace import span_events

OUT = ROOT / "tests" / "vectors"
SID = "0a1b2c3d"
T0 = 1_764_000_000_000.0


def S(seq: int, tool: str, at: float, wall: float, **kw: Any) -> dict[str, Any]:
    return {"op": "span", "span": synth.span(SID, seq, tool, at, wall, **kw)}


def reg(name: str, schema_bytes: int, at: float = 0.0, internal: bool = False) -> dict[str, Any]:
    step = {"op": "register", "name": name, "schemaBytes": schema_bytes, "at": at}
    if internal:
        step["internal"] = True
    return step


def run(steps: list[dict[str, Any]], buffer: int) -> dict[str, Any]:
    stats = SessionStats(buffer)
    for step in steps:
        op = step["op"]
        if op == "register":
            stats.register(step["name"], step["schemaBytes"], step.get("internal", False))
        elif op == "unregister":
            stats.unregister(step["name"])
        elif op == "span":
            stats.add(msgspec.convert(step["span"], Span))
        elif op == "unsampled":
            stats.set_unsampled(stats.totals.unsampledCalls + 1)
        elif op == "update":
            stats.update_blocking(step["seq"], step["blockingMs"])
        elif op == "reset":
            stats.reset()
        else:
            raise ValueError(op)
    trace = [{k: e[k] for k in ("name", "cat", "ts", "dur", "tid")} for e in span_events(list(stats.ring.values()), T0)]
    return {
        "aggregates": stats.aggregates(),
        "reportTools": stats.report_rows(),
        "totals": stats.totals_dict(),
        "summary": stats.summary(),
        "trace": trace,
    }


CASES: list[tuple[str, str, int, list[dict[str, Any]]]] = [
    (
        "001-single-call",
        "one tool, one call: the first call has no host gap",
        500,
        [
            reg("search", 412),
            S(0, "search", 100.0, 12.5, result_bytes=2048, input_bytes=30),
        ],
    ),
    (
        "002-sequential-gaps",
        "three calls in a row; gaps are summed as host + model wait",
        500,
        [
            reg("search", 412),
            reg("get_item", 233),
            S(0, "search", 100.0, 10.0, result_bytes=1000),
            S(1, "get_item", 1110.0, 4.0, result_bytes=300, gap=1000.0),
            S(2, "search", 4114.0, 20.0, result_bytes=5000, gap=3000.0),
        ],
    ),
    (
        "003-overlapping",
        "two calls in flight at once land on separate trace lanes; the second has a null gap",
        500,
        [
            reg("slow", 150),
            reg("fast", 150),
            S(0, "slow", 0.0, 500.0, result_bytes=100),
            S(1, "fast", 100.0, 50.0, result_bytes=100, overlapped=True),
            S(2, "fast", 200.0, 50.0, result_bytes=100, overlapped=True),
            S(3, "fast", 900.0, 5.0, result_bytes=100, gap=400.0),
        ],
    ),
    (
        "004-errors-message",
        "errorPolicy message: thrown and isError results count as errors",
        500,
        [
            reg("pay", 300),
            S(0, "pay", 10.0, 3.0, is_error=True, error="card declined"),
            S(1, "pay", 100.0, 3.0, gap=87.0),
            S(2, "pay", 200.0, 3.0, gap=97.0, is_error=True, error="x" * 200),
        ],
    ),
    (
        "005-errors-name",
        "errorPolicy name: only the error's name is kept",
        500,
        [
            reg("pay", 300),
            S(0, "pay", 10.0, 3.0, is_error=True, error="TypeError"),
        ],
    ),
    (
        "006-errors-none",
        "errorPolicy none: the call counts as an error, no text kept",
        500,
        [
            reg("pay", 300),
            S(0, "pay", 10.0, 3.0, is_error=True, error=None),
        ],
    ),
    (
        "007-image",
        "an image payload: tokens at decoded size (base64 x 0.75 / 4)",
        500,
        [
            reg("snapshot", 200),
            S(0, "snapshot", 0.0, 40.0, result_bytes=130_450, image_bytes=130_000, content_types={"text": 1, "image": 1}),
        ],
    ),
    (
        "008-non-ascii",
        "UTF-8 byte counts for non-ASCII names and sizes (schema bytes of a tool named in Japanese)",
        500,
        [
            reg("検索", 517),
            S(0, "検索", 5.0, 2.25, result_bytes=3 * 333, input_bytes=27),
        ],
    ),
    (
        "009-sampling",
        "sample < 1: unsampled calls count in totals.calls only",
        500,
        [
            reg("search", 412),
            S(0, "search", 0.0, 10.0),
            {"op": "unsampled", "tool": "search"},
            {"op": "unsampled", "tool": "search"},
            S(1, "search", 300.0, 10.0, gap=90.0),
        ],
    ),
    (
        "010-reset",
        "reset clears spans and totals, keeps registered tools and their schema bytes",
        500,
        [
            reg("search", 412),
            reg("gone", 99),
            S(0, "search", 0.0, 10.0),
            S(1, "gone", 20.0, 10.0, gap=10.0),
            {"op": "reset"},
            S(2, "search", 1000.0, 7.0),
        ],
    ),
    (
        "011-unregister",
        "unregistration removes schema bytes; a tool with calls keeps its row",
        500,
        [
            reg("a", 100),
            reg("b", 200),
            reg("c", 300),
            S(0, "a", 0.0, 1.0),
            {"op": "unregister", "name": "a"},
            {"op": "unregister", "name": "c"},
        ],
    ),
    (
        "012-ring-eviction",
        "percentiles over the ring buffer only; counts since attach",
        4,
        [
            reg("t", 10),
            *[
                S(i, "t", i * 100.0, float(w), gap=None if i == 0 else 100.0 - prev)
                for i, (w, prev) in enumerate(zip([50, 1, 2, 3, 4, 5, 6], [0, 50, 1, 2, 3, 4, 5], strict=False))
            ],
        ],
    ),
    (
        "013-percentiles",
        "webmcp-profiler's quantile sorted[min(n-1, floor(p*n))]: p50 and p95 of 20 calls",
        500,
        [
            reg("t", 10),
            *[S(i, "t", i * 1000.0, float((i * 7) % 20 + 1), gap=None if i == 0 else 1000.0 - ((i - 1) * 7 % 20 + 1)) for i in range(20)],
        ],
    ),
    (
        "019-quantile-odd",
        "odd n, distinct values: floor(p*n), not round-to-nearest (p50 of 7 calls is sorted[3], the 4th fastest, not the 5th)",
        500,
        [
            reg("t", 10),
            *[S(i, "t", i * 1000.0, float((i * 3) % 7 + 1) * 10, gap=None if i == 0 else 1000.0 - ((i - 1) * 3 % 7 + 1) * 10) for i in range(7)],
        ],
    ),
    (
        "020-quantile-p95",
        "p95 of 50 distinct calls is sorted[47] (floor(47.5)); round-to-nearest would read sorted[48]",
        500,
        [
            reg("t", 10),
            *[S(i, "t", i * 1000.0, float((i * 11) % 50 + 1), gap=None if i == 0 else 1000.0 - ((i - 1) * 11 % 50 + 1)) for i in range(50)],
        ],
    ),
    (
        "014-late-blocking",
        "a Long-Task update arrives after the span; totals and the row follow",
        500,
        [
            reg("render", 120),
            S(0, "render", 0.0, 80.0, blocking_ms=0.0),
            {"op": "update", "seq": 0, "blockingMs": 55.5},
        ],
    ),
    (
        "015-big-totals",
        "units carry: MB payloads, K and M tokens, minutes of host gaps",
        500,
        [
            reg("export", 12_345),
            S(0, "export", 0.0, 9_950.0, result_bytes=999_960, input_bytes=4000),
            S(1, "export", 700_000.0, 1.0, result_bytes=4_200_000, gap=680_050.0),
        ],
    ),
    (
        "017-report-rows",
        "report tools[]: only tools with spans, the internal report tool excluded; p50 of two is the larger",
        500,
        [
            reg("get_perf_report", 900, internal=True),
            reg("idle", 50),
            reg("pair", 70),
            S(0, "pair", 0.0, 3.0),
            S(1, "pair", 10.0, 8.0, gap=7.0),
        ],
    ),
    (
        "016-nested",
        "a call made inside another tool's execute (depth 1, parent seq 0) overlaps its parent",
        500,
        [
            reg("outer", 100),
            reg("inner", 100),
            S(1, "inner", 5.0, 10.0, depth=1, parent=0, overlapped=True),
            S(0, "outer", 0.0, 20.0),
        ],
    ),
    (
        "018-terminal-call",
        "a call started from the terminal (invokedBy) is held and traced, but counts in no total, row, "
        "percentile or gap; the next agent call's gap runs from the last agent call",
        500,
        [
            reg("find", 200),
            S(0, "find", 0.0, 10.0, result_bytes=100),
            {"op": "span", "span": synth.span(SID, 1, "find", 20.0, 500.0, result_bytes=9000, synthetic=True) | {"invokedBy": "terminal"}},
            {"op": "update", "seq": 1, "blockingMs": 40.0},
            S(2, "find", 40.0, 30.0, result_bytes=300, gap=30.0),
        ],
    ),
    (
        "021-browser-refused",
        "a form call the browser refused before the page ran (outcome refused) is a call and an error, counted as "
        "refused, and in no duration: not in the tool's min/p50/p95/max nor the totals' wallMs",
        500,
        [
            reg("book_table", 300),
            S(0, "book_table", 0.0, 4.0, result_bytes=40),
            {
                "op": "span",
                "span": synth.span(
                    SID,
                    1,
                    "book_table",
                    100.0,
                    10.0,
                    gap=96.0,
                    is_error=True,
                    error="refused by the browser before the page ran: Form validation failed",
                )
                | {"outcome": "refused"},
            },
            S(2, "book_table", 300.0, 6.0, result_bytes=40, gap=190.0),
        ],
    ),
]

FORMATS: dict[str, list[float]] = {
    "bytes": [0, 1, 999, 1000, 1049, 1050, 9949, 9950, 9999, 10_000, 99_499, 99_500, 310_000, 999_499, 999_500, 1_000_000, 9_950_000, 12_345_678_901],
    "count": [0, 7, 999, 1000, 2450, 2500, 9949, 9950, 77_500, 999_999, 1_000_000, 2_450_000],
    "duration": [
        0,
        0.04,
        0.05,
        0.4,
        8.5,
        9.94,
        9.95,
        9.96,
        12.5,
        99.4,
        99.5,
        100,
        127,
        140,
        250,
        300,
        949.99,
        999.4,
        999.5,
        1270,
        9949,
        9994,
        9995,
        9999,
        12_700,
        39_000,
        99_949,
        99_950,
        127_000,
        599_499,
        599_500,
        3_725_000,
    ],
}

UNDEF = {"$undefined": True}
NAN = {"$number": "NaN"}
INF = {"$number": "-Infinity"}


def value_of(marker: Any) -> tuple[Any, bool]:
    """JSON cannot hold JavaScript's undefined, NaN or Infinity: the vectors spell them as markers."""
    if marker == UNDEF:
        return None, True
    if isinstance(marker, dict) and set(marker) == {"$number"}:
        return float(marker["$number"].replace("Infinity", "inf")), False
    return marker, False


MEASURES: list[tuple[str, Any, Any]] = [
    ("object", {"q": "tea"}, {"items": [1, 2, 3], "ok": True}),
    ("array", {}, [{"id": 1}, {"id": 2}]),
    ("string", {"q": "x"}, "plain text result"),
    ("empty-string", {}, ""),
    ("undefined", {}, UNDEF),
    ("null", {}, None),
    ("number", {"n": 5}, 42),
    ("boolean", {}, True),
    ("envelope", {"q": "é"}, {"content": [{"type": "text", "text": "héllo wörld"}]}),
    (
        "envelope-image",
        {},
        {"content": [{"type": "text", "text": "a chart"}, {"type": "image", "data": "iVBORw0KGgo" * 40, "mimeType": "image/png"}]},
    ),
    ("string-envelope", {}, json.dumps({"content": [{"type": "text", "text": "wrapped"}]}, separators=(",", ":"))),
    ("non-ascii", {"名前": "値"}, {"text": "日本語のテキスト 🍵"}),
    ("nested", {"a": {"b": [1, {"c": None}]}}, {"deep": {"deeper": {"deepest": ["x", "y"]}}}),
    ("number-nan", {}, NAN),
    ("number-negative-infinity", {}, INF),
    ("number-forms", {"n": 1e21}, {"big": 1e21, "small": 1e-7, "third": 0.1 + 0.2, "whole": 5.0, "huge": 123456789012345680000.0}),
]


def measure_case(name: str, inp: Any, result: Any) -> dict[str, Any]:
    value, undefined = value_of(result)
    facts = result_facts(value, undefined=undefined)
    from relay_bridge.core.measure import js_stringify, utf8_len

    size = call_size(utf8_len(js_stringify(inp)), facts.resultBytes, facts.imageBytes)
    return {
        "name": name,
        "input": inp,
        "result": result,
        "expect": {
            "inputBytes": size.inputBytes,
            "resultBytes": size.resultBytes,
            "resultType": facts.resultType,
            "envelope": facts.envelope,
            "substituted": facts.substituted,
            "contentTypes": facts.contentTypes,
            "imageBytes": size.imageBytes,
            "estInputTokens": size.estInputTokens,
            "estTextTokens": size.estTextTokens,
            "estImageTokens": size.estImageTokens,
            "estTokens": size.estTokens,
        },
    }


ERRORS = [
    ("message", {"name": "TypeError", "message": "card declined"}, "card declined"),
    ("message", {"name": "Error", "message": "é" * 250}, "é" * 199 + "…"),
    ("message", {"name": "Error", "message": "🍵" * 201}, "🍵" * 199 + "…"),
    ("message", {"name": "Error", "message": "🍵" * 200}, "🍵" * 200),
    ("message", {"name": "RangeError", "message": ""}, "RangeError"),
    ("name", {"name": "TypeError", "message": "secret detail"}, "TypeError"),
    ("none", {"name": "TypeError", "message": "secret detail"}, None),
]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    agg = OUT / "aggregate"
    agg.mkdir(exist_ok=True)
    for name, description, buffer, steps in CASES:
        doc = {
            "name": name,
            "description": description,
            "session": {"id": SID, "timeOrigin": T0},
            "buffer": buffer,
            "steps": steps,
            "expect": run(steps, buffer),
        }
        (agg / f"{name}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    fmt = {
        kind: [{"value": v, "expect": {"bytes": fmt_bytes, "count": fmt_count, "duration": fmt_duration}[kind](v)} for v in values]
        for kind, values in FORMATS.items()
    }
    (OUT / "format.json").write_text(json.dumps(fmt, indent=1) + "\n", encoding="utf-8")
    measures = [measure_case(*m) for m in MEASURES]
    (OUT / "measure.json").write_text(json.dumps(measures, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    errors = [{"policy": p, "thrown": t, "expect": e} for p, t, e in ERRORS]
    (OUT / "errors.json").write_text(json.dumps(errors, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(CASES)} aggregate cases, {sum(map(len, FORMATS.values()))} format, {len(measures)} measure, {len(errors)} error cases")


if __name__ == "__main__":
    main()
