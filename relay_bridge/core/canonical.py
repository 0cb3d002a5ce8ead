"""Canonical JSON: the bytes a tool definition costs, counted the same way every time.

Object keys are sorted recursively, arrays keep their order, separators are compact and the text is UTF-8.
The output is what JavaScript's `JSON.stringify` writes for the same value after sorting keys, because that is
how MCP clients and mcp-footprint (seed 003) serialise: keys sort by UTF-16 code units (not code points),
numbers use ECMAScript's shortest form (`1.0` is `1`, `1e-7` stays `1e-7`, `0.00001` is written out), and a lone
surrogate is escaped rather than emitted. An integer literal is a double in JavaScript too: beyond 2**53 it is
written as the double JavaScript reads, so `12345678901234567890` is `12345678901234567000` and `1e23` or
`100000000000000000000000` is `1e+23` (the same rule as relay_bridge/core/jsjson.py).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import msgspec

# ensure_ascii=False string quoting from the C accelerator: escapes quote, backslash and C0 controls only,
# exactly the set JSON.stringify escapes (besides lone surrogates, handled below).
_quote: Any = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.py_encode_basestring
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf16_key(text: str) -> bytes:
    """Sort key giving JavaScript's default string order (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def escape_surrogates(text: str) -> str:
    """JSON text with every lone surrogate written as a \\uXXXX escape, so it encodes as valid UTF-8.

    Only valid on JSON text produced by this module or `json.dumps`: a surrogate can only sit inside a string.
    """
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def quote(text: str) -> str:
    return escape_surrogates(_quote(text))


def number(value: int | float) -> str:
    """ECMAScript Number::toString for finite floats; exact digits for integers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) < 2**53:
            return str(value)
        try:
            value = float(value)  # what JSON.parse makes of the literal
        except OverflowError:
            raise ValueError("number out of range") from None
    if not math.isfinite(value):
        raise ValueError("non-finite number")  # the reader refuses these; JSON has no spelling for them
    if value == 0:
        return "0"  # -0 too, as in JavaScript
    sign = "-" if value < 0 else ""
    # repr gives the shortest round-tripping digits; Decimal splits them into digits and exponent.
    _, digit_tuple, exp = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = int(exp) + k  # the decimal point sits after the n-th digit
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif isinstance(value, dict):
        out.append("{")
        first = True
        for key in sorted(value, key=utf16_key):
            if not first:
                out.append(",")
            first = False
            out.append(quote(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif value is None:
        out.append("null")
    elif isinstance(value, (bool, int, float)):
        out.append(number(value))
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def canonical_json(value: Any) -> str:
    out: list[str] = []
    _write(value, out)
    return "".join(out)


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def canonical_size(value: Any) -> int:
    return len(canonical_bytes(value))


# What a C encoder would spell unlike JavaScript: a fraction or exponent (`1.0`, `1e-07`), an integer past 2**53
# (16 digits and more), non-finite numbers, and any text past ASCII, raw or escaped (key order by code point vs
# UTF-16 units; lone surrogates). Matched on the raw text, strings included: a false match only takes the exact
# path. The text is mapped to three classes (digit `d`, one of `.eE` as `e`, anything else a space) and searched
# for a digit beside `.eE` or 16 digits in a row: plain substring searches, where a regular expression tried every
# position (a definition's prose is full of `e`).
_CLASSES = bytes(ord("d") if chr(i).isdigit() and i < 128 else ord("e") if i in b".eE" else ord(" ") for i in range(256))
_SIXTEEN_DIGITS = b"d" * 16


def _c_unsafe(raw: bytes) -> bool:
    if not raw.isascii() or b"\\u" in raw or b"NaN" in raw or b"Infinity" in raw:
        return True
    classes = raw.translate(_CLASSES)
    return b"de" in classes or b"ed" in classes or _SIXTEEN_DIGITS in classes


def canonical_from_text(raw: bytes, value: Any) -> bytes:
    """`canonical_bytes(value)` for `value` parsed from the JSON text `raw`, at a C encoder's speed when the text
    holds nothing the two spellings differ on (what an agent's descriptors almost always are), else the exact
    writer above. The same bytes either way (tests/findings/test_weights.py). Past `_c_unsafe` the value is ASCII
    text, integers under 2**53, booleans and nulls, which msgspec writes as JSON.stringify does (keys sorted, the
    same escapes), in a twelfth of the standard library's time."""
    if not _c_unsafe(raw):
        try:
            return msgspec.json.encode(value, order="sorted")
        except (msgspec.EncodeError, RecursionError):  # nested past msgspec's depth: the exact writer says why
            pass
    return canonical_bytes(value)
