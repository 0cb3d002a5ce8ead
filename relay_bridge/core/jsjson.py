"""JSON text exactly as V8's `JSON.stringify` writes it, for values that arrived parsed over the DevTools Protocol.

The WebMCP domain hands over a tool's output as a JSON value (the host's own serialisation, parsed again), so
the bytes the agent read are recovered by writing it back the way the host did: no spaces, non-ASCII kept,
only `"`, `\\`, controls and lone surrogates escaped, and numbers in ECMAScript's Number::toString form
(`1e-7`, `1e+21`, `12345678901234567000`), which Python's `repr` does not follow.
"""

from __future__ import annotations

import math
import re
from typing import Any

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')


def js_number(value: float | int) -> str:
    """ECMAScript Number::toString(10) of a finite double (JSON.stringify writes non-finite as null)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) < 2**53:
            return str(value)
        value = float(value)
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    # position of the decimal point relative to the first significant digit
    point = len(whole) + (int(exp) if exp else 0)
    if whole == "0" or not whole.strip("0"):
        point = -(len(frac) - len(frac.lstrip("0"))) + (int(exp) if exp else 0)
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def _string(text: str) -> str:
    if not _NEEDS.search(text):
        return '"' + text + '"'
    out = []
    chars = text
    i = 0
    while i < len(chars):
        ch = chars[i]
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDBFF and i + 1 < len(chars) and 0xDC00 <= ord(chars[i + 1]) <= 0xDFFF:
            out.append(ch + chars[i + 1])
            i += 1
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")  # a lone surrogate: well-formed JSON.stringify escapes it
        else:
            out.append(ch)
        i += 1
    return '"' + "".join(out) + '"'


def stringify(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(stringify(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(_string(str(k)) + ":" + stringify(v) for k, v in value.items()) + "}"
    return "null"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))
