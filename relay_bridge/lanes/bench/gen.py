"""Inputs generated from a tool's inputSchema: pure and deterministic under a seed.

`generate(schema, count, seed=0, salt="")` returns `count` inputs. Case `i` of `n`:
- numbers and integers sweep their range: `minimum + (maximum - minimum) * i / (n - 1)` (exclusive bounds nudged
  in; integers rounded; `multipleOf` respected); without bounds, a sweep over 0..100;
- enums (and `oneOf`/`anyOf` of consts, and booleans) cycle: value `i mod len`;
- optional properties toggle: all present in case 0, all absent in case 1, then each optional property `k` is
  present when `(i + k)` is even; required ones are always present;
- nested objects recurse with the same `i`; arrays sweep their length from `minItems` to `maxItems` (at most 4
  when unbounded) and item `j` is generated as case `i + j`;
- strings sweep their length from `minLength` to `maxLength` (1..24 when unbounded), with letters drawn from a
  `random.Random` seeded by `(seed, salt, path)`, so the same seed gives byte-identical inputs; `format` (date,
  date-time, time, email, uri/url, uuid, ipv4, hostname) and simple `pattern`s (literals, `[A-Z]`, `[a-z0-9]`,
  `\\d`, `\\w`, `{n}`, `{m,n}`, `+`, `*`, `?`) give conforming strings.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

MAX_DEPTH = 8
ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def _rng(seed: int, salt: str, path: str, i: int) -> random.Random:
    return random.Random(f"{seed}|{salt}|{path}|{i}")


def _half_up(x: float) -> int:
    return math.floor(x + 0.5)


def _frac(i: int, n: int) -> float:
    return 0.0 if n <= 1 else i / (n - 1)


def _number(schema: dict[str, Any], i: int, n: int, integer: bool) -> int | float:
    lo = schema.get("minimum", schema.get("exclusiveMinimum", 0 if "maximum" not in schema else min(0, schema["maximum"] - 100)))
    hi = schema.get("maximum", schema.get("exclusiveMaximum", lo + 100))
    if not isinstance(lo, (int, float)) or isinstance(lo, bool):
        lo = 0
    if not isinstance(hi, (int, float)) or isinstance(hi, bool) or hi < lo:
        hi = lo + 100
    step = schema.get("multipleOf")
    if integer:
        lo_i = math.ceil(lo) + (1 if "exclusiveMinimum" in schema and "minimum" not in schema and float(lo).is_integer() else 0)
        hi_i = math.floor(hi) - (1 if "exclusiveMaximum" in schema and "maximum" not in schema and float(hi).is_integer() else 0)
        hi_i = max(hi_i, lo_i)
        value: int | float = lo_i + _half_up((hi_i - lo_i) * _frac(i, n))
        if isinstance(step, int) and step > 0:
            value = min(hi_i, max(lo_i, (value // step) * step))
            if value < lo_i:
                value += step
        return int(value)
    span = hi - lo
    value = lo + span * _frac(i, n)
    if "exclusiveMinimum" in schema and "minimum" not in schema and value <= lo:
        value = lo + span / 1000 if span else lo + 1e-3
    if "exclusiveMaximum" in schema and "maximum" not in schema and value >= hi:
        value = hi - span / 1000 if span else hi - 1e-3
    if isinstance(step, (int, float)) and step > 0:
        value = round(value / step) * step
    value = round(value, 6)
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else value


_FORMATS = {
    "date": lambda i, r: f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
    "date-time": lambda i, r: f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{(7 * i) % 60:02d}:00Z",
    "time": lambda i, r: f"{i % 24:02d}:{(7 * i) % 60:02d}:00",
    "email": lambda i, r: f"user{i}.{''.join(r.choice(ALPHABET) for _ in range(4))}@example.com",
    "uri": lambda i, r: f"https://example.com/item/{i}/{''.join(r.choice(ALPHABET) for _ in range(5))}",
    "url": lambda i, r: f"https://example.com/item/{i}",
    "uuid": lambda i, r: (
        f"{r.getrandbits(32):08x}-{r.getrandbits(16):04x}-4{r.getrandbits(12):03x}-8{r.getrandbits(12):03x}-{r.getrandbits(48):012x}"
    ),
    "ipv4": lambda i, r: f"192.0.2.{i % 254 + 1}",
    "hostname": lambda i, r: f"host{i}.example.com",
}

_CLASS = {"d": "0123456789", "w": ALPHABET + ALPHABET.upper() + "0123456789_", "s": " "}
_TOKEN = re.compile(r"\\([dws])|\[([^\]]+)\]|\\(.)|([^\\\[\]{}()*+?|^$.])|(\.)")
_QUANT = re.compile(r"\{(\d+)(?:,(\d*))?\}|([*+?])")


def _expand_class(body: str) -> str:
    out = []
    j = 0
    while j < len(body):
        if body[j] == "\\" and j + 1 < len(body):
            out.append(_CLASS.get(body[j + 1], body[j + 1]))
            j += 2
        elif j + 2 < len(body) and body[j + 1] == "-":
            out.extend(chr(c) for c in range(ord(body[j]), ord(body[j + 2]) + 1))
            j += 3
        else:
            out.append(body[j])
            j += 1
    return "".join(out)


def _from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string matching a simple anchored pattern, or None when the pattern is beyond this small generator."""
    body = pattern[1:] if pattern.startswith("^") else pattern
    body = body[:-1] if body.endswith("$") and not body.endswith("\\$") else body
    out: list[str] = []
    pos = 0
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if not m:
            return None
        if m.group(1):
            chars = _CLASS[m.group(1)]
        elif m.group(2):
            if m.group(2).startswith("^"):
                return None
            chars = _expand_class(m.group(2))
        elif m.group(3):
            chars = m.group(3)
        elif m.group(5):
            chars = ALPHABET
        else:
            chars = m.group(4)
        pos = m.end()
        count = 1
        q = _QUANT.match(body, pos)
        if q:
            if q.group(1):
                lo = int(q.group(1))
                hi = int(q.group(2)) if q.group(2) else (lo if q.group(2) is None else lo + 3)
                count = rng.randint(lo, max(lo, hi))
            else:
                count = {"*": rng.randint(0, 3), "+": rng.randint(1, 3), "?": rng.randint(0, 1)}[q.group(3)]
            pos = q.end()
        out.extend(rng.choice(chars) for _ in range(count))
    text = "".join(out)
    try:
        return text if re.fullmatch(body, text) else None
    except re.error:
        return None


