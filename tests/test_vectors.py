"""Python against the shared vectors (the JavaScript agent reads the same files)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from relay_bridge.core.measure import call_size, error_text, js_stringify, registered_descriptor, result_facts, schema_bytes, utf8_len
from relay_bridge.core.protocol import Span
from relay_bridge.core.stats import SessionStats
from relay_bridge.core.units import fmt_bytes, fmt_count, fmt_duration, fmt_ms
from relay_bridge.exports.trace import span_events

VECTORS = Path(__file__).parent / "vectors"


def value_of(marker: object) -> tuple[object, bool]:
    """JSON cannot hold JavaScript's undefined, NaN or Infinity: the vectors spell them as markers."""
    if marker == {"$undefined": True}:
        return None, True
    if isinstance(marker, dict) and set(marker) == {"$number"}:
        return float(marker["$number"].replace("Infinity", "inf")), False
    return marker, False


AGGREGATE = sorted((VECTORS / "aggregate").glob("*.json"))


def run_steps(doc: dict) -> SessionStats:
    stats = SessionStats(doc["buffer"])
    for step in doc["steps"]:
        match step["op"]:
            case "register":
                stats.register(step["name"], step["schemaBytes"], step.get("internal", False))
            case "unregister":
                stats.unregister(step["name"])
            case "span":
                stats.add(msgspec.convert(step["span"], Span))
            case "unsampled":
                stats.set_unsampled(stats.totals.unsampledCalls + 1)
            case "update":
                stats.update_blocking(step["seq"], step["blockingMs"])
            case "reset":
                stats.reset()
    return stats


def test_there_are_enough_cases() -> None:
    assert len(AGGREGATE) >= 12


@pytest.mark.parametrize("path", AGGREGATE, ids=lambda p: p.stem)
def test_aggregate_vector(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    stats = run_steps(doc)
    expect = doc["expect"]
    assert stats.aggregates() == expect["aggregates"]
    assert stats.report_rows() == expect["reportTools"]
    assert stats.totals_dict() == expect["totals"]
    assert stats.summary() == expect["summary"]
    trace = [{k: e[k] for k in ("name", "cat", "ts", "dur", "tid")} for e in span_events(list(stats.ring.values()), doc["session"]["timeOrigin"])]
    assert trace == expect["trace"]


def test_vectors_by_hand() -> None:
    """A few expected values worked out by hand, so the frozen files are not only Python's own word."""
    doc = json.loads((VECTORS / "aggregate" / "002-sequential-gaps.json").read_text())
    # schemas 412 + 233 = 645 B -> ceil(645/4) = 162 tokens; walls 10 + 4 + 20 ms; results 6300 B;
    # tokens 3 x ceil(20/4) + 250 + 75 + 1250 = 1590; gaps 1000 + 3000 ms.
    assert doc["expect"]["summary"] == "schemas 645B (~162 tok) · tools 34ms · payloads 6.3KB (~1.6K tok) · host gaps 4.00s"
    doc = json.loads((VECTORS / "aggregate" / "013-percentiles.json").read_text())
    # wall times are 1..20 (each once): sorted[min(19, floor(0.5*20))] = sorted[10] = 11, sorted[19] = 20
    row = doc["expect"]["aggregates"][0]
    assert (row["minMs"], row["p50Ms"], row["p95Ms"], row["maxMs"]) == (1.0, 11.0, 20.0, 20.0)
    doc = json.loads((VECTORS / "aggregate" / "017-report-rows.json").read_text())
    # two walls 3 and 8: p50 = sorted[1] = 8; only "pair" has spans, the internal tool never has a row
    assert [(r["tool"], r["p50Ms"]) for r in doc["expect"]["reportTools"]] == [("pair", 8.0)]
    doc = json.loads((VECTORS / "aggregate" / "012-ring-eviction.json").read_text())
    row = doc["expect"]["aggregates"][0]
    assert row["calls"] == 7 and row["maxMs"] == 6.0  # the 50 ms call was evicted from a 4-span ring
    doc = json.loads((VECTORS / "aggregate" / "007-image.json").read_text())
    # 130,000 base64 chars -> 97,500 decoded bytes -> 24,375 tokens; 450 text bytes -> 113 tokens
    span = doc["steps"][1]["span"]
    assert (span["estImageTokens"], span["estTextTokens"]) == (24_375, 113)


def test_durations_tell_numbers_apart() -> None:
    """Issue 34: 127 ms was `0.1s`, compare printed `0.1s→0.1s` for 100 → 140 ms, a p50 of 9.96 ms was `10.0ms`."""
    assert fmt_duration(127) == "127ms"
    assert fmt_duration(100) != fmt_duration(140)
    assert fmt_ms(9.96) == "10ms" and fmt_ms(8.5) == "8.5ms" and fmt_ms(None) == "–"
    assert fmt_duration(1270) == "1.27s" and fmt_duration(12_700) == "12.7s"
    # fmt_ms and fmt_duration are one definition: the same text for every vector value
    for case in json.loads((VECTORS / "format.json").read_text())["duration"]:
        assert fmt_ms(case["value"]) == case["expect"]


@pytest.mark.parametrize("kind", ["bytes", "count", "duration"])
def test_format_vectors(kind: str) -> None:
    fn = {"bytes": fmt_bytes, "count": fmt_count, "duration": fmt_duration}[kind]
    cases = json.loads((VECTORS / "format.json").read_text())[kind]
    assert [fn(c["value"]) for c in cases] == [c["expect"] for c in cases]


def test_measure_vectors() -> None:
    for case in json.loads((VECTORS / "measure.json").read_text(encoding="utf-8")):
        value, undefined = value_of(case["result"])
        facts = result_facts(value, undefined=undefined)
        size = call_size(utf8_len(js_stringify(case["input"])), facts.resultBytes, facts.imageBytes)
        got = {
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
        }
        assert got == case["expect"], case["name"]


def test_measure_by_hand() -> None:
    assert result_facts(float("nan")).resultBytes == 3  # Chromium writes String(NaN)
    assert js_stringify({"a": 1e21, "b": 1e-7}) == '{"a":1e+21,"b":1e-7}'
    assert result_facts("").resultBytes == len("Operation succeeded")
    assert result_facts({"content": [{"type": "text", "text": "é"}]}).resultBytes == len('{"content":[{"type":"text","text":"é"}]}'.encode())
    assert result_facts("日本").resultBytes == 6


def test_error_vectors() -> None:
    for case in json.loads((VECTORS / "errors.json").read_text(encoding="utf-8")):
        assert error_text(case["policy"], case["thrown"]["name"], case["thrown"]["message"]) == case["expect"]


@pytest.mark.parametrize("case", json.loads((VECTORS / "fingerprint.json").read_text())["cases"], ids=lambda c: c["name"])
def test_descriptor_fingerprint(case: dict) -> None:
    from relay_bridge.core.fingerprint import descriptor_fingerprint

    assert descriptor_fingerprint(case["tool"], case.get("handler")) == case["expect"]


def test_schema_vectors() -> None:
    """The host's copy of a tool (getTools(), DevTools toolsAdded) weighs what the page registered, in both
    languages; the tag-first route (the page's own descriptor) weighs the same where nothing was dropped."""
    cases = json.loads((VECTORS / "schema.json").read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 6
    for case in cases:
        shape = registered_descriptor(case["listed"])
        assert shape == case["expect"]["descriptor"], case["name"]
        assert schema_bytes(shape) == case["expect"]["schemaBytes"], case["name"]
        assert (schema_bytes(case["registered"]) == case["expect"]["schemaBytes"]) is case["sameByBothRoutes"], case["name"]
