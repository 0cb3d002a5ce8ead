"""Golden tests: crafted catalogs -> the exact terminal summary and JSON report, checked in under golden/.

Set WMCP_UPDATE_GOLDEN=1 to rewrite them after an intended change (then read the diff before keeping it).
Every report is also validated against relay_bridge/schema/footprint.v1.json, and every run is repeated to show
the JSON and the HTML are byte-identical.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from relay_bridge.lanes.footprint.files import read_demo

from .conftest import GOLDEN, ROOT, run_main, validate

F = "tests/footprint/fixtures/"
CASES = {
    "demo": ["--demo"],
    "nonascii": ["--input", F + "nonascii.json"],
    "duplicates": ["--input", F + "duplicates_a.json", "--input", F + "duplicates_b.json", "--input", "c=" + F + "duplicates_c.json"],
    "near_identical": ["--input", F + "near_identical.json"],
    "lint": ["--input", F + "lint.json", "--top", "3"],
    "xss": ["--input", F + "xss.json"],
    "no_schema": ["--input", F + "no_schema.json"],
    "poisoned": ["--input", "tests/fixtures/catalogs/poisoned.json"],  # the eight tools, one problem each
}
UPDATE = os.environ.get("WMCP_UPDATE_GOLDEN") == "1"


def _check(path: Path, text: str) -> None:
    if UPDATE:
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"missing golden {path.name}: run with WMCP_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs from its golden"


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)  # paths in the report are as given: keep them relative and stable
    outputs = []
    for n in (1, 2):
        run = tmp_path / str(n)
        run.mkdir()
        js, page = run / "report.json", run / "report.html"
        code, out, err = run_main([*CASES[case], "--json", str(js), "--html", str(page)], capsys)
        assert code == 0, err
        assert err == ""
        outputs.append((out.replace(str(run), "OUT"), js.read_bytes(), page.read_bytes()))
    assert outputs[0] == outputs[1], "two runs on the same input differ"
    out, js_bytes, _ = outputs[0]
    report = json.loads(js_bytes)
    validate(report)
    _check(GOLDEN / f"{case}.txt", out)
    _check(GOLDEN / f"{case}.json", js_bytes.decode("utf-8"))


def test_golden_facts_worth_stating_outright() -> None:
    """The goldens pin everything; these lines say what the crafted catalogs are for."""
    demo = json.loads((GOLDEN / "demo.json").read_text(encoding="utf-8"))
    # the report carries each tool's description and inputSchema as given (issue 17 item 9, as seed 003's do)
    sources = {(server.name, t["name"]): t for server in read_demo()[0] for t in server.tools}
    for row in demo["tools"]:
        given = sources[(row["server"], row["name"])]
        assert row["description"] == given.get("description") and row["inputSchema"] == given["inputSchema"]
    assert demo["summary"]["pairsByLabel"] == {"exact match": 1, "same name, different definition": 1, "similar description": 2}
    dup = json.loads((GOLDEN / "duplicates.json").read_text(encoding="utf-8"))
    labels = {(p["a"]["server"], p["b"]["server"], p["a"]["tool"]): p["labels"] for p in dup["pairs"]["items"]}
    # duplicates_c has the same read_file with keys in another order: canonical JSON makes it an exact match.
    assert labels[("c", "duplicates_a", "read_file")] == ["exact match"]
    assert labels[("duplicates_a", "duplicates_b", "list")] == ["same name, different definition"]
    near = json.loads((GOLDEN / "near_identical.json").read_text(encoding="utf-8"))
    found = {(p["a"]["tool"], p["b"]["tool"]): p["jaccard"] for p in near["pairs"]["items"]}
    assert found[("eight", "exactly_0_8")] == 0.8  # exactly at the threshold counts
    assert ("eight", "just_under") not in found and ("eight", "eleven") not in found
    assert ("max_words", "max_words2") in found and ("long", "long2") not in found and ("short", "short2") not in found
    assert near["similarity"]["skippedTools"] == {"noDescription": 0, "tooFewWords": 2, "tooManyWords": 2}
    nonascii = json.loads((GOLDEN / "nonascii.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in nonascii["servers"]] == ["café", "日本"]
    pair = nonascii["pairs"]["items"][0]
    assert pair["labels"] == ["similar description"] and pair["jaccard"] == 1.0  # "chaud." and "chaud!" tokenise the same
