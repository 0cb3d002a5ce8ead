"""The diagnosis against the shared vectors (tests/vectors/findings/): every rule's formula, pinned by hand-made
inputs whose arithmetic each vector's description spells out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relay_bridge.findings import diagnose
from relay_bridge.findings.document import finding_record
from tests.findings.builders import session_input

VECTORS = sorted((Path(__file__).parent.parent / "vectors" / "findings").glob("*.json"))
RULES = {
    "images.reencode",
    "bloat.whitespace",
    "bloat.repeated-keys",
    "bloat.base64",
    "schema.unused",
    "schema.description",
    "schema.enums",
    "schema.similar",
    "schema.diverged",
    "time.host-gaps",
    "time.slow-tool",
    "time.long-tasks",
    "errors.rate",
    "errors.schema",
    "errors.refused",
    "repeats",
}


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    sessions = [session_input(s) for s in doc["sessions"]]
    origins = {s.id: s.origin for s in sessions}
    found = diagnose(sessions)
    assert [finding_record(f, n, origins) for n, f in enumerate(found, 1)] == doc["expect"]


def test_every_rule_has_a_vector() -> None:
    seen = {f["rule"] for path in VECTORS for f in json.loads(path.read_text(encoding="utf-8"))["expect"]}
    # the security review (lint.*) fires on these descriptors too; its own vectors are tests/vectors/lint
    assert {r for r in seen if not r.startswith("lint.")} == RULES


def test_vectors_pin_the_stated_arithmetic() -> None:
    """A few of the descriptions' sums, read back: a regenerated vector cannot quietly move them."""
    by = {p.stem: json.loads(p.read_text(encoding="utf-8"))["expect"] for p in VECTORS}
    image = by["images"][0]["saving"]
    assert (image["perCall"], image["calls"], image["tokens"], image["bytes"]) == (40500, 4, 162000, 648000)
    assert by["images"][0]["evidence"]["pixelTokens"] == 5120 and by["images"][0]["evidence"]["fitPixelTokens"] == 2185
    assert [f["saving"]["tokens"] for f in by["bloat"]] == [7500, 6250, 4500]
    assert [f["saving"]["tokens"] for f in by["schema"] if not f["rule"].startswith("lint.")] == [775, 119, 84]
    assert [f["saving"].get("ms") for f in by["timing"]] == [4000.0, 2400.0, 300.0]
    assert [(f["rule"], f["saving"]["tokens"]) for f in by["errors"]] == [
        ("errors.rate", 300),
        ("errors.schema", 140),
        ("errors.schema", 90),
        ("errors.schema", 30),
        ("errors.refused", 26),
    ]
    assert by["repeats"][0]["saving"]["tokens"] == 903
    assert [f["rule"] for f in by["ranking"]] == ["schema.unused", "time.host-gaps"]
