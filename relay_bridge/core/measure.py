"""Sizes, token estimates and result facts of one call, from the values the host saw.

The page agent measures in the page (page_agent/src/page/measure.js); this is the same definition for the lanes
that see values outside the page (the DevTools Protocol lane gets the host's own input and output strings).
Both read tests/vectors/measure.json. Values are measured and dropped: nothing here keeps a body.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from relay_bridge.core.jsjson import js_number, utf8_len
from relay_bridge.core.jsjson import stringify as js_stringify

__all__ = ["call_size", "content_facts", "error_text", "js_stringify", "result_facts", "result_type", "utf8_len"]

# What Chromium's host hands the agent instead of an empty result (design section 4).
EMPTY_SUBSTITUTE = "Operation succeeded"
UNDEFINED_TEXT = "undefined"


def tokens_for_bytes(n: int) -> int:
    return math.ceil(n / 4)


def image_tokens(image_bytes: int) -> int:
    """Images are paid at their decoded size: base64 length x 0.75."""
    return math.ceil(image_bytes * 0.75 / 4)


def js_number_string(value: float | int) -> str:
    """`String(value)`: how Chromium's host writes a number result (NaN reads "NaN", not JSON's "null")."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return js_number(value)


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
        types, image, _ = content_facts(inner) if envelope else ({"text": 1}, 0, False)
        return ResultFacts(utf8_len(value), "string", envelope, False, types, image)
    kind = result_type(value)
    if kind in ("number", "boolean", "null"):
        text = js_number_string(value) if kind == "number" else js_stringify(value)
        return ResultFacts(utf8_len(text), kind, False, False)
    types, image, envelope = content_facts(value)
    return ResultFacts(utf8_len(js_stringify(value)), kind, envelope, False, types, image)


def result_type(value: Any) -> str:
    """The JSON type of a value as the page returned it (JavaScript's view: an int and a float are numbers)."""
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "array" if isinstance(value, list) else "object"


# MCP's content types (CallToolResult.content[].type); any other page string is counted as "other".
CONTENT_TYPES = ("text", "image", "audio", "resource", "resource_link")


def content_facts(value: Any) -> tuple[dict[str, int], int, bool]:
    """(content types, image base64 length, is an MCP envelope) of a result value. A string counts as one
    text item; an envelope's `content[].type`s are counted (MCP's types by name, the rest as `other`), images by their
    base64 length."""
    if not _is_envelope(value):
        return ({"text": 1} if isinstance(value, str) else {}), 0, False
    types: dict[str, int] = {}
    image = 0
    for item in value["content"]:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue
        kind = item["type"]
        key = kind if kind in CONTENT_TYPES else "other"  # keys are ours, never page text
        types[key] = types.get(key, 0) + 1
        if kind == "image" and isinstance(item.get("data"), str):
            image += len(item["data"])
    return types, image, True


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


def cut_error(text: str) -> str:
    """At most 200 code points: a longer text keeps 199 and ends in "…" (webmcp-profiler's cut mark, here
    within the wire's 200)."""
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "\u2026"


def error_text(policy: str, name: str, message: str) -> str | None:
    """What a span keeps of an error: the message cut at 200 code points (the name when the message is
    empty), the name only, or nothing. Never a stack."""
    if policy == "none":
        return None
    if policy == "name" or not message:
        return cut_error(name) or "Error"
    return cut_error(message)


# -- schema bytes ----------------------------------------------------------------------------------------------

DESCRIPTOR_KEYS = ("name", "title", "description", "inputSchema", "annotations")


def registered_descriptor(listed: dict[str, Any]) -> dict[str, Any]:
    """The descriptor a page registered, from the host's copy of it (getTools(), the DevTools Protocol's
    toolsAdded), so schema bytes are the same whichever route saw the tool. The host adds what the page never
    sent: an empty `title`, and every annotation it knows at false (Chromium: consequentialHint, debugging,
    readOnlyHint, untrustedContentHint). Those are dropped; an inputSchema the host lists as JSON text is read
    back as the object it was. Annotations the host dropped (destructiveHint, …) cannot be recovered: a tool
    registered with them reads their few bytes lower by this route (docs/numbers.md)."""
    out: dict[str, Any] = {}
    for key in DESCRIPTOR_KEYS:
        if key not in listed or listed[key] is None:
            continue
        value = listed[key]
        if key == "title" and value == "":
            continue
        if key == "inputSchema" and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        if key == "annotations" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if v is not False}
            if not value:
                continue
        out[key] = value
    return out


def schema_bytes(descriptor: dict[str, Any]) -> int:
    """UTF-8 bytes of JSON.stringify({name, title, description, inputSchema, annotations}) (design section 3)."""
    return utf8_len(js_stringify({k: descriptor[k] for k in DESCRIPTOR_KEYS if k in descriptor and descriptor[k] is not None}))
