"""Sizes, token estimates and result facts of one call, from the values the host saw.

The page agent measures in the page (page_agent/src/measure.js); this is the same definition for the lanes
that see values outside the page (the DevTools Protocol lane gets the host's own input and output strings).
Both read tests/vectors/measure.json. Values are measured and dropped: nothing here keeps a body.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

# What Chromium's host hands the agent instead of an empty result (design section 4).
EMPTY_SUBSTITUTE = "Operation succeeded"
UNDEFINED_TEXT = "undefined"


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def tokens_for_bytes(n: int) -> int:
    return math.ceil(n / 4)


def image_tokens(image_bytes: int) -> int:
    """Images are paid at their decoded size: base64 length x 0.75."""
    return math.ceil(image_bytes * 0.75 / 4)


def js_stringify(value: Any) -> str:
    """JSON text as JavaScript's JSON.stringify writes it (no spaces, non-ASCII kept, integral floats bare)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return "null"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + js_stringify(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(js_stringify(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _is_envelope(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("content"), list)


@dataclass(slots=True)
class ResultFacts:
    resultBytes: int
    resultType: str
    envelope: bool
    substituted: bool
    contentTypes: dict[str, int] = field(default_factory=dict)
    imageBytes: int = 0


def result_facts(value: Any, *, undefined: bool = False) -> ResultFacts:
    """Facts about what the agent reads for a tool that returned `value` (`undefined=True` for JS undefined)."""
    if undefined:
        return ResultFacts(utf8_len(UNDEFINED_TEXT), "undefined", False, True)
    if isinstance(value, str):
        if value == "":
            return ResultFacts(utf8_len(EMPTY_SUBSTITUTE), "string", False, True, {"text": 1})
        envelope = False
        inner: Any = None
        if value[:1] == "{":
            try:
                inner = json.loads(value)
            except ValueError:
                inner = None
            envelope = _is_envelope(inner)
        types, image = _content_facts(inner) if envelope else ({"text": 1}, 0)
        return ResultFacts(utf8_len(value), "string", envelope, False, types, image)
    if value is None:
        return ResultFacts(utf8_len("null"), "null", False, False)
    if isinstance(value, bool):
        kind = "boolean"
    elif isinstance(value, (int, float)):
        kind = "number"
    elif isinstance(value, list):
        kind = "array"
    else:
        kind = "object"
    text = js_stringify(value)
    envelope = _is_envelope(value)
    types, image = _content_facts(value) if envelope else ({}, 0)
    return ResultFacts(utf8_len(text), kind, envelope, False, types, image)


def _content_facts(envelope: dict[str, Any]) -> tuple[dict[str, int], int]:
    types: dict[str, int] = {}
    image = 0
    for item in envelope.get("content", []):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if not isinstance(kind, str):
            continue
        kind = kind[:32]
        types[kind] = types.get(kind, 0) + 1
        if kind == "image" and isinstance(item.get("data"), str):
            image += len(item["data"])
    return types, image


@dataclass(slots=True)
class CallSize:
    inputBytes: int
    resultBytes: int
    imageBytes: int
    estInputTokens: int
    estTextTokens: int
    estImageTokens: int
    estTokens: int


def call_size(input_bytes: int, result_bytes: int, image_bytes: int) -> CallSize:
    est_in = tokens_for_bytes(input_bytes)
    est_text = tokens_for_bytes(max(0, result_bytes - image_bytes))
    est_img = image_tokens(image_bytes)
    return CallSize(input_bytes, result_bytes, image_bytes, est_in, est_text, est_img, est_in + est_text + est_img)


MAX_ERROR_CHARS = 200


def error_text(policy: str, name: str, message: str) -> str | None:
    """What a span keeps of an error: the message capped at 200 code points (the name when the message is
    empty), the name only, or nothing. Never a stack."""
    if policy == "none":
        return None
    if policy == "name" or not message:
        return name[:MAX_ERROR_CHARS] or "Error"
    return message[:MAX_ERROR_CHARS]