def _string(schema: dict[str, Any], i: int, n: int, rng: random.Random) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt](i, rng)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        made = _from_pattern(pattern, rng)
        if made is not None:
            return made
    lo = schema.get("minLength", 1)
    hi = schema.get("maxLength", max(24, lo if isinstance(lo, int) else 1))
    lo = lo if isinstance(lo, int) and lo >= 0 else 1
    hi = hi if isinstance(hi, int) and hi >= lo else lo + 24
    length = lo + _half_up((hi - lo) * _frac(i, n))
    return "".join(rng.choice(ALPHABET) for _ in range(length))


def _choices(schema: dict[str, Any]) -> list[Any] | None:
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and all(isinstance(o, dict) and "const" in o for o in options):
            return [o["const"] for o in options]
    return None


def _type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def value_for(schema: Any, i: int, n: int, *, seed: int = 0, salt: str = "", path: str = "$", depth: int = 0) -> Any:
    """One value for `schema`, case `i` of `n`."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    choices = _choices(schema)
    if choices is not None:
        return choices[i % len(choices)]
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return value_for(options[i % len(options)], i, n, seed=seed, salt=salt, path=f"{path}|{key}", depth=depth + 1)
    kind = _type(schema)
    if kind == "object":
        return _object(schema, i, n, seed=seed, salt=salt, path=path, depth=depth)
    if kind == "array":
        items = schema["items"] if isinstance(schema.get("items"), dict) else {}
        lo: int = schema["minItems"] if isinstance(schema.get("minItems"), int) else 0
        hi: int = schema["maxItems"] if isinstance(schema.get("maxItems"), int) else max(4, lo)
        length = lo + _half_up((max(hi, lo) - lo) * _frac(i, n))
        return [value_for(items, i + j, n + j, seed=seed, salt=salt, path=f"{path}[{j}]", depth=depth + 1) for j in range(length)]
    if kind == "integer":
        return _number(schema, i, n, True)
    if kind == "number":
        return _number(schema, i, n, False)
    if kind == "boolean":
        return i % 2 == 0
    if kind == "string":
        return _string(schema, i, n, _rng(seed, salt, path, i))
    if kind == "null":
        return None
    return None


def _object(schema: dict[str, Any], i: int, n: int, *, seed: int, salt: str, path: str, depth: int) -> dict[str, Any]:
    props: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
    out: dict[str, Any] = {}
    optional_index = 0
    for name, sub in props.items():
        if name not in required:
            k = optional_index
            optional_index += 1
            present = True if i == 0 else False if i == 1 else (i + k) % 2 == 0
            if not present:
                continue
        out[name] = value_for(sub, i, n, seed=seed, salt=salt, path=f"{path}.{name}", depth=depth + 1)
    return out


def generate(schema: Any, count: int, *, seed: int = 0, salt: str = "") -> list[Any]:
    """`count` inputs for a tool's inputSchema (an object schema; anything else gives `{}`)."""
    if not isinstance(schema, dict) or _type(schema) not in ("object", None):
        return [{} for _ in range(count)]
    return [_object(schema, i, count, seed=seed, salt=salt, path="$", depth=0) for i in range(count)]
