"""Write tests/vectors/facts/bloat.json: result texts in, bloat facts out (docs/diagnosis-facts.md).

The agent computes these in JavaScript with one pass over the text (page_agent/src/page/bloat.js). The expected
figures here come from a second, independent reading of the same definitions in Python (parse the text, walk
the value), so the two cannot share a mistake. The capped case is written by hand (a prefix does not parse).

  python scripts/gen_facts_vectors.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "tests" / "vectors" / "facts" / "bloat.json"
BASE64_MIN_RUN = 256
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_RUN = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def _runs(text: str) -> tuple[int, int]:
    found = [len(m) for m in _RUN.findall(text) if len(m) >= BASE64_MIN_RUN]
    return sum(found), len(found)


def _walk(v: Any, acc: dict[str, int]) -> None:
    if isinstance(v, str):
        b, r = _runs(v)
        acc["base64Bytes"] += b
        acc["base64Runs"] += r
    elif isinstance(v, list):
        if len(v) >= 2 and isinstance(v[0], dict):
            first = set(v[0])
            for row in v[1:]:
                if isinstance(row, dict) and set(row) == first:
                    acc["repeatedKeyRows"] += 1
                    acc["repeatedKeyBytes"] += sum(len(json.dumps(k, ensure_ascii=False).encode()) + 1 for k in row)
        for x in v:
            _walk(x, acc)
    elif isinstance(v, dict):
        for x in v.values():
            _walk(x, acc)


def bloat(text: str) -> dict[str, int]:
    acc = {"textBytes": len(text.encode()), "whitespaceBytes": 0, "repeatedKeyBytes": 0, "repeatedKeyRows": 0, "base64Bytes": 0, "base64Runs": 0}
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, (dict, list)):
        outside = _STRING.sub("", text)
        acc["whitespaceBytes"] = sum(outside.count(c) for c in " \t\n\r")
        _walk(value, acc)
    else:
        acc["base64Bytes"], acc["base64Runs"] = _runs(text)
    return acc


ROWS = [{"id": i, "name": f"item {i}", "price": i * 1.5, "tags": ["a", "b"]} for i in range(1, 6)]
B64 = "iVBORw0KGgo" + "A" * 289 + "=="


def cases() -> list[dict[str, Any]]:
    texts = [
        ("compact rows", "an array of 5 objects with one key set: the keys of rows 2-5 repeat", json.dumps(ROWS, separators=(",", ":"))),
        ("pretty rows", "the same rows pretty-printed (indent 2): the whitespace is what compaction drops", json.dumps(ROWS, indent=2)),
        ("pretty rows, tabs and CRLF", "indentation of tabs, lines ended by CRLF", json.dumps(ROWS, indent="\t").replace("\n", "\r\n")),
        ("key sets differ", "only rows whose key set equals the first row's count", '[{"a":1},{"b":2},{"a":3},{"a":4,"b":5}]'),
        ("key order differs", "a key set is a set: order does not matter", '[{"a":1,"b":2},{"b":3,"a":4}]'),
        ("nested arrays", "every array of objects counts, at any depth", '{"rows":[{"x":1},{"x":2}],"more":[[{"y":1},{"y":2},{"y":3}]]}'),
        ("first element not an object", "an array whose first element is not an object has no rows", '[1,{"a":1},{"a":2}]'),
        ("one row", "an array of one object repeats nothing", '[{"a":1}]'),
        ("non-ASCII keys", "key bytes are UTF-8 bytes", '[{"é":"ü","ключ":1},{"é":"x","ключ":2}]'),
        (
            "whitespace inside strings",
            "spaces and escapes inside strings are content, not whitespace",
            '{ "a" : "x  y\\n\\t z" ,\n  "b" : [ 1 , 2 ] }',
        ),
        (
            "data URL in a value",
            "the run after the comma; a run under 256 characters does not count",
            json.dumps({"img": "data:image/png;base64," + B64, "short": "QUJD" * 10}),
        ),
        ("base64 in a key", "keys are not values: a base64-looking key is not counted", json.dumps({"A" * 300: 1})),
        ("two runs in one value", "runs are split by any other character", json.dumps({"v": "A" * 256 + " " + "B" * 300 + "=" + "C" * 10})),
        ("run of 255", "one short of the minimum", json.dumps({"v": "Q" * 255})),
        ("prose with base64", "text that is not JSON: one string value, no whitespace figure", "the image is " + B64 + " as you see"),
        ("JSON string scalar", "a JSON document that is a bare string is not a document of rows: counted as text", json.dumps("A" * 300)),
        ("broken JSON", "looks like JSON but is not: counted as text", '{"a": [1, 2}  ' + "Z" * 260),
        (
            "escaped quotes and backslashes",
            "a quote after an odd run of backslashes does not end a string",
            json.dumps({"a": 'x"y\\', "b": [{"k": '\\"'}, {"k": " [ { "}], "c": "\\\\"}, indent=1),
        ),
        ("empty object", "nothing to find", "{}"),
    ]
    out = [{"name": n, "description": d, "text": t, "expect": bloat(t)} for n, d, t in texts]
    # Capped: the first 262,144 UTF-16 units are examined. "[" then rows of 8 characters: 32,767 whole rows
    # and an eighth row-part `{"k":1}` (7 characters) that closes one more object: 32,768 objects, 32,767
    # repeat the first; each repeats `"k":` (4 bytes).
    out.append(
        {
            "name": "capped",
            "description": "a result over the cap: the first 262,144 characters are examined, truncated is set",
            "build": {"prefix": "[", "repeat": '{"k":1},', "times": 40000, "suffix": '{"k":1}]'},
            "expect": {
                "textBytes": 262144,
                "whitespaceBytes": 0,
                "repeatedKeyBytes": 32767 * 4,
                "repeatedKeyRows": 32767,
                "base64Bytes": 0,
                "base64Runs": 0,
                "truncated": True,
            },
        }
    )
    return out


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
