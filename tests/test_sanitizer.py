"""One sanitiser for the dashboard and every headless line (issue 31, item 5): the shared vectors through each
way page text reaches a terminal, and the rule checked against Unicode's own categories."""

from __future__ import annotations

import io
import json
import sys
import unicodedata
from pathlib import Path

import pytest

from relay_bridge.core.inert import InertStream, inert_str
from tui.model.sanitize import inert

CASES = json.loads((Path(__file__).parent / "vectors" / "inert.json").read_text(encoding="utf-8"))["cases"]
# Default_Ignorable_Code_Point (DerivedCoreProperties.txt) outside the categories below.
IGNORABLE = {
    0x034F,
    0x115F,
    0x1160,
    0x17B4,
    0x17B5,
    *range(0x180B, 0x1810),
    0x2065,
    0x3164,
    *range(0xFE00, 0xFE10),
    0xFFA0,
    *range(0xFFF0, 0xFFF9),
    *range(0xE0000, 0xE1000),
}
HIDDEN_CATEGORIES = ("Cc", "Cf", "Co", "Cs", "Zl", "Zp")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_way_to_a_terminal_shows_the_same(case: dict[str, str]) -> None:
    raw, shown = case["raw"], case["shown"]
    assert inert_str(raw) == shown
    assert inert(raw).plain == shown, "the dashboard shows what a headless line shows"
    out = io.StringIO()
    InertStream(out).write(f"line: {inert_str(raw)}\n")
    assert out.getvalue() == f"line: {shown}\n", "the stream keeps the sanitised text as it is, one line"
    assert "\n" not in shown and "\r" not in shown and len(shown.splitlines()) <= 1


def test_nothing_invisible_or_a_control_survives_anywhere_in_unicode() -> None:
    hidden = [
        chr(code)
        for code in range(sys.maxunicode + 1)
        if (cat := unicodedata.category(chr(code))) in HIDDEN_CATEGORIES or (cat == "Zs" and code != 0x20) or code in IGNORABLE
    ]
    shown = inert_str("a".join(hidden))  # one pass: every candidate between two letters
    left = sorted(set(shown) & set(hidden))
    assert not left, f"{len(left)} characters pass unshown: {[f'U+{ord(c):04X}' for c in left[:20]]}"


def test_a_raw_page_string_written_straight_to_the_stream_still_hides_nothing() -> None:
    """Belt and braces: text that reached the stream without inert_str still shows every invisible character
    (its CR/LF are the one thing the stream cannot tell from ours: hence inert_str at every print of page text)."""
    out = io.StringIO()
    InertStream(out).write("ba\u00adnk\u200b.example \u202e \x1b[2J\n")
    assert out.getvalue() == "ba\\u00adnk\\u200b.example \\u202e ␛[2J\n"
