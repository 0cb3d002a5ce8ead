"""Repeated definitions: the similarity budget running out (and exactly reaching it), and more than 5,000 pairs."""

from __future__ import annotations

from relay_bridge.core.similarity import words
from relay_bridge.lanes.footprint import analyze_catalog
from relay_bridge.lanes.footprint.inputs import Server

from .conftest import tool, validate


def _distinct(n: int, prefix: str) -> list[dict[str, object]]:
    # 128 unique words each, no word shared: every cross pair costs 128 operations and is not similar.
    return [tool(f"t{i:03d}", " ".join(f"{prefix}{i}x{k}" for k in range(128))) for i in range(n)]


def test_words_lowercase_unicode_underscores_split() -> None:
    assert words("Read_FILE, ÉCRIRE le fichier 2x; naïve café_crème") == {"read", "file", "écrire", "le", "fichier", "2x", "naïve", "café", "crème"}


def test_budget_reached_exactly_is_complete() -> None:
    # 125 x 125 cross pairs x 128 operations = 2,000,000: the whole budget, not one operation over.
    report = analyze_catalog([Server("a", _distinct(125, "a")), Server("b", _distinct(125, "b"))])
    sim = report["similarity"]
    assert sim["complete"] is True
    assert (sim["operations"], sim["eligiblePairs"], sim["examinedPairs"], sim["notExamined"]) == (2_000_000, 15_625, 15_625, 0)


def test_budget_running_out_marks_the_scan_incomplete_with_the_count_not_examined() -> None:
    report = analyze_catalog([Server("a", _distinct(130, "a")), Server("b", _distinct(130, "b"))])
    validate(report)
    sim = report["similarity"]
    assert sim["complete"] is False
    assert sim["operations"] == 2_000_000
    assert sim["eligiblePairs"] == 130 * 130
    assert sim["examinedPairs"] == 15_625 and sim["notExamined"] == 16_900 - 15_625
    from relay_bridge.lanes.footprint.text import summary_lines

    assert any(
        line.startswith("similarity scan: INCOMPLETE") and "1275 of 16900 eligible pairs not examined" in line for line in summary_lines(report)
    )


def test_more_than_5000_pairs_are_truncated_and_say_so() -> None:
    same = "search the shared index for matching documents quickly"
    a = [tool(f"a{i:02d}", same) for i in range(71)]
    b = [tool(f"b{i:02d}", same) for i in range(71)]
    report = analyze_catalog([Server("a", a), Server("b", b)])
    validate(report)
    pairs = report["pairs"]
    assert pairs["found"] == 71 * 71 == 5041
    assert (pairs["kept"], pairs["truncated"], pairs["notKept"]) == (5000, True, 41)
    assert pairs["byLabel"]["similar description"] == 5041  # counts cover every pair found, kept or not
    assert pairs["items"][0]["a"] == {"server": "a", "tool": "a00"} and pairs["items"][-1]["a"]["tool"] == "a70"
    # Exactly 5,000 pairs is not a truncation.
    report = analyze_catalog([Server("a", a[:50]), Server("b", [tool(f"b{i:03d}", same) for i in range(100)])])
    assert (report["pairs"]["found"], report["pairs"]["kept"], report["pairs"]["truncated"]) == (5000, 5000, False)


def test_pairs_only_cross_servers_and_labels_combine() -> None:
    d = "read one text file from the workspace root folder"
    report = analyze_catalog(
        [
            Server("a", [tool("read", d), tool("read2", d)]),  # same server: never a pair
            Server("b", [tool("read", d), tool("read2", d + " now")]),
        ]
    )
    items = {(p["a"]["tool"], p["b"]["tool"]): p["labels"] for p in report["pairs"]["items"]}
    assert items[("read", "read")] == ["exact match", "similar description"]
    assert items[("read2", "read2")] == ["same name, different definition", "similar description"]
    assert items[("read", "read2")] == ["similar description"]
    assert ("read", "read2") in items and len(items) == 4  # a.read~b.read2, a.read2~b.read too
    # Ranked: exact matches first.
    assert report["pairs"]["items"][0]["labels"][0] == "exact match"


def test_same_input_in_another_order_gives_the_same_report() -> None:
    servers = [Server("z", [tool("b", "x"), tool("a", "y")]), Server("m", [tool("a", "y")])]
    again = [Server("m", [tool("a", "y")]), Server("z", [tool("a", "y"), tool("b", "x")])]
    assert analyze_catalog(servers) == analyze_catalog(again)
