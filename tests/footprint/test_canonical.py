"""Canonical JSON: sorted keys (UTF-16 order), arrays in order, compact, UTF-8, JavaScript number spelling."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay_bridge.core.canonical import canonical_bytes, canonical_json, number
from relay_bridge.lanes.footprint.analyze import analyze_catalog, rough_tokens
from relay_bridge.lanes.footprint.inputs import Server

from .conftest import run_main, tool, validate


def test_keys_sorted_recursively_arrays_kept_compact() -> None:
    doc = {"b": [3, {"z": 1, "a": None}, "x"], "a": {"d": True, "c": False}}
    assert canonical_json(doc) == '{"a":{"c":false,"d":true},"b":[3,{"a":null,"z":1},"x"]}'


def test_keys_sort_by_utf16_code_units_like_javascript() -> None:
    # U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FFFF (by code point it would sort after).
    assert canonical_json({"\uffff": 1, "\U0001f600": 2, "é": 3, "z": 4}) == '{"z":4,"é":3,"\U0001f600":2,"\uffff":1}'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e-7, "1e-7"),
        (0.00001, "0.00001"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123.456, "123.456"),
        (2.5e-8, "2.5e-8"),
        (1.5e300, "1.5e+300"),
        (5e-324, "5e-324"),
        (10**30, "1e+30"),
        # integer literals are doubles in JavaScript: past 2**53 written as the double it reads (issue 17 item 11)
        (10**23, "1e+23"),
        (10**21, "1e+21"),
        (999999999999999999999, "1e+21"),
        (12345678901234567890, "12345678901234567000"),
        (2**53 + 1, "9007199254740992"),
        (2**53 - 1, "9007199254740991"),
        (-(10**23), "-1e+23"),
    ],
)
def test_numbers_are_spelled_as_javascript_does(value: float, text: str) -> None:
    assert number(value) == text


def test_strings_escape_only_what_json_stringify_escapes() -> None:
    assert canonical_json('a"b\\c\n\x01\u2028é😀/') == '"a\\"b\\\\c\\n\\u0001\u2028é😀/"'
    assert canonical_json("\ud800") == '"\\ud800"'  # a lone surrogate stays valid UTF-8 once escaped
    assert canonical_bytes("é") == b'"\xc3\xa9"'


def test_sizes_and_envelope_by_hand() -> None:
    t = tool("a")
    assert canonical_json(t) == '{"inputSchema":{"type":"object"},"name":"a"}'
    report = analyze_catalog([Server("s", [t])])
    s = report["summary"]
    assert s["definitionBytes"] == 44
    # {"servers":[{"name":"s","tools":[ ... ]}]}  -> 33 bytes before the tool, 4 after
    assert s["catalogBytes"] == 44 + 37 and s["envelopeBytes"] == 37
    assert s["roughTokens"] == 21 and rough_tokens(80) == 20 and rough_tokens(0) == 0
    validate(report)


def test_catalog_sorts_servers_and_tools_by_name() -> None:
    a = analyze_catalog([Server("b", [tool("y"), tool("x")]), Server("a", [tool("z")])])
    b = analyze_catalog([Server("a", [tool("z")]), Server("b", [tool("x"), tool("y")])])
    assert a["summary"] == b["summary"] and a["tools"] == b["tools"]
    assert [s["name"] for s in a["servers"]] == ["a", "b"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_canonical_round_trips_and_is_idempotent(value: object) -> None:
    text = canonical_json(value)
    back = json.loads(text)
    assert canonical_json(back) == text
    text.encode("utf-8")  # always valid UTF-8


def test_matches_javascript_json_stringify_with_sorted_keys() -> None:
    assert shutil.which("node"), "node is missing: apt-get install -y nodejs (scripts/check installs it)"
    doc = {
        "é": [1.0, 1e-7, 0.00001, 1e21, 123.456, -0.0, 2.5e-8],
        "\uffff": "x",
        "\U0001f600": {"b": "\u2028\n", "a": "😀"},
        "z": [{"k": None, "j": True}],
        "A": 9007199254740991,
    }
    script = (
        "const s=v=>Array.isArray(v)?v.map(s):v&&typeof v==='object'?Object.fromEntries(Object.keys(v).sort()"
        ".map(k=>[k,s(v[k])])):v;process.stdout.write(JSON.stringify(s(JSON.parse(require('fs').readFileSync(0,'utf8')))))"
    )
    out = subprocess.run(["node", "-e", script], input=json.dumps(doc), capture_output=True, text=True, encoding="utf-8", check=True)
    assert canonical_json(json.loads(json.dumps(doc))) == out.stdout


def test_integer_literals_past_1e21_are_sized_as_javascript_writes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 17 item 11: the canonical form is JSON as JavaScript writes it, so `100000000000000000000000` in a
    captured schema costs the 5 bytes of `1e+23`, not 24."""
    src = tmp_path / "big.json"
    src.write_text('{"tools":[{"name":"t","inputSchema":{"type":"integer","maximum":100000000000000000000000}}]}', encoding="utf-8")
    out = tmp_path / "r.json"
    code, _, err = run_main(["--input", str(src), "--json", str(out)], capsys)
    assert code == 0, err
    (row,) = json.loads(out.read_text(encoding="utf-8"))["tools"]
    assert row["bytes"] == len('{"inputSchema":{"maximum":1e+23,"type":"integer"},"name":"t"}')
    src.write_text('{"tools":[{"name":"t","inputSchema":{"maximum":1' + "0" * 400 + "}}]}", encoding="utf-8")
    code, _, err = run_main(["--input", str(src)], capsys)
    assert code == 2 and "out of range" in err, "a literal JavaScript reads as Infinity is refused like 1e400"
